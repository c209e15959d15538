"""Library calls shared by the MCP tools and the HTTP routes: arguments in, plain JSON out.

    context(pilot, data)             -> omni-retrieval's OmniResult.to_json() for the seed's
                                        camelCase request (query, sessionId, graphSpace, ...)
    lint_report(shared, skill, path) -> {"skills": [SkillLint + failing], "failing", "skipped"}
    lint_index(checker, progress)    -> the same for a whole index (the service's lint job)
    lint_path(settings, path, progress) -> the same for the skills under a path

Bad arguments raise ``ValueError`` (the surfaces turn it into their own error shape); an unknown
skill id raises ``SkillNotFoundError``. ``lint_report`` never routes through the serving router
and holds its lock only to look the skill up: it lints with its own router on its own store
connection, feedback and preconditions off, as ``skillpilot lint`` does, so linting neither
learns from nor depends on this machine, and routes go on at their usual speed meanwhile. A
skill id lints that one skill against the whole index (``lint(only=...)``), with one checking
router per service kept between calls (it reloads its catalog when the index changes, so a lint
pays for the catalog once, not per call; lints of one service run one at a time). A path must be
inside one of the index's skill roots (a service lints what it serves, not any folder it can
read; ``skillpilot lint PATH`` lints anything); it is indexed into a scratch home and its skills
are checked against one another.
"""

from __future__ import annotations

import tempfile
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..config import Settings
from ..lint import SkillLint, indexed_under, lint
from ..omni import OmniRequest, omni_retrieve
from ..router import SkillPilot
from . import SharedPilot


def context(pilot: SkillPilot, data: dict[str, Any]) -> dict[str, Any]:
    """Omni-retrieval for the seed's camelCase request ``data``; its answer in camelCase."""
    return omni_retrieve(OmniRequest.from_json(data), pilot.settings).to_json()


def lint_settings(settings: Settings) -> Settings:
    """Lint's settings: feedback and preconditions off, so that linting neither learns from nor
    depends on this machine."""
    return settings.with_overrides(preconditions=False, feedback_enabled=False)


@dataclass(frozen=True)
class _Checker:
    """A service's lint router (its own store connection) and the lock its lints take turns on."""

    lock: threading.Lock
    pilot: SkillPilot


_CHECKERS: weakref.WeakKeyDictionary[SharedPilot, _Checker] = weakref.WeakKeyDictionary()
_CHECKERS_LOCK = threading.Lock()


def _checker_for(shared: SharedPilot) -> _Checker:
    with _CHECKERS_LOCK:
        checker = _CHECKERS.get(shared)
        if checker is None:
            store = shared.pilot.store
            settings = lint_settings(shared.pilot.settings)
            checker = _Checker(threading.Lock(), SkillPilot(settings=settings, store=store.reopen()))
            _CHECKERS[shared] = checker
        return checker


def lint_report(shared: SharedPilot, skill: str | None = None, path: str | None = None) -> dict[str, Any]:
    """Lint one indexed skill (``skill``: an id, key or name) or the skills under ``path``."""
    if (skill is None) == (path is None):
        raise ValueError("give exactly one of skill (a skill id) or path (a skill folder or SKILL.md)")
    pilot = shared.pilot
    if skill is not None:
        ids: list[str] | None = [shared(lambda p: p.get(skill)).id]
    else:
        folder = servable_path(Path(str(path)).expanduser(), shared(lambda p: p.store.roots()))
        # Skills the index holds as they are on disk score as they do by id: against the index.
        ids = shared(lambda p: indexed_under(p, [folder]))
        if ids is None:
            return lint_path(pilot.settings, folder)
    checker = _checker_for(shared)
    with checker.lock:
        return _report(lint(checker.pilot, only=set(ids or ())), [])


def lint_index(checker: SkillPilot, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Lint every skill in ``checker``'s index (a router with :func:`lint_settings`)."""
    return _report(lint(checker, progress=progress), [])


def lint_path(settings: Settings, path: Path, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Index the skills under ``path`` into a scratch home and lint them against one another."""
    folder = path.expanduser()
    if not folder.exists():
        raise ValueError(f"path {path} does not exist")
    with tempfile.TemporaryDirectory(prefix="skillpilot-lint-") as scratch:
        # A scratch index of its own, whatever store the service uses.
        checker = SkillPilot(settings=lint_settings(settings).with_overrides(home=Path(scratch), store=""))
        try:
            report = checker.index([folder], replace=True)
            results = lint(checker, progress=progress)
        finally:
            checker.close()
    return _report(results, [asdict(s) for s in report.skipped])


def servable_path(folder: Path, roots: Sequence[str]) -> Path:
    """``folder`` if it exists inside one of ``roots`` (symlinks resolved), else ``ValueError``
    saying why: a service lints only the skills it serves (HTTP, MCP, background jobs)."""
    if not folder.exists():
        raise ValueError(f"path {folder} does not exist")
    real = folder.resolve()
    if not any(real.is_relative_to(Path(root).resolve()) for root in roots):
        listed = ", ".join(roots) or "none"
        raise ValueError(
            f"path {folder} is outside the skill roots ({listed}): the service lints only "
            "the skills it serves; lint other folders with `skillpilot lint PATH`"
        )
    return folder


def _report(results: list[SkillLint], skipped: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "skills": [{**asdict(r), "failing": r.failing} for r in results],
        "failing": sum(r.failing for r in results),
        "skipped": skipped,
    }
