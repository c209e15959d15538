"""Library mode's hook context: a skill under a configured library root is handed over by path."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillpilot import SkillPilot
from skillpilot.adapters import action_for
from skillpilot.adapters.hosts import get_host
from skillpilot.adapters.hosts.claude_code import HOST, SKILL_TOOL
from skillpilot.adapters.hosts.hooks import HostHooks, hook_context

from .conftest import write_skill
from .surfaces_util import indexed


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
