"""Every host's hooks, answered inside the resident service (``POST /hook/{host}``).

Input: the JSON a host gives its hook (as forwarded by :mod:`skillpilot.adapters.hook_client`),
which the host module reads into a :class:`~skillpilot.adapters.hosts.HookEvent`. Output: the
object the hook prints, or None to print nothing.

    session     index the skill folders the host offers that session (in the background)
    prompt      route over those skills only; a hard or soft decision becomes the host's
                context output (:func:`hook_context`), a pass-through prints nothing
    skill-used  the skill the model chose, tied to the session's last routed prompt: an implicit
                confirm or correction (:func:`implicit_signal`); whichever event says it first counts

The offered roots are indexed by the service's one :class:`~skillpilot.adapters.hooks.RootIndexer`
(shared by every host, outside the routing lock): a prompt whose roots the index lacks waits for
it at most ``limits.HOOK_INDEX_WAIT`` seconds, any other goes on at once.

Guarantees: every event is checked against the hook bounds before the host reads it
(:func:`~skillpilot.adapters.hooks.check_event`: a ``ValueError``, HTTP 422, names the field);
every skill the context names is one the host offers that session, under the name
the host lists it by; one implicit signal at most per routed prompt, none after a hard route
(the model obeyed, it did not choose); with ``log.queries: off`` no prompt is kept, so nothing is
learned implicitly. Prompts are kept in memory only (the last one per session).
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...index.builder import root_id
from ...limits import HOOK_INDEX_WAIT, MAX_SESSIONS
from ...market.dedup import copies_among
from ...model import IndexedSkill, RouteResult
from ...router import SkillPilot
from .. import AdapterAction, action_for, in_library
from ..hooks import RootIndexer, check_event
from . import HookEvent, Host, SkillRoot, Wording, skill_md, under_roots

log = logging.getLogger(__name__)

TOOL_WORDING = Wording()


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


def skill_names(skills: Iterable[IndexedSkill], host: Host, roots: Sequence[SkillRoot]) -> dict[str, str]:
    """Skill id -> the name ``host`` lists it by, for the skills under ``roots`` it lists (of
    two skills of one name under roots that shadow, the one the host lists: ``SkillRoot.shadows``)."""
    rank = {str(Path(r.path).absolute()): n for n, r in enumerate(roots)}
    listed = list(under_roots(list(skills), roots))
    # The host's reading order: root by root, each root's folders in descending byte order.
    listed.sort(key=lambda pair: [os.fsencode(part) for part in skill_md(pair[0]).parts], reverse=True)
    listed.sort(key=lambda pair: rank[str(Path(pair[1].path).absolute())])
    names: dict[str, str] = {}
    holders: dict[str, str] = {}
    for indexed, root in listed:
        name = host.skill_name(indexed, root)
        if name is None:
            continue
        if root.shadows:
            names.pop(holders.get(name, ""), None)
            holders[name] = indexed.id
        names[indexed.id] = name
    return names


def hook_context(
    result: RouteResult,
    names: Mapping[str, str],
    wording: Wording = TOOL_WORDING,
    library_roots: tuple[str, ...] = (),
    copies: Sequence[Sequence[str]] = (),
) -> str | None:
    """The context for ``result`` (None for a pass-through), naming skills as ``names`` says the
    host lists them, worded as ``wording`` says; a skill under ``library_roots`` is handed over
    by its SKILL.md path instead, and a library pass-through whose top five hold ``copies`` of
    one another is a shortlist (``action_for``). The one place a hook's context is written."""
    action = hook_action(result, names, wording, library_roots, copies)
    return action.context if action.type != "passthrough" else None


def hook_action(
    result: RouteResult,
    names: Mapping[str, str],
    wording: Wording = TOOL_WORDING,
    library_roots: tuple[str, ...] = (),
    copies: Sequence[Sequence[str]] = (),
) -> AdapterAction:
    """The action :func:`hook_context` writes: its context names skills as the host lists them,
    its ``candidates`` are skill ids (two that the host lists under one name stay apart)."""
    if result.skill is None:
        return AdapterAction("passthrough")
    # A runner-up is named if the host lists it, or (library mode) handed over by its path.
    kept = [a for a in result.alternatives if a.id in names or in_library(a.path, library_roots)]
    named = replace(
        result,
        skill=replace(result.skill, name=names.get(result.skill.id, result.skill.name)),
        alternatives=tuple(replace(a, id=names.get(a.id, a.id)) for a in kept),
    )
    renamed = [[names.get(i, i) for i in group] for group in copies]
    action = action_for(named, via=wording.via, library_roots=library_roots, copies=renamed, verb=wording.verb)
    # The runners-up came back as names, in the router's order among those of one name.
    unclaimed = list(kept)
    ids = list(action.candidates[:1])
    for name in action.candidates[1:]:
        runner = next(a for a in unclaimed if names.get(a.id, a.id) == name)
        unclaimed.remove(runner)
        ids.append(runner.id)
    return replace(action, candidates=tuple(ids))


def library_copies(pilot: SkillPilot, result: RouteResult, library_roots: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Copies among the top five of a route whose pick lies under ``library_roots`` (library
    mode's shortlist rule); none otherwise."""
    if result.skill is None or not in_library(result.skill.path, library_roots):
        return []
    ids = [result.skill.id, *(a.id for a in result.alternatives[:4])]
    return copies_among([pilot.get(i) for i in ids])


def implicit_signal(last: RoutedPrompt | None, invoked: str | None) -> ImplicitSignal | None:
    """What the model's choice says about the last route: the skill it chose when SkillPilot
    named a shortlist (soft) or nothing (pass-through). After a hard route it obeyed: no signal."""
    if last is None or invoked is None or last.decision == "hard":
        return None
    if not last.named:
        return ImplicitSignal("confirm", skill=invoked)
    if invoked == last.named[0]:
        return ImplicitSignal("confirm", skill=invoked)
    return ImplicitSignal("correct", wrong=last.named[0], right=invoked)


class HostHooks:
    """The service's state for one host: roots indexed so far and each session's last route.

    ``pilot`` is the service's warm router; every call on it goes through ``run`` (the service's
    one-call-at-a-time lock); offered roots are indexed by ``indexer``, never under that lock
    (the service passes one for every host). ``library_roots`` are folders the host does not list
    itself whose skills the context hands over by path (library mode)."""

    def __init__(
        self,
        host: Host,
        pilot: SkillPilot,
        run: Any,
        library_roots: tuple[str, ...] = (),
        indexer: RootIndexer | None = None,
    ) -> None:
        self.host = host
        self.pilot = pilot
        self.run = run
        self.library_roots = library_roots
        self.indexer = indexer or RootIndexer(pilot.settings)
        self._sessions: OrderedDict[str, RoutedPrompt] = OrderedDict()
        self._prompts = 0
        self._lock = threading.Lock()
        self._names: tuple[tuple[int, tuple[SkillRoot, ...]], dict[str, str]] | None = None

    def answer(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """``{"output": <what the hook prints> | None}`` plus what was done, for one hook event.
        Raises ``ValueError`` for an event past the hook bounds or one the host cannot read."""
        event = self.host.read(check_event(payload))
        if event.kind == "session":
            roots = self.host.skill_roots(event.cwd)
            self.indexer.ensure([r.path for r in roots], wait=0)
            return {"output": None, "roots": [r.path for r in roots]}
        if event.kind == "prompt":
            return self._prompt(event)
        if event.kind == "skill-used":
            return self._skill_used(event)
        return {"output": None}

    def _prompt(self, event: HookEvent) -> dict[str, Any]:
        prompt = event.prompt or ""
        if not prompt.strip():
            return {"output": None}
        roots = self.host.skill_roots(event.cwd)
        # Library roots (library mode) are the one exception to "only what the host offers".
        library = tuple(str(Path(r).expanduser()) for r in self.library_roots)
        paths = [r.path for r in roots] + list(library)
        # Only a root the index lacks is worth waiting for; changes are picked up in the background.
        held = set(self.run(lambda p: p.store.roots()))
        missing = any(root_id(Path(path)) not in held for path in paths)
        self.indexer.ensure(paths, wait=HOOK_INDEX_WAIT if missing else 0)
        result: RouteResult = self.run(lambda p: p.route(prompt, surface="hook", roots=paths))
        names: Mapping[str, str] = self.run(lambda p: self._listed_names(p, roots))
        # A host whose model loads a skill by reading it gets every skill by its SKILL.md path.
        by_path = (*library, *paths) if self.host.wording.by_path else library
        # A skill under an offered root that the host does not list (too deep, no name) is never
        # named: the model would go after a skill it cannot load.
        listed = result.skill is None or result.skill.id in names or in_library(result.skill.path, library)
        copies = self.run(lambda p: library_copies(p, result, library))
        action = hook_action(result, names, self.host.wording, by_path, copies) if listed else None
        context = action.context if action is not None and action.type != "passthrough" else None
        # The ids it named, best first (the signal compares the model's choice with the first).
        named = action.candidates if action is not None and context else ()
        self._remember(event.session, prompt, result.decision, named)
        output = self.host.prompt_output(context) if context else None
        return {"output": output, "result": result.to_dict()}

    def _listed_names(self, pilot: SkillPilot, roots: Sequence[SkillRoot]) -> Mapping[str, str]:
        """``skill_names`` of the index's skills under ``roots``, worked out once per index
        generation and roots: it walks every skill's path, 35 ms a prompt at 1,000 skills on a
        loaded 2-core machine, and only a re-index or other roots change its answer."""
        key = (pilot.store.generation(), tuple(roots))
        cached = self._names
        if cached is None or cached[0] != key:
            cached = self._names = (key, skill_names(pilot.skills(), self.host, roots))
        return cached[1]

    def _remember(self, session: str | None, prompt: str, decision: str, named: tuple[str, ...]) -> None:
        if session is None or self.pilot.settings.log_queries == "off":
            return
        with self._lock:
            self._prompts += 1
            self._sessions[session] = RoutedPrompt(session, self._prompts, prompt, decision, named)
            self._sessions.move_to_end(session)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)

    def _skill_used(self, event: HookEvent) -> dict[str, Any]:
        with self._lock:
            # The first skill the model chose after a prompt is its answer to it; later ones are
            # not (nor is a skill chosen after a turn that ended without one).
            last = self._sessions.pop(event.session, None) if event.session is not None else None
        if last is None or (event.skill_name is None and event.skill_path is None):
            return {"output": None, "signal": None}
        invoked = self.run(lambda p: self._chosen(p, event))
        signal = implicit_signal(last, invoked)
        if signal is None:
            return {"output": None, "signal": None, "prompt_id": last.prompt_id}
        self.run(
            lambda p: p.feedback(
                signal.kind, last.query, skill=signal.skill, wrong=signal.wrong, right=signal.right, implicit=True
            )
        )
        return {"output": None, "signal": signal.__dict__, "prompt_id": last.prompt_id}

    def _chosen(self, pilot: SkillPilot, event: HookEvent) -> str | None:
        """The id of the offered skill the model chose: by the name the host lists it under, or
        by the SKILL.md it read."""
        roots = self.host.skill_roots(event.cwd)
        if event.skill_path is not None:
            wanted = os.path.realpath(event.skill_path)
            for indexed, _ in under_roots(pilot.skills(), roots):
                if os.path.realpath(skill_md(indexed)) == wanted:
                    return indexed.id
            return None
        by_name = {name: skill_id for skill_id, name in self._listed_names(pilot, roots).items()}
        return by_name.get((event.skill_name or "").lstrip("/"))
