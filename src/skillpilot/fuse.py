"""Fusion: several ranked lists in, one ranked candidate list out.

Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009): a candidate's score is
``sum over lists of weight / (k + rank)`` with rank starting at 1 and k = 60. RRF needs no score
normalisation, which is why it is safe to fuse BM25 (unbounded) with cosines (-1..1).
Multipliers (trust tier, preconditions, learned feedback weights) are applied after fusion and
before calibration, so the calibrated confidence sees the final ranking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .model import Hit

RRF_K = 60


@dataclass
class Candidate:
    """One skill's standing after fusion: score, and its rank and raw score in each list."""

    index: int
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)
    raw: dict[str, float] = field(default_factory=dict)
    multiplier: float = 1.0
    notes: list[str] = field(default_factory=list)


def rrf(
    rankings: Mapping[str, Sequence[Hit]],
    weights: Mapping[str, float] | None = None,
    k: int = RRF_K,
) -> list[Candidate]:
    """Fuse ranked hit lists by Reciprocal Rank Fusion; best first, ties broken by catalog order."""
    fused: dict[int, Candidate] = {}
    for name, hits in rankings.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, hit in enumerate(hits, start=1):
            candidate = fused.setdefault(hit.index, Candidate(hit.index))
            candidate.score += weight / (k + rank)
            candidate.ranks[name] = rank
            candidate.raw[name] = hit.score
    return sorted(fused.values(), key=lambda c: (-c.score, c.index))


def apply_multipliers(candidates: list[Candidate]) -> list[Candidate]:
    """Re-sort after each candidate's ``multiplier`` has been folded into its score."""
    for candidate in candidates:
        candidate.score *= candidate.multiplier
    return sorted(candidates, key=lambda c: (-c.score, c.index))
