"""Fusion: one score vector per retriever in (every skill scored), one ranking out.

Two fusions, each for what it is good at:

- Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009) picks the candidate pool:
  ``rrf(d) = sum over retrievers of 1 / (k + rank_r(d))`` with k = 60, over the ranks of the whole
  catalog (a skill missing from one retriever's top-k is not punished for it). It needs no score
  normalisation, so it is the robust way to say *which* skills are in the race.
- Inside the pool, the order comes from a learned linear combination of each retriever's
  per-query z-scores (``(score - mean) / std`` over the catalog), with weights fitted on the
  development queries (``benchmarks/calibrate.py``). Unlike ranks, z-scores keep *how far*
  ahead a skill is, which is what separates a clear winner from a coin toss.

Multipliers (trust tier, precondition penalty, learned feedback weight) treat ``exp(score)`` as
the skill's relevance, so multiplying relevance by m adds ``ln m`` to the score; they are applied
before calibration, so the calibrated confidence sees the final ranking.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .model import FAST, Candidate, RetrieverId

# One score per catalog skill, per retriever.
ScoreLists = Mapping[RetrieverId, np.ndarray]

RRF_K = 60
POOL_SIZE = 20
FAST_SCALE = 10.0


def zscore(scores: np.ndarray) -> np.ndarray:
    """Per-query standardisation; a retriever with no opinion (all equal) contributes zeros."""
    std = float(scores.std())
    if std < 1e-9:
        return np.zeros_like(scores, dtype=np.float64)
    standardised: np.ndarray = (scores - scores.mean()) / std
    return standardised


def catalog_ranks(scores: np.ndarray) -> np.ndarray:
    """Every skill's 1-based rank in one score list (ties: lower catalog position first)."""
    size = len(scores)
    order = np.lexsort((np.arange(size), -scores))
    ranks = np.empty(size, dtype=np.int64)
    ranks[order] = np.arange(1, size + 1)
    return ranks


def rrf_scores(lists: ScoreLists, k: int = RRF_K) -> np.ndarray:
    """Reciprocal Rank Fusion over full-catalog rankings; zero keyword scores do not count."""
    size = len(next(iter(lists.values())))
    fused = np.zeros(size, dtype=np.float64)
    for retriever, scores in lists.items():
        contribution = 1.0 / (k + catalog_ranks(scores))
        if not retriever.is_dense:
            contribution[scores <= 0] = 0.0
        fused += contribution
    return fused


def weight_for(weights: Mapping[str, float], retriever: RetrieverId) -> float:
    """A retriever's fusion weight (``weights`` are keyed by label); dense retrievers without a
    fitted weight share ``dense:*``."""
    label = str(retriever)
    if label in weights:
        return weights[label]
    shared = retriever.shared_label
    return weights.get(shared, 0.0) if shared else 0.0


def normalised(retriever: RetrieverId, scores: np.ndarray) -> np.ndarray:
    """Retriever scores on a common scale: z-scores, except the fast path's fixed 0-10 scale
    (mostly zeros, so its z-score would grow with the catalog size)."""
    return scores / FAST_SCALE if retriever == FAST else zscore(scores)


def linear_scores(lists: ScoreLists, weights: Mapping[str, float]) -> np.ndarray:
    """The learned fusion: sum of ``weight * normalised score`` over retrievers."""
    size = len(next(iter(lists.values())))
    fused = np.zeros(size, dtype=np.float64)
    for retriever, scores in lists.items():
        fused += weight_for(weights, retriever) * normalised(retriever, scores)
    return fused


def fuse(
    lists: ScoreLists,
    weights: Mapping[str, float],
    multipliers: np.ndarray,
    pool: int = POOL_SIZE,
) -> list[Candidate]:
    """Candidates best first: RRF picks the pool, the weighted z-score (+ ln multiplier) orders it."""
    if not lists:
        return []
    rrf = rrf_scores(lists)
    nonzero = np.flatnonzero(rrf > 0)
    if not len(nonzero):
        return []
    pool_ids = nonzero[np.lexsort((nonzero, -rrf[nonzero]))][:pool]
    fused = linear_scores(lists, weights) + np.log(multipliers)
    rank_of = {
        name: {int(i): r for r, i in enumerate(np.lexsort((np.arange(len(s)), -s))[: pool * 2], 1)}
        for name, s in lists.items()
    }
    candidates = [
        Candidate(
            index=int(i),
            score=float(fused[i]),
            rrf=float(rrf[i]),
            ranks={n: rank_of[n][int(i)] for n in lists if int(i) in rank_of[n]},
            raw={n: float(s[i]) for n, s in lists.items()},
            multiplier=float(multipliers[i]),
        )
        for i in pool_ids
    ]
    return sorted(candidates, key=lambda c: (-c.score, c.index))
