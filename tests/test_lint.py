"""``skillpilot lint``: real SKILL.md files, the real router and models, exact findings."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from skillpilot import SkillPilot
from skillpilot.lint import Finding, SkillLint, lint

from .cli_util import CliOutcome, run_cli
from .conftest import EXAMPLES, write_skill

MISSING_ENV = "SKILLPILOT_LINT_TEST_TOKEN"


def _skills(root: Path) -> Path:
    write_skill(
        root,
        "pdf-tools",
        "name: pdf-tools\ndescription: PDF tools.",
        "# PDF tools\n\nMerge, split and rotate PDF files with qpdf.\n",
    )
    write_skill(
        root,
        "slack-post",
        """
        name: slack-post
        description: Post a message to a Slack channel. Use when the user wants to send a message to Slack.
        """,
        "# Slack post\n\nSend the message with the Slack API.\n",
    )
    write_skill(
        root,
        "slack-message",
        """
        name: slack-message
        description: Send a message to a Slack channel or a Slack user. Use when the user wants to message
          someone on Slack, including direct messages.
        """,
        "# Slack message\n\nSend the message with the Slack API, to a channel or as a direct message.\n",
    )
    write_skill(
        root,
        "deploy-app",
        """
        name: deploy-app
        description: Deploy the web app to the staging server with the deploy script. Use when the user wants
          to deploy or ship the app to staging.
        route:
          triggers: [deploy the app]
        """,
        "# Deploy\n\nRun ./deploy.sh staging.\n",
    )
    write_skill(
        root,
        "release-app",
        """
        name: release-app
        description: Release the web app to production after the checks pass, and tag the release in git.
          Use when the user wants to release to production.
        route:
          triggers: [deploy the app to production]
        """,
        "# Release\n\nRun the checks, then ./deploy.sh production and git tag.\n",
    )
    write_skill(
        root,
        "docx-merge",
        """
        name: docx-merge
        description: Merge several Word documents into one file, keeping their styles. Use when the user
          wants to combine .docx files.
        """,
        "# Merge\n\nUse python-docx.\n",
    )
    write_skill(
        root,
        "office-tools",
        """
        name: office-tools
        description: Work with office files of every kind. Merge several Word documents into one file.
          Convert spreadsheets to CSV and count words in documents.
        """,
        "# Office\n\nVarious helpers.\n",
    )
    write_skill(
        root,
        "weather-report",
        f"""
        name: weather-report
        description: Fetch the weather forecast for a city from the weather API. Use when the user asks
          about the weather, rain or temperature somewhere.
        requires:
          env: [{MISSING_ENV}]
        """,
        "# Weather\n\nCall the API with the token.\n",
    )
    return root


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SkillLint]:
    root = _skills(tmp_path_factory.mktemp("lint-skills"))
    pilot = SkillPilot(home=tmp_path_factory.mktemp("lint-home"), preconditions=False, feedback_enabled=False)
    pilot.index([root])
    results = lint(pilot)
    assert [r.score for r in results] == sorted(r.score for r in results)
    return {r.id: r for r in results}


def _finding(report: SkillLint, code: str) -> Finding:
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, [f.code for f in report.findings]
    return found[0]


def test_short_description_is_an_error(reports: dict[str, SkillLint]) -> None:
    report = reports["pdf-tools"]
    short = _finding(report, "short-description")
    assert (short.severity, short.evidence) == ("error", ("description: 'PDF tools.'",))
    use_when = _finding(report, "no-use-when")
    assert use_when.fix == "add a 'Use when the user ...' sentence to the description"
    assert report.score == 100 - short.penalty - use_when.penalty
    assert report.failing


def test_conflict_group_without_prefer_when_gets_words_only_it_uses(reports: dict[str, SkillLint]) -> None:
    finding = _finding(reports["slack-message"], "missing-prefer-when")
    assert finding.evidence[0].startswith("conflict group ")
    assert finding.evidence[0].endswith("slack-message, slack-post")
    assert "direct" in finding.fix.split(": ", 1)[1].split(", ")
    assert "post" in _finding(reports["slack-post"], "missing-prefer-when").fix


def test_trigger_colliding_with_another_skills_trigger(reports: dict[str, SkillLint]) -> None:
    collision = _finding(reports["release-app"], "trigger-collision")
    assert collision.evidence == (
        "trigger 'deploy the app to production' also fires deploy-app's trigger 'deploy the app'",
    )
    assert collision.severity == "error"
    # The shorter trigger does not contain the longer one: no collision the other way.
    assert all(f.code != "trigger-collision" for f in reports["deploy-app"].findings)


def test_own_sentence_routing_to_another_skill_is_confusable(reports: dict[str, SkillLint]) -> None:
    confusable = _finding(reports["office-tools"], "confusable")
    assert confusable.message == "what it says it is for routes to docx-merge"
    assert confusable.evidence[0].startswith("'Merge several Word documents into one file' routes to docx-merge (")
    assert all(f.code != "confusable" for f in reports["docx-merge"].findings)


def test_unmet_preconditions_are_information_only(reports: dict[str, SkillLint]) -> None:
    assert MISSING_ENV not in os.environ
    report = reports["weather-report"]
    finding = _finding(report, "unmet-preconditions")
    assert (finding.severity, finding.penalty) == ("info", 0.0)
    assert finding.evidence == (f"env {MISSING_ENV} is not set",)
    assert report.score == 100.0 and not report.failing


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SkillLint]:
    home = tmp_path_factory.mktemp("lint-examples")
    pilot = SkillPilot(home=home, preconditions=False, feedback_enabled=False)
    pilot.index([EXAMPLES / "skills"])
    return {r.id: r for r in lint(pilot)}


def test_example_skills(examples: dict[str, SkillLint]) -> None:
    vague = _finding(examples["translate-text"], "vague-description")
    assert "closer to localize-app-strings's description" in vague.evidence[0]
    assert examples["git-commit"].score == 100.0 and not examples["git-commit"].findings
    # csv-analyze's body sends charts to spreadsheet-charts: a redirect, not a claim.
    assert all(f.code != "confusable" for f in examples["csv-analyze"].findings)


def test_an_indexed_skill_scores_the_same_by_id_and_by_path(tmp_path: Path) -> None:
    home = tmp_path / "home"
    pilot = SkillPilot(home=home, preconditions=False, feedback_enabled=False)
    pilot.index([EXAMPLES / "skills"])
    by_id = {r.id: r for r in lint(pilot, only={"translate-text"})}["translate-text"]
    assert by_id.score < 100.0  # vague beside localize-app-strings: found only against the index
    pilot.close()
    proc = run_cli("lint", str(EXAMPLES / "skills" / "translate-text"), "--json", home=home)
    assert proc.returncode == 0, proc.stderr
    (by_path,) = json.loads(proc.stdout)["skills"]
    assert (by_path["id"], by_path["score"]) == ("translate-text", by_id.score)
    # A folder the index does not hold is linted on its own, as before.
    alone = tmp_path / "alone"
    shutil.copytree(EXAMPLES / "skills" / "translate-text", alone / "translate-text")
    proc = run_cli("lint", str(alone), "--json", home=home)
    assert json.loads(proc.stdout)["skills"][0]["score"] == 100.0


def test_a_skill_indexed_by_keywords_only_is_linted_beside_embedded_ones(tmp_path: Path) -> None:
    home = tmp_path / "home"
    pilot = SkillPilot(home=home, preconditions=False, feedback_enabled=False)
    pilot.index([EXAMPLES / "skills"])
    words_only = tmp_path / "words-only"
    write_skill(words_only, "lunch-order", "name: lunch-order\ndescription: Order lunch for the team.")
    SkillPilot(home=home, enable_semantic=False).index([words_only])
    reports = {r.id: r for r in lint(pilot)}  # raised KeyError on the skill without vectors
    assert {f.code for f in reports["lunch-order"].findings} >= {"short-description"}
    assert len(reports) == 17
    pilot.close()


def _cli(*args: str, home: Path) -> CliOutcome:
    # Keyword-only keeps each process fast; the checks that need meaning are tested above.
    return run_cli(*args, home=home, SKILLPILOT_ENABLE_SEMANTIC="false")


def test_cli_strict_fails_on_warnings_and_unreadable_files(isolated_home: Path, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "pdf-tools", "name: pdf-tools\ndescription: PDF tools.", "# PDF\n\nMerge PDF files.\n")
    proc = _cli("lint", str(root), "--strict", "--json", home=isolated_home)
    assert proc.returncode == 4, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["failing"], data["skipped"]) == (1, [])
    assert data["skills"][0]["id"] == "pdf-tools" and data["skills"][0]["failing"] is True
    assert {f["code"] for f in data["skills"][0]["findings"]} == {"short-description", "no-use-when"}
    assert _cli("lint", str(root), home=isolated_home).returncode == 0

    clean = tmp_path / "clean"
    shutil.copytree(EXAMPLES / "skills" / "git-commit", clean / "git-commit")
    assert _cli("lint", str(clean), "--strict", home=isolated_home).returncode == 0
    broken = clean / "broken" / "SKILL.md"
    broken.parent.mkdir()
    broken.write_text("no frontmatter here\n", encoding="utf-8")
    proc = _cli("lint", str(clean), "--strict", home=isolated_home)
    assert proc.returncode == 4
    assert f"skipped {broken}" in proc.stderr


def test_cli_without_paths_lints_the_index(isolated_home: Path) -> None:
    proc = _cli("lint", home=isolated_home)
    assert proc.returncode == 0
    assert proc.stdout == "no skills to lint: run `skillpilot index` first, or pass skill folders\n"
    assert _cli("index", str(EXAMPLES / "skills"), home=isolated_home).returncode == 0
    proc = _cli("lint", "--json", home=isolated_home)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["skills"]) == 16


# Twenty tools, each described by what only it handles, and one skill described in the words
# they all share: enough skills for word counts to mean something (GENERIC_MIN_SKILLS).
_TOOLS = (
    "ffmpeg video clips",
    "pandoc markup conversions",
    "terraform cloud infrastructure",
    "kubectl pod logs",
    "psql postgres tables",
    "redis cache keys",
    "nginx virtual hosts",
    "certbot tls certificates",
    "rsync incremental backups",
    "exiftool photo metadata",
    "tesseract scanned receipts",
    "graphviz dependency graphs",
    "sqlite embedded databases",
    "imagemagick thumbnail images",
    "gpg detached signatures",
    "jq json documents",
    "cron recurring schedules",
    "qpdf encrypted pages",
    "whisper audio transcripts",
    "ledger household budgets",
)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SkillLint]:
    root = tmp_path_factory.mktemp("lint-catalog")
    for tool in _TOOLS:
        binary, subject = tool.split(" ", 1)
        write_skill(
            root,
            binary,
            f"""
            name: {binary}
            description: Create {subject} files with {binary}. Use when the user asks about {subject}.
            """,
            f"# {binary}\n\nRun {binary} on the {subject}.\n",
        )
    write_skill(
        root,
        "project-helper",
        """
        name: project-helper
        description: Create files for the user. Use when the user asks to create files.
        """,
        "# Project helper\n\n- Summarise the changelog into release highlights\n",
    )
    # Its first tasks are its own; the later ones are other tools' work. Spread over the body,
    # the sample reaches them.
    own = [
        f"Draft the {n} release notes section from the merged pull requests"
        for n in ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
    ]
    others = [
        f"Create {subject} files"
        for subject in (
            "video clips",
            "postgres tables",
            "json documents",
            "tls certificates",
            "audio transcripts",
            "photo metadata",
            "pod logs",
            "cache keys",
        )
    ]
    write_skill(
        root,
        "release-notes",
        """
        name: release-notes
        description: Draft release notes from merged pull requests, grouped by change type. Use when the
          user wants release notes or a changelog for a version.
        """,
        "# Release notes\n\n"
        + "Release notes are drafted from merged pull requests. " * 6
        + "\n\n"
        + "- Not for encrypted pdf pages files: use a pdf tool instead\n"
        + "".join(f"- {task}\n" for task in [*own, *others]),
    )
    # Keyword-only: the check counts words, and the routes are fast without the models.
    pilot = SkillPilot(
        home=tmp_path_factory.mktemp("lint-catalog-home"),
        preconditions=False,
        feedback_enabled=False,
        enable_semantic=False,
    )
    pilot.index([root])
    return {r.id: r for r in lint(pilot)}


def test_description_in_everyone_s_words_is_generic(catalog: dict[str, SkillLint]) -> None:
    generic = _finding(catalog["project-helper"], "generic-description")
    assert (generic.severity, generic.penalty) == ("warning", 15.0)
    assert generic.evidence == (
        "a typical word of the description is in 21.2 of the 22 descriptions, more than for 75% of the skills",
        "its most shared words: 'user' (21 others), 'asks' (20 others), 'create' (20 others), 'files' (20 others)",
    )
    # The body's salient words it leaves out of the description, rarest in the catalog first
    # (release-notes' description says "changelog" and "release").
    assert generic.fix.endswith(": mention 'highlights', 'summarise', 'changelog', 'release'")
    # Each other skill's own words set it apart; its shared ones are no more than the catalog's usual.
    assert [k for k, r in catalog.items() for f in r.findings if f.code == "generic-description"] == ["project-helper"]


def test_body_tasks_are_sampled_across_the_body(catalog: dict[str, SkillLint]) -> None:
    vague = _finding(catalog["release-notes"], "vague-description")
    # Every other item of 16 is sampled (a redirect is not a task): 4 of its own tasks and 4
    # others', which go elsewhere.
    assert [e.split(" (routes to ")[0] for e in vague.evidence] == [
        f"the body's task 'Create {subject} files' leaves it out of the route's top 3"
        for subject in ("video clips", "json documents", "audio transcripts", "pod logs")
    ]
    assert vague.evidence[0].startswith(
        "the body's task 'Create video clips files' leaves it out of the route's top 3 (routes to ffmpeg, "
    )
    assert vague.penalty == 30 * 4 / 8
