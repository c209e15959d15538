"""Retrievers: the stage that turns a query into ranked catalog positions.

Input: a query string. Output: ``scores`` -- one raw score per catalog entry, in catalog order
(fusion needs every skill's standing, not just a top-k) -- and ``search`` -- up to ``k``
:class:`~skillpilot.model.Hit` (catalog position + raw score), best first. Raw scores are
comparable within one retriever only; fusing them across retrievers is the next stage's job.

Built-ins: :class:`skillpilot.retrieve.bm25.BM25Retriever` (keyword) and
:class:`skillpilot.retrieve.dense.DenseRetriever` (one per embedding model). The fast path
(:mod:`skillpilot.retrieve.fast`) is not a retriever: it returns evidence on a fixed 0-10
scale instead of raw scores.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from skillpilot.model import Hit


class Retriever(Protocol):
    """Anything that ranks the catalog for a query; ``name`` labels its stage in traces."""

    name: str

    def search(self, query: str, k: int) -> list[Hit]:
        """At most ``k`` hits with score > 0, best first (ties: lower catalog position first)."""
        ...

    def scores(self, query: str) -> np.ndarray:
        """One raw score per catalog entry, in catalog order."""
        ...
