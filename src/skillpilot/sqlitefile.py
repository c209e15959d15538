"""How the project's SQLite files (index, feedback, routing log) are opened and written.

WAL journal, so readers in other processes never wait for a writer and always see the last
commit; autocommit (``isolation_level=None``) except inside ``transaction``, which is all or
nothing (``BEGIN IMMEDIATE`` takes the write lock up front, so two writers queue instead of
failing half-way). Every failure, on open, read or write, becomes a ``StoreError`` naming the file
and what it is for (the connection and its cursors translate ``sqlite3.Error`` themselves, so
every store built on ``connect`` does); a full disk says so and that nothing was changed.

Files: a store file is created 0600 (its WAL and shared-memory files inherit the mode) and a
folder created for it 0700: the index, feedback and log hold what users typed and what their
private skills are for.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from .errors import StoreError

FILE_MODE = 0o600
FOLDER_MODE = 0o700
# SQLite's names for "the disk (or the process's file-size limit) ran out".
_FULL = {"SQLITE_FULL", "SQLITE_IOERR_WRITE", "SQLITE_IOERR", "SQLITE_IOERR_FSYNC", "SQLITE_IOERR_TRUNCATE"}


def _reason(exc: sqlite3.Error, what: str, hint: str = "") -> str:
    if getattr(exc, "sqlite_errorname", "") in _FULL or "full" in str(exc):
        return (
            f"cannot write the {what}: the disk is full or the file too large ({exc}); free some "
            "space (or point SKILLPILOT_HOME at a roomier disk) and run again: nothing was changed"
        )
    return f"{what} error ({exc}){hint}"


class _Cursor(sqlite3.Cursor):
    """A cursor whose reads raise ``StoreError`` (rows are read lazily, after ``execute``)."""

    connection: _Connection

    def _failed(self, exc: sqlite3.Error) -> StoreError:
        db = self.connection
        return StoreError(db.path, _reason(exc, db.what, db.hint))

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.Error as exc:
            raise self._failed(exc) from exc

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.Error as exc:
            raise self._failed(exc) from exc

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.Error as exc:
            raise self._failed(exc) from exc


class _Connection(sqlite3.Connection):
    """A connection that knows its file and purpose, and translates every ``sqlite3.Error``."""

    path: Path = Path()
    what: str = "database"
    hint: str = ""

    def cursor(self, factory: Any = _Cursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        try:
            cursor: _Cursor = self.cursor().execute(sql, parameters)
        except sqlite3.Error as exc:
            raise StoreError(self.path, _reason(exc, self.what, self.hint)) from exc
        return cursor

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        try:
            return super().executescript(script)
        except sqlite3.Error as exc:
            raise StoreError(self.path, _reason(exc, self.what, self.hint)) from exc


def _create_private(path: Path) -> None:
    """Create ``path`` (and a missing folder) readable by its owner only, before SQLite opens it."""
    if not path.parent.exists():
        path.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    if not path.exists() and str(path) != ":memory:":
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))


def connect(
    path: Path, what: str, schema: str, *, synchronous: Literal["NORMAL", "FULL"] = "NORMAL", hint: str = ""
) -> sqlite3.Connection:
    """Open (creating it and its folder if needed) the SQLite file ``path`` with ``schema``.

    ``synchronous="FULL"`` fsyncs every commit: for records that must survive a power cut the
    moment the call returns; ``NORMAL`` is atomic too, only the last commits may be lost.
    """
    try:
        _create_private(path)
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False, factory=_Connection)
        assert isinstance(db, _Connection)
        db.path, db.what, db.hint = path, what, hint
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={synchronous}")
        db.executescript(schema)
    except (StoreError, sqlite3.Error, OSError) as exc:
        reason = exc.__cause__ if isinstance(exc, StoreError) and exc.__cause__ else exc
        raise StoreError(path, f"cannot open the {what} ({reason}){hint}") from exc
    return db


@contextmanager
def transaction(db: sqlite3.Connection, path: Path, what: str) -> Iterator[sqlite3.Connection]:
    """All writes inside the block commit together, or none do (also on Ctrl-C)."""
    try:
        db.execute("BEGIN IMMEDIATE")
    except (StoreError, sqlite3.Error) as exc:
        reason = exc.__cause__ if isinstance(exc, StoreError) and exc.__cause__ else exc
        raise StoreError(path, f"cannot write the {what}: {reason}") from exc
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        # SQLite may already have rolled back (a full disk does that).
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


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
    except (StoreError, sqlite3.Error) as exc:
        reason = exc.__cause__ if isinstance(exc, StoreError) and exc.__cause__ else exc
        raise StoreError(path, f"{what} error ({reason}); delete the file to start over") from exc
    finally:
        db.close()
