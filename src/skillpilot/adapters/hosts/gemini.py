"""Gemini CLI as a host (``POST /hook/gemini``, ``skillpilot setup gemini``), as Gemini CLI 0.61
does it (read from its source and run offline against a scripted model endpoint).

Its hook events (JSON on stdin: ``hook_event_name``, ``session_id``, ``cwd``, ``transcript_path``):

    SessionStart                  a session: index the skill folders it is offered
    BeforeAgent                   a prompt (``prompt``); ``hookSpecificOutput.additionalContext``
                                  reaches the model as ``<hook_context>`` after the prompt
    AfterTool (activate_skill)    the skill the model activated (``tool_input.name``)

Which skills Gemini CLI lists (``<available_skills>`` in its system instruction): ``SKILL.md``
files one folder deep under ``~/.gemini/skills``, ``~/.agents/skills``, the workspace's
``.gemini/skills`` and ``.agents/skills`` (in a trusted folder only, see below), and the
``skills/`` of each installed extension enabled for the workspace
(``~/.gemini/extensions/extension-enablement.json``); ``~`` is ``$GEMINI_CLI_HOME`` when set. A
skill is named by its frontmatter ``name`` with ``: \\ / < > * ? " |`` turned into ``-`` ("Ahrefs
Automation" stays so); names in ``skills.disabled`` (user or, in a trusted folder, workspace
settings) are not listed, nor anything with ``skills.enabled: false``. Of skills that share a name
it lists one, the last it reads ("Skill conflict detected"): it reads the folders in the order
above, extensions first, and each folder's skills in descending name order, so of ``mcp-builder/``
and ``mcp-builder-composiohq/`` whose SKILL.md both say ``mcp-builder`` it lists ``mcp-builder/``
(checked with the real CLI 0.61); the other is never named, and an ``activate_skill`` of that name
is the copy it lists. Gemini's own built-in skills live inside its install and are not indexed. The
model loads a skill with the ``activate_skill`` tool, and the context says so.

Folder trust (``security.folderTrust.enabled``, on unless the user settings or the system's
``/etc/gemini-cli/{system-defaults,settings}.json`` turn it off; a workspace's own settings
cannot): a folder is trusted by the rule in ``~/.gemini/trustedFolders.json``
(``$GEMINI_CLI_TRUSTED_FOLDERS_PATH``; folder -> ``TRUST_FOLDER``, ``TRUST_PARENT`` or
``DO_NOT_TRUST``) with the longest key whose folder holds it, ``TRUST_PARENT`` standing for the
key's parent folder, symlinks resolved; no rule, or a file Gemini would refuse (not an object, an
unknown level), is untrusted. ``GEMINI_RESTRICTED_MODE=true`` or
``GEMINI_CLI_TRUST_WORKSPACE=false`` distrust every folder, ``GEMINI_CLI_TRUST_WORKSPACE=true``
(what ``--skip-trust`` sets) trusts it, even with folder trust off. These are read from the
service's environment: a ``--skip-trust`` given to one ``gemini`` run does not reach a service
already running, whose hook then names none of that folder's skills (never one Gemini does not
list). An IDE's trust (the IDE companion's workspace state) is not seen either. Headless ``gemini
-p`` refuses an untrusted folder; an interactive session runs in it without its skills.

Setup writes the hooks into ``~/.gemini/settings.json`` (or a project's ``.gemini/settings.json``);
Gemini CLI runs ``settings.json`` hooks, the user's too, in trusted folders only. ``adapters/gemini``
is the same hooks as a Gemini extension (``gemini extensions install``), whose hooks run in any
folder. Hook timeouts are in milliseconds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...config import Settings
from ...model import IndexedSkill
from . import Check, HookEvent, HookSpec, SkillRoot, Wording, basic_event, context_output, json_object, listed_name
from .files import JsonHookSetup

EVENT = "BeforeAgent"
SKILL_TOOL = "activate_skill"
# Gemini CLI's default is 60 s (in milliseconds); the hook answers in milliseconds or gives up after 2 s.
HOOK_TIMEOUT_MS = 10_000
HOOKS = (HookSpec("SessionStart"), HookSpec(EVENT), HookSpec("AfterTool", SKILL_TOOL))
TRUSTED_FOLDERS = "trustedFolders.json"
TRUST_LEVELS = frozenset({"TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST"})
TRUSTING = frozenset({"TRUST_FOLDER", "TRUST_PARENT"})
SYSTEM_SETTINGS = "/etc/gemini-cli/settings.json"  # Linux's; macOS and Windows keep it elsewhere
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
    # Gemini CLI reads an untrusted workspace's settings and skills as if it had none.
    trusted = cwd if cwd is not None and workspace_trusted(cwd, home) else None
    if trusted is not None:
        settings.append(json_object(trusted / ".gemini" / "settings.json"))
    skills: list[dict[str, Any]] = [s["skills"] if isinstance(s.get("skills"), dict) else {} for s in settings]
    if any(s.get("enabled") is False for s in skills):
        return []
    disabled = frozenset(name.lower() for s in skills for name in s.get("disabled") or () if isinstance(name, str))
    folders = [str(p / "skills") for p in _extensions(home, cwd)]
    folders += [str(home / ".gemini" / "skills"), str(home / ".agents" / "skills")]
    if trusted is not None:
        folders += workspace_skill_folders(trusted)
    return [SkillRoot(f, depth=1, exclude=disabled, shadows=True) for f in folders if os.path.isdir(f)]


def workspace_skill_folders(cwd: Path) -> list[str]:
    """The skill folders of the workspace ``cwd``, which Gemini CLI lists when it trusts it."""
    return [str(cwd / ".gemini" / "skills"), str(cwd / ".agents" / "skills")]


def workspace_trusted(cwd: Path, home: Path | None = None) -> bool:
    """Whether Gemini CLI trusts the folder ``cwd`` and so lists its skills (the module
    docstring says how it decides)."""
    if os.environ.get("GEMINI_RESTRICTED_MODE") == "true" or os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
        return False
    if os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return True
    home = home or gemini_home()
    if not folder_trust_enabled(home):
        return True
    return trust_rule(cwd, home) in TRUSTING


def folder_trust_enabled(home: Path) -> bool:
    """``security.folderTrust.enabled`` as Gemini CLI decides trust: system defaults, then the
    user's settings, then the system settings, the last that sets it winning (default on)."""
    system = Path(os.environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or SYSTEM_SETTINGS)
    defaults = Path(os.environ.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH") or system.parent / "system-defaults.json")
    enabled = True
    for path in (defaults, home / ".gemini" / "settings.json", system):
        security = json_object(path).get("security")
        folder_trust = security.get("folderTrust") if isinstance(security, dict) else None
        value = folder_trust.get("enabled") if isinstance(folder_trust, dict) else None
        if isinstance(value, bool):
            enabled = value
    return enabled


def trust_rule(cwd: Path, home: Path) -> str | None:
    """The trust level ``trustedFolders.json`` gives ``cwd``: that of the longest rule whose
    folder (a ``TRUST_PARENT`` rule's parent) holds it; None without one, or when Gemini CLI
    would refuse the file."""
    path = Path(os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or home / ".gemini" / TRUSTED_FOLDERS)
    rules = {os.path.abspath(folder): level for folder, level in json_object(path).items()}
    if not all(level in TRUST_LEVELS for level in rules.values()):
        return None
    where = os.path.realpath(cwd)
    found: tuple[int, str] | None = None
    for folder, level in rules.items():
        covered = os.path.realpath(os.path.dirname(folder) if level == "TRUST_PARENT" else folder)
        if (where == covered or where.startswith(covered.rstrip(os.sep) + os.sep)) and (
            found is None or len(folder) > found[0]
        ):
            found = (len(folder), level)
    return found[1] if found else None


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


class GeminiSetup(JsonHookSetup):
    """The JSON hook file's setup and checks, and one more check: whether Gemini CLI trusts the
    project (``project``, or the folder doctor runs in) whose skill folders exist."""

    def checks(self, project: Path | None, library_roots: Sequence[str] = ()) -> list[Check]:
        lines = super().checks(project, library_roots)
        where = project or Path.cwd()
        folders = [f for f in workspace_skill_folders(where) if os.path.isdir(f)]
        if folders:
            trusted = workspace_trusted(where)
            text = (
                f"trusts {where}: its project skills ({', '.join(folders)}) are offered"
                if trusted
                else f"does not trust {where}, so neither it nor SkillPilot offers its project skills "
                f"({', '.join(folders)}): trust the folder in Gemini CLI (`/permissions` in a session)"
            )
            lines.append(Check(trusted, text, {"trusted": trusted, "project_skill_folders": folders}))
        return lines


class Gemini:
    """The Gemini CLI host (see the module docstring)."""

    name = "gemini"
    title = "Gemini CLI"
    hooks = HOOKS
    wording = Wording(verb="activate", via=f"the {SKILL_TOOL} tool")
    setup = GeminiSetup(
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
