"""Claude Code as a host (``POST /hook/claude-code``, ``skillpilot setup claude-code``).

Its hook events (the JSON Claude Code gives a hook: ``hook_event_name``, ``session_id``, ``cwd`` ...):

    SessionStart              a session: index its project and plugin skills
    UserPromptSubmit          a prompt; the context goes back as
                              ``hookSpecificOutput.additionalContext``
    PostToolUse (tool Skill)  the skill the model invoked (``tool_input.skill``)
    Stop                      the same, read from the turn's transcript (for Claude Code versions
                              whose Skill tool fires no PostToolUse); whichever comes first counts

Which skills Claude Code offers (:func:`offered_roots`): the user's ``~/.claude/skills``, the
project's ``<cwd>/.claude/skills``, and the ``skills/`` of every enabled plugin, found from Claude
Code's own records (``~/.claude/plugins/installed_plugins.json`` and ``enabledPlugins`` in the
user's and the project's settings). A plugin's skills are invoked as ``plugin-name:skill``, and
that is the name the context gives them. The context tells the model to invoke the skill "with
your Skill tool". Setup writes the hooks into ``settings.json`` (the user's, or a project's
``.claude/settings.json``); library mode (``platforms.claudeCode.libraryRoots``) adds folders
Claude Code does not list, whose skills are handed over by their SKILL.md path, and setup lists
them in ``permissions.additionalDirectories`` so that the model's Read of one is allowed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...config import Settings
from ...model import IndexedSkill
from ..hooks import transcript_tail
from . import HookEvent, HookSpec, SkillRoot, Wording, basic_event, context_output, json_object, listed_name, skill_md
from .files import JsonHookSetup

EVENT = "UserPromptSubmit"
SKILL_TOOL = "your Skill tool"
# Claude Code's own limit is 60 s; the hook answers in milliseconds or gives up after 2 s.
HOOK_TIMEOUT_S = 10
HOOKS = (
    HookSpec("SessionStart"),
    HookSpec(EVENT),
    HookSpec("PostToolUse", "Skill"),
    # Some Claude Code versions fire no PostToolUse for the Skill tool: the end of the turn reads
    # which skill the model invoked from the transcript instead.
    HookSpec("Stop"),
)


def claude_home() -> Path:
    """Claude Code's configuration folder: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude").expanduser()


def offered_roots(cwd: Path | None, home: Path | None = None) -> list[SkillRoot]:
    """The skill folders Claude Code offers a session started in ``cwd`` (those that exist)."""
    home = home or claude_home()
    roots = [SkillRoot(str(home / "skills"))]
    if cwd is not None:
        roots.append(SkillRoot(str(cwd / ".claude" / "skills")))
    roots.extend(plugin_roots(cwd, home))
    return [r for r in roots if os.path.isdir(r.path)]


def plugin_roots(cwd: Path | None, home: Path) -> list[SkillRoot]:
    """The skill folders of the plugins enabled for ``cwd``, each under its plugin's name."""
    enabled: dict[str, Any] = {}
    settings = [home / "settings.json"]
    if cwd is not None:
        settings += [cwd / ".claude" / "settings.json", cwd / ".claude" / "settings.local.json"]
    for path in settings:
        plugins = json_object(path).get("enabledPlugins")
        if isinstance(plugins, dict):
            enabled.update(plugins)
    installed = json_object(home / "plugins" / "installed_plugins.json").get("plugins")
    roots: list[SkillRoot] = []
    for plugin_id, entries in (installed if isinstance(installed, dict) else {}).items():
        if enabled.get(plugin_id) is not True:
            continue
        for entry in entries if isinstance(entries, list) else [entries]:
            if not isinstance(entry, dict) or not isinstance(entry.get("installPath"), str):
                continue
            project = entry.get("projectPath")
            if entry.get("scope") in ("project", "local") and (cwd is None or project != str(cwd)):
                continue
            install = Path(entry["installPath"])
            manifest = json_object(install / ".claude-plugin" / "plugin.json")
            name = manifest.get("name") if isinstance(manifest.get("name"), str) else plugin_id.split("@")[0]
            declared = manifest.get("skills")
            folders = ["skills", *([declared] if isinstance(declared, str) else declared or [])]
            roots.extend(SkillRoot(str((install / f).resolve()), name) for f in folders if isinstance(f, str))
            break
    return roots


def skill_in_transcript(path: Path) -> str | None:
    """The first skill the model invoked with the Skill tool after the last prompt the user typed,
    read from the end of a Claude Code transcript (JSON lines); None if it invoked none (or the
    path is not a regular file)."""
    tail = transcript_tail(str(path))
    if tail is None:
        return None
    lines = tail.decode("utf-8", "replace").splitlines()
    invoked: str | None = None
    for line in lines:
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            continue  # the first line of the tail may be cut
        if not isinstance(entry, dict):
            continue
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if entry.get("type") == "user" and not entry.get("isMeta") and _typed_by_user(content):
            invoked = None
        elif entry.get("type") == "assistant" and invoked is None and isinstance(content, list):
            for item in content:
                if isinstance(item, dict) and item.get("type") == "tool_use" and item.get("name") == "Skill":
                    invoked = _invoked(item.get("input"))
                    break
    return invoked


def _invoked(tool_input: Any) -> str | None:
    """The skill a Skill tool call names (``skill``; ``command`` in older Claude Code versions)."""
    name = tool_input.get("skill") or tool_input.get("command") if isinstance(tool_input, dict) else None
    return name if isinstance(name, str) else None


def _typed_by_user(content: Any) -> bool:
    """A user prompt, not a tool result (which the transcript also records as a user message)."""
    if isinstance(content, str):
        return True
    results = (isinstance(item, dict) and item.get("type") == "tool_result" for item in content or ())
    return isinstance(content, list) and not any(results)


class ClaudeCode:
    """The Claude Code host (see the module docstring)."""

    name = "claude-code"
    title = "Claude Code"
    hooks = HOOKS
    wording = Wording(via=SKILL_TOOL)
    setup = JsonHookSetup(
        "claude-code",
        HOOKS,
        user_file=lambda: claude_home() / "settings.json",
        project_file=lambda project: project / ".claude" / "settings.json",
        handler=lambda command: {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S},
        # Claude Code refuses to read outside the working folder unless a folder is listed here.
        grant_keys=("permissions", "additionalDirectories"),
    )

    def read(self, payload: Mapping[str, Any]) -> HookEvent:
        event = basic_event(payload, EVENT)
        name = payload.get("hook_event_name")
        if event.kind != "ignored":
            return event
        if name == "PostToolUse" and payload.get("tool_name") == "Skill":
            return replace(event, kind="skill-used", skill_name=_invoked(payload.get("tool_input")))
        if name == "Stop":
            # Some Claude Code versions fire no PostToolUse for the Skill tool
            # (anthropics/claude-code#47307); the turn's transcript says which skill the model invoked.
            transcript = payload.get("transcript_path")
            invoked = skill_in_transcript(Path(transcript)) if isinstance(transcript, str) else None
            return replace(event, kind="skill-used", skill_name=invoked)
        return event

    def skill_roots(self, cwd: Path | None) -> list[SkillRoot]:
        return offered_roots(cwd)

    def skill_name(self, skill: IndexedSkill, root: SkillRoot) -> str | None:
        # Claude Code lists a skill by its folder's name (a different frontmatter name only shows
        # beside it, "folder (name)"; checked with the real CLI 2.1): two folders whose SKILL.md
        # both say `mcp-builder` are `mcp-builder` and `mcp-builder-composiohq`, "Ahrefs
        # Automation" in ahrefs-automation/ is `ahrefs-automation`.
        return listed_name(skill, root, name=skill_md(skill).parent.name)

    def prompt_output(self, context: str) -> dict[str, Any]:
        return context_output(EVENT, context)

    def library_roots(self, settings: Settings) -> tuple[str, ...]:
        return tuple(settings.claude_code_library_roots)


HOST = ClaudeCode()
