"""How the project's SQLite files (index, feedback, routing log) are opened and written.

WAL journal, so readers in other processes never wait for a writer and always see the last
commit; autocommit (``isolation_level=None``) except inside ``transaction``, which is all or
nothing (``BEGIN IMMEDIATE`` takes the write lock up front, so two writers queue instead of
failing half-way). Every failure becomes a ``StoreError`` naming the file and what it is for.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from .errors import StoreError


def connect(
    path: Path, what: str, schema: str, *, synchronous: Literal["NORMAL", "FULL"] = "NORMAL", hint: str = ""
) -> sqlite3.Connection:
    """Open (creating it and its folder if needed) the SQLite file ``path`` with ``schema``.

    ``synchronous="FULL"`` fsyncs every commit: for records that must survive a power cut the
    moment the call returns; ``NORMAL`` is atomic too, only the last commits may be lost.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={synchronous}")
        db.executescript(schema)
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(path, f"cannot open the {what} ({exc}){hint}") from exc
    return db


@contextmanager
def transaction(db: sqlite3.Connection, path: Path, what: str) -> Iterator[sqlite3.Connection]:
    """All writes inside the block commit together, or none do (also on Ctrl-C)."""
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise StoreError(path, f"cannot write the {what}: {exc}") from exc
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    else:
        db.execute("COMMIT")


@contextmanager
def connection_per_call(path: Path, what: str, schema: str) -> Iterator[sqlite3.Connection]:
    """A fresh connection for one operation, in one transaction committed when the block ends
    (rolled back on error), then closed: for stores that several threads share. Errors name the
    file and say how to start over."""
    db = connect(path, what, schema)
    try:
        # Deferred: a read-only operation never takes the write lock.
        db.execute("BEGIN")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        raise StoreError(path, f"{what} error ({exc}); delete the file to start over") from exc
    finally:
        db.close()
