"""The embedded default store: one SQLite file (``$SKILLPILOT_HOME/index.sqlite``).

Input: ``IndexChanges`` computed by the builder. Output: ``IndexedSkill`` rows and stored
vectors. Guarantees: every ``apply`` is one transaction, so a crash or Ctrl-C mid-index leaves
the previous index whole (WAL mode: readers keep working while a writer commits); a
``generation`` counter goes up with every committed change to what routers read (skills,
vectors, conflict groups, roots), so long-lived routers know to reload;
``snapshot`` reads in one (deferred, read-only) transaction, so it sees one committed state.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..model import SkippedFile
from ..sqlitefile import connect, transaction
from . import ConflictGraph, IndexChanges, Snapshot, StoredSkill
from .codec import (
    fingerprint_to_json,
    graph_from_row,
    graph_to_row,
    skill_to_json,
    stored_from_json,
    stored_from_rows,
)

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


class SQLiteStore:
    """A ``SkillStore`` in one SQLite file; safe to open from several processes at once."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db = connect(self.path, "index", _SCHEMA, hint="; delete the file and run `skillpilot reindex`")
        # One transaction at a time on the shared connection (a service's threads share a store).
        self._in_transaction = threading.RLock()

    def reopen(self) -> SQLiteStore:
        return SQLiteStore(self.path)

    def close(self) -> None:
        self._db.close()

    def generation(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return int(row[0])

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
        """Write one index run's changes atomically (all or nothing)."""
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
