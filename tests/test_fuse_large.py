"""Fusion over catalogs large enough for the sampled top-k selection (>= 4,096 skills) picks exactly
what ranking the whole catalog picks: ties, zeros, NaN and a sample that misleads included."""

from __future__ import annotations

import numpy as np
import pytest

from skillpilot.fuse import fuse, top_order
from skillpilot.model import BM25, FAST, dense_id

from .test_fuse_topk import _catalog, _full_sort_fuse


def _full_order(scores: np.ndarray, count: int) -> list[int]:
    return np.lexsort((np.arange(len(scores)), -scores))[:count].tolist()


def _misleading(size: int) -> np.ndarray:
    """The sampled positions (every 4th at 16,384 skills) hold the best scores, so the threshold
    a sample suggests lets through fewer skills than asked for."""
    scores = np.random.default_rng(3).random(size)
    scores[:: size // 4096] = 100.0 + np.arange(len(scores[:: size // 4096]))
    return scores


@pytest.mark.parametrize("size", [4096, 16384, 50000])
@pytest.mark.parametrize("count", [1, 20, 200, 1000])
def test_top_order_equals_a_full_sort(size: int, count: int) -> None:
    rng = np.random.default_rng(size + count)
    copies = np.repeat(rng.normal(0.3, 0.15, size // 10 + 1).astype(np.float32), 10)[:size]
    keyword = np.where(rng.random(size) < 0.002, rng.gamma(2.0, 3.0, size), 0.0)
    with_nan = rng.random(size)
    with_nan[rng.integers(0, size, 30)] = np.nan
    for scores in (copies, keyword, with_nan, np.zeros(size), _misleading(size)):
        assert top_order(scores, count).tolist() == _full_order(scores, count)


@pytest.mark.parametrize("seed", range(4))
def test_fusion_of_a_large_catalog_equals_ranking_it_whole(seed: int) -> None:
    lists, multipliers = _catalog(seed, 20000)
    weights = {"bm25": 0.4, "dense:*": 1.1, "fast": 2.0}
    assert fuse(lists, weights, multipliers) == _full_sort_fuse(lists, weights, multipliers)
    keyword_only = {name: lists[name] for name in (FAST, BM25) if name in lists}
    assert fuse(keyword_only, weights, multipliers) == _full_sort_fuse(keyword_only, weights, multipliers)
    misled = {dense_id("a"): _misleading(20000), **lists}
    assert fuse(misled, weights, multipliers) == _full_sort_fuse(misled, weights, multipliers)
