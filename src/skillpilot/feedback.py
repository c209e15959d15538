"""Feedback: what users say about routes, kept durably, and what the router learns from it.

Input: ``Signal`` records (the spec's section 5.4): ``confirmed`` (the routed skill was right),
``corrected`` (``wrong`` was routed, ``right`` was meant), ``ignored`` (the routed skill was not
used), each with the message and its vectors from every encoder. Output: a ``Learned`` model the
router turns into one ln-multiplier per skill for each new message (``fuse`` adds it to the
fused score, like the trust tier).

Guarantees:
- ``FeedbackStore.record`` commits before it returns, with ``synchronous=FULL``: a recorded
  signal survives a crash or power loss. The store is its own file (``feedback.sqlite`` next to
  the index), so rebuilding or deleting the index never loses feedback.
- Learning is a pure replay of the signals, in order: the same signals give the same model.
  ``batch`` signals trigger a re-fit (the spec's batchSize); with the default 1 every signal
  counts from the next route on. Signals about skills no longer indexed are kept and skipped.
- Two effects, both bounded:
  * per-skill weights, the spec's rule: confirmed x1.05, corrected wrong x0.85 and right x1.1,
    ignored x0.95, kept in [0.1, 2.0] ([0.3, 2.0] for ignored). They touch every message: one
    correction moves a skill by 5-15 %, a skill corrected away from again and again fades.
  * learned examples, which generalise past the exact sentence: a correction makes the message
    an example *for* the right skill and *against* the wrong one (confirmed: for; ignored:
    against, at half strength). A new message whose mean cosine to an example over the shared
    encoders reaches ``MATCH_FROM`` moves that skill by up to ``EXAMPLE_BOOST`` (full from
    ``MATCH_FULL``, a ramp so a message just over the bar moves only a little), so paraphrases
    of a corrected message route right while other messages, even about the same skills, are
    untouched. ``MATCH_FROM`` is the similarity the most similar pair of unrelated development
    queries (disjoint expected skills) reaches, so no unrelated development query moves
    (``benchmarks/feedback_eval.py`` prints it and measures the effect).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

import numpy as np

from .encoders import Encoder
from .errors import FeedbackError
from .model import Adjustment, FeedbackKind, Match
from .sqlitefile import connect, transaction
from .text import cap_query

SignalKind = FeedbackKind
SIGNAL_KINDS: tuple[SignalKind, ...] = get_args(SignalKind)

# The spec's per-skill weight rule: (factor, bound) per role.
CONFIRMED_STEP, CORRECTED_WRONG_STEP, CORRECTED_RIGHT_STEP, IGNORED_STEP = 1.05, 0.85, 1.1, 0.95
WEIGHT_MAX, WEIGHT_MIN, IGNORED_MIN = 2.0, 0.1, 0.3
# Learned examples: similarity ramp, and the largest ln-multiplier one example applies. 4 is the
# smallest whole boost with which nine in ten corrections of misrouted development queries fix
# the very message they were given (the rest need 5.6 and 8.8); it is fitted on those queries,
# never on the paraphrases the evaluation uses.
MATCH_FROM = 0.55
MATCH_FULL = 0.65
EXAMPLE_BOOST = 4.0
IGNORED_STRENGTH = 0.5

_SCHEMA = """
CREATE TABLE IF NOT EXISTS signals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('confirmed', 'corrected', 'ignored')),
    query TEXT NOT NULL,
    skill TEXT NOT NULL,
    wrong TEXT
);
CREATE TABLE IF NOT EXISTS query_vectors (
    signal INTEGER NOT NULL,
    encoder TEXT NOT NULL,
    dim INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (signal, encoder)
);
"""


@dataclass(frozen=True)
class Signal:
    """One piece of feedback. ``skill`` is the skill it is about: the confirmed or ignored one,
    or for a correction the right one (``wrong`` then names the routed one)."""

    kind: SignalKind
    query: str
    skill: str
    wrong: str | None = None
    id: int = 0
    at: float = 0.0

    @classmethod
    def of(
        cls,
        kind: str,
        query: str,
        skill: str | None = None,
        wrong: str | None = None,
        right: str | None = None,
    ) -> Signal:
        """A signal from the arguments a user gives; raises ``FeedbackError`` naming what is missing."""
        aliases = {"confirm": "confirmed", "correct": "corrected", "ignore": "ignored"}
        kind = aliases.get(kind, kind)
        if kind not in SIGNAL_KINDS:
            raise FeedbackError(f"feedback kind {kind!r}: use one of {', '.join(SIGNAL_KINDS)}")
        if not query.strip():
            raise FeedbackError("feedback needs the message (query) it is about")
        if kind == "corrected":
            if not (wrong and right) or skill:
                raise FeedbackError("a correction needs wrong= (the routed skill) and right= (the meant one)")
            if wrong == right:
                raise FeedbackError(f"a correction needs two different skills, got {wrong!r} twice")
            return cls("corrected", cap_query(query), right, wrong)
        if not skill or wrong or right:
            raise FeedbackError(f"{kind} feedback needs skill= (the routed skill) and no wrong=/right=")
        return cls(kind, cap_query(query), skill)

    @property
    def skills(self) -> tuple[str, ...]:
        return (self.skill,) if self.wrong is None else (self.wrong, self.skill)


@dataclass(frozen=True)
class FeedbackStats:
    """What ``skillpilot feedback stats`` shows."""

    path: str
    signals: int
    by_kind: dict[str, int]
    fitted: int
    pending: int
    weights: dict[str, float]
    examples: int


class FeedbackStore:
    """The signals, in one SQLite file; safe to share between processes (WAL)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        # FULL: a signal is on disk, not only in the WAL buffer, when record() returns.
        self._db = connect(self.path, "feedback store", _SCHEMA, synchronous="FULL")

    def close(self) -> None:
        self._db.close()

    def record(self, signal: Signal, vectors: Mapping[str, np.ndarray]) -> Signal:
        """Store ``signal`` with its message's vectors (encoder name -> unit vector); committed."""
        now = time.time()
        with transaction(self._db, self.path, "feedback store") as db:
            cursor = db.execute(
                "INSERT INTO signals (at, kind, query, skill, wrong) VALUES (?, ?, ?, ?, ?)",
                (now, signal.kind, signal.query, signal.skill, signal.wrong),
            )
            signal_id = int(cursor.lastrowid or 0)
            self._insert_vectors(db, signal_id, vectors)
        return Signal(signal.kind, signal.query, signal.skill, signal.wrong, signal_id, now)

    @staticmethod
    def _insert_vectors(db: sqlite3.Connection, signal_id: int, vectors: Mapping[str, np.ndarray]) -> None:
        for encoder, vector in vectors.items():
            array = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
            db.execute(
                "INSERT OR REPLACE INTO query_vectors VALUES (?, ?, ?, ?)",
                (signal_id, encoder, len(array), array.tobytes()),
            )

    def signals(self) -> list[Signal]:
        rows = self._db.execute("SELECT id, at, kind, query, skill, wrong FROM signals ORDER BY id")
        return [
            Signal(kind, query, skill, wrong, signal_id, at)
            for signal_id, at, kind, query, skill, wrong in rows
        ]

    def version(self) -> tuple[int, int]:
        """Changes whenever a signal is recorded or the store is reset (ids are never reused)."""
        count, last = self._db.execute("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM signals").fetchone()
        return int(count), int(last)

    def vectors(self, encoder: str) -> dict[int, np.ndarray]:
        rows = self._db.execute("SELECT signal, data FROM query_vectors WHERE encoder=?", (encoder,))
        return {int(signal_id): np.frombuffer(data, dtype=np.float32) for signal_id, data in rows}

    def add_vectors(self, encoder: str, vectors: Mapping[int, np.ndarray]) -> None:
        """Cache vectors of an encoder that was not in use when the signals were recorded."""
        with transaction(self._db, self.path, "feedback store") as db:
            for signal_id, vector in vectors.items():
                self._insert_vectors(db, signal_id, {encoder: vector})

    def reset(self) -> int:
        """Forget every signal; returns how many there were."""
        with transaction(self._db, self.path, "feedback store") as db:
            count = int(db.execute("SELECT COUNT(*) FROM signals").fetchone()[0])
            db.execute("DELETE FROM signals")
            db.execute("DELETE FROM query_vectors")
        return count

    def stats(self, batch: int) -> FeedbackStats:
        signals = self.signals()
        fitted = signals[: fitted_count(len(signals), batch)]
        by_kind: dict[str, int] = {kind: sum(s.kind == kind for s in signals) for kind in SIGNAL_KINDS}
        return FeedbackStats(
            path=str(self.path),
            signals=len(signals),
            by_kind=by_kind,
            fitted=len(fitted),
            pending=len(signals) - len(fitted),
            weights={k: round(v, 4) for k, v in sorted(skill_weights(fitted).items())},
            examples=sum(len(s.skills) for s in fitted),
        )


def fitted_count(total: int, batch: int) -> int:
    """How many of ``total`` signals the model uses: whole batches only."""
    return total - total % max(1, batch)


def skill_weights(signals: Sequence[Signal]) -> dict[str, float]:
    """The spec's bounded per-skill weights after replaying ``signals`` (1.0 = untouched)."""
    weights: dict[str, float] = {}

    def scale(skill: str, factor: float, low: float) -> None:
        weights[skill] = min(WEIGHT_MAX, max(low, weights.get(skill, 1.0) * factor))

    for signal in signals:
        if signal.kind == "confirmed":
            scale(signal.skill, CONFIRMED_STEP, WEIGHT_MIN)
        elif signal.kind == "ignored":
            scale(signal.skill, IGNORED_STEP, IGNORED_MIN)
        else:
            assert signal.wrong is not None
            scale(signal.wrong, CORRECTED_WRONG_STEP, WEIGHT_MIN)
            scale(signal.skill, CORRECTED_RIGHT_STEP, WEIGHT_MIN)
    return weights


@dataclass(frozen=True)
class Learned:
    """The fitted model: per-skill log weights and example vectors, in catalog positions."""

    log_weights: np.ndarray
    examples: dict[str, np.ndarray] = field(default_factory=dict)
    skills: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    signs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    queries: tuple[str, ...] = ()
    kinds: tuple[SignalKind, ...] = ()

    @property
    def has_examples(self) -> bool:
        return bool(len(self.skills))

    def adjust(self, query_vectors: Mapping[str, np.ndarray]) -> Adjustment:
        """The ln-multiplier of every skill for a message with these vectors."""
        shared = [name for name in self.examples if name in query_vectors]
        if not self.has_examples or not shared:
            return Adjustment(self.log_weights)
        similarity = sum(self.examples[name] @ query_vectors[name] for name in shared) / len(shared)
        strength = np.clip((similarity - MATCH_FROM) / (MATCH_FULL - MATCH_FROM), 0.0, 1.0)
        hit = np.flatnonzero(strength > 0)
        if not len(hit):
            return Adjustment(self.log_weights)
        size = len(self.log_weights)
        # The strongest example per skill and direction counts, so ten near-identical
        # corrections move a skill no further than one.
        towards, away = np.zeros(size), np.zeros(size)
        matches = []
        for i in hit:
            skill, sign = int(self.skills[i]), float(self.signs[i])
            value = float(strength[i]) * abs(sign)
            target = towards if sign > 0 else away
            target[skill] = max(target[skill], value)
            matches.append(
                Match(skill, 1 if sign > 0 else -1, round(value, 3), self.queries[i], self.kinds[i])
            )
        matches.sort(key=lambda m: (-m.strength, m.skill))
        return Adjustment(self.log_weights + EXAMPLE_BOOST * (towards - away), tuple(matches))


def learn(store: FeedbackStore, ids: Sequence[str], encoders: Sequence[Encoder], batch: int) -> Learned:
    """Fit the model on the store's whole batches of signals for a catalog with skill ``ids``.

    Messages lack vectors of an encoder that was added after they were recorded: they are
    embedded now and cached in the store.
    """
    signals = store.signals()
    signals = signals[: fitted_count(len(signals), batch)]
    position = {skill_id: n for n, skill_id in enumerate(ids)}
    log_weights = np.zeros(len(ids))
    for skill_id, weight in skill_weights(signals).items():
        if skill_id in position:
            log_weights[position[skill_id]] = np.log(weight)
    rows: list[tuple[Signal, int, float]] = []
    for signal in signals:
        roles = [(signal.skill, 1.0)]
        if signal.kind == "corrected":
            roles.append((signal.wrong or "", -1.0))
        elif signal.kind == "ignored":
            roles = [(signal.skill, -IGNORED_STRENGTH)]
        rows.extend((signal, position[s], sign) for s, sign in roles if s in position)
    if not rows:
        return Learned(log_weights)
    examples: dict[str, np.ndarray] = {}
    for encoder in encoders:
        stored = store.vectors(encoder.name)
        missing = list(dict.fromkeys(s.id for s, _, _ in rows if s.id not in stored))
        if missing:
            texts = {s.id: s.query for s, _, _ in rows}
            fresh = encoder.encode_batch([texts[i] for i in missing])
            new = dict(zip(missing, fresh, strict=True))
            store.add_vectors(encoder.name, new)
            stored.update(new)
        examples[encoder.name] = np.stack([stored[s.id] for s, _, _ in rows]).astype(np.float32)
    return Learned(
        log_weights=log_weights,
        examples=examples,
        skills=np.array([p for _, p, _ in rows], dtype=np.int64),
        signs=np.array([sign for _, _, sign in rows]),
        queries=tuple(s.query for s, _, _ in rows),
        kinds=tuple(s.kind for s, _, _ in rows),
    )
