"""Redirects skill authors write ("NOT for testing — use playwright-pro"): read at index time,
applied at route time, shown by explain, checked by lint. Real SKILL.md files (the fixture corpus
``tests/fixtures/redirects``, texts written for these tests after real skills'), a real index and
the bundled models."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillpilot import SkillPilot
from skillpilot.fingerprint import fingerprint
from skillpilot.index.codec import fingerprint_to_json, skill_to_json, stored_from_json
from skillpilot.lint import lint
from skillpilot.model import Redirect, Skill

from .cli_util import run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "redirects"
NOT_FOR_TESTING = " NOT for testing — use playwright-pro for that."


def _skill(description: str, body: str = "", name: str = "some-skill") -> Skill:
    return Skill(key=name, name=name, description=description, body=body, path="/x", root="/")


@pytest.mark.parametrize(
    ("description", "body", "expected"),
    [
        (
            "Automate browser tasks. NOT for testing — use playwright-pro for that.",
            "",
            (Redirect("testing", "playwright-pro"),),
        ),
        (
            "Generate images. For flowcharts, circuits, pathways, and technical diagrams, use the "
            "scientific-schematics skill instead.",
            "",
            (Redirect("flowcharts, circuits, pathways, and technical diagrams", "scientific-schematics"),),
        ),
        (
            "Plan A/B tests. For tracking implementation, see analytics-tracking.",
            "",
            (Redirect("tracking implementation", "analytics-tracking"),),
        ),
        (
            "Price a product. NOT for customer success or renewals (use customer-success-manager).",
            "",
            (Redirect("customer success or renewals", "customer-success-manager"),),
        ),
        (
            "Search the web.",
            "- If a site is blocked or too JS-heavy, prefer the `summarize` skill.\n",
            (Redirect("a site is blocked or too JS-heavy", "summarize"),),
        ),
        (
            "Run coding agents.",
            "Use the tmux skill for interactive coding sessions.\n",
            (Redirect("interactive coding sessions", "tmux"),),
        ),
        (
            "Scrape sites.",
            "## When not to use\n- Load testing or benchmarking — use **performance-profiler** instead\n",
            (Redirect("Load testing or benchmarking", "performance-profiler"),),
        ),
        ("Dock molecules. Not for affinity prediction.", "", (Redirect("affinity prediction"),)),
        (
            "Build HTML artifacts. Don't use this skill for simple single-file pages.",
            "",
            (Redirect("simple single-file pages"),),
        ),
        # Not redirects: a technique, a file, code, an example, the skill itself, a body's bare "not for".
        ("Make slides. If the content is qualitative, use text-based layouts instead.", "", ()),
        ("Write skills.", "For the official practices, see best-practices.md in this folder.\n", ()),
        ("Analyse data.", "Use `foldby` instead of `groupby`. Use expo-image for all images.\n", ()),
        ("Call the API. For example, use claude-sonnet-4-6.", "", ()),
        ("Build images. For container work, use some-skill.", "", ()),
        ("Fetch pages.", "Content extraction is best-effort (good for articles; not for app-like sites).\n", ()),
        ("Review code.", "```\n# NOT for testing — use playwright-pro\n```\n", ()),
    ],
)
def test_fingerprint_reads_what_authors_write(description: str, body: str, expected: tuple[Redirect, ...]) -> None:
    assert fingerprint(_skill(description, body)).redirects == expected


def test_an_index_without_redirects_gets_them_from_the_skill() -> None:
    skill = _skill("Automate browser tasks." + NOT_FOR_TESTING)
    stored = json.loads(fingerprint_to_json(fingerprint(skill)))
    assert stored["redirects"] == [{"case": "testing", "target": "playwright-pro"}]
    # As a store reads a row back (skill JSON, fingerprint JSON, indexed_at).
    assert stored_from_json(skill_to_json(skill), json.dumps(stored), 0.0).fingerprint == fingerprint(skill)
    del stored["redirects"]
    read = stored_from_json(skill_to_json(skill), json.dumps(stored), 0.0)
    assert read.fingerprint.redirects == (Redirect("testing", "playwright-pro"),)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, SkillPilot]]:
    """The fixture corpus as written, and a copy whose browser-automation has no redirect."""
    work = tmp_path_factory.mktemp("redirects")
    plain = work / "plain"
    shutil.copytree(FIXTURES, plain)
    automation = plain / "browser-automation" / "SKILL.md"
    text = automation.read_text(encoding="utf-8")
    assert NOT_FOR_TESTING in text
    automation.write_text(text.replace(NOT_FOR_TESTING, ""), encoding="utf-8")
    pilots = {}
    for name, root in (("redirecting", FIXTURES), ("plain", plain)):
        pilot = SkillPilot(home=work / f"home-{name}", log_enabled=False)
        pilot.index([root])
        pilots[name] = pilot
    yield pilots


@pytest.mark.parametrize(
    "message", ["test the checkout flow in a real browser", "automate a browser test of the signup form"]
)
def test_a_message_for_the_redirected_case_goes_to_the_named_skill(
    corpora: dict[str, SkillPilot], message: str
) -> None:
    # Without the author's "NOT for testing" the browser words win.
    assert corpora["plain"].route(message).skill.id == "browser-automation"  # type: ignore[union-attr]
    result = corpora["redirecting"].route(message)
    assert result.skill is not None and result.skill.id == "playwright-pro"
    assert "redirect: browser-automation sends 'testing' to playwright-pro; the message is about 'testing'" in (
        result.reasons
    )
    assert "score multiplied by 4.00 (redirect)" in result.reasons
    # The two share a conflict group: the redirect, not their words, settles the contest.
    assert result.conflict_resolved and result.conflict_alternatives == ("browser-automation",)
    assert result.reasons[0] == "chose playwright-pro over browser-automation: browser-automation sends 'testing' to it"


@pytest.mark.parametrize(
    ("message", "skill"),
    [
        ("scrape product prices from this website every morning", "browser-automation"),
        ("fill in this web form for every row of my spreadsheet", "browser-automation"),
        ("generate a watercolor illustration of a fox", "generate-image"),
    ],
)
def test_a_message_for_the_skill_s_own_case_still_goes_to_it(
    corpora: dict[str, SkillPilot], message: str, skill: str
) -> None:
    result = corpora["redirecting"].route(message, trace=True)
    assert result.skill is not None and result.skill.id == skill
    # Decided as without any redirect sentence, and not passed through.
    assert result.decision == corpora["plain"].route(message).decision != "passthrough"
    assert not any(r.startswith("redirect:") for r in result.reasons)
    assert result.trace is not None and not any(t.stage.startswith("redirects") for t in result.trace)


def test_explain_shows_the_redirect_stage(corpora: dict[str, SkillPilot]) -> None:
    home = corpora["redirecting"].settings.home
    outcome = run_cli("explain", "test the checkout flow in a real browser", "--json", home=home)
    assert outcome.returncode == 0, outcome.stderr
    stages = {t["stage"]: t for t in json.loads(outcome.stdout)["trace"]}
    redirects = stages["redirects: skills' own 'not for X, use Y'"]
    assert redirects["candidates"] == [["browser-automation", 0.25], ["playwright-pro", 4.0]]
    assert redirects["notes"] == [
        "browser-automation sends 'testing' to playwright-pro; the message is about 'testing'"
    ]
    fusion = next(t for name, t in stages.items() if name.startswith("fusion"))
    assert "playwright-pro: x4.00" in fusion["notes"] and "browser-automation: x0.25" in fusion["notes"]
    text = run_cli("explain", "test the checkout flow in a real browser", home=home)
    assert "redirects: skills' own 'not for X, use Y'" in text.stdout


def test_lint_reports_a_redirect_to_a_skill_that_is_not_installed(corpora: dict[str, SkillPilot]) -> None:
    reports = {r.id: r for r in lint(corpora["redirecting"])}
    missing = {
        skill: [f for f in report.findings if f.code == "redirect-target-missing"] for skill, report in reports.items()
    }
    assert {skill for skill, found in missing.items() if found} == {"ab-test-setup", "browser-automation"}
    (finding,) = missing["ab-test-setup"]
    assert finding.severity == "info" and finding.penalty == 0.0
    assert finding.evidence == ("'tracking implementation' -> analytics-tracking",)
    assert "analytics-tracking" in finding.message
    # playwright-pro is installed: only the performance-profiler redirect is reported.
    assert missing["browser-automation"][0].evidence == (
        "'Load testing or performance benchmarking' -> performance-profiler",
    )


def test_a_message_naming_the_redirecting_skill_gets_it(corpora: dict[str, SkillPilot]) -> None:
    result = corpora["redirecting"].route("run browser-automation to test the checkout flow", trace=True)
    assert result.skill is not None and result.skill.id == "browser-automation"
    assert "name 'browser-automation'" in result.reasons
    assert result.trace is not None and not any(t.stage.startswith("redirects") for t in result.trace)


def test_a_redirect_to_a_skill_the_host_does_not_offer_does_nothing(tmp_path: Path) -> None:
    offered, other = tmp_path / "offered", tmp_path / "other"
    shutil.copytree(FIXTURES, offered)
    (other / "playwright-pro").parent.mkdir(parents=True)
    shutil.move(offered / "playwright-pro", other / "playwright-pro")
    pilot = SkillPilot(home=tmp_path / "home", log_enabled=False)
    pilot.index([offered, other])
    message = "test the checkout flow in a real browser"
    assert pilot.route(message).skill.id == "playwright-pro"  # type: ignore[union-attr]
    only_offered = pilot.route(message, roots=[str(offered)], trace=True)
    assert only_offered.skill is not None and only_offered.skill.id == "browser-automation"
    assert only_offered.trace is not None and not any(t.stage.startswith("redirects") for t in only_offered.trace)
