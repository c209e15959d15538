"""Gemini CLI as a host (``POST /hook/gemini``, ``skillpilot setup gemini``), as Gemini CLI 0.61
does it (read from its source and run offline against a scripted model endpoint).

Its hook events (JSON on stdin: ``hook_event_name``, ``session_id``, ``cwd``, ``transcript_path``):

    SessionStart                  a session: index the skill folders it is offered
    BeforeAgent                   a prompt (``prompt``); ``hookSpecificOutput.additionalContext``
                                  reaches the model as ``<hook_context>`` after the prompt
    AfterTool (activate_skill)    the skill the model activated (``tool_input.name``)

Which skills Gemini CLI lists (``<available_skills>`` in its system instruction): ``SKILL.md``
files one folder deep under ``~/.gemini/skills``, ``~/.agents/skills``, the workspace's
``.gemini/skills`` and ``.agents/skills``, and the ``skills/`` of each installed extension enabled
for the workspace (``~/.gemini/extensions/extension-enablement.json``); ``~`` is
``$GEMINI_CLI_HOME`` when set. A skill is named by its frontmatter ``name`` with ``: \\ / < > * ?
" |`` turned into ``-`` ("Ahrefs Automation" stays so); names in ``skills.disabled`` (user or
workspace settings) are not listed, nor anything with ``skills.enabled: false``. Of skills that
share a name it lists one, the last it reads ("Skill conflict detected"): it reads the folders in
the order above, extensions first, and each folder's skills in descending name order, so of
``mcp-builder/`` and ``mcp-builder-composiohq/`` whose SKILL.md both say ``mcp-builder`` it lists
``mcp-builder/`` (checked with the real CLI 0.61); the other is never named, and an
``activate_skill`` of that name is the copy it lists. Gemini's own built-in skills live inside its install
and are not indexed. The model loads a skill with the ``activate_skill`` tool, and the context
says so.

Setup writes the hooks into ``~/.gemini/settings.json`` (or a project's ``.gemini/settings.json``;
Gemini CLI runs a project's hooks in trusted folders only); ``adapters/gemini`` is the same hooks
as a Gemini extension (``gemini extensions install``). Hook timeouts are in milliseconds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...config import Settings
from ...model import IndexedSkill
from . import HookEvent, HookSpec, SkillRoot, Wording, basic_event, context_output, json_object, listed_name
from .files import JsonHookSetup

EVENT = "BeforeAgent"
SKILL_TOOL = "activate_skill"
# Gemini CLI's default is 60 s (in milliseconds); the hook answers in milliseconds or gives up after 2 s.
HOOK_TIMEOUT_MS = 10_000
HOOKS = (HookSpec("SessionStart"), HookSpec(EVENT), HookSpec("AfterTool", SKILL_TOOL))
# Characters Gemini CLI replaces with "-" in a skill's name (skillLoader.ts).
UNSAFE_NAME = re.compile(r'[:\\/<>*?"|]')


def gemini_home() -> Path:
    """The folder holding Gemini CLI's ``.gemini``: ``$GEMINI_CLI_HOME`` or the user's home."""
    return Path(os.environ.get("GEMINI_CLI_HOME") or "~").expanduser()


def offered_roots(cwd: Path | None, home: Path | None = None) -> list[SkillRoot]:
    """The skill folders Gemini CLI offers a session in ``cwd`` (those that exist), each with
    the names its settings disable."""
    home = home or gemini_home()
    settings = [json_object(home / ".gemini" / "settings.json")]
    if cwd is not None:
        settings.append(json_object(cwd / ".gemini" / "settings.json"))
    skills: list[dict[str, Any]] = [s["skills"] if isinstance(s.get("skills"), dict) else {} for s in settings]
    if any(s.get("enabled") is False for s in skills):
        return []
    disabled = frozenset(name.lower() for s in skills for name in s.get("disabled") or () if isinstance(name, str))
    folders = [str(p / "skills") for p in _extensions(home, cwd)]
    folders += [str(home / ".gemini" / "skills"), str(home / ".agents" / "skills")]
    if cwd is not None:
        folders += [str(cwd / ".gemini" / "skills"), str(cwd / ".agents" / "skills")]
    return [SkillRoot(f, depth=1, exclude=disabled, shadows=True) for f in folders if os.path.isdir(f)]


def _extensions(home: Path, cwd: Path | None) -> list[Path]:
    """The installed extensions enabled for ``cwd``: the last override rule matching the folder
    decides (``!`` disables), as Gemini CLI's extension-enablement.json says."""
    folder = home / ".gemini" / "extensions"
    enablement = json_object(folder / "extension-enablement.json")
    where = "/" + str(cwd or home).strip("/") + "/"
    found = []
    for manifest in sorted(folder.glob("*/gemini-extension.json")):
        name = json_object(manifest).get("name")
        if not isinstance(name, str):
            continue
        entry = enablement.get(name)
        rules = entry.get("overrides") if isinstance(entry, dict) else None
        enabled = True
        for rule in rules if isinstance(rules, list) else []:
            if isinstance(rule, str) and _rule_matches(rule.lstrip("!"), where):
                enabled = not rule.startswith("!")
        if enabled:
            found.append(manifest.parent)
    return found


def _rule_matches(rule: str, where: str) -> bool:
    """Gemini CLI's override rule: a folder, ending in ``*`` to include its subfolders."""
    subfolders = rule.endswith("*")
    base = "/" + rule.rstrip("*").strip("/") + "/"
    return where.startswith(base) if subfolders else where == base


class Gemini:
    """The Gemini CLI host (see the module docstring)."""

    name = "gemini"
    title = "Gemini CLI"
    hooks = HOOKS
    wording = Wording(verb="activate", via=f"the {SKILL_TOOL} tool")
    setup = JsonHookSetup(
        "gemini",
        HOOKS,
        user_file=lambda: gemini_home() / ".gemini" / "settings.json",
        project_file=lambda project: project / ".gemini" / "settings.json",
        handler=lambda command: {
            "type": "command",
            "command": command,
            "name": "skillpilot",
            "timeout": HOOK_TIMEOUT_MS,
        },
    )

    def read(self, payload: Mapping[str, Any]) -> HookEvent:
        event = basic_event(payload, EVENT)
        if event.kind == "ignored" and payload.get("hook_event_name") == "AfterTool":
            tool_input = payload.get("tool_input")
            name = tool_input.get("name") if isinstance(tool_input, dict) else None
            if payload.get("tool_name") == SKILL_TOOL:
                return replace(event, kind="skill-used", skill_name=name if isinstance(name, str) else None)
        return event

    def skill_roots(self, cwd: Path | None) -> list[SkillRoot]:
        return offered_roots(cwd)

    def skill_name(self, skill: IndexedSkill, root: SkillRoot) -> str | None:
        name = listed_name(skill, root, unsafe=UNSAFE_NAME)
        return None if name is None or name.lower() in root.exclude else name

    def prompt_output(self, context: str) -> dict[str, Any]:
        return context_output(EVENT, context)

    def library_roots(self, settings: Settings) -> tuple[str, ...]:
        # Gemini CLI reads files inside the workspace only, and activate_skill knows only the
        # skills it listed: a skill it does not list cannot be handed over by path.
        return ()


HOST = Gemini()
