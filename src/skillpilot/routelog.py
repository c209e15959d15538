"""The routing log: every route decision, appended to SQLite, kept within retention limits.

Input: a ``RouteResult`` and the surface that asked for it (``library``, ``cli``, ``http``,
``mcp``, ``hook`` ...). Output: ``LogEntry`` rows, newest first, for ``skillpilot log`` and the
service's ``/log`` (a filtered page and its total: :meth:`RouteLog.page`), and routing-time
percentiles by surface (:meth:`RouteLog.latency`) for the dashboard's chart.

Guarantees:
- One INSERT per decision, in autocommit mode with WAL and ``synchronous=NORMAL``: an entry is
  durable once the WAL is checkpointed and survives a process crash at once; routing pays
  tens of microseconds, not an fsync. The log is its own file (``log.sqlite``), so deleting it
  never touches the index or the feedback.
- Privacy: ``log.queries`` decides what is kept of the message: ``text`` (the message and its
  SHA-256), ``hash`` (only the SHA-256, so equal messages can still be counted) or ``off``.
- Retention: rows older than ``log.maxAgeDays`` and all but the newest ``log.maxRows`` are
  deleted when the store opens and every ``PRUNE_EVERY`` entries, so the file stays bounded
  without a delete per route.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from .config import QUERY_PRIVACY
from .errors import StoreError
from .model import RouteResult
from .sqlitefile import connect, read_only, set_aside_advice

# Pruning is a DELETE over an index; every 100 routes keeps the overshoot of maxRows small.
PRUNE_EVERY = 100
DAY_SECONDS = 86400.0
_UNIT_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": DAY_SECONDS, "w": 7 * DAY_SECONDS}
_AGO = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    surface TEXT NOT NULL,
    query TEXT,
    query_hash TEXT,
    decision TEXT NOT NULL,
    skill_id TEXT,
    skill_path TEXT,
    confidence REAL NOT NULL,
    latency_ms REAL NOT NULL,
    method TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS decisions_at ON decisions (at);
"""
_COLUMNS = "id, at, surface, query, query_hash, decision, skill_id, skill_path, confidence, latency_ms, method"


@dataclass(frozen=True)
class LogEntry:
    """One logged decision; ``query`` is None unless ``log.queries`` was ``text``."""

    id: int
    at: float
    surface: str
    query: str | None
    query_hash: str | None
    decision: str
    skill_id: str | None
    skill_path: str | None
    confidence: float
    latency_ms: float
    method: str


@dataclass(frozen=True)
class LogFilter:
    """Which decisions a page shows: since ``since`` (epoch seconds), of one surface and one
    decision, whose message or skill id contains ``text`` (case-insensitive); None: any."""

    since: float | None = None
    surface: str | None = None
    decision: str | None = None
    text: str | None = None

    def where(self) -> tuple[str, list[object]]:
        clauses = ["at >= ?"]
        values: list[object] = [self.since if self.since is not None else 0.0]
        if self.surface is not None:
            clauses.append("surface = ?")
            values.append(self.surface)
        if self.decision is not None:
            clauses.append("decision = ?")
            values.append(self.decision)
        if self.text:
            # instr on lower(): a substring match that needs no LIKE escaping.
            clauses.append("(instr(lower(COALESCE(query, '')), ?) > 0 OR instr(lower(COALESCE(skill_id, '')), ?) > 0)")
            values += [self.text.lower(), self.text.lower()]
        return " AND ".join(clauses), values


@dataclass(frozen=True)
class Percentiles:
    """Routing time (``latency_ms``) of ``count`` decisions: p50, p95, p99 in ms (linear
    interpolation between order statistics, numpy's default); None when ``count`` is 0."""

    count: int
    p50: float | None
    p95: float | None
    p99: float | None

    @classmethod
    def of(cls, values: list[float]) -> Percentiles:
        if not values:
            return cls(0, None, None, None)
        p50, p95, p99 = (round(float(v), 3) for v in np.percentile(values, [50, 95, 99]))
        return cls(len(values), p50, p95, p99)


@dataclass(frozen=True)
class SurfaceLatency:
    """One surface's percentiles over a window, and per bucket (oldest first, ``bucket_seconds``
    each, the last one ending now)."""

    surface: str
    overall: Percentiles
    buckets: tuple[Percentiles, ...]


def query_hash(query: str) -> str:
    return hashlib.sha256(query.encode("utf-8")).hexdigest()


class RouteLog:
    """The decisions, in one SQLite file; safe to share between processes (WAL)."""

    def __init__(self, path: Path, privacy: str = "text", max_rows: int = 100_000, max_age_days: float = 30.0) -> None:
        if privacy not in QUERY_PRIVACY:
            raise ValueError(f"log privacy {privacy!r}: use one of {', '.join(QUERY_PRIVACY)}")
        self.path = Path(path)
        self.privacy = privacy
        self.max_rows = max_rows
        self.max_age_days = max_age_days
        self._since_prune = 0
        # NORMAL: no fsync per route (the bench measures route latency); WAL keeps it atomic.
        # Routing, the index and feedback do not need it: routes go on while it is damaged.
        damaged = set_aside_advice(self.path, "a new log starts")
        self._db = connect(self.path, "routing log", _SCHEMA, damaged=damaged)
        if not read_only(self._db):  # on a full disk the log is still read (`skillpilot log`)
            self.prune()

    def close(self) -> None:
        self._db.close()

    def record(self, result: RouteResult, surface: str) -> None:
        """Append one decision (autocommit: one INSERT, no transaction around it)."""
        text = result.query if self.privacy == "text" else None
        digest = query_hash(result.query) if self.privacy != "off" else None
        skill = result.skill
        try:
            self._db.execute(
                "INSERT INTO decisions (at, surface, query, query_hash, decision, skill_id, skill_path,"
                " confidence, latency_ms, method) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    time.time(),
                    surface,
                    text,
                    digest,
                    result.decision,
                    skill.id if skill else None,
                    skill.path if skill else None,
                    result.confidence,
                    result.latency_ms,
                    result.method,
                ),
            )
            self._since_prune += 1
            if self._since_prune >= PRUNE_EVERY:
                self.prune()
        except sqlite3.Error as exc:
            raise StoreError(self.path, f"cannot write the routing log: {exc}") from exc

    def prune(self) -> int:
        """Apply the retention limits now; returns how many entries were deleted."""
        self._since_prune = 0
        cutoff = time.time() - self.max_age_days * DAY_SECONDS
        deleted = self._db.execute("DELETE FROM decisions WHERE at < ?", (cutoff,)).rowcount
        deleted += self._db.execute(
            "DELETE FROM decisions WHERE id <= (SELECT COALESCE(MAX(id), 0) FROM decisions) - ?",
            (self.max_rows,),
        ).rowcount
        return int(deleted)

    def page(self, where: LogFilter, offset: int = 0, limit: int | None = 50) -> tuple[list[LogEntry], int]:
        """The decisions ``where`` selects, newest first: ``limit`` of them (all when None) from
        ``offset``, and how many it selects in all."""
        condition, values = where.where()
        total = self._db.execute(f"SELECT COUNT(*) FROM decisions WHERE {condition}", values).fetchone()[0]
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM decisions WHERE {condition} ORDER BY id DESC LIMIT ? OFFSET ?",
            [*values, -1 if limit is None else limit, offset],
        )
        return [LogEntry(*row) for row in rows], int(total)

    def surfaces(self) -> list[str]:
        """Every surface with a decision in the log, sorted."""
        return [row[0] for row in self._db.execute("SELECT DISTINCT surface FROM decisions ORDER BY surface")]

    def decisions(self, since: float) -> dict[str, int]:
        """How many decisions of each kind were made at or after ``since``."""
        rows = self._db.execute("SELECT decision, COUNT(*) FROM decisions WHERE at >= ? GROUP BY decision", (since,))
        return {decision: int(count) for decision, count in rows}

    def latency(self, since: float, buckets: int, now: float | None = None) -> list[SurfaceLatency]:
        """Routing-time percentiles of each surface from ``since`` to ``now``, overall and in
        ``buckets`` equal slices; surfaces sorted by name."""
        end = time.time() if now is None else now
        width = max(end - since, 1e-9) / buckets
        times: dict[str, list[list[float]]] = {}
        rows = self._db.execute("SELECT surface, at, latency_ms FROM decisions WHERE at >= ? AND at <= ?", (since, end))
        for surface, at, latency_ms in rows:
            slices = times.setdefault(surface, [[] for _ in range(buckets)])
            slices[min(int((at - since) / width), buckets - 1)].append(latency_ms)
        return [
            SurfaceLatency(
                surface,
                Percentiles.of([v for s in slices for v in s]),
                tuple(Percentiles.of(s) for s in slices),
            )
            for surface, slices in sorted(times.items())
        ]


def parse_since(text: str, now: float | None = None) -> float:
    """Epoch seconds for ``--since``: an age (``90s``, ``30m``, ``1h``, ``2d``, ``1w``) or an ISO
    8601 time (UTC when it has no offset). Raises ``ValueError`` saying what is accepted."""
    ago = _AGO.match(text)
    if ago:
        return (time.time() if now is None else now) - float(ago[1]) * _UNIT_SECONDS[ago[2].lower()]
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise ValueError(f"{text!r}: use an age like 30m, 1h, 2d or an ISO time like 2026-01-31T12:00") from exc
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def iso(at: float) -> str:
    """``at`` (epoch seconds) as an ISO 8601 UTC time, to the second."""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")
