"""The fast path on the real conflict catalog (14 SKILL.md files with route: hints) and the real
294-skill catalog: exact scores, evidence and order for trigger, name and prefer_when hits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skillpilot.limits import MAX_QUERY_CHARS
from skillpilot.model import Evidence, FastHit, Fingerprint, IndexedSkill, Requirements, RouteHints, Skill
from skillpilot.retrieve.fast import ROUTE_AT_ONCE, FastMatcher
from skillpilot.text import Query

from .conftest import require_corpus

BENCH = Path(__file__).resolve().parents[1].parent / "shared" / "bench"
CONFLICTS = BENCH / "conflicts"
# The conflict catalog's matcher and its skill keys in catalog order.
Conflicts = tuple[FastMatcher, list[str]]
NO_FINGERPRINT = Fingerprint(
    intent_patterns=(),
    keywords=(),
    side_effects="read-only",
    side_effects_declared=False,
    preconditions=Requirements(),
)


def make(name: str, description: str = "", body: str = "", route: RouteHints | None = None) -> IndexedSkill:
    skill = Skill(
        key=name,
        name=name,
        description=description,
        body=body,
        path=f"/skills/{name}",
        root="/skills",
        route=route or RouteHints(),
    )
    return IndexedSkill(id=name, skill=skill, fingerprint=NO_FINGERPRINT, indexed_at=0.0)


def from_skill_md(folder: Path) -> IndexedSkill:
    """A real SKILL.md as an IndexedSkill (a test-local reader: the loader is another stage)."""
    _, front, body = (folder / "SKILL.md").read_text(encoding="utf-8").split("---\n", 2)
    meta = yaml.safe_load(front)
    route = meta.get("route", {})
    hints = RouteHints(triggers=tuple(route.get("triggers", ())), prefer_when=tuple(route.get("prefer_when", ())))
    return make(meta["name"], meta["description"], body, hints)


@pytest.fixture(scope="module")
def conflicts() -> Conflicts:
    require_corpus()
    catalog = [from_skill_md(folder) for folder in sorted(CONFLICTS.iterdir()) if folder.is_dir()]
    return FastMatcher(catalog), [skill.key for skill in catalog]


def ranked(conflicts: Conflicts, query: str) -> list[tuple[str, float, tuple[str, ...]]]:
    matcher, keys = conflicts
    return [(keys[hit.index], hit.score, tuple(map(str, hit.evidence))) for hit in matcher.match(Query.of(query))]


def said(hits: list[FastHit]) -> list[tuple[int, float, tuple[str, ...]]]:
    """Hits as (catalog position, score, evidence as explanations quote it)."""
    return [(hit.index, hit.score, tuple(map(str, hit.evidence))) for hit in hits]


def test_trigger_hit_routes_at_once_with_evidence(conflicts: Conflicts) -> None:
    matcher, keys = conflicts
    hits = matcher.match(Query.of("open a PR for my feature branch"))
    evidence = (Evidence("trigger", "open a PR"), Evidence("prefer_when", "PR"))
    assert hits == [FastHit(keys.index("github"), 9.0, evidence)]
    assert tuple(map(str, evidence)) == ("trigger 'open a PR'", "prefer_when 'PR'")
    assert hits[0].score >= ROUTE_AT_ONCE


@pytest.mark.parametrize("query", ["opening a PR", "Open the PR", "OPENED a pr"])
def test_trigger_matches_stemmed_and_ignores_stop_words(conflicts: Conflicts, query: str) -> None:
    assert ranked(conflicts, query) == [("github", 9.0, ("trigger 'open a PR'", "prefer_when 'PR'"))]


def test_trigger_needs_its_words_in_order(conflicts: Conflicts) -> None:
    assert ranked(conflicts, "the PR I was opening") == [("github", 0.5, ("prefer_when 'PR'",))]
    assert ranked(conflicts, "create an issue") == [("github", 9.0, ("trigger 'create issue'", "prefer_when 'issue'"))]


def test_two_triggers_of_different_skills_longer_first(conflicts: Conflicts) -> None:
    # "check CI status" has three terms (8 + 1.0), "open a PR" two (8 + 0.5); each + one prefer_when.
    assert ranked(conflicts, "check CI status and then open a PR") == [
        ("github-actions", 9.5, ("trigger 'check CI status'", "prefer_when 'CI'")),
        ("github", 9.0, ("trigger 'open a PR'", "prefer_when 'PR'")),
    ]


def test_name_mention_scores_six_and_longest_name_wins(conflicts: Conflicts) -> None:
    assert ranked(conflicts, "use docker-compose to start it") == [
        ("docker-compose", 6.5, ("name 'docker-compose'", "prefer_when 'compose'"))
    ]
    # "docker" lies inside the docker-compose mention, so the docker skill gets no name hit.
    assert ranked(conflicts, "docker compose logs for the web service") == [
        ("docker-compose", 7.0, ("name 'docker-compose'", "prefer_when 'compose'", "prefer_when 'services'"))
    ]
    assert ranked(conflicts, "run a docker container") == [
        ("docker", 6.5, ("name 'docker'", "prefer_when 'container'"))
    ]


def test_name_used_by_other_descriptions_is_generic(conflicts: Conflicts) -> None:
    # slack-advanced's and slack-notifier's descriptions say "Slack": 2 >= max(2, ceil(14%)).
    assert ranked(conflicts, "what is new in slack") == [("slack", 4.0, ("name 'slack' (generic)",))]
    assert ranked(conflicts, "post in slack that the build is done") == [
        ("slack", 8.5, ("trigger 'post in slack'", "name 'slack' (generic)"))
    ]


def test_generic_names_in_the_real_catalog() -> None:
    require_corpus()
    entries = json.loads((BENCH / "skills" / "index.json").read_text(encoding="utf-8"))
    catalog = [make(entry["name"], entry["description"]) for entry in entries]
    matcher = FastMatcher(catalog)

    def names(query: str) -> list[tuple[str, float]]:
        return [(catalog[hit.index].name, hit.score) for hit in matcher.match(Query.of(query))]

    # "commit" is in 10 other descriptions (threshold max(2, ceil(2.94)) = 3); "weather" in 1.
    assert names("commit my changes") == [("commit", 4.0)]
    assert names("what's the weather tomorrow in Berlin") == [("weather", 6.0)]
    assert names("use the github cli to list issues") == [("github", 4.0)]
    assert names("run semgrep on the repo") == [("semgrep", 6.0)]


def test_short_single_word_names_do_not_count() -> None:
    matcher = FastMatcher([make("gh"), make("pdf"), make("gh-cli"), make("tmux")])
    assert matcher.match(Query.of("gh pdf")) == []
    assert said(matcher.match(Query.of("the gh cli"))) == [(2, 6.0, ("name 'gh-cli'",))]
    assert said(matcher.match(Query.of("split the tmux window"))) == [(3, 6.0, ("name 'tmux'",))]


@pytest.mark.parametrize(
    "query",
    ["what's the weather in Paris", "book me a flight to Tokyo next Friday", "今天午饭吃什么好", "", "do it"],
)
def test_unrelated_query_finds_nothing(conflicts: Conflicts, query: str) -> None:
    assert ranked(conflicts, query) == []


def test_prefer_when_never_reaches_route_at_once() -> None:
    words = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")
    matcher = FastMatcher([make("phonetics", route=RouteHints(prefer_when=words))])
    assert said(matcher.match(Query.of("alpha bravo charlie delta echo foxtrot"))) == [
        (0, 1.5, tuple(f"prefer_when {w!r}" for w in words))
    ]
    # The name and every prefer_when word together still stop at 7.5.
    assert matcher.match(Query.of("phonetics alpha bravo charlie delta"))[0].score == 7.5


def test_stop_word_prefer_when_is_matched_as_written(conflicts: Conflicts) -> None:
    # github-advanced's "all repos" would be just "repo" without its stop word.
    assert ranked(conflicts, "file an issue about the login bug in our repo") == [
        ("github", 0.5, ("prefer_when 'issue'",))
    ]
    assert ranked(conflicts, "close stale issues across all repos") == [
        ("github", 0.5, ("prefer_when 'issue'",)),
        ("github-advanced", 0.5, ("prefer_when 'all repos'",)),
    ]
    assert ranked(conflicts, "fill out the W-9 form") == [
        ("pdf-forms", 1.5, ("prefer_when 'fill'", "prefer_when 'W-9'", "prefer_when 'form'"))
    ]


def test_chinese_trigger_matches_as_a_substring() -> None:
    matcher = FastMatcher([make("team-chat", route=RouteHints(triggers=("发消息",)))])
    # Three CJK characters are three terms: 8 + 1.0.
    assert said(matcher.match(Query.of("帮我发消息给团队"))) == [(0, 9.0, ("trigger '发消息'",))]
    assert matcher.match(Query.of("消息发出去了吗")) == []


def test_repeats_count_once_and_stop_word_triggers_are_ignored() -> None:
    route = RouteHints(triggers=("deploy the site", "deploy the site", "do it"), prefer_when=("site",))
    matcher = FastMatcher([make("publisher", route=route)])
    assert said(matcher.match(Query.of("deploy the site, then deploy the site again"))) == [
        (0, 9.0, ("trigger 'deploy the site'", "prefer_when 'site'"))
    ]
    assert matcher.match(Query.of("just do it")) == []


def test_query_is_capped_before_matching(conflicts: Conflicts) -> None:
    padding = "x" * (MAX_QUERY_CHARS - len("open a "))
    assert ranked(conflicts, padding + " open a PR") == []
    assert ranked(conflicts, "open a PR " + padding)[0][0] == "github"
