"""Fingerprints of real SKILL.md files and catalogs, and unmet preconditions on a real PATH."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from skillpilot.fingerprint import fingerprint, unmet_preconditions
from skillpilot.model import Fingerprint, Requirements
from skillpilot.skills import load_skills, parse_skill_md, parse_tool_catalog
from skillpilot.text import STOP_WORDS

from .conftest import require_corpus

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO.parent / "shared" / "bench"


def fp_of(tmp_path: Path, description: str, body: str = "Body.", name: str = "demo", extra: str = "") -> Fingerprint:
    path = tmp_path / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {json.dumps(description)}\n{extra}---\n{body}\n")
    return fingerprint(parse_skill_md(path, tmp_path))


@pytest.mark.parametrize(
    ("description", "pattern"),
    [
        ("Manage notes. Use when a user asks to add a note. Needs memo.", "a user asks to add a note"),
        ("Art with p5.js. Use this when users request generative art.", "users request generative art"),
        ("Brand colours. USE THIS SKILL WHEN styling a slide deck!", "styling a slide deck"),
        (
            "Invoke this skill when the build is red, e.g. after a push.",
            "the build is red, e.g. after a push",
        ),
        ("Weather lookups. Call when the user mentions rain or sun.", "the user mentions rain or sun"),
        ("Triggered by phrases like 'order food' or 'reorder'.", "phrases like 'order food' or 'reorder'"),
        (
            "Slack admin. Use for bulk messaging and channel archiving.",
            "bulk messaging and channel archiving",
        ),
        (
            "Reorder Foodora orders. Triggers: order food, reorder, track ETA.",
            "order food, reorder, track ETA",
        ),
        (
            "When the user wants a social media plan, draft one.",
            "the user wants a social media plan, draft one",
        ),
    ],
)
def test_intent_patterns_from_each_cue(tmp_path: Path, description: str, pattern: str) -> None:
    assert fp_of(tmp_path, description).intent_patterns == (pattern,)


def test_intent_patterns_take_description_then_body_then_when_to_use_bullets(tmp_path: Path) -> None:
    body = (
        "# Demo\n\nUse this skill when the **deploy** fails.\n\n```sh\n# use when testing\n```\n"
        "## When to Use This Skill\n\n- Running a `giveaway`\n- Picking [raffle](http://x) winners\n\n"
        "## Other\n- not this\n"
    )
    fp = fp_of(tmp_path, "Deploy helper. Use when shipping to production.", body)
    assert fp.intent_patterns == (
        "shipping to production",
        "the deploy fails",
        "Running a giveaway",
        "Picking raffle winners",
    )


def test_intent_patterns_stop_at_ten(tmp_path: Path) -> None:
    body = "\n".join(f"Use when case number {i} happens." for i in range(15))
    fp = fp_of(tmp_path, "Handles many cases of things happening.", body)
    assert fp.intent_patterns == tuple(f"case number {i} happens" for i in range(10))


def test_keywords_prefer_name_and_description_and_skip_noise(tmp_path: Path) -> None:
    body = (
        "This skill helps the user. Use the https://example.com page.\n" + "invoice " * 3 + "\n"
        "```python\nimport totallyhiddenmodule\n```\n"
        + "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike oscar papa"
    )
    fp = fp_of(tmp_path, "Convert invoices to ledger entries for bookkeeping.", body, name="ledger-sync")

    # ledger: name + description; invoice: description + three body mentions; sync: name only.
    assert fp.keywords[:3] == ("ledger", "invoice", "sync")
    assert len(fp.keywords) == 15
    lowered = {k.lower() for k in fp.keywords}
    assert not lowered & STOP_WORDS
    assert not lowered & {"skill", "user", "https", "com", "totallyhiddenmodule"}


@pytest.mark.parametrize(
    ("description", "side_effects"),
    [
        ("Send a message to a Slack channel when a deploy finishes.", "write-remote"),
        ("Create and comment on GitHub issues for the current repository.", "write-remote"),
        ("Edit local markdown files and rename headings consistently.", "write-local"),
        ("Download a web page and extract its main article text.", "network"),
        ("Read a Jira board and summarise the sprint.", "network"),
        ("Explain what a regular expression matches, step by step.", "read-only"),
        ("Write a blameless post-mortem for an incident.", "write-local"),
    ],
)
def test_side_effects_are_inferred_from_the_text(tmp_path: Path, description: str, side_effects: str) -> None:
    fp = fp_of(tmp_path, description)
    assert (fp.side_effects, fp.side_effects_declared) == (side_effects, False)


def test_declared_side_effects_win_over_the_text(tmp_path: Path) -> None:
    fp = fp_of(tmp_path, "Send a message to a Slack channel.", extra="route:\n  side_effects: read-only\n")
    assert (fp.side_effects, fp.side_effects_declared) == ("read-only", True)


def test_preconditions_are_the_skill_requirements(tmp_path: Path) -> None:
    fp = fp_of(tmp_path, "Use gh.", extra="requires:\n  env: [GITHUB_TOKEN]\n  bins: [gh]\n")
    assert fp.preconditions == Requirements(env=("GITHUB_TOKEN",), bins=("gh",))


def test_quality_issues_name_what_to_fix(tmp_path: Path) -> None:
    fp = fp_of(tmp_path, "Does PDFs.", body="", name="PDF_Tool")
    assert [(i.code, i.message) for i in fp.quality_issues] == [
        ("short-description", "description has fewer than 8 words"),
        ("no-use-when", "no 'use when' signal in the description or body"),
        ("empty-body", "body is empty: add instructions below the frontmatter"),
        ("name-format", "name 'PDF_Tool' is not lowercase words joined by hyphens (at most 64 characters)"),
    ]


def test_a_well_written_skill_has_no_quality_issues(tmp_path: Path) -> None:
    fp = fp_of(tmp_path, "Fill PDF forms from a JSON file. Use when the user sends a form to complete.")
    assert fp.quality_issues == ()


def test_catalog_tools_are_not_held_to_skill_md_rules(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"name": "getWeather", "description": "Forecast for a city, by day."}]))
    (tool,), _ = parse_tool_catalog(path)
    assert [i.code for i in fingerprint(tool).quality_issues] == ["short-description", "no-use-when"]


def test_unmet_preconditions_in_words(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text("#!/bin/sh\n")
    (bin_dir / "gh").chmod(0o755)
    other_os = "win32" if sys.platform != "win32" else "darwin"
    req = Requirements(env=("GITHUB_TOKEN", "EMPTY", "SET"), bins=("gh", "jq"), os=(other_os, "sunos5"))

    unmet = unmet_preconditions(req, {"PATH": str(bin_dir), "EMPTY": "", "SET": "x"})

    assert unmet == (
        "env GITHUB_TOKEN is not set",
        "env EMPTY is not set",
        "binary jq not found on PATH",
        f"needs OS {other_os} or sunos5, this is {sys.platform}",
    )


def test_met_preconditions_give_nothing(tmp_path: Path) -> None:
    (tmp_path / "gh").write_text("#!/bin/sh\n")
    (tmp_path / "gh").chmod(0o755)
    req = Requirements(env=("TOKEN",), bins=("gh",), os=(sys.platform,))
    assert unmet_preconditions(req, {"PATH": str(tmp_path), "TOKEN": "t"}) == ()
    assert unmet_preconditions(Requirements()) == ()


def test_every_bench_skill_gets_a_fingerprint() -> None:
    require_corpus()
    result = load_skills([BENCH / "skills"])
    prints = {s.key: fingerprint(s) for s in result.skills}

    assert all(fp.keywords for fp in prints.values())
    with_patterns = sum(1 for fp in prints.values() if fp.intent_patterns)
    assert with_patterns >= 0.7 * len(prints), f"only {with_patterns} of {len(prints)} skills have intent patterns"
    notes = prints["steipete-clawdis/apple-notes"]
    assert notes.preconditions == Requirements(bins=("memo",), os=("darwin",))
    assert (
        notes.intent_patterns[0]
        == "a user asks Clawdis to add a note, list notes, search notes, or manage note folders"
    )
    assert "notes" in notes.keywords[:3]
