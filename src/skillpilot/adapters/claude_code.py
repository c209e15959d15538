"""Claude Code's hooks, answered inside the resident service (``POST /hook/claude-code``).

Input: the JSON Claude Code gives a hook (``hook_event_name``, ``session_id``, ``cwd`` ...), as
forwarded by the hook process (:mod:`skillpilot.adapters.hook_client`). Output: the object the
hook prints, or None to print nothing.

    SessionStart              index the session's project and plugin skills (in the background)
    UserPromptSubmit          route over the skills Claude Code offers in that session; a hard or
                              soft decision becomes ``hookSpecificOutput.additionalContext``
                              (:func:`hook_context`), a pass-through prints nothing
    PostToolUse (tool Skill)  the skill the model invoked, tied to the session's last routed
                              prompt: an implicit confirm or correction (:func:`implicit_signal`)
    Stop                      the same, read from the turn's transcript (for Claude Code versions
                              whose Skill tool fires no PostToolUse); whichever comes first counts

Which skills Claude Code offers (:func:`offered_roots`): the user's ``~/.claude/skills``, the
project's ``<cwd>/.claude/skills``, and the ``skills/`` of every enabled plugin, found from Claude
Code's own records (``~/.claude/plugins/installed_plugins.json`` and ``enabledPlugins`` in the
user's and the project's settings). A plugin's skills are invoked as ``plugin-name:skill``, and
that is the name the context gives them; skills of other roots in the index (OpenClaw's) are not
offered. A root seen for the first time is indexed then, and re-indexed when its SKILL.md files
change (by :class:`~skillpilot.adapters.hooks.RootIndexer`, outside the routing lock; a prompt
whose roots the index lacks waits for it at most ``limits.HOOK_INDEX_WAIT`` seconds, any other
goes on at once).

Guarantees: every event is checked against the hook bounds first
(:func:`~skillpilot.adapters.hooks.check_event`: a ``ValueError``, HTTP 422, names the field);
nothing here reads a file that is not regular, nor more of one than its bound (settings and
plugin manifests ``HOOK_SETTINGS_BYTES``, the transcript's last ``TRANSCRIPT_TAIL_BYTES``), nor
walks a root past ``HOOK_WALK_ENTRIES`` entries; every skill the context names is one of the
offered skills, under the name Claude Code's Skill tool accepts; one implicit signal at most per
routed prompt, none after a hard route (the model obeyed, it did not choose); with
``log.queries: off`` no prompt is kept, so nothing is learned implicitly. Prompts are kept in
memory only (the last one per session).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..index.builder import root_id
from ..limits import HOOK_INDEX_WAIT, HOOK_SETTINGS_BYTES, MAX_SESSIONS
from ..model import IndexedSkill, RouteResult
from ..router import SkillPilot
from . import action_for
from .hooks import RootIndexer, check_event, read_regular_file, transcript_tail

log = logging.getLogger(__name__)

EVENT = "UserPromptSubmit"
SKILL_TOOL = "your Skill tool"


@dataclass(frozen=True)
class SkillRoot:
    """A folder of skills Claude Code offers; ``namespace`` prefixes its skills' names (plugins)."""

    path: str
    namespace: str | None = None


@dataclass(frozen=True)
class RoutedPrompt:
    """What a session's last prompt was routed to: the ids of the skills it named, best first."""

    session: str
    prompt_id: int
    query: str
    decision: str
    named: tuple[str, ...]


@dataclass(frozen=True)
class ImplicitSignal:
    """A ``SkillPilot.feedback`` call the model's own choice justifies."""

    kind: str
    skill: str | None = None
    wrong: str | None = None
    right: str | None = None


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
        plugins = _json(path).get("enabledPlugins")
        if isinstance(plugins, dict):
            enabled.update(plugins)
    installed = _json(home / "plugins" / "installed_plugins.json").get("plugins")
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
            manifest = _json(install / ".claude-plugin" / "plugin.json")
            name = manifest.get("name") if isinstance(manifest.get("name"), str) else plugin_id.split("@")[0]
            declared = manifest.get("skills")
            folders = ["skills", *([declared] if isinstance(declared, str) else declared or [])]
            roots.extend(SkillRoot(str((install / f).resolve()), name) for f in folders if isinstance(f, str))
            break
    return roots


def _json(path: Path) -> dict[str, Any]:
    raw = read_regular_file(path, HOOK_SETTINGS_BYTES)
    try:
        data = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def skill_names(skills: Iterable[IndexedSkill], roots: Sequence[SkillRoot]) -> dict[str, str]:
    """Skill id -> the name Claude Code's Skill tool knows it by, for the skills under ``roots``."""
    namespace = {os.path.abspath(r.path): r.namespace for r in roots}
    names: dict[str, str] = {}
    for indexed in skills:
        root = os.path.abspath(indexed.skill.root)
        if root in namespace:
            prefix = namespace[root]
            names[indexed.id] = f"{prefix}:{indexed.name}" if prefix else indexed.name
    return names


def hook_context(result: RouteResult, names: Mapping[str, str], library_roots: tuple[str, ...] = ()) -> str | None:
    """The ``additionalContext`` for ``result`` (None for a pass-through), naming skills as
    ``names`` says Claude Code's Skill tool knows them; a skill under ``library_roots`` is handed
    over by its SKILL.md path instead. The one place the context is written."""
    if result.skill is None or result.decision == "passthrough":
        return None
    named = replace(
        result,
        skill=replace(result.skill, name=names.get(result.skill.id, result.skill.name)),
        alternatives=tuple(replace(a, id=names[a.id]) for a in result.alternatives if a.id in names),
    )
    return action_for(named, via=SKILL_TOOL, library_roots=library_roots).context


def implicit_signal(last: RoutedPrompt | None, invoked: str | None) -> ImplicitSignal | None:
    """What the model's Skill call says about the last route: the skill it invoked when SkillPilot
    named a shortlist (soft) or nothing (pass-through). After a hard route it obeyed: no signal."""
    if last is None or invoked is None or last.decision == "hard":
        return None
    if not last.named:
        return ImplicitSignal("confirm", skill=invoked)
    if invoked == last.named[0]:
        return ImplicitSignal("confirm", skill=invoked)
    return ImplicitSignal("correct", wrong=last.named[0], right=invoked)


class ClaudeCodeHooks:
    """The service's state for Claude Code: roots indexed so far and each session's last route.

    ``pilot`` is the service's warm router; every call on it goes through ``run`` (the service's
    one-call-at-a-time lock). Offered roots are indexed by ``indexer``, never under that lock."""

    def __init__(self, pilot: SkillPilot, run: Any, indexer: RootIndexer | None = None) -> None:
        self.pilot = pilot
        self.run = run
        self.indexer = indexer or RootIndexer(pilot.settings)
        self._sessions: OrderedDict[str, RoutedPrompt] = OrderedDict()
        self._prompts = 0
        self._lock = threading.Lock()

    def answer(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """``{"output": <what the hook prints> | None}`` plus what was done, for one hook event.
        Raises ``ValueError`` for an event past the hook bounds."""
        payload = check_event(payload)
        event = payload.get("hook_event_name")
        cwd = Path(payload["cwd"]) if isinstance(payload.get("cwd"), str) else None
        if event == "SessionStart":
            roots = offered_roots(cwd)
            self.indexer.ensure([r.path for r in roots], wait=0)
            return {"output": None, "roots": [r.path for r in roots]}
        if event == EVENT:
            return self._prompt(payload, cwd)
        if event == "PostToolUse" and payload.get("tool_name") == "Skill":
            return self._skill_used(payload.get("session_id"), _invoked(payload.get("tool_input")), cwd)
        if event == "Stop":
            # Some Claude Code versions fire no PostToolUse for the Skill tool
            # (anthropics/claude-code#47307); the turn's transcript says which skill the model invoked.
            transcript = payload.get("transcript_path")
            invoked = skill_in_transcript(Path(transcript)) if isinstance(transcript, str) else None
            return self._skill_used(payload.get("session_id"), invoked, cwd)
        return {"output": None}

    def _prompt(self, payload: Mapping[str, Any], cwd: Path | None) -> dict[str, Any]:
        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            raise ValueError(f"expected the {EVENT} JSON with a string 'prompt'")
        if not prompt.strip():
            return {"output": None}
        roots = offered_roots(cwd)
        # Library roots (library mode) are the one exception to "only what Claude Code offers".
        library = tuple(self.pilot.settings.claude_code_library_roots)
        paths = [r.path for r in roots] + [str(Path(r).expanduser()) for r in library]
        # Only a root the index lacks is worth waiting for; changes are picked up in the background.
        held = set(self.run(lambda p: p.store.roots()))
        missing = any(root_id(Path(path)) not in held for path in paths)
        self.indexer.ensure(paths, wait=HOOK_INDEX_WAIT if missing else 0)
        result: RouteResult = self.run(lambda p: p.route(prompt, surface="hook", roots=paths))
        names: dict[str, str] = self.run(lambda p: skill_names(p.skills(), roots))
        context = hook_context(result, names, library)
        named = action_for(result).candidates if context else ()
        self._remember(payload.get("session_id"), prompt, result.decision, named)
        output = {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": context}} if context else None
        return {"output": output, "result": result.to_dict()}

    def _remember(self, session: Any, prompt: str, decision: str, named: tuple[str, ...]) -> None:
        if not isinstance(session, str) or self.pilot.settings.log_queries == "off":
            return
        with self._lock:
            self._prompts += 1
            self._sessions[session] = RoutedPrompt(session, self._prompts, prompt, decision, named)
            self._sessions.move_to_end(session)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)

    def _skill_used(self, session: Any, invoked_name: Any, cwd: Path | None) -> dict[str, Any]:
        with self._lock:
            # The first Skill call after a prompt is the model's answer to it; later ones are not.
            last = self._sessions.pop(session, None) if isinstance(session, str) else None
        if last is None or not isinstance(invoked_name, str):
            return {"output": None, "signal": None}
        roots = offered_roots(cwd)
        names: dict[str, str] = self.run(lambda p: skill_names(p.skills(), roots))
        by_name = {name: skill_id for skill_id, name in names.items()}
        signal = implicit_signal(last, by_name.get(invoked_name.lstrip("/")))
        if signal is None:
            return {"output": None, "signal": None, "prompt_id": last.prompt_id}
        self.run(
            lambda p: p.feedback(
                signal.kind, last.query, skill=signal.skill, wrong=signal.wrong, right=signal.right, implicit=True
            )
        )
        return {"output": None, "signal": signal.__dict__, "prompt_id": last.prompt_id}


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
