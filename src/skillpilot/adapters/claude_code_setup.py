"""``skillpilot setup claude-code``: SkillPilot's hooks in a Claude Code ``settings.json``, and back out.

Input: the settings file (the user's ``~/.claude/settings.json`` or a project's
``.claude/settings.json``) and the SkillPilot home. Output: :class:`SetupReport`.

The hooks it merges, each running the standard-library hook process
(:mod:`skillpilot.adapters.hook_client`) with this interpreter's absolute path:

    SessionStart                      start the service if none runs (detached), index the project
    UserPromptSubmit                  name the skill to invoke, or the shortlist to consider
    PostToolUse, matcher ``Skill``    learn from the skill the model invoked
    Stop                              the same from the turn's transcript, where PostToolUse did not fire

Guarantees: every other setting and every other hook stays as it was; running it twice changes
nothing the second time; before a change the previous file is copied to ``settings.json.bak``;
``uninstall`` removes only SkillPilot's own hook entries (found by the hook process's path).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from . import hook_client

# Claude Code's own limit is 60 s; the hook answers in milliseconds or gives up after 2 s.
HOOK_TIMEOUT_S = 10
EVENTS: tuple[tuple[str, str | None], ...] = (
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PostToolUse", "Skill"),
    # Some Claude Code versions fire no PostToolUse for the Skill tool: the end of the turn reads
    # which skill the model invoked from the transcript instead.
    ("Stop", None),
)
MARKER = "skillpilot/adapters/hook_client.py"


@dataclass(frozen=True)
class SetupReport:
    settings: str
    changed: bool
    backup: str | None
    command: str
    events: tuple[str, ...] = field(default=tuple(e for e, _ in EVENTS))


def settings_path(project: Path | None = None) -> Path:
    """The user's settings file, or the project's when ``project`` is given."""
    if project is not None:
        return project / ".claude" / "settings.json"
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude").expanduser() / "settings.json"


def hook_command(home: Path, python: str = sys.executable) -> str:
    """The shell command Claude Code runs: this interpreter on the hook file, without the
    site-packages scan (``-S``) or the hook's folder on ``sys.path`` (``-P``)."""
    script = Path(hook_client.__file__).resolve()
    words = [str(Path(python).absolute()), "-S", "-P", str(script), "claude-code", "--home", str(home)]
    return " ".join(shlex.quote(w) for w in words)


def is_ours(command: object) -> bool:
    return isinstance(command, str) and (MARKER in command.replace(os.sep, "/") or "skillpilot hook" in command)


def install(path: Path, home: Path) -> SetupReport:
    """Merge SkillPilot's hooks into ``path`` (created if missing); idempotent."""
    settings = _read(path)
    command = hook_command(home)
    merged = _without_ours(settings)
    hooks = merged.setdefault("hooks", {})
    for event, matcher in EVENTS:
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]}
        if matcher is not None:
            group = {"matcher": matcher, **group}
        hooks.setdefault(event, []).append(group)
    return _write(path, settings, merged, command)


def uninstall(path: Path) -> SetupReport:
    """Remove SkillPilot's hook entries from ``path``; everything else stays."""
    settings = _read(path)
    return _write(path, settings, _without_ours(settings), "")


def installed_commands(path: Path) -> dict[str, list[str]]:
    """Event -> SkillPilot's hook commands in ``path`` (empty when none or no file)."""
    try:
        settings = _read(path)
    except ConfigError:
        return {}
    found: dict[str, list[str]] = {}
    for event, hook in _hooks(settings):
        if is_ours(hook.get("command")):
            found.setdefault(event, []).append(str(hook["command"]))
    return found


def command_problem(command: str) -> str | None:
    """Why ``command`` would not run (a missing interpreter or hook file), or None."""
    words = shlex.split(command)
    if not words or not os.access(words[0], os.X_OK):
        return f"the interpreter {words[0] if words else '?'} does not exist or is not executable"
    scripts = [w for w in words[1:] if w.endswith(".py")]
    if scripts and not os.path.isfile(scripts[0]):
        return f"the hook file {scripts[0]} does not exist (reinstalled? run `skillpilot setup claude-code` again)"
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


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError("settings.json", f"cannot read {path}: {exc.strerror}") from exc
    try:
        data: Any = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise ConfigError("settings.json", f"{path} is not valid JSON ({exc}); fix it and run setup again") from exc
    if not isinstance(data, dict):
        raise ConfigError("settings.json", f"{path} must hold a JSON object")
    return dict(data)


def _write(path: Path, before: dict[str, Any], after: dict[str, Any], command: str) -> SetupReport:
    if after == before and (path.exists() or not after):
        return SetupReport(str(path), changed=False, backup=None, command=command)
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists():
        backup = path.with_name(path.name + ".bak")
        shutil.copy2(path, backup)
    temporary = path.with_name(f".{path.name}.skillpilot")
    temporary.write_text(json.dumps(after, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return SetupReport(str(path), changed=True, backup=str(backup) if backup else None, command=command)
