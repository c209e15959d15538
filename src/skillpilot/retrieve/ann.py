"""Dense retrieval through the store's nearest-neighbour index, for catalogs too large to hold
every vector in each replica's memory (PostgreSQL + pgvector's HNSW; ``index.annAbove``).

Input: the catalog's skills (their ``(root, key)`` in catalog order), a store that searches its
vectors (:class:`~skillpilot.index.VectorSearch`), one encoder and its vector space. Output per
query vector:

- ``nearest``: the catalog positions of the ``DEPTH`` skills with the part vector nearest by
  cosine (the max-sim order of the dense retriever), as the store's HNSW index over every part
  finds them (approximate: it may miss a true neighbour; ``benchmarks/pg_scale.py`` measures how
  often that changes the candidate pool);
- ``scores_at``: the exact max-sim scores (as :class:`~skillpilot.retrieve.dense.DenseRetriever`
  computes them, every part) of the positions asked for, their vectors read from the store;
- ``spread``: the scores' mean and standard deviation over the catalog, which fusion's z-scores
  need, estimated on a fixed sample (every n-th skill, at most ``SAMPLE_SKILLS``) whose vectors
  this retriever holds; on a catalog no larger than the sample they are exact.

Everything else (``encode``, ``reads``, ``id``) is the dense retriever's; its ``scores_for``
scores the sample only, and ``read`` gives the message's vector without scores.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..encoders import Encoder
from ..index import VectorSearch
from ..text import Query
from . import RetrieverSources
from .dense import DenseRetriever

# Candidates per model: past rrf_pool's first depth (10 x POOL_SIZE), because a skill beyond a
# model's DEPTH gets no vote from it here, where exact fusion gives it a small one. On the
# 21,000-skill fork catalog (benchmarks/pg_scale.py) the pool held 0.948 of the exact pool's
# skills at 200, 0.965 at 300, 0.976 at 400, each step ~10 % slower per route.
DEPTH = 300
SAMPLE_SKILLS = 4096


def sample_positions(size: int) -> np.ndarray:
    """Every n-th catalog position, at most ``SAMPLE_SKILLS`` of them (all when fewer)."""
    if size <= SAMPLE_SKILLS:
        return np.arange(size)
    return np.linspace(0, size - 1, SAMPLE_SKILLS).astype(np.int64)


class AnnRetriever(DenseRetriever):
    """A dense retriever whose candidates come from the store (see the module docstring)."""

    def __init__(self, encoder: Encoder, space: str, store: VectorSearch, keys: Sequence[tuple[str, str]]) -> None:
        self.space = space
        self._store = store
        self._keys = tuple(keys)
        self._position = {key: n for n, key in enumerate(self._keys)}
        self._sample = sample_positions(len(self._keys))
        super().__init__(encoder, self._read(encoder, self._sample.tolist()))

    def _read(self, encoder: Encoder, positions: Sequence[int]) -> list[np.ndarray]:
        stored = self._store.vectors_of(self.space, [self._keys[n] for n in positions])
        empty = np.zeros((0, encoder.dim), dtype=np.float32)
        return [stored.get(self._keys[n], empty) for n in positions]

    def nearest(self, vector: np.ndarray, roots: Sequence[str] | None = None) -> np.ndarray:
        """The positions of the skills nearest ``vector``: the catalog's nearest and, with
        ``roots``, also the nearest under those roots (so the allowed ones are found however few
        they are, and ranked among the catalog's)."""
        found = self._store.vector_search(self.space, vector, DEPTH)
        if roots is not None:
            found += self._store.vector_search(self.space, vector, DEPTH, roots=roots)
        positions = {self._position.get((root, key)) for root, key, _ in found}
        return np.array(sorted(n for n in positions if n is not None), dtype=np.int64)

    def read(self, query: Query) -> tuple[np.ndarray, np.ndarray | None]:
        """The message's vector only: candidates come from ``nearest``, their scores from ``scores_at``."""
        return self.encode(query.text), None

    def scores_at(self, vector: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The max-sim score of each of ``positions`` (-1 for a skill without vectors)."""
        return DenseRetriever(self.encoder, self._read(self.encoder, positions.tolist())).scores_for(vector)

    def spread(self, vector: np.ndarray) -> tuple[float, float]:
        """(mean, std) of the scores over the catalog, estimated on the sample."""
        scores = self.scores_for(vector)
        return float(scores.mean()), float(scores.std())


def dense_retrievers(sources: RetrieverSources) -> list[DenseRetriever]:
    """The built-in ``dense`` factory: one retriever per encoder with vectors, in the configured
    order; a nearest-neighbour one where the store searches them (defined here, beside the
    variant it may build)."""
    return [
        DenseRetriever(e.encoder, e.vectors) if e.search is None else AnnRetriever(e.encoder, e.space, e.search, e.keys)
        for e in sources.embedded()
    ]
