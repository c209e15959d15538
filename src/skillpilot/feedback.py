"""Feedback: what users (and agents) say about routes, kept durably, and what the router learns.

Input: ``Signal`` records (the spec's section 5.4): ``confirmed`` (the routed skill was right),
``corrected`` (``wrong`` was routed, ``right`` was meant), ``ignored`` (the routed skill was not
used), each with the message's vectors from every encoder; ``implicit`` marks a signal a hook
inferred from what the agent did rather than one a person gave. Output: a ``Learned`` model the
router turns into one ln-multiplier per skill for each new message (``fuse`` adds it to the fused
score, like the trust tier), and ``Adjustment.bounded_confidence``, the most feedback may lift a
route's confidence.

Guarantees:
- ``FeedbackStore.record`` commits before it returns, with ``synchronous=FULL``: a recorded
  signal survives a crash or power loss. The store is its own file (``feedback.sqlite`` next to
  the index), so rebuilding or deleting the index never loses feedback. ``undo`` deletes one
  signal; the model forgets it from the next route on.
- Privacy follows ``log.queries``: ``text`` keeps the message, ``hash`` only its SHA-256 (to
  tell repeats apart), ``off`` neither (repeats are told apart by a digest of the vectors).
  Matching by meaning needs only the vectors, so it works in every mode; what ``hash``/``off``
  lose is embedding old signals with an encoder added later (they then count only in the
  per-skill weights).
- Learning is a pure replay of the signals at a given time: the same signals and clock give the
  same model. ``batch`` signals trigger a re-fit (the spec's batchSize); with the default 1
  every signal counts from the next route on. Signals about skills no longer indexed are kept
  and skipped.
- One (message, skill) pair counts once: the latest signal about it wins (confirming the same
  message ten times is one confirmation; correcting it later replaces the confirmation).
- Every signal fades: its weight halves every ``HALF_LIFE_DAYS`` (explicit) or
  ``IMPLICIT_HALF_LIFE_DAYS`` (implicit), and an implicit signal starts at ``IMPLICIT_WEIGHT``.
- Bounds, so that feedback helps and one signal cannot hijack a route:
  * per signal: its skill-weight step (x0.85 to x1.1) times its learned example (what is left of
    x``SIGNAL_FACTOR_MAX`` after the step) multiplies a skill's score by at most x2 or divides it
    by at most 2;
  * per skill: everything learned together multiplies its score by at most x``SKILL_FACTOR_MAX``
    (4) or divides it by 4, however many signals there are;
  * confidence: feedback lifts a route to at most ``SINGLE_CONFIDENCE_MAX`` (0.79, below the
    default hard threshold 0.80): a soft route, never a hard one, unless at least
    ``HARD_SUPPORT`` (3) distinct similar messages agree on the skill (net of those against
    it). A route that was already that confident without feedback keeps its confidence.
- An explicit correction takes: the same message (equal after the route's normalisation, told
  apart by its ``message_key``) routes to the corrected skill, first and at least ``soft``, from
  the next route on (``Adjustment.pinned``), as long as that correction is the latest explicit
  signal about the message. Paraphrases and implicit signals keep the bounds below.
- Two effects:
  * per-skill weights, the spec's rule: confirmed x1.05, corrected wrong x0.85 and right x1.1,
    ignored x0.95, kept in [0.1, 2.0] ([0.3, 2.0] for ignored), each step raised to the signal's
    weight. They touch every message: one correction moves a skill by 5-15 %.
  * learned examples, which generalise past the exact sentence: a correction makes the message
    an example *for* the right skill and *against* the wrong one (confirmed: for; ignored:
    against, at half strength). A new message whose mean cosine to an example over the shared
    encoders reaches ``MATCH_FROM`` moves that skill (fully from ``MATCH_FULL``, a ramp so a
    message just over the bar moves only a little), so paraphrases of a corrected message route
    right while other messages, even about the same skills, are untouched. ``MATCH_FROM`` is the
    similarity the most similar pair of unrelated development queries (disjoint expected skills)
    reaches, so no unrelated development query moves (``benchmarks/feedback_eval.py`` prints it
    and measures the effect).
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar, get_args

import numpy as np

from .config import QueryPrivacy
from .encoders import Encoder
from .errors import FeedbackError, FeedbackNotFoundError, StoreError
from .model import Adjustment, FeedbackKind, Match
from .sqlitefile import connect, problem_of, set_aside_advice, transaction
from .text import cap_query

SignalKind = FeedbackKind
SIGNAL_KINDS: tuple[SignalKind, ...] = get_args(SignalKind)
_T = TypeVar("_T")

# The spec's per-skill weight rule: (factor, bound) per role.
CONFIRMED_STEP, CORRECTED_WRONG_STEP, CORRECTED_RIGHT_STEP, IGNORED_STEP = 1.05, 0.85, 1.1, 0.95
WEIGHT_MAX, WEIGHT_MIN, IGNORED_MIN = 2.0, 0.1, 0.3
# The bounds (module docstring).
SIGNAL_FACTOR_MAX = 2.0
SKILL_FACTOR_MAX = 4.0
SINGLE_CONFIDENCE_MAX = 0.79
HARD_SUPPORT = 3
# A route backed by at least HARD_SUPPORT similar messages the user routed to this skill
# themselves, at full similarity (weaker or older evidence scales it down). A rule like the
# fast path's: the calibration never sees feedback.
FEEDBACK_ROUTE_CONFIDENCE = 0.9
# Fading: a quarter's old correction counts half; what an agent did, a fortnight's.
HALF_LIFE_DAYS = 90.0
IMPLICIT_HALF_LIFE_DAYS = 14.0
IMPLICIT_WEIGHT = 0.5
DAY_SECONDS = 86400.0
# Learned examples: the similarity ramp (see the module docstring).
MATCH_FROM = 0.55
MATCH_FULL = 0.65
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
# Added after the first release: stores written before them are migrated on open.
_LATER_COLUMNS = {"implicit": "INTEGER NOT NULL DEFAULT 0", "message_key": "TEXT"}
_COLUMNS = "id, at, kind, query, skill, wrong, implicit, message_key"


@dataclass(frozen=True)
class Signal:
    """One piece of feedback. ``skill`` is the skill it is about: the confirmed or ignored one,
    or for a correction the right one (``wrong`` then names the routed one). ``query`` is empty
    when ``log.queries`` keeps no text; ``message_key`` tells repeats of a message apart."""

    kind: SignalKind
    query: str
    skill: str
    wrong: str | None = None
    id: int = 0
    at: float = 0.0
    implicit: bool = False
    message_key: str | None = None

    @classmethod
    def of(
        cls,
        kind: str,
        query: str,
        skill: str | None = None,
        wrong: str | None = None,
        right: str | None = None,
        *,
        implicit: bool = False,
    ) -> Signal:
        """A signal from the arguments a user gives; raises ``FeedbackError`` naming what is missing."""
        aliases = {"confirm": "confirmed", "correct": "corrected", "ignore": "ignored"}
        given, kind = kind, aliases.get(kind, kind)
        if kind not in SIGNAL_KINDS:
            # The verbs first: the ones the CLI's subcommands take, and every other surface too.
            raise FeedbackError(f"feedback kind {given!r}: use {', '.join(aliases)} (or {', '.join(SIGNAL_KINDS)})")
        if not query.strip():
            raise FeedbackError("feedback needs the message (query) it is about")
        query = cap_query(query)
        if kind == "corrected":
            if not (wrong and right) or skill:
                raise FeedbackError("a correction needs wrong= (the routed skill) and right= (the meant one)")
            if wrong == right:
                raise FeedbackError(f"a correction needs two different skills, got {wrong!r} twice")
            return cls("corrected", query, right, wrong, implicit=implicit)
        if not skill or wrong or right:
            raise FeedbackError(f"{kind} feedback needs skill= (the routed skill) and no wrong=/right=")
        return cls(kind, query, skill, implicit=implicit)

    @property
    def skills(self) -> tuple[str, ...]:
        return (self.skill,) if self.wrong is None else (self.wrong, self.skill)

    def roles(self) -> tuple[tuple[str, float, float], ...]:
        # An ignored message is an example against its skill at IGNORED_STRENGTH.
        """(skill, example sign, weight step) for each skill the signal is about."""
        if self.kind == "corrected":
            return ((self.skill, 1.0, CORRECTED_RIGHT_STEP), (self.wrong or "", -1.0, CORRECTED_WRONG_STEP))
        if self.kind == "ignored":
            return ((self.skill, -IGNORED_STRENGTH, IGNORED_STEP),)
        return ((self.skill, 1.0, CONFIRMED_STEP),)

    def weight(self, now: float | None) -> float:
        """How much the signal counts at time ``now`` (None: no fading), in (0, 1]."""
        base = IMPLICIT_WEIGHT if self.implicit else 1.0
        if now is None:
            return base
        half_life = IMPLICIT_HALF_LIFE_DAYS if self.implicit else HALF_LIFE_DAYS
        age_days = max(0.0, now - self.at) / DAY_SECONDS
        return float(base * 0.5 ** (age_days / half_life))


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
    implicit: int = 0


def message_key(query: str, vectors: Mapping[str, np.ndarray], privacy: QueryPrivacy) -> str | None:
    """What tells two signals about the same message apart without keeping more than ``privacy``
    allows: the text's SHA-256, or with ``off`` a digest of its vectors (None without any)."""
    if privacy != "off":
        return hashlib.sha256(query.encode("utf-8")).hexdigest()
    if not vectors:
        return None
    digest = hashlib.sha256()
    for name in sorted(vectors):
        digest.update(name.encode("utf-8"))
        digest.update(np.ascontiguousarray(vectors[name], dtype=np.float32).tobytes())
    return "vectors:" + digest.hexdigest()


class FeedbackStore:
    """The signals, in one SQLite file; safe to share between processes (WAL). ``privacy`` is
    ``log.queries``: what is kept of each message."""

    def __init__(self, path: Path, privacy: QueryPrivacy = "text") -> None:
        self.path = Path(path)
        self.privacy = privacy
        # FULL: a signal is on disk, not only in the WAL buffer, when record() returns.
        # Routing goes on without feedback meanwhile (router._learned).
        self._damaged = set_aside_advice(self.path, "a new, empty feedback store starts")
        self._db = connect(self.path, "feedback store", _SCHEMA, synchronous="FULL", damaged=self._damaged)
        self._read(self._migrate)

    def _migrate(self) -> None:
        present = {row[1] for row in self._db.execute("PRAGMA table_info(signals)")}
        for column, declaration in _LATER_COLUMNS.items():
            if column not in present:
                self._db.execute(f"ALTER TABLE signals ADD COLUMN {column} {declaration}")

    def _read(self, read: Callable[[], _T]) -> _T:
        try:
            return read()
        except sqlite3.Error as exc:
            problem = problem_of(exc, self.path)
            raise StoreError(self.path, f"cannot read the feedback store ({exc}){self._damaged}", problem) from exc

    def close(self) -> None:
        self._db.close()

    def record(self, signal: Signal, vectors: Mapping[str, np.ndarray]) -> Signal:
        """Store ``signal`` with its message's vectors (encoder name -> unit vector); committed.
        Returns it as stored: with its id and time, and without the text ``privacy`` forbids."""
        now = time.time()
        key = message_key(signal.query, vectors, self.privacy)
        kept = signal.query if self.privacy == "text" else ""
        with transaction(self._db, self.path, "feedback store") as db:
            cursor = db.execute(
                "INSERT INTO signals (at, kind, query, skill, wrong, implicit, message_key)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (now, signal.kind, kept, signal.skill, signal.wrong, int(signal.implicit), key),
            )
            signal_id = int(cursor.lastrowid or 0)
            self._insert_vectors(db, signal_id, vectors)
        return replace(signal, query=kept, id=signal_id, at=now, message_key=key)

    @staticmethod
    def _insert_vectors(db: sqlite3.Connection, signal_id: int, vectors: Mapping[str, np.ndarray]) -> None:
        for encoder, vector in vectors.items():
            array = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
            db.execute(
                "INSERT OR REPLACE INTO query_vectors VALUES (?, ?, ?, ?)",
                (signal_id, encoder, len(array), array.tobytes()),
            )

    def signals(self) -> list[Signal]:
        rows = self._read(lambda: self._db.execute(f"SELECT {_COLUMNS} FROM signals ORDER BY id").fetchall())
        return [
            Signal(kind, query, skill, wrong, signal_id, at, bool(implicit), key)
            for signal_id, at, kind, query, skill, wrong, implicit, key in rows
        ]

    def version(self) -> tuple[int, int]:
        """Changes whenever a signal is recorded or undone or the store is reset (ids are never
        reused)."""
        count, last = self._read(
            lambda: self._db.execute("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM signals").fetchone()
        )
        return int(count), int(last)

    def vectors(self, encoder: str) -> dict[int, np.ndarray]:
        rows = self._read(
            lambda: self._db.execute("SELECT signal, data FROM query_vectors WHERE encoder=?", (encoder,)).fetchall()
        )
        return {int(signal_id): np.frombuffer(data, dtype=np.float32) for signal_id, data in rows}

    def add_vectors(self, encoder: str, vectors: Mapping[int, np.ndarray]) -> None:
        """Cache vectors of an encoder that was not in use when the signals were recorded."""
        with transaction(self._db, self.path, "feedback store") as db:
            for signal_id, vector in vectors.items():
                self._insert_vectors(db, signal_id, {encoder: vector})

    def undo(self, signal_id: int) -> Signal:
        """Delete one signal (and its vectors); returns it. Raises ``FeedbackNotFoundError``."""
        found = [s for s in self.signals() if s.id == signal_id]
        if not found:
            last = self.version()[1]
            raise FeedbackNotFoundError(signal_id, last)
        with transaction(self._db, self.path, "feedback store") as db:
            db.execute("DELETE FROM signals WHERE id=?", (signal_id,))
            db.execute("DELETE FROM query_vectors WHERE signal=?", (signal_id,))
        return found[0]

    def reset(self) -> int:
        """Forget every signal; returns how many there were."""
        with transaction(self._db, self.path, "feedback store") as db:
            count = int(db.execute("SELECT COUNT(*) FROM signals").fetchone()[0])
            db.execute("DELETE FROM signals")
            db.execute("DELETE FROM query_vectors")
        return count

    def stats(self, batch: int, implicit: bool = True) -> FeedbackStats:
        signals = self.signals()
        fitted = signals[: fitted_count(len(signals), batch)]
        used = [s for s in fitted if implicit or not s.implicit]
        by_kind: dict[str, int] = {kind: sum(s.kind == kind for s in signals) for kind in SIGNAL_KINDS}
        return FeedbackStats(
            path=str(self.path),
            signals=len(signals),
            by_kind=by_kind,
            fitted=len(fitted),
            pending=len(signals) - len(fitted),
            weights={k: round(v, 4) for k, v in sorted(skill_weights(used, time.time()).items())},
            examples=sum(len(s.skills) for s in used),
            implicit=sum(s.implicit for s in signals),
        )


def fitted_count(total: int, batch: int) -> int:
    """How many of ``total`` signals the model uses: whole batches only."""
    return total - total % max(1, batch)


def latest_roles(signals: Iterable[Signal]) -> list[tuple[Signal, str, float, float]]:
    """(signal, skill, example sign, weight step) of every role, one per (message, skill): the
    latest signal about a pair replaces the earlier ones. In signal order."""
    latest: dict[tuple[str, str], tuple[Signal, str, float, float]] = {}
    for signal in signals:
        for skill, sign, step in signal.roles():
            message = signal.message_key or signal.query or f"signal:{signal.id}"
            latest.pop((message, skill), None)
            latest[(message, skill)] = (signal, skill, sign, step)
    return list(latest.values())


def corrections(signals: Iterable[Signal], position: Mapping[str, int]) -> dict[str, int]:
    """message_key -> catalog position of the skill an explicit correction named, for each
    message whose latest explicit signal is that correction (and whose skill is indexed)."""
    latest: dict[str, Signal] = {}
    for signal in signals:
        if not signal.implicit and signal.message_key:
            latest[signal.message_key] = signal
    return {
        key: position[signal.skill]
        for key, signal in latest.items()
        if signal.kind == "corrected" and signal.skill in position
    }


def skill_weights(signals: Sequence[Signal], now: float | None = None) -> dict[str, float]:
    """The spec's bounded per-skill weights after replaying ``signals`` (1.0 = untouched); with
    ``now``, each step counts as much as its signal still weighs then."""
    weights: dict[str, float] = {}
    for signal, skill, _, step in latest_roles(signals):
        low = IGNORED_MIN if signal.kind == "ignored" else WEIGHT_MIN
        factor = step ** signal.weight(now)
        weights[skill] = min(WEIGHT_MAX, max(low, weights.get(skill, 1.0) * factor))
    return weights


def bounded_confidence(
    adjustment: Adjustment, confidence: float, baseline: float, skill: int, hard_threshold: float
) -> float:
    """The confidence of a route to ``skill`` with this feedback applied: ``confidence`` as
    the retrievers saw it with the learned multipliers, ``baseline`` without them (0 when
    feedback changed the skill). The user's own word lifts it to ``FEEDBACK_ROUTE_CONFIDENCE``
    scaled by the evidence; below ``HARD_SUPPORT`` agreeing messages no higher than
    ``SINGLE_CONFIDENCE_MAX`` (and below the hard threshold), unless it was that sure anyway.
    A skill turned down for messages like this one is never a hard route."""
    evidence = adjustment.example_score(skill)
    ceiling = min(SINGLE_CONFIDENCE_MAX, math.nextafter(hard_threshold, 0.0))
    if evidence < 0:
        # The user turned this skill down for messages like this one: no hard route to it.
        return min(confidence, ceiling)
    lifted = max(confidence, FEEDBACK_ROUTE_CONFIDENCE * evidence)
    if adjustment.support(skill) >= HARD_SUPPORT:
        return lifted
    return min(lifted, max(baseline, ceiling))


@dataclass(frozen=True)
class Learned:
    """The fitted model: per-skill log weights and example vectors, in catalog positions. Each
    example row is one (message, skill) role: its skill, signed weight (direction times how much
    the signal still counts), the ln-multiplier it applies at full similarity (``reach``: what
    ``SIGNAL_FACTOR_MAX`` leaves after the signal's weight step) and its source signal."""

    log_weights: np.ndarray
    examples: dict[str, np.ndarray] = field(default_factory=dict)
    skills: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    signs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    reach: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sources: tuple[Signal, ...] = ()
    # message_key -> catalog position of the skill an explicit correction named for that message.
    pins: Mapping[str, int] = field(default_factory=dict)
    privacy: QueryPrivacy = "text"

    @property
    def has_examples(self) -> bool:
        return bool(len(self.skills))

    def adjust(self, query_vectors: Mapping[str, np.ndarray], query: str = "") -> Adjustment:
        """The ln-multiplier of every skill for the message ``query`` with these vectors, and the
        skill an explicit correction pinned it to."""
        pinned = self.pins.get(message_key(query, query_vectors, self.privacy) or "") if self.pins else None
        shared = [name for name in self.examples if name in query_vectors]
        if not self.has_examples or not shared:
            return Adjustment(self._bounded(self.log_weights), pinned=pinned)
        similarity = sum(self.examples[name] @ query_vectors[name] for name in shared) / len(shared)
        strength = np.clip((similarity - MATCH_FROM) / (MATCH_FULL - MATCH_FROM), 0.0, 1.0)
        hit = np.flatnonzero(strength > 0)
        if not len(hit):
            return Adjustment(self._bounded(self.log_weights), pinned=pinned)
        # Rows are distinct (message, skill) pairs already, so evidence adds up across messages
        # and the per-skill bound stops it.
        evidence = np.zeros(len(self.log_weights))
        matches = []
        for i in hit:
            skill, sign, source = int(self.skills[i]), float(self.signs[i]), self.sources[i]
            value = float(strength[i]) * sign
            evidence[skill] += value * float(self.reach[i])
            matches.append(
                Match(
                    skill,
                    1 if sign > 0 else -1,
                    round(abs(value), 3),
                    source.query,
                    source.kind,
                    source.id,
                    source.implicit,
                )
            )
        matches.sort(key=lambda m: (-m.strength, m.skill, m.signal))
        return Adjustment(self._bounded(self.log_weights + evidence), tuple(matches), pinned)

    @staticmethod
    def _bounded(log_multipliers: np.ndarray) -> np.ndarray:
        limit = math.log(SKILL_FACTOR_MAX)
        return np.asarray(np.clip(log_multipliers, -limit, limit), dtype=float)


def learn(
    store: FeedbackStore,
    ids: Sequence[str],
    encoders: Sequence[Encoder],
    batch: int,
    *,
    implicit: bool = True,
    now: float | None = None,
) -> Learned:
    """Fit the model on the store's whole batches of signals for a catalog with skill ``ids``,
    as the signals weigh at ``now`` (default: the current time); ``implicit=False`` leaves out
    implicit signals.

    Messages lack vectors of an encoder that was added after they were recorded: they are
    embedded now and cached in the store when their text was kept; otherwise they count only
    in the per-skill weights.
    """
    now = time.time() if now is None else now
    signals = store.signals()
    signals = [s for s in signals[: fitted_count(len(signals), batch)] if implicit or not s.implicit]
    position = {skill_id: n for n, skill_id in enumerate(ids)}
    log_weights = np.zeros(len(ids))
    for skill_id, weight in skill_weights(signals, now).items():
        if skill_id in position:
            log_weights[position[skill_id]] = np.log(weight)
    rows = [
        (signal, position[skill], sign * signal.weight(now), math.log(SIGNAL_FACTOR_MAX) - abs(math.log(step)))
        for signal, skill, sign, step in latest_roles(signals)
        if skill in position
    ]
    stored = {encoder.name: store.vectors(encoder.name) for encoder in encoders}
    for encoder in encoders:
        missing = list(dict.fromkeys(s.id for s, *_ in rows if s.id not in stored[encoder.name] and s.query))
        if missing:
            texts = {s.id: s.query for s, *_ in rows}
            new = dict(zip(missing, encoder.encode_batch([texts[i] for i in missing]), strict=True))
            store.add_vectors(encoder.name, new)
            stored[encoder.name].update(new)
    rows = [row for row in rows if all(row[0].id in vectors for vectors in stored.values())]
    pins = corrections(signals, position)
    if not rows:
        return Learned(log_weights, pins=pins, privacy=store.privacy)
    return Learned(
        pins=pins,
        privacy=store.privacy,
        log_weights=log_weights,
        examples={
            name: np.stack([vectors[s.id] for s, *_ in rows]).astype(np.float32) for name, vectors in stored.items()
        },
        skills=np.array([row[1] for row in rows], dtype=np.int64),
        signs=np.array([row[2] for row in rows]),
        reach=np.array([row[3] for row in rows]),
        sources=tuple(s for s, *_ in rows),
    )
