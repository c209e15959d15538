"""How the project's SQLite files (index, feedback, routing log) are opened and written.

WAL journal, so readers in other processes never wait for a writer and always see the last
commit; autocommit (``isolation_level=None``) except inside ``transaction``, which is all or
nothing (``BEGIN IMMEDIATE`` takes the write lock up front, so two writers queue instead of
failing half-way). Every failure, on open, read or write, becomes a ``StoreError`` naming the file,
what it is for, what is wrong (``StoreError.problem``: the disk is full, the file is damaged,
locked, read-only) and the safe fix: no advice ever says to delete a file (each store says how to
set a damaged one aside, ``damaged=``).

A full disk never stops reading: opening a WAL file needs room for its ``-shm`` index, so on a
full disk an existing file is opened read-only instead (``immutable``: no lock, no ``-shm``; the
file was closed cleanly, or another process would hold the ``-shm`` already). Reads work; a write
says the disk is full and that nothing was changed.

Files: a store file is created 0600 (its WAL and shared-memory files inherit the mode) and a
folder created for it 0700: the index, feedback and log hold what users typed and what their
private skills are for.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from .errors import StoreError, StoreProblem

log = logging.getLogger(__name__)

# How long a connection waits for another process's write lock before it is "locked".
BUSY_SECONDS = 30.0
FILE_MODE = 0o600
FOLDER_MODE = 0o700
# SQLite's names for "the disk (or the process's file-size limit) ran out" while writing.
_FULL = {"SQLITE_FULL", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC", "SQLITE_IOERR_TRUNCATE", "SQLITE_IOERR_SHMSIZE"}
# How the statements that write begin (a stand-in refuses them; schema migrations run in memory).
_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "BEGIN IMMEDIATE")
# Less room than this on a disk where SQLite reports an I/O error: the disk is full.
_NO_ROOM_BYTES = 1024 * 1024


def problem_of(exc: BaseException, path: Path) -> StoreProblem:
    """What ``exc`` (from SQLite or the OS) says about the file ``path``."""
    name = getattr(exc, "sqlite_errorname", "")
    text = str(exc).lower()
    if name in _FULL or getattr(exc, "errno", None) in (errno.ENOSPC, errno.EFBIG) or "full" in text:
        return "full"
    if name.startswith("SQLITE_IOERR") or "disk i/o error" in text:
        return "full" if _no_room(path) else "error"
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
        return "locked"
    if name == "SQLITE_NOTADB" or name.startswith("SQLITE_CORRUPT") or "not a database" in text or "malformed" in text:
        return "damaged"
    if name.startswith("SQLITE_READONLY") or getattr(exc, "errno", None) in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "read-only"
    return "error"


def _no_room(path: Path) -> bool:
    try:
        info = os.statvfs(path.parent if path.parent.exists() else Path.cwd())
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < _NO_ROOM_BYTES


def _reason(exc: BaseException, what: str, problem: StoreProblem, damaged: str) -> str:
    """The message of a ``StoreError``: what is wrong with the ``what`` file and the safe fix."""
    if problem == "full":
        return (
            f"cannot write the {what}: the disk is full or the file too large ({exc}); free some "
            "space (or point SKILLPILOT_HOME at a roomier disk) and run again: nothing was changed"
        )
    if problem == "locked":
        return (
            f"the {what} is locked by another process writing it ({exc}): let it finish (an index "
            "run, a refresh) and run again; nothing was changed"
        )
    if problem == "damaged":
        return f"the {what} is damaged ({exc}){damaged}"
    if problem == "read-only":
        return f"cannot write the {what} ({exc}): check the owner and mode of the file and its folder"
    return f"{what} error ({exc})"


class _Cursor(sqlite3.Cursor):
    """A cursor whose reads raise ``StoreError`` (rows are read lazily, after ``execute``)."""

    connection: _Connection

    def _failed(self, exc: sqlite3.Error) -> StoreError:
        return self.connection.failed(exc)

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
    damaged: str = ""
    # Opened read-only because the disk is full: a write fails for that reason.
    full_disk: bool = False
    # An empty in-memory stand-in for a file the full disk has no room to create.
    stand_in: bool = False

    def failed(self, exc: sqlite3.Error) -> StoreError:
        problem = "full" if self.full_disk and problem_of(exc, self.path) == "read-only" else problem_of(exc, self.path)
        return StoreError(self.path, _reason(exc, self.what, problem, self.damaged), problem)

    def cursor(self, factory: Any = _Cursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        if self.stand_in and sql.lstrip().upper().startswith(_WRITES):
            raise self.failed(sqlite3.OperationalError("database or disk is full"))
        try:
            cursor: _Cursor = self.cursor().execute(sql, parameters)
        except sqlite3.Error as exc:
            raise self.failed(exc) from exc
        return cursor

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        try:
            return super().executescript(script)
        except sqlite3.Error as exc:
            raise self.failed(exc) from exc


def _create_private(path: Path) -> None:
    """Create ``path`` (and a missing folder) readable by its owner only, before SQLite opens it."""
    if not path.parent.exists():
        path.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    if not path.exists() and str(path) != ":memory:":
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))


def connect(
    path: Path, what: str, schema: str, *, synchronous: Literal["NORMAL", "FULL"] = "NORMAL", damaged: str = ""
) -> sqlite3.Connection:
    """Open (creating it and its folder if needed) the SQLite file ``path`` with ``schema``;
    ``damaged`` is the advice a ``StoreError`` gives when the file is damaged.

    ``synchronous="FULL"`` fsyncs every commit: for records that must survive a power cut the
    moment the call returns; ``NORMAL`` is atomic too, only the last commits may be lost.
    """
    files = [path.with_name(path.name + suffix) for suffix in ("", "-wal", "-shm")]
    before = [f.exists() for f in files]
    existed = path.is_file() and path.stat().st_size > 0
    try:
        _create_private(path)
        db = _open(path, what, damaged)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={synchronous}")
        db.executescript(schema)
    except (StoreError, sqlite3.Error, OSError) as exc:
        cause = exc.__cause__ if isinstance(exc, StoreError) and exc.__cause__ else exc
        problem = problem_of(cause, path)
        if problem == "full" and existed:
            return _read_only(path, what, damaged)
        if problem == "full":
            # Nothing to read yet: an empty stand-in answers reads; writes say the disk is full.
            for file, was in zip(files, before, strict=True):
                if not was:
                    file.unlink(missing_ok=True)
            return _empty_stand_in(path, what, schema)
        message = f"cannot open the {what} ({cause})" if problem == "error" else _reason(cause, what, problem, damaged)
        raise StoreError(path, message, problem) from exc
    return db


def _empty_stand_in(path: Path, what: str, schema: str) -> _Connection:
    db = _open(path, what, "", ":memory:")
    db.executescript(schema)
    db.full_disk = db.stand_in = True
    log.warning("%s: the disk is full: the %s cannot be created; it reads as empty until there is room", path, what)
    return db


def read_only(db: sqlite3.Connection) -> bool:
    """Whether ``db`` was opened read-only because the disk is full (see the module docstring)."""
    return isinstance(db, _Connection) and db.full_disk


def _open(path: Path, what: str, damaged: str, uri: str | None = None) -> _Connection:
    db = sqlite3.connect(
        uri or path,
        timeout=BUSY_SECONDS,
        isolation_level=None,
        check_same_thread=False,
        factory=_Connection,
        uri=uri is not None,
    )
    assert isinstance(db, _Connection)
    db.path, db.what, db.damaged = path, what, damaged
    return db


def _read_only(path: Path, what: str, damaged: str) -> _Connection:
    """``path`` opened read-only without a ``-shm`` (see the module docstring)."""
    uri = "file:" + urllib.parse.quote(str(path.absolute())) + "?mode=ro&immutable=1"
    try:
        db = _open(path, what, damaged, uri)
        db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except (StoreError, sqlite3.Error) as exc:
        raise StoreError(path, f"cannot open the {what}: {exc}", problem_of(exc, path)) from exc
    db.full_disk = True
    log.warning("%s: the disk is full: the %s is read-only until there is room again", path, what)
    return db


@contextmanager
def transaction(db: sqlite3.Connection, path: Path, what: str) -> Iterator[sqlite3.Connection]:
    """All writes inside the block commit together, or none do (also on Ctrl-C)."""
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:  # a connection of this module raises StoreError itself
        raise StoreError(path, _reason(exc, what, problem_of(exc, path), ""), problem_of(exc, path)) from exc
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        # SQLite may already have rolled back (a full disk does that).
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


@contextmanager
def connection_per_call(path: Path, what: str, schema: str, damaged: str = "") -> Iterator[sqlite3.Connection]:
    """A fresh connection for one operation, in one transaction committed when the block ends
    (rolled back on error), then closed: for stores that several threads share."""
    db = connect(path, what, schema, damaged=damaged)
    try:
        # Deferred: a read-only operation never takes the write lock.
        db.execute("BEGIN")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    finally:
        db.close()


def set_aside_advice(path: Path, then: str) -> str:
    """The advice for a damaged store file nothing else depends on: move it aside (never delete
    it: what it holds can still be recovered), after which ``then``."""
    return (
        f"; move it aside (`mv {path} {path}.damaged`; `sqlite3 {path}.damaged .recover` can still "
        f"read what it holds) and {then}"
    )
