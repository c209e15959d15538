"""Library mode's hook context: a skill under a configured library root is handed over by path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillpilot import SkillPilot
from skillpilot.adapters import action_for
from skillpilot.adapters.hosts import get_host
from skillpilot.adapters.hosts.claude_code import HOST, SKILL_TOOL
from skillpilot.adapters.hosts.hooks import HostHooks, hook_context
from skillpilot.market.dedup import copies_among
from skillpilot.model import Alternative, RouteResult, SkillRef

from .conftest import write_skill
from .surfaces_util import cli, indexed


def test_a_library_skill_is_read_by_path_and_a_listed_one_invoked(tmp_path: Path) -> None:
    library = tmp_path / "library"
    skill_md = write_skill(
        library,
        "invoice-pdf",
        "name: invoice-pdf\ndescription: Render an invoice as a PDF from line items and a customer address.",
        "# Invoice PDF\n",
    )
    pilot = indexed(tmp_path / "home")
    pilot.index([library])
    result = pilot.route("render an invoice pdf for these line items")
    assert result.skill is not None and result.skill.name == "invoice-pdf" and result.decision != "passthrough"
    context = hook_context(result, {}, HOST.wording, (str(library),))
    assert context is not None
    assert f"read {skill_md} and follow its instructions" in context
    assert SKILL_TOOL not in context and "Render an invoice as a PDF" in context
    listed = action_for(result, via=SKILL_TOOL).context
    assert SKILL_TOOL in listed and "SKILL.md" not in listed
    pilot.close()


def library_pass_through(
    query: str, library: Path, pick: tuple[str, float], *runners_up: tuple[str, float], description: str = ""
) -> RouteResult:
    """A pass-through whose pick and runners-up (id, confidence) are folders of ``library``."""
    name, confidence = pick
    ref = SkillRef(id=name, name=name, path=str(library / name), description=description, key=name)
    alternatives = tuple(Alternative(i, str(library / i), score, i) for i, score in runners_up)
    return RouteResult(query, ref, confidence, "passthrough", "hybrid", alternatives=alternatives)


def test_copies_in_the_top_five_turn_a_library_pass_through_into_a_shortlist(tmp_path: Path) -> None:
    # At 1,000 skills with forks, semgrep passed through at 0.0755: its fork took the margin.
    library = tmp_path / "library"
    body = "# Semgrep\n\nRun `semgrep scan --config auto` over the repository and triage each finding by rule.\n" * 3
    described = "description: Scan code for security bugs with Semgrep rules and triage the findings."
    for name in ("semgrep", "semgrep-fork1"):
        write_skill(library, name, f"name: {name}\n{described}", body)
    write_skill(library, "codeql", "name: codeql\ndescription: Query code as data with CodeQL databases.", "# CodeQL\n")
    pilot = indexed(tmp_path / "home")
    pilot.index([library])
    skills = {s.id: s for s in pilot.skills()}
    copies = copies_among([skills["semgrep"], skills["semgrep-fork1"], skills["codeql"]])
    assert copies == [("semgrep", "semgrep-fork1")]
    passed = library_pass_through(
        "scan this repo with semgrep",
        library,
        ("semgrep", 0.0755),
        ("semgrep-fork1", 0.4176),
        ("codeql", 0.0163),
        description="Scan code.",
    )
    action = action_for(passed, via=SKILL_TOOL, library_roots=(str(library),), copies=copies)
    fork_md = library / "semgrep-fork1" / "SKILL.md"
    assert (action.type, action.candidates) == ("inject", ("semgrep", "semgrep-fork1"))
    assert action.context.splitlines() == [
        "SkillPilot: the skill `semgrep` may fit this prompt (confidence 0.0755).",
        "Skill: Scan code.",
        f"Path: {library / 'semgrep' / 'SKILL.md'}",
        f"Also consider `semgrep-fork1` (confidence 0.4176, a copy of `semgrep`), {fork_md}",
        "If one of them fits the request, read its SKILL.md and follow its instructions; otherwise answer as usual.",
    ]
    # Without copies, or outside library mode, a pass-through stays one.
    assert action_for(passed, via=SKILL_TOOL, library_roots=(str(library),)).type == "passthrough"
    assert action_for(passed, via=SKILL_TOOL, copies=copies).type == "passthrough"


def test_copies_nothing_points_to_leave_a_pass_through_alone(tmp_path: Path) -> None:
    # "great job" at 1,000 skills with forks: a weak pick, and copies of a job-search skill among
    # runners-up none of which would make a shortlist by itself. Small talk gets nothing.
    library = tmp_path / "library"
    passed = library_pass_through(
        "great job", library, ("jobtool", 0.119), ("technical-job-search", 0.02), ("technical-job-search-fork1", 0.009)
    )
    copies = [("technical-job-search", "technical-job-search-fork1")]
    assert action_for(passed, via=SKILL_TOOL, library_roots=(str(library),), copies=copies).type == "passthrough"


def test_codex_library_roots_hand_over_a_skill_codex_does_not_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``platforms.codex.libraryRoots``: the hook routes into a folder Codex never lists and
    names the SKILL.md to read, as it does for Codex's own skills."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    library = tmp_path / "library"
    skill_md = write_skill(
        library,
        "invoice-pdf",
        "name: invoice-pdf\ndescription: Render an invoice as a PDF from line items.",
        "# Invoice\n",
    )
    pilot = SkillPilot(
        home=tmp_path / "home", preconditions=False, soft_threshold=0.1, codex_library_roots=(str(library),)
    )
    pilot.index([library])
    hooks = HostHooks(
        get_host("codex"), pilot, lambda call: call(pilot), get_host("codex").library_roots(pilot.settings)
    )
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "s",
        "cwd": str(tmp_path),
        "prompt": "render an invoice pdf",
    }
    context = hooks.answer(payload)["output"]["hookSpecificOutput"]["additionalContext"]
    assert f"read {skill_md} and follow its instructions" in context, context
    pilot.close()


def test_codex_setup_grants_nothing_and_doctor_counts_its_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex's sandboxes read any file: setup writes no grant for its library roots, and doctor
    counts the library skills the hook hands over by path."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no codex: setup leaves trust to its /hooks screen
    library = tmp_path / "library"
    write_skill(library, "invoice-pdf", "name: invoice-pdf\ndescription: Render an invoice as a PDF.")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(f'{{"platforms": {{"codex": {{"libraryRoots": ["{library}"]}}}}}}')
    pilot = indexed(home, embed_provider="trigram-test")
    pilot.index([library])
    pilot.close()
    report = json.loads(cli("setup", "codex", "--no-start", "--json", home=home).stdout)
    assert report["granted"] == []
    assert set(json.loads((tmp_path / "codex" / "hooks.json").read_text(encoding="utf-8"))) == {"hooks"}
    doctor = json.loads(cli("doctor", "codex", "--json", home=home).stdout)
    assert doctor["hosts"]["codex"]["offered"]["library_skills"] == 1
    assert not any("library roots" in check["text"] for check in doctor["hosts"]["codex"]["checks"])
