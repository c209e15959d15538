"""Fusion by top-k selection picks the same pool, scores and ranks as ranking the whole catalog."""

from __future__ import annotations

import numpy as np
import pytest

from skillpilot.fuse import ScoreLists, fuse, normalised, rrf_scores, top_order, weight_for
from skillpilot.model import BM25, FAST, Candidate, RetrieverId, dense_id


def _full_sort_fuse(
    lists: ScoreLists, weights: dict[str, float], multipliers: np.ndarray, pool: int = 20
) -> list[Candidate]:
    """The reference: every retriever's whole catalog ranked, as fusion did before top-k."""
    rrf = rrf_scores(lists)
    nonzero = np.flatnonzero(rrf > 0)
    pool_ids = nonzero[np.lexsort((nonzero, -rrf[nonzero]))][:pool]
    fused = np.zeros(len(multipliers))
    for name, scores in lists.items():  # the learned fusion over the whole catalog
        fused += weight_for(weights, name) * normalised(name, scores)
    fused = fused + np.log(multipliers)
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


def _catalog(seed: int, size: int) -> tuple[dict[RetrieverId, np.ndarray], np.ndarray]:
    """Score lists shaped like real ones: dense cosines with copies of one text (equal scores),
    sparse BM25 with many zeros, a fast path with a few hits."""
    rng = np.random.default_rng(seed)
    base = rng.normal(0.3, 0.15, size // 10 + 1).astype(np.float32)
    copies = np.repeat(base, 10)[:size]
    other = rng.normal(0.25, 0.2, size).astype(np.float32)
    bm25 = np.where(rng.random(size) < 0.03, rng.gamma(2.0, 3.0, size), 0.0)
    bm25[rng.integers(0, size, 5)] = 7.5  # tied keyword scores
    lists = {BM25: bm25, dense_id("a"): copies, dense_id("b"): other}
    if seed % 2:
        fast = np.zeros(size)
        fast[rng.integers(0, size, 3)] = 8.0
        lists = {FAST: fast, **lists}
    multipliers = np.where(rng.random(size) < 0.1, 0.8, 1.0)
    return lists, multipliers


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("size", [7, 120, 3000])
def test_top_k_fusion_equals_ranking_the_whole_catalog(seed: int, size: int) -> None:
    lists, multipliers = _catalog(seed, size)
    weights = {"bm25": 0.4, "dense:*": 1.1, "fast": 2.0}
    for chosen in (lists, {BM25: lists[BM25]}, {dense_id("a"): lists[dense_id("a")]}):
        assert fuse(chosen, weights, multipliers) == _full_sort_fuse(chosen, weights, multipliers)
    assert fuse(lists, weights, multipliers, pool=size) == _full_sort_fuse(lists, weights, multipliers, pool=size)


def test_a_pool_deeper_than_the_first_look_is_still_exact() -> None:
    """Retrievers that disagree completely push the pool's last member below the first bound."""
    size = 5000
    ranks = np.arange(size, dtype=np.float64)
    lists = {dense_id(str(n)): np.roll(ranks, n * 700) for n in range(6)}
    multipliers = np.ones(size)
    assert fuse(lists, {}, multipliers) == _full_sort_fuse(lists, {}, multipliers)


def test_top_order_breaks_ties_by_catalog_position() -> None:
    scores = np.array([0.5, 0.9, 0.5, 0.9, 0.1, 0.5])
    assert top_order(scores, 3).tolist() == [1, 3, 0]
    assert top_order(scores, 10).tolist() == [1, 3, 0, 2, 5, 4]
