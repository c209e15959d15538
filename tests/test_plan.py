"""Multi-skill messages: the splitter, and ordered plans from the real router on the examples."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skillpilot import RouteResult, SkillPilot, text
from skillpilot.model import Alternative, PlanStep, SkillRef
from skillpilot.plan import as_plan, plan_steps, split
from skillpilot.text import Query

from .cli_util import CliOutcome, run_cli
from .conftest import EXAMPLES


@pytest.mark.parametrize(
    ("message", "clauses"),
    [
        ("summarise PR 42 and post it to #dev", [("summarise PR 42", False, False), ("post it to #dev", False, False)]),
        (
            "open a PR, then notify the team after that run the tests",
            [("open a PR", False, False), ("notify the team", False, True), ("run the tests", False, True)],
        ),
        ("the build is red. pull the logs", [("the build is red.", True, False), ("pull the logs", True, False)]),
        ("把这段话翻译成英文，然后发邮件给我", [("把这段话翻译成英文", False, False), ("发邮件给我", False, True)]),
        # A short piece ("why?") is glued back; commas, 和, 再次 and 合并 are not markers.
        ("what's the big-O of a dict, and why?", [("what's the big-O of a dict, and why?", False, False)]),
        (
            "QC, normalize and leiden-cluster pbmc.h5ad",
            [("QC, normalize", False, False), ("leiden-cluster pbmc.h5ad", False, False)],
        ),
        ("合并PDF和图片，再次检查", [("合并PDF和图片，再次检查", False, False)]),
        ("deck.pdf v2.3.0 looks fine", [("deck.pdf v2.3.0 looks fine", False, False)]),
    ],
)
def test_split(message: str, clauses: list[tuple[str, bool, bool]]) -> None:
    assert [(c.text, c.sentence, c.sequence) for c in split(Query.of(message))] == clauses


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> SkillPilot:
    pilot = SkillPilot(home=tmp_path_factory.mktemp("plan-home"), preconditions=False, feedback_enabled=False)
    pilot.index([EXAMPLES / "skills"])
    return pilot


@pytest.mark.parametrize(
    ("message", "steps"),
    [
        (
            "summarise the standup transcript, then create a jira ticket for each action item",
            [
                ("summarise the standup transcript", "meeting-notes"),
                ("create a jira ticket for each action item", "jira-ticket"),
            ],
        ),
        (
            "commit my changes and then write the changelog for the release",
            [("commit my changes", "git-commit"), ("write the changelog for the release", "changelog-writer")],
        ),
        (
            "trim the first 30 seconds of intro.mp4 and then email it to dana@acme.com",
            [("trim the first 30 seconds of intro.mp4", "video-trim"), ("email it to dana@acme.com", "email-send")],
        ),
        (
            "scrape the prices from example.com/shop then plot them as a bar chart",
            [
                ("scrape the prices from example.com/shop", "web-scrape"),
                ("plot them as a bar chart", "spreadsheet-charts"),
            ],
        ),
        (
            "把这段话翻译成英文，然后发邮件给 dana@acme.com",
            [("把这段话翻译成英文", "translate-text"), ("发邮件给 dana@acme.com", "email-send")],
        ),
    ],
)
def test_multi_skill_message_becomes_an_ordered_plan(
    pilot: SkillPilot, message: str, steps: list[tuple[str, str]]
) -> None:
    result = pilot.route(message)
    assert [(s.text, s.skill.id if s.skill else None) for s in result.plan] == steps
    assert all(s.decision == "hard" and s.confidence >= 0.8 for s in result.plan)
    # The whole message is still routed as before: the plan is extra.
    assert result.skill is not None and result.skill.id in {skill for _, skill in steps}
    assert as_plan(result) == result.plan


def test_single_skill_messages_are_not_split(pilot: SkillPilot) -> None:
    lines = (EXAMPLES / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [json.loads(line)["query"] for line in lines if line.strip()]
    assert sum(len(split(Query.of(q))) > 1 for q in queries) >= 3  # the splitter had something to cut
    assert [q for q in queries if pilot.route(q).plan] == []


class _Counting:
    """The real router, counting the routes planning asks for."""

    def __init__(self, pilot: SkillPilot) -> None:
        self.pilot = pilot
        self.routed: list[str] = []

    def route(self, query: Query, *, plan: bool, log: bool) -> RouteResult:
        # A clause is routed explicitly as a piece of the message's decision: not planned, not logged.
        assert (plan, log) == (False, False)
        self.routed.append(query.text)
        return self.pilot.route(query, plan=plan, log=log)


def test_only_messages_with_markers_route_their_clauses(pilot: SkillPilot) -> None:
    router = _Counting(pilot)
    assert plan_steps(router, Query.of("Cut the boring first minute out of my screen recording"), 0.9) == ()
    assert router.routed == []
    steps = plan_steps(router, Query.of("commit my changes and then write the changelog"), 0.0)
    # Each clause once; the clauses' own routes did not plan again.
    assert router.routed == ["commit my changes", "write the changelog"]
    assert [s.skill.id for s in steps if s.skill] == ["git-commit", "changelog-writer"]


def test_a_route_reads_its_message_once_and_each_clause_once(
    pilot: SkillPilot, monkeypatch: pytest.MonkeyPatch
) -> None:
    message = "commit my changes and then write the changelog for the release"
    clauses = ["commit my changes", "write the changelog for the release"]
    assert [s.text for s in pilot.route(message).plan] == clauses  # the catalog is loaded now
    capped: list[str] = []
    split_up: list[str] = []
    cap_query, words = text.cap_query, text.words
    monkeypatch.setattr(text, "cap_query", lambda m: capped.append(m) or cap_query(m))
    monkeypatch.setattr(text, "words", lambda t: split_up.append(t) or words(t))
    result = pilot.route(message)
    # Capped once per route; the message and each clause split into words (and stemmed) once,
    # every stage of the three routes (the message's and each clause's) reading those.
    assert [s.text for s in result.plan] == clauses
    assert capped == [message]
    assert split_up == [message, *clauses]


class _Scripted:
    """A router that answers each clause with a fixed skill, confidence and runner-up score."""

    def __init__(self, answers: dict[str, tuple[str, float, float]]) -> None:
        self.answers = answers

    def route(self, query: Query, *, plan: bool, log: bool) -> RouteResult:
        skill, confidence, runner_up = self.answers[query.text]
        return RouteResult(
            query=query.text,
            skill=SkillRef(skill, skill, skill, skill, skill),
            confidence=confidence,
            decision="hard" if confidence >= 0.8 else "soft",
            method="hybrid",
            alternatives=(Alternative("other", "other", runner_up, "other"),),
        )


@pytest.mark.parametrize(
    ("runner_up", "planned"),
    [(0.01, True), (0.3, False)],  # a contested clause does not name its skill outright
)
def test_clauses_that_each_name_a_skill_outright_plan(runner_up: float, planned: bool) -> None:
    # The whole message routes surer (0.99) than its steps on average: only the steps' own
    # certainty, uncontested by their runners-up, makes the plan.
    router = _Scripted(
        {
            "check the weather in Oslo": ("weather", 0.95, 0.01),
            "find me cheap flights there": ("flights", 0.92, runner_up),
        }
    )
    steps = plan_steps(router, Query.of("check the weather in Oslo and find me cheap flights there"), 0.99)
    assert [s.skill.id for s in steps if s.skill] == (["weather", "flights"] if planned else [])


def test_plan_in_the_route_json(pilot: SkillPilot) -> None:
    data = json.loads(json.dumps(pilot.route("commit my changes and then write the changelog").to_dict()))
    assert [(s["skill"]["id"], s["decision"]) for s in data["plan"]] == [
        ("git-commit", "hard"),
        ("changelog-writer", "hard"),
    ]
    assert set(data["plan"][0]) == {"text", "skill", "confidence", "decision"}
    single = pilot.route("commit my changes")
    assert single.plan == ()
    one = PlanStep("commit my changes", single.skill, single.confidence, single.decision)
    assert as_plan(single) == (one,)


def test_cli_plan(tmp_path: Path) -> None:
    def run(*args: str) -> CliOutcome:
        return run_cli(*args, home=tmp_path / "home", SKILLPILOT_PRECONDITIONS="off")

    assert run("index", str(EXAMPLES / "skills")).returncode == 0
    proc = run("plan", "commit my changes and then write the changelog", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["split"] is True
    assert [s["skill"]["id"] for s in data["steps"]] == ["git-commit", "changelog-writer"]
    human = run("plan", "commit my changes")
    assert human.returncode == 0
    assert human.stdout.startswith("1. hard        git-commit  confidence ")
    assert "one step" in human.stderr


def test_the_guides_plan_example_splits_over_the_example_skills(pilot: SkillPilot) -> None:
    guide = (Path(__file__).parent.parent / "docs" / "guides" / "writing-skills.md").read_text(encoding="utf-8")
    commands = re.findall(r'^skillpilot plan "([^"]+)"$', guide, flags=re.MULTILINE)
    assert commands, "the guide shows a `skillpilot plan` command"
    for message in commands:
        steps = pilot.plan(message).plan
        assert [s.skill.id for s in steps if s.skill] == ["web-scrape", "spreadsheet-charts"], (message, steps)
