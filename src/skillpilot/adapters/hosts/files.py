"""SkillPilot's hooks in a host's JSON hook file, and back out: the shape Claude Code's and Gemini
CLI's ``settings.json`` and Codex's ``hooks.json`` share.

    {"hooks": {"<Event>": [{"matcher": "<tool>"?, "hooks": [{"type": "command", "command": ...}]}]}}

Input: the file and the matcher groups to add per event. Output: :class:`FileChange`.

Each hook runs the standard-library hook process (:mod:`skillpilot.adapters.hook_client`) with an
interpreter's absolute path (:func:`hook_command`); SkillPilot's entries are told from others by
that file's path in their command (or ``skillpilot hook``, the plugin form).

Guarantees: every other setting and every other hook stays as it was; installing twice changes
nothing the second time; before a change the previous file is copied to ``<file>.bak``;
``uninstall`` removes only SkillPilot's own entries (and the groups and events they leave empty),
so a file that only gained them reads as it did before.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from .. import hook_client
from . import Check, HookSpec

MARKER = "skillpilot/adapters/hook_client.py"

Groups = Mapping[str, list[dict[str, Any]]]


@dataclass(frozen=True)
class FileChange:
    """What one install or uninstall did to ``path``."""

    path: str
    changed: bool
    backup: str | None
    command: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def hook_command(host: str, home: Path, python: str = sys.executable) -> str:
    """The shell command a host runs: this interpreter on the hook file, without the
    site-packages scan (``-S``) or the hook's folder on ``sys.path`` (``-P``)."""
    script = Path(hook_client.__file__).resolve()
    words = [str(Path(python).absolute()), "-S", "-P", str(script), host, "--home", str(home)]
    return " ".join(shlex.quote(w) for w in words)


def is_ours(command: object) -> bool:
    return isinstance(command, str) and (MARKER in command.replace(os.sep, "/") or "skillpilot hook" in command)


def install(path: Path, groups: Groups, command: str) -> FileChange:
    """Merge ``groups`` (event -> matcher groups) into ``path`` (created if missing), after
    removing SkillPilot's earlier entries; idempotent."""
    settings = read(path)
    merged = _without_ours(settings)
    hooks = merged.setdefault("hooks", {})
    for event, event_groups in groups.items():
        hooks.setdefault(event, []).extend(json.loads(json.dumps(event_groups)))
    return _write(path, settings, merged, command)


def uninstall(path: Path) -> FileChange:
    """Remove SkillPilot's hook entries from ``path``; everything else stays. A file left with
    nothing in it (one ``install`` created) is removed."""
    settings = read(path)
    return _write(path, settings, _without_ours(settings), "")


def installed_commands(path: Path) -> dict[str, list[str]]:
    """Event -> SkillPilot's hook commands in ``path`` (empty when none or no file)."""
    try:
        settings = read(path)
    except ConfigError:
        return {}
    found: dict[str, list[str]] = {}
    for event, hook in _hooks(settings):
        if is_ours(hook.get("command")):
            found.setdefault(event, []).append(str(hook["command"]))
    return found


def command_problem(command: str, setup: str) -> str | None:
    """Why ``command`` would not run (a missing interpreter or hook file), or None; ``setup`` is
    the command that writes it again."""
    words = shlex.split(command)
    if not words or not os.access(words[0], os.X_OK):
        return f"the interpreter {words[0] if words else '?'} does not exist or is not executable"
    scripts = [w for w in words[1:] if w.endswith(".py")]
    if scripts and not os.path.isfile(scripts[0]):
        return f"the hook file {scripts[0]} does not exist (reinstalled? run `{setup}` again)"
    return None


def _hooks(settings: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    hooks = settings.get("hooks")
    for event, groups in (hooks if isinstance(hooks, dict) else {}).items():
        for group in groups if isinstance(groups, list) else []:
            for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                if isinstance(hook, dict):
                    yield event, hook


def _without_ours(settings: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``settings`` without SkillPilot's hook entries (and the groups or events they
    leave empty)."""
    result: dict[str, Any] = json.loads(json.dumps(settings))
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                others = [h for h in group["hooks"] if not (isinstance(h, dict) and is_ours(h.get("command")))]
                if not others and group["hooks"]:
                    continue
                group = {**group, "hooks": others}
            kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del result["hooks"]
    return result


def read(path: Path) -> dict[str, Any]:
    """The JSON object in ``path`` ({} when the file is missing or blank)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(path.name, f"cannot read {path}: {exc.strerror}") from exc
    try:
        data: Any = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise ConfigError(path.name, f"{path} is not valid JSON ({exc}); fix it and run setup again") from exc
    if not isinstance(data, dict):
        raise ConfigError(path.name, f"{path} must hold a JSON object")
    return dict(data)


def backup(path: Path) -> str | None:
    """Copy ``path`` to ``<path>.bak`` (when it exists) before SkillPilot changes it."""
    if not path.exists():
        return None
    copy = path.with_name(path.name + ".bak")
    shutil.copy2(path, copy)
    return str(copy)


def _write(path: Path, before: dict[str, Any], after: dict[str, Any], command: str) -> FileChange:
    if after == before and (path.exists() or not after):
        return FileChange(str(path), changed=False, backup=None, command=command)
    path.parent.mkdir(parents=True, exist_ok=True)
    # The file as it was before SkillPilot's install, when that is what is left: put back as it
    # was written (its formatting included), not re-serialised.
    previous = path.with_name(path.name + ".bak")
    original = previous.read_bytes() if not command and previous.is_file() else None
    saved = backup(path)
    if not after:
        path.unlink()
    elif original is not None and _parses_to(original, after):
        path.write_bytes(original)
    else:
        temporary = path.with_name(f".{path.name}.skillpilot")
        temporary.write_text(json.dumps(after, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(temporary, path)
    return FileChange(str(path), changed=True, backup=saved, command=command)


def _parses_to(text: bytes, expected: dict[str, Any]) -> bool:
    try:
        return bool(json.loads(text) == expected)
    except ValueError:
        return False


@dataclass(frozen=True)
class JsonHookSetup:
    """``setup`` and ``doctor`` for a host whose hooks live in a JSON hook file (the user's, or a
    project's with ``--project``). ``handler`` turns the hook command into one hook entry in the
    host's own terms (its timeout unit, a name)."""

    host: str
    specs: tuple[HookSpec, ...]
    user_file: Callable[[], Path]
    project_file: Callable[[Path], Path]
    handler: Callable[[str], dict[str, Any]]

    def path(self, project: Path | None) -> Path:
        return self.project_file(project) if project is not None else self.user_file()

    def groups(self, command: str) -> dict[str, list[dict[str, Any]]]:
        groups: dict[str, list[dict[str, Any]]] = {}
        for spec in self.specs:
            group: dict[str, Any] = {"hooks": [self.handler(command)]}
            if spec.matcher is not None:
                group = {"matcher": spec.matcher, **group}
            groups.setdefault(spec.event, []).append(group)
        return groups

    def install(self, home: Path, project: Path | None) -> dict[str, Any]:
        command = hook_command(self.host, home)
        change = install(self.path(project), self.groups(command), command)
        return {**change.to_dict(), "events": [s.event for s in self.specs]}

    def uninstall(self, project: Path | None) -> dict[str, Any]:
        return {**uninstall(self.path(project)).to_dict(), "events": []}

    def checks(self, project: Path | None) -> list[Check]:
        """One line per scope (the user's file, and the project's when given): are all of
        SkillPilot's hooks there, and would their command run."""
        lines = []
        scopes: list[tuple[str, Path | None]] = [("user", None)] + ([("project", project)] if project else [])
        for scope, where in scopes:
            path = self.path(where)
            commands = installed_commands(path)
            setup = f"skillpilot setup {self.host}" + (" --project DIR" if where else "")
            problems = sorted({p for cs in commands.values() for c in cs if (p := command_problem(c, setup))})
            missing = [s.event for s in self.specs if s.event not in commands]
            events = ", ".join(s.event + (f"({s.matcher})" if s.matcher else "") for s in self.specs)
            detail = "; ".join(problems) or (f"missing {', '.join(missing)}" if missing else events)
            data = {"scope": scope, "path": str(path), "events": sorted(commands), "missing": missing}
            lines.append(Check(not missing and not problems, f"{scope} hooks in {path}: {detail}", data))
        return lines
