"""Hot reload: keep the index in step with skill folders while they change.

Input: settings and the skill roots to watch (none: the roots the index knows, or the
configured ``index.skillDirs`` on a new index). Output: an ``IndexReport`` per re-index, handed
to ``on_report``.

Guarantees:
- A watchdog observer marks the index dirty on any write, create, delete or move under a root
  folder, or of a root file (a JSON tool catalog: the file alone, through its folder without
  recursion, never the folder's tree); a burst of events (an editor saving, ``git checkout``) is
  settled for ``DEBOUNCE_SECONDS`` and then indexed once. Without watchdog events (a network
  drive, a root created later) the ``index.refreshInterval`` poll still re-scans.
- Watching the index's roots (no explicit ones), it re-reads them every ``ROOTS_SECONDS`` (one
  query), so a root another process indexes while it runs (``skillpilot index NEWROOT``) is
  watched from then on, and one removed from the index no longer is.
- Re-indexing is incremental (``build_index`` compares content hashes): an unchanged skill
  costs a hash, a deleted one disappears, a broken SKILL.md is reported in the report's
  ``skipped`` and never removes or breaks the rest of the index. A failing round is logged and
  retried on the next change or poll.
- It writes through its own ``SkillPilot`` (its own store connection): routers see the store's
  generation change on their next call and reload then.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .config import Settings
from .errors import MissingExtraError
from .model import IndexReport

log = logging.getLogger(__name__)

# Long enough to fold an editor's write-rename-chmod into one re-index, short enough that a
# new skill routes within the ~2 s the service promises.
DEBOUNCE_SECONDS = 0.3
# How soon a root indexed by another process is watched: one cheap query per period.
ROOTS_SECONDS = 2.0
# Reading a file fires "opened" / "closed_no_write" on Linux: indexing itself must not count.
_CHANGES = frozenset({"created", "deleted", "modified", "moved", "closed"})


class IndexWatcher:
    """Watch ``roots`` (default: the index's) and re-index on change; a context manager.

    Without watchdog installed it raises ``MissingExtraError``, or with ``require_watchdog``
    off only polls (the MCP server runs without the server extra)."""

    def __init__(
        self,
        settings: Settings,
        roots: Sequence[Path | str] = (),
        on_report: Callable[[IndexReport], None] | None = None,
        require_watchdog: bool = True,
    ) -> None:
        self.settings = settings
        self._require_watchdog = require_watchdog
        self._roots = [Path(r).expanduser().resolve() for r in roots]
        # Without explicit roots every round re-reads the index's, so a folder another process
        # adds with `skillpilot index` is re-scanned too (by the poll until the next start).
        self._explicit = bool(roots)
        self._on_report = on_report
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="skillpilot-watch", daemon=True)
        self._observer: Any = None
        self._handler_for: Callable[[Path], Any] | None = None
        # Each watched root and the watchdog watch that carries its events.
        self._watches: dict[Path, Any] = {}

    def __enter__(self) -> IndexWatcher:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        # The router is imported here, not with this module: the MCP server (which imports
        # serve's Refresher) answers ``initialize`` before it needs one.
        from .router import SkillPilot

        pilot = SkillPilot(settings=self.settings)
        try:
            roots = (
                self._roots
                or [Path(r) for r in pilot.store.roots()]
                or [Path(d).expanduser() for d in self.settings.skill_dirs]
            )
        finally:
            pilot.close()
        self._roots = roots
        self._observe(roots)
        # The first round indexes what changed while nobody was watching.
        self._dirty.set()
        self._thread.start()

    def _observe(self, roots: Sequence[Path]) -> None:
        try:
            from watchdog.events import FileSystemEvent, FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError as exc:
            if self._require_watchdog:
                raise MissingExtraError("server", "watching skill folders", exc.name or "watchdog") from exc
            log.info("watchdog is not installed: re-scanning every %s minutes only", self.settings.refresh_interval)
            return
        dirty = self._dirty

        class _Handler(FileSystemEventHandler):
            def __init__(self, only: Path | None) -> None:
                self.only = str(only) if only is not None else None

            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type not in _CHANGES:
                    return
                if self.only is None or self.only in (str(event.src_path), str(event.dest_path)):
                    dirty.set()

        self._handler_for = lambda root: _Handler(None if root.is_dir() else root)
        self._observer = Observer()
        self._follow(roots)
        self._observer.start()

    def _follow(self, roots: Sequence[Path]) -> bool:
        """Watch exactly ``roots``: schedule the new ones, unschedule the gone ones. Whether a
        root was added (its changes since it was indexed are not seen yet)."""
        if self._observer is None or self._handler_for is None:
            return False
        for gone in set(self._watches) - set(roots):
            self._observer.unschedule(self._watches.pop(gone))
        added = False
        for root in roots:
            if root in self._watches:
                continue
            # A root that is missing now is still polled (and scheduled once it exists).
            folder = root if root.is_dir() else root.parent
            if not folder.is_dir():
                continue
            handler = self._handler_for(root)
            self._watches[root] = self._observer.schedule(handler, str(folder), recursive=root.is_dir())
            added = True
        return added

    @property
    def watched(self) -> list[tuple[Path, bool]]:
        """Each folder watchdog watches and whether recursively (a file root: its folder, not)."""
        return sorted((Path(w.path), w.is_recursive) for w in self._watches.values())

    def stop(self) -> None:
        self._stop.set()
        self._dirty.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join()
        if self._thread.is_alive():
            self._thread.join()

    @property
    def roots(self) -> list[Path]:
        return list(self._roots)

    def _run(self) -> None:
        from .router import SkillPilot

        pilot = SkillPilot(settings=self.settings)
        poll = self.settings.refresh_interval * 60
        due = time.monotonic() + poll
        try:
            while not self._stop.is_set():
                changed = self._dirty.wait(min(ROOTS_SECONDS, max(due - time.monotonic(), 0.0)))
                if self._stop.is_set():
                    break
                if not changed and not self._explicit:
                    self._roots = [Path(r) for r in pilot.store.roots()] or self._roots
                    changed = self._follow(self._roots)
                if not changed and time.monotonic() < due:
                    continue
                # Let the burst settle: events arriving meanwhile are part of this round.
                self._stop.wait(DEBOUNCE_SECONDS)
                self._dirty.clear()
                due = time.monotonic() + poll
                try:
                    report = pilot.index(self._roots) if self._explicit else pilot.reindex()
                except Exception:
                    # A broken folder must not stop watching; the next change or poll retries.
                    log.exception("re-index of %s failed", ", ".join(map(str, self._roots)))
                    continue
                for skipped in report.skipped:
                    log.warning("skipped %s: %s", skipped.path, skipped.reason)
                if self._on_report is not None:
                    self._on_report(report)
        finally:
            pilot.close()
