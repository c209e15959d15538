"""What every host's hook handler shares inside the service: the event's bounds, the offered
skill roots kept indexed without the routing lock, and a bounded look at a transcript.

Input: a hook event as the host sent it (a JSON object), skill roots, a transcript path.
Output: the checked event (:func:`check_event`), roots indexed (:class:`RootIndexer`), the
end of a transcript (:func:`transcript_tail`) or a small settings file (:func:`read_regular_file`).

Guarantees (bounds from :mod:`skillpilot.limits`):

- :func:`check_event`: every text field a host sends (``limits.HOOK_FIELD_CHARS``) is text of at
  most its bound, without NUL; ``cwd`` and ``transcript_path`` are absolute; the event nests at
  most ``MAX_JSON_DEPTH`` deep. Anything else is a ``ValueError`` naming the field (HTTP 422).
- :class:`RootIndexer`: one worker thread and its own ``SkillPilot`` (its own store connection
  and models), so indexing never holds the service's routing lock: routes go on while a large
  project is indexed, and see it once it is in. A root is looked at through a bounded walk
  (``HOOK_WALK_ENTRIES`` folder entries, symlinks followed as the loader follows them, loops
  never walked); a larger one is not indexed from a hook (``skillpilot index`` still can). A root
  is indexed when the index does not hold it (first sight, or dropped since by ``index
  --replace``) or when its SKILL.md files changed since it was last looked at (at most every
  ``recheck`` seconds). A caller waits at most the time it gives; a request for roots already
  waiting their turn shares it, at most ``MAX_PENDING`` others queue and later ones are dropped
  (the next event asks again).
- :func:`read_regular_file` and :func:`transcript_tail`: regular files only (a FIFO or a device
  is never read: it could block or never end), a settings file up to ``HOOK_SETTINGS_BYTES``, a
  transcript's last ``TRANSCRIPT_TAIL_BYTES``.
"""

from __future__ import annotations

import logging
import os
import queue
import stat
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..config import Settings
from ..index.builder import root_id
from ..limits import HOOK_FIELD_CHARS, HOOK_WALK_ENTRIES, MAX_JSON_DEPTH, TRANSCRIPT_TAIL_BYTES, too_deep
from ..router import SkillPilot
from ..skills.discover import TooManyEntries, skill_files

log = logging.getLogger(__name__)

PATH_FIELDS = ("cwd", "transcript_path")
MAX_PENDING = 64
# How often a root's SKILL.md files are checked for changes: walking a big user folder on every
# prompt would cost milliseconds the watcher already spends.
RECHECK_SECONDS = 2.0

Signature = tuple[tuple[str, int], ...]


def check_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """``event`` as a dict once every field a host sends is within its bound; else ``ValueError``."""
    for field, limit in HOOK_FIELD_CHARS.items():
        value: Any = event
        for part in field.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is None:
            continue
        if not isinstance(value, str):
            raise ValueError(f"{field} must be text, not {type(value).__name__}")
        if len(value) > limit:
            raise ValueError(f"{field} is {len(value):,} characters; at most {limit:,} are accepted")
        if field in PATH_FIELDS and ("\x00" in value or not os.path.isabs(value)):
            raise ValueError(f"{field} must be an absolute path")
    if too_deep(dict(event)):
        raise ValueError(f"the event is nested deeper than {MAX_JSON_DEPTH} levels")
    return dict(event)


def signature(root: str, max_entries: int = HOOK_WALK_ENTRIES) -> Signature | None:
    """Every skill file under ``root`` with its modification time (changes when a skill does), or
    None when ``root`` has more than ``max_entries`` folder entries to look at."""
    try:
        files = skill_files(Path(root), max_entries)
    except TooManyEntries:
        return None
    found = []
    for path in files:
        try:
            found.append((path, os.stat(path).st_mtime_ns))
        except OSError:
            continue
    return tuple(found)


class RootIndexer:
    """Keeps the skill roots hosts offer indexed, off the routing path (see the module docstring)."""

    def __init__(self, settings: Settings, recheck: float = RECHECK_SECONDS) -> None:
        self.settings = settings
        self.recheck = recheck
        self._requests: queue.Queue[tuple[tuple[str, ...], threading.Event]] = queue.Queue(MAX_PENDING)
        self._seen: dict[str, Signature] = {}
        self._checked: dict[str, float] = {}
        self._too_large: set[str] = set()
        self._pending: dict[tuple[str, ...], threading.Event] = {}
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def ensure(self, roots: Sequence[str], wait: float) -> bool:
        """Ask for ``roots`` to be indexed where needed; whether that was done within ``wait`` s.
        A request for the same roots as one still waiting its turn shares that one."""
        key = tuple(roots)
        with self._lock:
            done = self._pending.get(key)
            if done is None:
                done = threading.Event()
                try:
                    self._requests.put_nowait((key, done))
                except queue.Full:
                    log.warning("hook indexing is %d requests behind; %s will be looked at later", MAX_PENDING, roots)
                    return False
                self._pending[key] = done
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="skillpilot-hook-index", daemon=True)
                    self._thread.start()
        return done.wait(wait)

    def _run(self) -> None:
        pilot = SkillPilot(settings=self.settings)
        while True:
            roots, done = self._requests.get()
            with self._lock:
                # From here a new request for these roots queues again: it may see newer files.
                self._pending.pop(roots, None)
            try:
                self._refresh(pilot, roots)
            except Exception:
                # A broken root must not stop hook indexing; the next event tries again.
                log.exception("indexing %s for a hook failed", ", ".join(roots))
            finally:
                done.set()

    def _refresh(self, pilot: SkillPilot, roots: Sequence[str]) -> None:
        now = time.monotonic()
        held = set(pilot.store.roots())
        todo = []
        for root in dict.fromkeys(roots):
            missing = root_id(Path(root)) not in held
            if not missing and now - self._checked.get(root, -self.recheck) < self.recheck:
                continue
            self._checked[root] = now
            current = signature(root)
            if current is None:
                if root not in self._too_large:
                    self._too_large.add(root)
                    log.warning(
                        "%s has more than %d entries to look at: not indexed from a hook (`skillpilot index %s` can)",
                        root,
                        HOOK_WALK_ENTRIES,
                        root,
                    )
                continue
            before = self._seen.get(root)
            self._seen[root] = current
            # A root the index holds and this service has not looked at yet is kept current by
            # the watcher; one it does not hold (new, or dropped by `index --replace`) is indexed.
            if missing or (before is not None and before != current):
                todo.append(root)
        if todo:
            report = pilot.index(todo)
            log.info("indexed %s: %d added, %d updated", ", ".join(todo), report.added, report.updated)


def read_regular_file(path: str | Path, limit: int, tail: bool = False) -> bytes | None:
    """The bytes of the regular file ``path`` if it has at most ``limit`` (with ``tail``: its last
    ``limit``), or None for anything else: missing, too large, a FIFO, a device, a folder."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or (info.st_size > limit and not tail):
                return None
            handle.seek(max(0, info.st_size - limit))
            return handle.read(limit)
    except OSError:
        return None


def transcript_tail(path: str) -> bytes | None:
    """The end of the transcript at ``path`` (``TRANSCRIPT_TAIL_BYTES``), if it is a regular file."""
    return read_regular_file(path, TRANSCRIPT_TAIL_BYTES, tail=True)
