"""Hot reload: keep the index in step with skill folders while they change.

Input: settings and the skill roots to watch (none: the roots the index knows, or the
configured ``index.skillDirs`` on a new index). Output: an ``IndexReport`` per re-index, handed
to ``on_report``.

Guarantees:
- A watchdog observer marks the index dirty on any write, create, delete or move under a root;
  a burst of events (an editor saving, ``git checkout``) is settled for ``DEBOUNCE_SECONDS``
  and then indexed once. Without watchdog events (a network drive, a root created later) the
  ``index.refreshInterval`` poll still re-scans.
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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .config import Settings
from .errors import MissingExtraError
from .model import IndexReport
from .router import SkillPilot

log = logging.getLogger(__name__)

# Long enough to fold an editor's write-rename-chmod into one re-index, short enough that a
# new skill routes within the ~2 s the service promises.
DEBOUNCE_SECONDS = 0.3
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

    def __enter__(self) -> IndexWatcher:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
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
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in _CHANGES:
                    dirty.set()

        self._observer = Observer()
        for root in roots:
            # A root that is missing now is still polled; a JSON catalog is watched via its folder.
            folder = root if root.is_dir() else root.parent
            if folder.is_dir():
                self._observer.schedule(_Handler(), str(folder), recursive=True)
        self._observer.start()

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
        pilot = SkillPilot(settings=self.settings)
        try:
            while not self._stop.is_set():
                self._dirty.wait(self.settings.refresh_interval * 60)
                if self._stop.is_set():
                    break
                # Let the burst settle: events arriving meanwhile are part of this round.
                self._stop.wait(DEBOUNCE_SECONDS)
                self._dirty.clear()
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
