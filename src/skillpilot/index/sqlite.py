"""The embedded default store: one SQLite file (``$SKILLPILOT_HOME/index.sqlite``).

Input: ``IndexChanges`` computed by the builder. Output: ``IndexedSkill`` rows and stored
vectors. Guarantees: every ``apply`` is one transaction, so a crash or Ctrl-C mid-index leaves
the previous index whole (WAL mode: readers keep working while a writer commits); a
``generation`` counter goes up with every committed change to what routers read (skills,
vectors, conflict groups, roots), so long-lived routers know to reload;
``snapshot`` reads in one (deferred, read-only) transaction, so it sees one committed state.

The roots survive the file: every change to them is also written beside it
(``roots-<index>.json``, :func:`roots_file`), and an index opened new (deleted, or a 0-byte
file) takes its roots from there, so ``skillpilot reindex`` (or a service's refresh) indexes them
again. A damaged file is
never to be deleted: :func:`set_aside` moves it (and its ``-wal`` / ``-shm``) to
``<index>.damaged-<time>``, which ``skillpilot reindex`` does before it rebuilds.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..errors import StoreError
from ..model import SkippedFile
from ..sqlitefile import FILE_MODE, connect, read_only, transaction
from . import ConflictGraph, IndexChanges, Snapshot, StoredSkill
from .codec import (
    fingerprint_to_json,
    graph_from_row,
    graph_to_row,
    skill_to_json,
    stored_from_json,
    stored_from_rows,
)

log = logging.getLogger(__name__)
_NOTHING_WRITTEN = "%s: the disk is full; nothing routes read changed, so nothing was written"

SCHEMA_VERSION = "1"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS roots (path TEXT PRIMARY KEY, added_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS skills (
    root TEXT NOT NULL,
    key TEXT NOT NULL,
    skill TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    indexed_at REAL NOT NULL,
    PRIMARY KEY (root, key)
);
CREATE TABLE IF NOT EXISTS vectors (
    root TEXT NOT NULL,
    key TEXT NOT NULL,
    encoder TEXT NOT NULL,
    dim INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (root, key, encoder)
);
CREATE TABLE IF NOT EXISTS file_stats (
    root TEXT NOT NULL,
    key TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    PRIMARY KEY (root, key)
);
CREATE TABLE IF NOT EXISTS skipped (root TEXT NOT NULL, path TEXT NOT NULL, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS conflict_graph (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    config TEXT NOT NULL,
    skills TEXT NOT NULL,
    groups TEXT NOT NULL,
    pairs BLOB NOT NULL,
    similarity BLOB NOT NULL
);
INSERT OR IGNORE INTO meta VALUES ('schema', '{SCHEMA_VERSION}'), ('generation', '0');
"""


_ORPHAN = "NOT EXISTS (SELECT 1 FROM skills s WHERE s.root = vectors.root AND s.key = vectors.key)"


def roots_file(path: Path) -> Path:
    """Where the roots of the index at ``path`` are recorded beside it (a name that ``rm
    index.sqlite*`` does not match)."""
    return path.with_name(f"roots-{path.name}.json")


def recorded_roots(path: Path) -> list[str]:
    """The roots last recorded for the index at ``path`` (none if the record is missing or unreadable)."""
    try:
        data = json.loads(roots_file(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    roots = data.get("roots") if isinstance(data, dict) else None
    return [r for r in roots if isinstance(r, str)] if isinstance(roots, list) else []


def set_aside(path: Path) -> Path:
    """Move the damaged index at ``path`` (and its WAL files) aside; the new name of the file."""
    target = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.rename(target.with_name(target.name + suffix))
    return target


class SQLiteStore:
    """A ``SkillStore`` in one SQLite file; safe to open from several processes at once."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        damaged = (
            "; your skill folders are untouched: run `skillpilot reindex`, which moves this file aside "
            f"(to {self.path.name}.damaged-<time>) and indexes again the folders it held "
            f"(recorded in {roots_file(self.path).name})"
        )
        self._db = connect(self.path, "index", _SCHEMA, damaged=damaged)
        # One transaction at a time on the shared connection (a service's threads share a store).
        self._in_transaction = threading.RLock()
        self._sync_roots()

    def _sync_roots(self) -> None:
        """A new index (the file was deleted, or emptied) takes the roots the old one recorded;
        an index whose roots are not recorded yet (made before records were kept) records them."""
        if str(self.path) == ":memory:":
            return
        held, recorded = self.roots(), recorded_roots(self.path)
        if held:
            if not read_only(self._db):
                self._record_roots()
            return
        if not recorded:
            return
        try:
            self.apply(IndexChanges(roots=tuple(recorded)))
        except StoreError as exc:
            log.warning("%s", exc)
            return
        log.warning(
            "%s was new: its %d skill folders are back from %s; run `skillpilot reindex` to index their skills again",
            self.path,
            len(recorded),
            roots_file(self.path),
        )

    def _record_roots(self) -> None:
        """Write the roots beside the index (atomically, 0600): what a lost index is rebuilt from."""
        record = roots_file(self.path)
        roots = self.roots()
        if record.exists() and recorded_roots(self.path) == roots:
            return
        temporary = record.with_name(f".{record.name}.{os.getpid()}")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"roots": roots}, handle, indent=1)
            os.replace(temporary, record)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            log.warning("%s: cannot record the index's roots (%s); they are in the index itself", record, exc)

    def reopen(self) -> SQLiteStore:
        return SQLiteStore(self.path)

    def close(self) -> None:
        self._db.close()

    def generation(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return int(row[0])

    def _reads_the_same(self, changes: IndexChanges) -> bool:
        """Whether ``changes`` leave skills, vectors, conflict groups, roots and meta as stored."""
        if changes.catalog_changed or changes.dropped_roots or changes.upserts or changes.removed:
            return False
        if changes.vectors or changes.conflicts is not None or not set(changes.roots) <= set(self.roots()):
            return False
        return all(self.meta(key) == value for key, value in changes.meta.items())

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def roots(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT path FROM roots ORDER BY added_at, path")]

    def hashes(self, root: str) -> dict[str, str]:
        rows = self._db.execute("SELECT key, content_hash FROM skills WHERE root=?", (root,))
        return {key: content_hash for key, content_hash in rows}

    def file_stats(self, root: str) -> dict[str, tuple[int, int]]:
        rows = self._db.execute("SELECT key, size, mtime_ns FROM file_stats WHERE root=?", (root,))
        return {key: (size, mtime_ns) for key, size, mtime_ns in rows}

    def vector_keys(self, encoder: str) -> set[tuple[str, str]]:
        rows = self._db.execute("SELECT root, key FROM vectors WHERE encoder=?", (encoder,))
        return {(root, key) for root, key in rows}

    def apply(self, changes: IndexChanges) -> None:
        """Write one index run's changes atomically (all or nothing). On a full disk (the store
        read-only) a run that changes nothing a router reads is not written: only its bookkeeping
        (file stats, the skipped list) is left as it was, so a refresh of an unchanged catalog
        still succeeds. SQLite may also open a full disk's file for writing and fail only at the
        first write: the same holds then."""
        if read_only(self._db) and self._reads_the_same(changes):
            log.warning(_NOTHING_WRITTEN, self.path)
            return
        try:
            self._write(changes)
        except StoreError as exc:
            if exc.problem != "full" or not self._reads_the_same(changes):
                raise
            log.warning(_NOTHING_WRITTEN, self.path)

    def _write(self, changes: IndexChanges) -> None:
        now = time.time()
        with self._in_transaction, transaction(self._db, self.path, "index") as db:
            for root in changes.dropped_roots:
                for table in ("skills", "vectors", "skipped", "file_stats", "roots"):
                    column = "path" if table == "roots" else "root"
                    db.execute(f"DELETE FROM {table} WHERE {column}=?", (root,))
            for root in changes.roots:
                db.execute("INSERT OR IGNORE INTO roots VALUES (?, ?)", (root, now))
                db.execute("DELETE FROM skipped WHERE root=?", (root,))
            for root, key in changes.removed:
                db.execute("DELETE FROM skills WHERE root=? AND key=?", (root, key))
                db.execute("DELETE FROM vectors WHERE root=? AND key=?", (root, key))
            for stored in changes.upserts:
                skill = stored.skill
                db.execute(
                    "INSERT OR REPLACE INTO skills VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        skill.root,
                        skill.key,
                        skill_to_json(skill),
                        fingerprint_to_json(stored.fingerprint),
                        skill.content_hash,
                        stored.indexed_at,
                    ),
                )
            for (root, key, encoder), vector in changes.vectors.items():
                array = np.ascontiguousarray(vector, dtype=np.float32)
                db.execute(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?)",
                    (root, key, encoder, array.shape[-1], array.tobytes()),
                )
            for root, skipped in changes.skipped:
                db.execute("INSERT INTO skipped VALUES (?, ?, ?)", (root, skipped.path, skipped.reason))
            for root, stats in changes.file_stats.items():
                db.execute("DELETE FROM file_stats WHERE root=?", (root,))
                db.executemany(
                    "INSERT INTO file_stats VALUES (?, ?, ?, ?)",
                    [(root, key, size, mtime_ns) for key, (size, mtime_ns) in stats.items()],
                )
            for key, value in changes.meta.items():
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
            if changes.prune_orphans:
                db.execute(f"DELETE FROM vectors WHERE {_ORPHAN}")
            if changes.conflicts is not None:
                row = graph_to_row(changes.conflicts)
                db.execute("INSERT OR REPLACE INTO conflict_graph VALUES (1, ?, ?, ?, ?, ?)", row)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('last_updated', ?)", (repr(now),))
            if changes.catalog_changed:
                db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")
        if (changes.roots or changes.dropped_roots) and str(self.path) != ":memory:":
            # Dropped roots leave the record too (an empty list is a record as well).
            self._record_roots()

    @contextmanager
    def _read(self) -> Iterator[None]:
        """One read transaction: every read inside sees the same committed state."""
        with self._in_transaction:
            self._db.execute("BEGIN")
            try:
                yield
            finally:
                self._db.execute("COMMIT")

    def snapshot(self, spaces: Sequence[str]) -> Snapshot:
        with self._read():
            return Snapshot(
                self.generation(),
                tuple(self.load()),
                {space: self.vectors(space) for space in spaces},
                self.conflict_graph(pairs=False),
            )

    def orphan_vectors(self) -> int:
        return int(self._db.execute(f"SELECT COUNT(*) FROM vectors WHERE {_ORPHAN}").fetchone()[0])

    def load(self) -> list[StoredSkill]:
        rows = self._db.execute("SELECT skill, fingerprint, indexed_at FROM skills ORDER BY root, key").fetchall()
        return stored_from_rows(rows)

    def fetch(self, keys: Sequence[tuple[str, str]]) -> list[StoredSkill]:
        found: dict[tuple[str, str], StoredSkill] = {}
        for root, key in dict.fromkeys(keys):
            row = self._db.execute(
                "SELECT skill, fingerprint, indexed_at FROM skills WHERE root=? AND key=?", (root, key)
            ).fetchone()
            if row is not None:
                found[(root, key)] = stored_from_json(*row)
        return [found[k] for k in keys if k in found]

    def vectors(self, encoder: str) -> dict[tuple[str, str], np.ndarray]:
        """Stored vectors of one encoder; each value has shape (parts, dim)."""
        rows = self._db.execute("SELECT root, key, dim, data FROM vectors WHERE encoder=?", (encoder,)).fetchall()
        return {(root, key): np.frombuffer(data, dtype=np.float32).reshape(-1, dim) for root, key, dim, data in rows}

    def skipped(self) -> list[SkippedFile]:
        rows = self._db.execute("SELECT path, reason FROM skipped ORDER BY path")
        return [SkippedFile(path, reason) for path, reason in rows]

    def conflict_graph(self, pairs: bool = True) -> ConflictGraph | None:
        """The stored conflict graph; ``pairs=False`` skips the pairs (all a router needs)."""
        columns = "pairs, similarity" if pairs else "x'', x''"
        row = self._db.execute(f"SELECT config, skills, groups, {columns} FROM conflict_graph").fetchone()
        return None if row is None else graph_from_row(*row)

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM skills").fetchone()[0])


def open_sqlite(spec: str) -> SQLiteStore:
    """The store ``open_store`` opens for a path, or a ``sqlite://PATH`` URL (the built-in ``sqlite``)."""
    return SQLiteStore(Path(spec.removeprefix("sqlite://")).expanduser())
