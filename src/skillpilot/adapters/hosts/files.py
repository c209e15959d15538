"""SkillPilot's hooks in a host's JSON hook file, and back out: the shape Claude Code's and Gemini
CLI's ``settings.json`` and Codex's ``hooks.json`` share.

    {"hooks": {"<Event>": [{"matcher": "<tool>"?, "hooks": [{"type": "command", "command": ...}]}]}}

Input: the file and the matcher groups to add per event. Output: :class:`FileChange`.

Each hook runs the standard-library hook process (:mod:`skillpilot.adapters.hook_client`) with an
interpreter's absolute path (:func:`hook_command`); SkillPilot's entries are told from others by
that file's path in their command (or ``skillpilot hook``, the plugin form).

A host that must be told it may read the library roots (library mode: Claude Code's
``permissions.additionalDirectories``) gets them as a :class:`Grant`: the folders the list did not
hold yet are added, and recorded in the SkillPilot home named by the hook command
(``grants.json``, keyed by the settings file), so that ``uninstall`` takes out exactly those,
and the list or object it created, never the user's own entries.

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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from .. import hook_client
from . import Check, HookSpec

MARKER = "skillpilot/adapters/hook_client.py"
# In the SkillPilot home: settings file -> the folders SkillPilot added to its grant list.
GRANTS_FILE = "grants.json"

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


def home_of(command: str) -> str | None:
    """The SkillPilot home a hook command serves (its ``--home``), or None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    at = words.index("--home") + 1 if "--home" in words else 0
    return words[at] if 0 < at < len(words) else None


@dataclass(frozen=True)
class Grant:
    """Folders a host must be told it may read: the list at ``keys`` in its settings
    (``("permissions", "additionalDirectories")``) gets each of ``folders`` it lacks."""

    keys: tuple[str, ...]
    folders: tuple[str, ...]


def install(path: Path, groups: Groups, command: str, grant: Grant | None = None) -> FileChange:
    """Merge ``groups`` (event -> matcher groups) into ``path`` (created if missing), after
    removing SkillPilot's earlier entries (its earlier grants too), and add ``grant``'s folders;
    idempotent."""
    settings = read(path)
    merged, earlier = _without_skillpilot(settings, path)
    hooks = merged.setdefault("hooks", {})
    for event, event_groups in groups.items():
        hooks.setdefault(event, []).extend(json.loads(json.dumps(event_groups)))
    granted = _with_grant(merged, grant) if grant is not None else None
    change = _write(path, settings, merged, command)
    for home in earlier:
        _record_grant(Path(home), path, None)
    served = home_of(command)
    if served is not None:
        _record_grant(Path(served), path, granted)
    return change


def uninstall(path: Path) -> FileChange:
    """Remove SkillPilot's hook entries from ``path``, and the folders its install granted;
    everything else stays. A file left with nothing in it (one ``install`` created) is removed."""
    settings = read(path)
    after, homes = _without_skillpilot(settings, path)
    change = _write(path, settings, after, "")
    for home in homes:
        _record_grant(Path(home), path, None)
    return change


def _without_skillpilot(settings: dict[str, Any], path: Path) -> tuple[dict[str, Any], set[str]]:
    """``settings`` without SkillPilot's hooks and the folders they granted, and the homes
    those hooks served."""
    homes = {h for _, hook in _hooks(settings) if is_ours(hook.get("command")) and (h := home_of(hook["command"]))}
    result = _without_ours(settings)
    for home in homes:
        result = _without_grant(result, _grants(Path(home)).get(str(path)))
    return result, homes


def granted_folders(path: Path, home: Path) -> list[str]:
    """The folders SkillPilot's install (for ``home``) added to ``path``'s grant list."""
    record = _grants(home).get(str(path))
    return list(record["added"]) if isinstance(record, dict) and isinstance(record.get("added"), list) else []


def read_or_empty(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; {} when it cannot be read as one (doctor reports, never fails)."""
    try:
        return read(path)
    except ConfigError:
        return {}


def _listed(settings: dict[str, Any], keys: Sequence[str]) -> list[Any]:
    """The list at ``keys`` in ``settings`` ([] when any step is missing or of another type)."""
    value: Any = settings
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, list) else []


def _grants(home: Path) -> dict[str, Any]:
    return read_or_empty(home / GRANTS_FILE)


def _with_grant(settings: dict[str, Any], grant: Grant) -> dict[str, Any]:
    """Add ``grant``'s folders to ``settings``; what to record: the keys, the folders added and
    how many of the containers along ``keys`` this created."""
    container, created = settings, 0
    for depth, key in enumerate(grant.keys):
        last = depth == len(grant.keys) - 1
        if key not in container:
            container[key] = [] if last else {}
            created = len(grant.keys) - depth if created == 0 else created
        if not isinstance(container[key], list if last else dict):
            where = ".".join(grant.keys[: depth + 1])
            kind = "list" if last else "object"
            raise ConfigError("setup", f"{where} in the host's settings must be a JSON {kind}; fix it, then run setup")
        container = container[key]
    folders: list[Any] = container  # type: ignore[assignment]  # the last key's value, checked a list above
    added = [f for f in grant.folders if f not in folders]
    folders.extend(added)
    return {"keys": list(grant.keys), "added": added, "created": created}


def _without_grant(settings: dict[str, Any], record: Any) -> dict[str, Any]:
    """``settings`` without the folders a grant ``record`` says SkillPilot added (and the list
    and objects it created, once empty)."""
    if not isinstance(record, dict) or not isinstance(record.get("keys"), list) or not record["keys"]:
        return settings
    keys: list[str] = record["keys"]
    chain: list[dict[str, Any]] = [settings]
    for key in keys[:-1]:
        inner = chain[-1].get(key)
        if not isinstance(inner, dict):
            return settings
        chain.append(inner)
    folders = chain[-1].get(keys[-1])
    if not isinstance(folders, list):
        return settings
    added = set(record.get("added") or ())
    chain[-1][keys[-1]] = [f for f in folders if f not in added]
    created = int(record.get("created") or 0)
    # Innermost first: an emptied container SkillPilot created goes.
    for depth in range(len(keys) - 1, len(keys) - 1 - created, -1):
        if not chain[depth][keys[depth]]:
            del chain[depth][keys[depth]]
    return settings


def _record_grant(home: Path, path: Path, granted: dict[str, Any] | None) -> None:
    """Remember (or, with None or nothing added, forget) what SkillPilot granted in ``path``."""
    grants = _grants(home)
    if granted is not None and (granted["added"] or granted["created"]):
        grants[str(path)] = granted
    elif grants.pop(str(path), None) is None:
        return
    home.mkdir(parents=True, exist_ok=True)
    (home / GRANTS_FILE).write_text(json.dumps(grants, indent=2) + "\n", encoding="utf-8")


def installed_commands(path: Path) -> dict[str, list[str]]:
    """Event -> SkillPilot's hook commands in ``path`` (empty when none or no file)."""
    settings = read_or_empty(path)
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
    host's own terms (its timeout unit, a name). ``grant_keys``: where the host's settings list
    the folders it may read beyond the working folder, for the library roots (None: the host
    reads them without being told, or has no library mode)."""

    host: str
    specs: tuple[HookSpec, ...]
    user_file: Callable[[], Path]
    project_file: Callable[[Path], Path]
    handler: Callable[[str], dict[str, Any]]
    grant_keys: tuple[str, ...] | None = None

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

    def install(self, home: Path, project: Path | None, library_roots: Sequence[str] = ()) -> dict[str, Any]:
        command = hook_command(self.host, home)
        grant = Grant(self.grant_keys, tuple(library_roots)) if self.grant_keys and library_roots else None
        path = self.path(project)
        change = install(path, self.groups(command), command, grant)
        return {**change.to_dict(), "events": [s.event for s in self.specs], "granted": granted_folders(path, home)}

    def uninstall(self, project: Path | None) -> dict[str, Any]:
        return {**uninstall(self.path(project)).to_dict(), "events": []}

    def served_homes(self, project: Path | None) -> set[str]:
        commands = installed_commands(self.path(project))
        return {home for cs in commands.values() for c in cs if (home := home_of(c))}

    def checks(self, project: Path | None, library_roots: Sequence[str] = ()) -> list[Check]:
        """One line per scope (the user's file, and the project's when given): are all of
        SkillPilot's hooks there, and would their command run. The user's hooks run in every
        project, so a project's file needs none of the events they cover. With ``grant_keys``
        and library roots, one more: may the host read each of them."""
        lines = self._hook_checks(project)
        if self.grant_keys and library_roots:
            files = [self.path(None)] + ([self.path(project)] if project else [])
            granted = {str(f) for path in files for f in _listed(read_or_empty(path), self.grant_keys)}
            ungranted = [r for r in library_roots if not any(Path(r).is_relative_to(g) for g in granted)]
            where = ".".join(self.grant_keys)
            text = (
                f"{where} lacks the library roots {', '.join(ungranted)}: run `skillpilot setup {self.host}` again"
                if ungranted
                else f"{where} lets the host read the library roots"
            )
            lines.append(Check(not ungranted, text, {"ungranted": ungranted}))
        return lines

    def _hook_checks(self, project: Path | None) -> list[Check]:
        lines = []
        scopes: list[tuple[str, Path | None]] = [("user", None)] + ([("project", project)] if project else [])
        covered: set[str] = set()
        for scope, where in scopes:
            path = self.path(where)
            commands = installed_commands(path)
            setup = f"skillpilot setup {self.host}" + (" --project DIR" if where else "")
            problems = sorted({p for cs in commands.values() for c in cs if (p := command_problem(c, setup))})
            missing = [s.event for s in self.specs if s.event not in commands and s.event not in covered]
            events = ", ".join(s.event + (f"({s.matcher})" if s.matcher else "") for s in self.specs)
            if not commands and covered and not missing:
                detail = f"none needed, the user's hooks cover this project ({events})"
            else:
                detail = "; ".join(problems) or (f"missing {', '.join(missing)}" if missing else events)
            data = {"scope": scope, "path": str(path), "events": sorted(commands), "missing": missing}
            lines.append(Check(not missing and not problems, f"{scope} hooks in {path}: {detail}", data))
            if not problems:
                covered |= set(commands)
        return lines
