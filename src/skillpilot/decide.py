"""Decide: the fused ranking in, a calibrated confidence and a decision out.

Input: a :class:`~skillpilot.rank.Ranking` and its catalog. Output: a :class:`Verdict`: the
candidates in their final order (a conflict group's contest settled by
:func:`~skillpilot.conflicts.resolve`), the confidence and its signals, the decision and the
runners-up's scores. Three rules beside the calibration: a fast route's winner is at least
``FAST_ROUTE_CONFIDENCE`` sure, a message close to one the user routed themselves at least
``FEEDBACK_ROUTE_CONFIDENCE`` times how close, and a message the user explicitly corrected goes
to the skill they named, first and at least ``soft`` (``Adjustment.pinned``).

The confidence is a logistic model (Platt scaling) over signals of a candidate: its fused score,
its margin over the best other candidate, its raw dense cosine and BM25 score (absolute evidence:
z-scores alone cannot tell "best of a bad lot" from "clearly this one"), how many retrievers rank
it first and whether all of them do, its reciprocal-rank score, its fast-path score, and apart
from the author text's cosine the cosine to the centre of its example requests and that one's
margin (a match on what users say is worth something else than one on what the skill does), and
the keyword score of its example requests. The
weights, and the fusion weights ``fuse`` uses, are fitted on the development queries by
``benchmarks/calibrate.py`` (cross-validated; the report is in
``benchmarks/results/calibration.json``) and shipped in ``calibration.json``, so 0.9 means "routes
this confident were right about nine times in ten" there. Thresholds then turn the confidence into
``hard`` / ``soft`` / ``passthrough``.

Two models are shipped (:class:`Calibrations`), and a catalog is ranked and judged by one of them:
the one fitted on catalogs with example requests once at least ``WITH_EXAMPLES_SHARE`` of its
skills have them, else the plain one. The choice is per catalog, not per candidate, because
examples change the whole ranking (their own lists, and each dense score takes the closer of the
author text and the examples), so every candidate's scores, and the z-scores they are read
against, come from a catalog with examples; the fusion weights that ordered the candidates and the
confidence that judges them must come from the same fit. The plain model is kept as it was fitted
without examples, so a catalog without them routes exactly as before; the other has its own
fusion weights (the example lists' included), confidence weights and intercept, and reads its
log-odds through an isotonic map (``Calibration``), fitted only on rankings with examples for every
skill, so neither pays the other's trade-off.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources

import numpy as np

from .catalog import Catalog
from .conflicts import CONTEST_MARGIN, promoted, resolve
from .feedback import bounded_confidence
from .fuse import RRF_K
from .model import BM25, EXAMPLES_BM25, FAST, Candidate, Decision, Method, Resolution, RetrieverId
from .rank import Ranking

# An author-declared trigger phrase found in the message, with the keyword ranking agreeing,
# is a hard route (the spec's rule); the development sets hold too few trigger hits to fit this.
FAST_ROUTE_CONFIDENCE = 0.95
CONFIDENCE_FEATURES = (
    "score",
    "margin",
    "dense_max",
    "dense_min",
    "dense_margin",
    "bm25",
    "agreement",
    "fast",
    "rrf",
    "unanimous",
    "example",
    "example_margin",
    "example_bm25",
)
BM25_HALF_SCORE = 5.0
ALTERNATIVES = 4
# A soft decision's shortlist names the runners-up scoring at least this (as if each were the
# pick), up to three skills in all: in cross-validation (benchmarks/calibrate.py) it holds the
# right skill as often as the whole top three does, with fewer names (2.3 on average).
SHORTLIST_SCORE = 0.05
# The with-examples model is fitted on catalogs where every skill has examples. On the bench skills
# with 75 % of them enriched its hard precision is 95.6 / 94.7 % (real-dev / real-dev2) and its
# top-1 no better than the plain model's; with 90 %, 99.1 / 97.8 % on twice the plain model's hard
# decisions (benchmarks/examples_partial.py).
WITH_EXAMPLES_SHARE = 0.9


def confidence_signals(candidates: Sequence[Candidate], position: int) -> dict[str, float]:
    """The calibration features of ``candidates[position]`` against the best other candidate."""
    return signals_at(candidates, (position,))[0]


def signals_at(candidates: Sequence[Candidate], positions: Sequence[int]) -> list[dict[str, float]]:
    """``confidence_signals`` of each of ``positions``, each retriever's column of raw scores read
    once: a route asks this for its winner and each runner-up."""
    best_other = _BestOther([c.score for c in candidates])
    columns: dict[RetrieverId, _BestOther] = {}
    signals = []
    for position in positions:
        me = candidates[position]
        rival = best_other.at(position, me.score - 1.0)
        dense_names = [retriever for retriever in me.raw if retriever.is_dense and not retriever.part]
        example_names = [retriever for retriever in me.raw if retriever.is_dense and retriever.part]
        dense_margins: list[float] = []
        example_margins: list[float] = []
        for name in dense_names + example_names:
            if name not in columns:
                columns[name] = _BestOther([c.raw[name] for c in candidates])
            margin = me.raw[name] - columns[name].at(position, me.raw[name])
            (example_margins if name.part else dense_margins).append(margin)
        bm25 = max(me.raw.get(BM25, 0.0), 0.0)
        voters = [retriever for retriever in me.raw if retriever != FAST]
        signals.append(
            {
                "score": me.score,
                "margin": me.score - rival,
                "dense_max": max((me.raw[n] for n in dense_names), default=0.0),
                "dense_min": min((me.raw[n] for n in dense_names), default=0.0),
                # numpy's mean, without np.mean's dispatch (a sixth of this function's time).
                "dense_margin": float(np.add.reduce(np.asarray(dense_margins, dtype=np.float64)) / len(dense_margins))
                if dense_margins
                else 0.0,
                "bm25": bm25 / (bm25 + BM25_HALF_SCORE),
                "agreement": sum(1 for n in voters if me.ranks.get(n) == 1) / max(1, len(voters)),
                "fast": me.raw.get(FAST, 0.0) / 10.0,
                # 1.0 per retriever that ranks it first: agreement on rank, however far apart the scores.
                "rrf": me.rrf * (RRF_K + 1),
                "unanimous": float(bool(voters) and all(me.ranks.get(n) == 1 for n in voters)),
                # The example requests' match (the cosine to their centre) apart from the author
                # text's: a casual message close to casual examples is weaker evidence than the same
                # cosine on what a skill does.
                "example": max((me.raw[n] for n in example_names), default=0.0),
                "example_margin": max(example_margins, default=0.0),
                "example_bm25": max(me.raw.get(EXAMPLES_BM25, 0.0), 0.0)
                / (max(me.raw.get(EXAMPLES_BM25, 0.0), 0.0) + BM25_HALF_SCORE),
            }
        )
    return signals


class _BestOther:
    """The largest of some values leaving one of them out, for any one, from a single pass."""

    def __init__(self, values: list[float]) -> None:
        self._first = max(range(len(values)), key=values.__getitem__) if values else -1
        self._best = values[self._first] if values else 0.0
        rest = [*values[: self._first], *values[self._first + 1 :]] if values else []
        self._second = max(rest) if rest else None

    def at(self, position: int, default: float) -> float:
        """max(values without values[position]), ``default`` when no other value is left."""
        if position != self._first:
            return self._best
        return default if self._second is None else self._second


@dataclass(frozen=True)
class Calibration:
    """Fitted fusion weights plus a map from ``CONFIDENCE_FEATURES`` to P(right): a logistic
    model's log-odds, read as a probability by the logistic function or, where ``isotonic``
    holds its knots ((log-odds, probability) pairs, rising), by interpolating between them. A
    logistic model fitted with out-of-scope messages weighed up lowers every probability alike;
    the isotonic map, fitted on the same weights, keeps that where out-of-scope messages score and
    says how often routes were right where they do not (Zadrozny & Elkan, KDD 2002)."""

    fusion_weights: Mapping[str, float]
    bias: float
    weights: Mapping[str, float]
    fitted_on: str = ""
    isotonic: tuple[tuple[float, float], ...] = ()
    # Fitted on messages some model does not read (MiniLM reads no Chinese or Japanese): there the
    # others carry the meaning alone, and a weight fitted on both kinds serves neither. Empty:
    # ``fusion_weights`` for every message.
    partial_fusion_weights: Mapping[str, float] = field(default_factory=dict)
    # How close in fused score a conflict-group rival must be to contest the winner on the
    # author's words or priority (``conflicts.resolve``): chosen with the fusion weights it is
    # read against, as those set the scale and how often fusion alone gets a group right.
    contest_margin: float = CONTEST_MARGIN

    def fusion_weights_for(self, every_model_reads: bool) -> Mapping[str, float]:
        """The fusion weights of a message that every model of the catalog reads, or not."""
        return (
            self.fusion_weights if every_model_reads or not self.partial_fusion_weights else self.partial_fusion_weights
        )

    def log_odds(self, signals: Mapping[str, float]) -> float:
        return self.bias + sum(w * signals.get(name, 0.0) for name, w in self.weights.items())

    @cached_property
    def _knots(self) -> tuple[np.ndarray, np.ndarray]:
        # Read once: every route asks for its winner's and its runners-up's probability.
        return np.array([k[0] for k in self.isotonic]), np.array([k[1] for k in self.isotonic])

    def probability(self, signals: Mapping[str, float]) -> float:
        z = self.log_odds(signals)
        if self.isotonic:
            return float(np.interp(z, *self._knots))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            "fitted_on": self.fitted_on,
            "fusion_weights": dict(self.fusion_weights),
            "bias": self.bias,
            "weights": dict(self.weights),
        }
        if self.isotonic:
            found["isotonic"] = [list(knot) for knot in self.isotonic]
        if self.partial_fusion_weights:
            found["partial_fusion_weights"] = dict(self.partial_fusion_weights)
        if self.contest_margin != CONTEST_MARGIN:
            found["contest_margin"] = self.contest_margin
        return found


def calibration_from_dict(data: Mapping[str, object]) -> Calibration:
    knots: list[list[float]] = data.get("isotonic", [])  # type: ignore[assignment]
    return Calibration(
        fusion_weights=dict(data["fusion_weights"]),  # type: ignore[call-overload]
        bias=float(data["bias"]),  # type: ignore[arg-type]
        weights=dict(data["weights"]),  # type: ignore[call-overload]
        fitted_on=str(data.get("fitted_on", "")),
        isotonic=tuple((float(z), float(p)) for z, p in knots),
        partial_fusion_weights=dict(data.get("partial_fusion_weights", {})),  # type: ignore[call-overload]
        contest_margin=float(data.get("contest_margin", CONTEST_MARGIN)),  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class Calibrations:
    """The shipped models: ``with_examples`` for a catalog in which at least
    ``WITH_EXAMPLES_SHARE`` of the skills have example requests, ``plain`` for any other (see the
    module docstring). Stored as one file: the plain model's fields, and the other model under
    ``with_examples``."""

    plain: Calibration
    with_examples: Calibration | None = None

    def for_share(self, example_share: float) -> Calibration:
        """The model that ranks and judges every route on a catalog in which ``example_share`` of
        the skills have example requests."""
        if self.with_examples is not None and example_share >= WITH_EXAMPLES_SHARE:
            return self.with_examples
        return self.plain

    def to_dict(self) -> dict[str, object]:
        found = self.plain.to_dict()
        if self.with_examples is not None:
            found["with_examples"] = self.with_examples.to_dict()
        return found


def calibrations_from_dict(data: Mapping[str, object]) -> Calibrations:
    with_examples = data.get("with_examples")
    return Calibrations(
        plain=calibration_from_dict(data),
        with_examples=calibration_from_dict(with_examples) if isinstance(with_examples, Mapping) else None,
    )


@cache
def shipped_calibration() -> Calibrations:
    """The calibration fitted on the development set and shipped with the package."""
    text = resources.files("skillpilot").joinpath("calibration.json").read_text("utf-8")
    return calibrations_from_dict(json.loads(text))


def candidate_confidence(
    calibration: Calibration, candidates: Sequence[Candidate], method: Method, position: int
) -> float:
    """The calibrated probability that ``candidates[position]`` is right. A trigger phrase that
    routed at once skipped the models, whose evidence the calibration expects, so its winner is
    as sure as the fast path makes it."""
    return _fast_route_rule(calibration.probability(confidence_signals(candidates, position)), method, position)


def _fast_route_rule(probability: float, method: Method, position: int) -> float:
    if method == "fast" and position == 0:
        return max(probability, FAST_ROUTE_CONFIDENCE)
    return probability


def with_feedback(
    confidence: float, ranking: Ranking, catalog: Catalog, calibration: Calibration, winner: int, hard_threshold: float
) -> float:
    """The calibration sees only the retrievers' evidence; feedback's word counts within its
    bounds (``feedback.bounded_confidence``), against the confidence the same route had without
    feedback (0 when feedback changed the winner, a member of its conflict group aside)."""
    learned = ranking.learned
    if learned is None or not learned.moves:
        return confidence
    baseline, before = 0.0, -1
    if ranking.unadjusted:
        baseline = candidate_confidence(calibration, ranking.unadjusted, ranking.scores.method, 0)
        before = ranking.unadjusted[0].index
    group = catalog.conflict_of.get(winner)
    same = before == winner or (group is not None and catalog.conflict_of.get(before) is group)
    return bounded_confidence(learned, confidence, baseline if same else 0.0, winner, hard_threshold)


def alternative_scores(calibration: Calibration, candidates: Sequence[Candidate], count: int) -> list[float]:
    """The calibrated scores of the ``count`` runners-up (``candidates[1:]``), each as if it were
    the pick, rounded as results show them."""
    positions = range(1, min(len(candidates), 1 + count))
    return [round(calibration.probability(signals), 4) for signals in signals_at(candidates, positions)]


def decide(confidence: float, hard_threshold: float, soft_threshold: float) -> Decision:
    if confidence >= hard_threshold:
        return "hard"
    if confidence >= soft_threshold:
        return "soft"
    return "passthrough"


@dataclass(frozen=True)
class Verdict:
    """What the decision stage made of a ranking. ``candidates`` is the final order (the
    contest's winner first); ``signals`` are the calibration features of the fused leader."""

    candidates: tuple[Candidate, ...]
    resolution: Resolution | None
    signals: Mapping[str, float]
    confidence: float
    decision: Decision
    alternative_scores: tuple[float, ...]


def judge(
    ranking: Ranking,
    catalog: Catalog,
    calibration: Calibration,
    prefer: Mapping[str, str],
    hard_threshold: float,
    soft_threshold: float,
) -> Verdict:
    """The verdict on a ranking with at least one candidate."""
    fused = ranking.candidates
    signals = confidence_signals(fused, 0)
    confidence = _fast_route_rule(calibration.probability(signals), ranking.method, 0)
    # The confidence above is that the message belongs to the winner's group; inside the
    # group the resolver picks the member.
    resolution = resolve(
        fused,
        catalog.skills,
        catalog.conflict_of,
        ranking.query,
        ranking.scores.matches,
        prefer,
        ranking.learned,
        catalog.vocabulary,
        ranking.redirected,
        calibration.contest_margin,
    )
    candidates = tuple(promoted(fused, resolution.winner)) if resolution else fused
    pinned = ranking.learned.pinned if ranking.learned is not None else None
    if pinned is not None and any(c.index == pinned for c in fused) and candidates[0].index != pinned:
        # The user corrected this very message to that skill: it goes first, however the
        # retrievers or the contest saw it, and at least as a soft route.
        position = next(n for n, c in enumerate(fused) if c.index == pinned)
        confidence = candidate_confidence(calibration, fused, ranking.method, position)
        candidates = tuple(promoted(fused, pinned))
        resolution = None
    confidence = with_feedback(confidence, ranking, catalog, calibration, candidates[0].index, hard_threshold)
    if pinned is not None and candidates[0].index == pinned:
        confidence = max(confidence, soft_threshold)
    return Verdict(
        candidates=candidates,
        resolution=resolution,
        signals=signals,
        confidence=confidence,
        decision=decide(confidence, hard_threshold, soft_threshold),
        alternative_scores=tuple(alternative_scores(calibration, candidates, ALTERNATIVES)),
    )
