"""The agent hosts SkillPilot serves, behind one registry: a host is one module.

A host module declares, for one agent CLI (Claude Code, Gemini CLI, Codex, OpenClaw ...):

    name, title        the URL segment and CLI argument (``POST /hook/gemini``, ``setup gemini``)
                       and what a person calls it
    hooks              the hook events it sends (:class:`HookSpec`: event name, tool matcher)
    read(payload)      what one hook event's JSON means (:class:`HookEvent`): a session start, a
                       prompt, the skill the model chose (by the name the host gave it or the
                       SKILL.md it read), or nothing SkillPilot acts on
    skill_roots(cwd)   the folders of skills the host offers a session in ``cwd``
                       (:class:`SkillRoot`), and ``skill_name`` the name it lists a skill under
    wording            how the model is told to use a skill (:class:`Wording`)
    prompt_output      the JSON the hook prints to hand the model a context
    library_roots      folders the host does not list whose skills the context hands over by
                       their SKILL.md path (library mode; empty where the host cannot read them)
    setup              how ``skillpilot setup HOST`` installs and removes its hooks, and what
                       ``skillpilot doctor HOST`` checks (:class:`HostSetup`), or None when the
                       host installs SkillPilot its own way (OpenClaw's plugin)

The registry is a :class:`skillpilot.plugins.Registry` (:data:`HOSTS`): the built-in hosts by
``"module:HOST"``, and a third party's the same way, declared as ``NAME = "module:HOST"`` in the
``skillpilot.hosts`` entry-point group (the object it names is the host). Entry points are read
once per process; a host that cannot load is logged and the others still work. The hook process
(:mod:`skillpilot.adapters.hook_client`) needs no registry: it forwards any host's JSON to
``POST /hook/{name}``, and the service answers 404 for a name no host has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, cast, runtime_checkable

from ...config import Settings
from ...errors import ConfigError
from ...limits import HOOK_SETTINGS_BYTES
from ...model import IndexedSkill
from ...plugins import Registry
from ..hooks import read_regular_file

__all__ = [
    "ENTRY_POINT_GROUP",
    "Check",
    "EventKind",
    "Host",
    "HookEvent",
    "HookSpec",
    "HostSetup",
    "SkillRoot",
    "Wording",
    "available_hosts",
    "basic_event",
    "context_output",
    "get_host",
    "listed_name",
    "register_host",
    "skill_md",
]


ENTRY_POINT_GROUP = "skillpilot.hosts"
# A host's name is a URL path segment and a command-line word.
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9-]{0,31}$")

EventKind = Literal["session", "prompt", "skill-used", "ignored"]


@dataclass(frozen=True)
class SkillRoot:
    """A folder of skills a host offers. ``namespace`` prefixes its skills' names (a plugin's or
    an extension's, ``namespace:skill``); ``depth`` is how many folders below the root the host
    looks for a SKILL.md (1: ``root/<skill>/SKILL.md`` only; None: any depth); ``exclude`` the
    names (lowercase) the host's settings hide. ``shadows``: the host lists one skill per name,
    reading the roots in ``skill_roots`` order and each root's SKILL.md files in descending
    order of their folder names (byte order), so that a skill read later hides one of the same
    name read before it, from this root or an earlier one (Gemini CLI)."""

    path: str
    namespace: str | None = None
    depth: int | None = None
    exclude: frozenset[str] = frozenset()
    shadows: bool = False


@dataclass(frozen=True)
class HookEvent:
    """What one hook event means, whichever host sent it.

    ``session``     a session started in ``cwd``: index the skills it is offered
    ``prompt``      the user typed ``prompt``: route it
    ``skill-used``  the model chose a skill: ``skill_name`` as the host names it, or
                    ``skill_path``, the SKILL.md it read (None for both: it chose none)
    ``ignored``     nothing SkillPilot acts on
    """

    kind: EventKind
    session: str | None = None
    cwd: Path | None = None
    prompt: str | None = None
    skill_name: str | None = None
    skill_path: str | None = None


@dataclass(frozen=True)
class Wording:
    """How a context tells the model to use a skill. ``verb`` and ``via`` make "invoke the skill
    `x` with your Skill tool"; ``by_path`` hands every skill over by its SKILL.md instead ("read
    .../SKILL.md and follow its instructions"), for a host whose model loads a skill by reading it."""

    verb: str = "invoke"
    via: str | None = None
    by_path: bool = False


@dataclass(frozen=True)
class HookSpec:
    """One hook ``setup`` installs: the host's event name and, for tool events, its matcher."""

    event: str
    matcher: str | None = None


@dataclass(frozen=True)
class Check:
    """One line of ``skillpilot doctor``: whether it is fine, and what it says (or how to fix it)."""

    ok: bool
    text: str
    data: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class HostSetup(Protocol):
    """How ``skillpilot setup HOST`` installs SkillPilot's hooks into the host's own files and
    takes them out again, and what ``skillpilot doctor HOST`` checks.

    ``install`` and ``uninstall`` return what they did as a JSON-able dict with at least
    ``path`` (the file written), ``changed`` and ``backup``; both are idempotent, keep every
    setting and hook that is not SkillPilot's, and back the previous file up before a change.
    ``library_roots`` (the host's library mode) are folders the host must be able to read:
    ``install`` grants that where the host asks for it (and reports them as ``granted``),
    ``uninstall`` takes back exactly what it granted, ``checks`` says whether the host may read
    them. ``served_homes`` says which homes the installed hooks use."""

    def install(self, home: Path, project: Path | None, library_roots: Sequence[str] = ()) -> dict[str, Any]: ...

    def uninstall(self, project: Path | None) -> dict[str, Any]: ...

    def checks(self, project: Path | None, library_roots: Sequence[str] = ()) -> list[Check]: ...

    def served_homes(self, project: Path | None) -> set[str]:
        """The SkillPilot homes whose service the host's installed hooks use (the user's, or
        ``project``'s), so that uninstalling one host stops a service no other host uses."""
        ...


@runtime_checkable
class Host(Protocol):
    """One agent host (see the module docstring). ``read`` is the one call every hook event makes."""

    name: str
    title: str

    # Read-only, so that a host may declare them with its own (narrower) types.
    @property
    def hooks(self) -> tuple[HookSpec, ...]: ...

    @property
    def wording(self) -> Wording: ...

    @property
    def setup(self) -> HostSetup | None: ...

    def read(self, payload: Mapping[str, Any]) -> HookEvent: ...

    def skill_roots(self, cwd: Path | None) -> list[SkillRoot]: ...

    def skill_name(self, skill: IndexedSkill, root: SkillRoot) -> str | None: ...

    def prompt_output(self, context: str) -> dict[str, Any]: ...

    def library_roots(self, settings: Settings) -> tuple[str, ...]: ...


# Built-in hosts as "module:HOST" (imported when first asked for: each host module imports this
# one for its types); a distribution's ``skillpilot.hosts`` entry point adds or replaces one.
HOSTS = Registry(
    ENTRY_POINT_GROUP,
    "host",
    {
        "claude-code": "skillpilot.adapters.hosts.claude_code:HOST",
        "gemini": "skillpilot.adapters.hosts.gemini:HOST",
        "codex": "skillpilot.adapters.hosts.codex:HOST",
        "openclaw": "skillpilot.adapters.hosts.openclaw:HOST",
    },
)


def register_host(host: Host) -> None:
    """Make ``host`` servable under ``host.name`` (a registered name is replaced)."""
    if not NAME_PATTERN.match(host.name):
        raise ValueError(f"a host name is lowercase letters, digits and '-', starting with a letter: {host.name!r}")
    HOSTS.register(host.name, host)


def available_hosts() -> list[str]:
    """The registered host names, installed plugins included, sorted."""
    return sorted(HOSTS.names())


def get_host(name: str) -> Host:
    """The host registered as ``name``; ``ConfigError`` naming the known ones otherwise."""
    host = HOSTS.get(name)
    if host is None:
        raise ConfigError("host", f"unknown host {name!r}; use one of {', '.join(available_hosts())}")
    return cast(Host, host)


def basic_event(payload: Mapping[str, Any], prompt_event: str) -> HookEvent:
    """What every host's hook JSON shares (``hook_event_name``, ``session_id``, ``cwd``): a
    ``SessionStart`` is a session, ``prompt_event`` a prompt (whose ``prompt`` must be a string);
    anything else is "ignored", with the session and cwd, for the host to read further."""
    event = payload.get("hook_event_name")
    session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    cwd = Path(payload["cwd"]) if isinstance(payload.get("cwd"), str) else None
    if event == "SessionStart":
        return HookEvent("session", session, cwd)
    if event == prompt_event:
        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            raise ValueError(f"expected the {prompt_event} JSON with a string 'prompt'")
        return HookEvent("prompt", session, cwd, prompt=prompt)
    return HookEvent("ignored", session, cwd)


def context_output(event: str, context: str) -> dict[str, Any]:
    """The hook output that hands the model ``context`` (Claude Code's shape, which Gemini CLI
    and Codex read too)."""
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}


def skill_md(skill: IndexedSkill) -> Path:
    """The SKILL.md of ``skill`` (its ``path`` is the folder, or the file itself)."""
    path = Path(skill.skill.path)
    return path if path.name == "SKILL.md" or path.suffix else path / "SKILL.md"


def listed_name(
    skill: IndexedSkill, root: SkillRoot, name: str | None = None, unsafe: re.Pattern[str] | None = None
) -> str | None:
    """The name a host lists ``skill`` under when it was found under ``root`` (None: the host does
    not list it). ``name`` overrides the skill's own; ``unsafe`` characters become ``-`` (as
    Gemini CLI does); a SKILL.md deeper below the root than ``root.depth`` is not listed."""
    if root.depth is not None:
        try:
            below = skill_md(skill).relative_to(root.path)
        except ValueError:
            return None
        if len(below.parts) - 1 > root.depth:
            return None
    listed = name if name is not None else skill.name
    if unsafe is not None:
        listed = unsafe.sub("-", listed)
    return f"{root.namespace}:{listed}" if root.namespace else listed


def under_roots(skills: Sequence[IndexedSkill], roots: Sequence[SkillRoot]) -> list[tuple[IndexedSkill, SkillRoot]]:
    """Each of ``skills`` indexed under one of ``roots``, with that root."""
    by_path = {str(Path(r.path).absolute()): r for r in roots}
    pairs = []
    for indexed in skills:
        root = by_path.get(str(Path(indexed.skill.root).absolute()))
        if root is not None:
            pairs.append((indexed, root))
    return pairs


def json_object(path: Path) -> dict[str, Any]:
    """The JSON object a host keeps in ``path``; {} when it is missing, unreadable, not a regular
    file, over ``limits.HOOK_SETTINGS_BYTES`` or not an object (a host's own file that SkillPilot
    only reads must never break, block or stall a hook)."""
    raw = read_regular_file(path, HOOK_SETTINGS_BYTES)
    try:
        data = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}
