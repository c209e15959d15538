"""Codex CLI as a host (``POST /hook/codex``, ``skillpilot setup codex``), as Codex 0.171 does it
(read from its source and run offline against a scripted Responses endpoint).

Its hook events (Claude Code's shape: ``hook_event_name``, ``session_id``, ``cwd``, ``turn_id`` ...):

    SessionStart              a session: index the skill folders it is offered
    UserPromptSubmit          a prompt (``prompt``); ``hookSpecificOutput.additionalContext``
                              reaches the model as a developer message after the prompt
    PostToolUse (Bash)        a shell command the model ran (``tool_input.command``); one that
                              reads a skill's SKILL.md is the model choosing that skill

Codex's model has no skill tool: it is listed the skills (name, description, SKILL.md path) in a
developer message and loads one by reading its SKILL.md, so the context names the SKILL.md to
read, and the signal is Codex's own test for "this command used a skill": a reader (``cat``,
``sed``, ``head``, ``tail``, ``less``, ``more``, ``bat``, ``awk``) given a skill's SKILL.md, or a
script runner (``python``, ``bash``, ``node`` ...) given a script under a skill's ``scripts/``.

Which skills Codex lists: every SKILL.md up to six folders below ``$CODEX_HOME/skills`` (its
``.system`` skills included), ``~/.agents/skills`` and ``/etc/codex/skills``, and for each folder
from the project root (the nearest folder above the session's with a ``.git``) down to it, its
``.agents/skills`` and, when Codex trusts the project, its ``.codex/skills``. A skill is named by
its frontmatter ``name`` ("Ahrefs Automation" in ``ahrefs-automation/`` too), and skills that
share a name are all listed, each with its SKILL.md path (checked with the real CLI 0.171): the
context hands each over by that path, and the signal is the SKILL.md the model read.

Setup writes the hooks into ``$CODEX_HOME/hooks.json`` (or a project's ``.codex/hooks.json``) and
then records their trust the way Codex's own ``/hooks`` screen does: it asks ``codex app-server``
for the hooks (``hooks/list``) and writes each SkillPilot hook's current hash as trusted through
``config/batchWrite`` (``[hooks.state."<key>"] trusted_hash`` in the user's ``config.toml``, its
other keys and comments kept). Codex runs an untrusted hook not at all, and says so only at start.
Uninstall removes the hooks and exactly those trust entries.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...config import Settings
from ...errors import ConfigError
from ...limits import HOOK_SETTINGS_BYTES
from ...model import IndexedSkill
from ..hooks import read_regular_file
from . import Check, HookEvent, HookSpec, SkillRoot, Wording, basic_event, context_output, listed_name
from .files import JsonHookSetup, backup, is_ours, read

EVENT = "UserPromptSubmit"
SHELL_TOOL = "Bash"
HOOK_TIMEOUT_S = 10
HOOKS = (HookSpec("SessionStart"), HookSpec(EVENT), HookSpec("PostToolUse", SHELL_TOOL))
# Codex's own limits and heuristics (codex-rs core-skills: loader.rs, invocation_utils.rs).
MAX_SCAN_DEPTH = 6
READERS = frozenset({"cat", "sed", "head", "tail", "less", "more", "bat", "awk"})
RUNNERS = frozenset({"python", "python3", "bash", "zsh", "sh", "node", "deno", "ruby", "perl", "pwsh"})
SCRIPT_SUFFIXES = (".py", ".sh", ".js", ".ts", ".rb", ".pl", ".ps1")
# hooks.json event names -> the snake_case labels in Codex's hook keys.
_KEY_LABEL = re.compile(r"(?<!^)(?=[A-Z])")
# `codex app-server` answers in about a second; more means it is stuck.
APP_SERVER_TIMEOUT_S = 60


def codex_home() -> Path:
    """Codex's folder: ``$CODEX_HOME`` or ``~/.codex``."""
    return Path(os.environ.get("CODEX_HOME") or "~/.codex").expanduser()


def offered_roots(cwd: Path | None, home: Path | None = None) -> list[SkillRoot]:
    """The skill folders Codex offers a session in ``cwd`` (those that exist)."""
    home = home or codex_home()
    folders = [home / "skills", Path("~/.agents/skills").expanduser(), Path("/etc/codex/skills")]
    if cwd is not None:
        trusted = _trusted_projects(home)
        for folder in _project_folders(cwd):
            folders.append(folder / ".agents" / "skills")
            if any(folder.is_relative_to(t) for t in trusted):
                folders.append(folder / ".codex" / "skills")
    # os.path, not Path: it answers False for a name too long or with a NUL byte (cwd comes from
    # the hook's JSON) where Path.is_dir raises.
    unique = dict.fromkeys(str(f) for f in folders if os.path.isdir(f))
    return [SkillRoot(f, depth=MAX_SCAN_DEPTH) for f in unique]


def _project_folders(cwd: Path) -> list[Path]:
    """The folders from the project root (nearest ancestor with ``.git``) down to ``cwd``."""
    chain = [cwd, *cwd.parents]
    for index, folder in enumerate(chain):
        if os.path.exists(folder / ".git"):
            return list(reversed(chain[: index + 1]))
    return [cwd]


def _trusted_projects(home: Path) -> list[Path]:
    """The folders the user's ``config.toml`` marks ``trust_level = "trusted"``."""
    raw = read_regular_file(home / "config.toml", HOOK_SETTINGS_BYTES)
    try:
        config = tomllib.loads(raw.decode("utf-8")) if raw is not None else {}
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return []
    projects = config.get("projects")
    return [
        Path(folder)
        for folder, entry in (projects.items() if isinstance(projects, dict) else [])
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted"
    ]


def skill_read_by(command: str, cwd: Path | None) -> str | None:
    """The SKILL.md (or a skill's script) ``command`` reads or runs, as an absolute path; None
    when it touches no such file. Mirrors Codex's own implicit-invocation test."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if not words:
        return None
    program = Path(words[0]).name.lower().removesuffix(".exe")
    arguments = [w for w in words[1:] if w != "--" and not w.startswith("-")]
    if program in RUNNERS and arguments and arguments[0].lower().endswith(SCRIPT_SUFFIXES):
        script = _absolute(arguments[0], cwd)
        for folder in script.parents:
            if folder.name == "scripts" and os.path.isfile(folder.parent / "SKILL.md"):
                return str(folder.parent / "SKILL.md")
        return None
    if program not in READERS:
        return None
    for argument in arguments:
        path = _absolute(argument, cwd)
        if path.name == "SKILL.md":
            return str(path)
    return None


def _absolute(word: str, cwd: Path | None) -> Path:
    path = Path(word).expanduser()
    return path if path.is_absolute() or cwd is None else cwd / path


class CodexSetup:
    """``setup codex``: the hooks in hooks.json, then their trust recorded through Codex itself."""

    def __init__(self) -> None:
        self.hooks = JsonHookSetup(
            "codex",
            HOOKS,
            user_file=lambda: codex_home() / "hooks.json",
            project_file=lambda project: project / ".codex" / "hooks.json",
            handler=lambda command: {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S},
        )

    def install(self, home: Path, project: Path | None, library_roots: Sequence[str] = ()) -> dict[str, Any]:
        # Codex's sandboxes (read-only, workspace-write) let commands read any file: the library
        # roots need no grant, only the hooks.
        report = self.hooks.install(home, project)
        report["trust"] = self._trust(project)
        return report

    def uninstall(self, project: Path | None) -> dict[str, Any]:
        path = self.hooks.path(project)
        keys = hook_keys(path)
        report = self.hooks.uninstall(project)
        report["trust_removed"] = forget_trust(codex_home() / "config.toml", keys)
        return report

    def served_homes(self, project: Path | None) -> set[str]:
        return self.hooks.served_homes(project)

    def checks(self, project: Path | None, library_roots: Sequence[str] = ()) -> list[Check]:
        lines = self.hooks.checks(project, library_roots)
        listed = list_hooks(project)
        if listed is None:
            lines.append(Check(False, "Codex is not on PATH: cannot ask it whether SkillPilot's hooks are trusted"))
            return lines
        ours = [h for h in listed if is_ours(h.get("command"))]
        untrusted = sorted({h["eventName"] for h in ours if h.get("trustStatus") not in ("trusted", "managed")})
        if not ours:
            lines.append(Check(False, "Codex lists none of SkillPilot's hooks (an untrusted project's are not loaded)"))
        elif untrusted:
            detail = ", ".join(untrusted)
            lines.append(Check(False, f"Codex skips untrusted hooks: {detail}; run `skillpilot setup codex` again"))
        else:
            lines.append(Check(True, f"Codex trusts SkillPilot's {len(ours)} hooks"))
        return lines

    def _trust(self, project: Path | None) -> dict[str, Any]:
        """Mark SkillPilot's hooks trusted as Codex's /hooks screen does; what was done."""
        server = AppServer.start()
        if server is None:
            return {"recorded": [], "note": "Codex is not on PATH: open /hooks in Codex to trust SkillPilot's hooks"}
        with server:
            listed = server.hooks(project)
            ours = [h for h in listed if is_ours(h.get("command"))]
            todo = {h["key"]: h["currentHash"] for h in ours if h.get("trustStatus") in ("untrusted", "modified")}
            if not ours:
                return {"recorded": [], "note": "Codex did not load the hooks: it loads a project's only once trusted"}
            if todo:
                backup(codex_home() / "config.toml")
                server.call(
                    "config/batchWrite",
                    {
                        "edits": [
                            {
                                "keyPath": "hooks.state",
                                "mergeStrategy": "upsert",
                                "value": {key: {"trusted_hash": digest} for key, digest in todo.items()},
                            }
                        ]
                    },
                )
        return {"recorded": sorted(todo), "note": ""}


def hook_keys(path: Path) -> list[str]:
    """The keys Codex files SkillPilot's hooks in ``path`` under (``<file>:<event>:<group>:<handler>``)."""
    try:
        hooks = read(path).get("hooks")
    except ConfigError:
        return []
    keys = []
    for event, groups in (hooks if isinstance(hooks, dict) else {}).items():
        label = _KEY_LABEL.sub("_", event).lower()
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if isinstance(handler, dict) and is_ours(handler.get("command")):
                    keys.append(f"{path.absolute()}:{label}:{g}:{h}")
    return keys


def forget_trust(config: Path, keys: list[str]) -> list[str]:
    """Remove the ``hooks.state`` entries of ``keys`` from ``config`` (comments and every other
    key kept, tables left empty removed); the keys removed."""
    import tomlkit

    try:
        text = config.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    document = tomlkit.parse(text)
    hooks = document.get("hooks")
    if not isinstance(hooks, dict):
        return []
    state = hooks.get("state")
    if not isinstance(state, dict):
        return []
    removed = [key for key in keys if key in state]
    if not removed:
        return []
    for key in removed:
        del state[key]
    if not state:
        del hooks["state"]
    if not hooks:
        del document["hooks"]
    backup(config)
    config.write_text(tomlkit.dumps(document).rstrip("\n") + "\n", encoding="utf-8")
    return removed


def list_hooks(project: Path | None) -> list[dict[str, Any]] | None:
    """Codex's own list of the hooks it would run for ``project`` (or the user's home); None
    without Codex."""
    server = AppServer.start()
    if server is None:
        return None
    with server:
        return server.hooks(project)


class AppServer:
    """``codex app-server`` over stdio (JSON-RPC, one JSON object a line), for the two calls
    Codex's own hook review makes."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self._next = 0
        self.call("initialize", {"clientInfo": {"name": "skillpilot", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "initialized"})

    @classmethod
    def start(cls) -> AppServer | None:
        binary = os.environ.get("SKILLPILOT_CODEX_BIN") or shutil.which("codex")
        if binary is None:
            return None
        process = subprocess.Popen(
            [binary, "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        return cls(process)

    def __enter__(self) -> AppServer:
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def hooks(self, project: Path | None) -> list[dict[str, Any]]:
        where = str((project or Path.home()).absolute())
        data = self.call("hooks/list", {"cwds": [where]}).get("data") or []
        return [h for entry in data for h in entry.get("hooks", [])]

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        assert self.process.stdout is not None
        while line := self.process.stdout.readline():
            message = json.loads(line)
            if message.get("id") != self._next:
                continue  # a notification
            if "error" in message:
                raise ConfigError("codex", f"codex app-server {method} failed: {message['error'].get('message')}")
            result: dict[str, Any] = message.get("result") or {}
            return result
        raise ConfigError("codex", f"codex app-server exited during {method}")

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()


class Codex:
    """The Codex CLI host (see the module docstring)."""

    name = "codex"
    title = "Codex CLI"
    hooks = HOOKS
    wording = Wording(by_path=True)
    setup = CodexSetup()

    def read(self, payload: Mapping[str, Any]) -> HookEvent:
        event = basic_event(payload, EVENT)
        if event.kind == "ignored" and payload.get("hook_event_name") == "PostToolUse":
            tool_input = payload.get("tool_input")
            command = tool_input.get("command") if isinstance(tool_input, dict) else None
            if payload.get("tool_name") == SHELL_TOOL and isinstance(command, str):
                read_path = skill_read_by(command, event.cwd)
                if read_path is not None:
                    return replace(event, kind="skill-used", skill_path=read_path)
        return event

    def skill_roots(self, cwd: Path | None) -> list[SkillRoot]:
        return offered_roots(cwd)

    def skill_name(self, skill: IndexedSkill, root: SkillRoot) -> str | None:
        return listed_name(skill, root)

    def prompt_output(self, context: str) -> dict[str, Any]:
        return context_output(EVENT, context)

    def library_roots(self, settings: Settings) -> tuple[str, ...]:
        return tuple(settings.codex_library_roots)


HOST = Codex()
