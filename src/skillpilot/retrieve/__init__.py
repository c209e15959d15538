"""Retrievers: the stage that gives every catalog skill a raw score for a query.

Input: a :class:`~skillpilot.text.Query` (the message read once per route). Output:
``Retriever.scores`` -- one raw score per catalog entry, in catalog order (fusion needs every
skill's standing, not just a top-k). Raw scores are comparable within one retriever only;
fusing them is the next stage's job (:mod:`skillpilot.fuse`, keyed by each retriever's ``id``).

A retriever declares what fusion and ranking need to know:

- ``id.kind`` says how its list is read. ``dense`` lists are graded (every skill is ranked, and
  they give the calibration its meaning signals); a list of any other kind holds matches: a skill
  scored <= 0 was not found (no RRF vote), and a positive score is a keyword match (a route it
  helps is ``hybrid``). ``str(id)`` labels the list in traces and keys its fusion weight in
  ``calibration.json``; a label the calibration has not fitted gets ``fuse.UNCALIBRATED_WEIGHT``
  (``dense:*`` for a new dense model) until ``benchmarks/calibrate.py --write`` fits it.
- ``uses_model = True`` (optional, default False): it runs a model per message, so it is not
  asked when the fast path answers, as the encoders are not.

Built-ins, registered as third parties register theirs: ``bm25``
(:class:`~skillpilot.retrieve.bm25.BM25Retriever`, keyword) and ``dense``
(:class:`~skillpilot.retrieve.dense.DenseRetriever`, one per encoder with vectors; above
``index.annAbove`` on a store that searches its vectors,
:class:`~skillpilot.retrieve.ann.AnnRetriever`). The fast path
(:mod:`skillpilot.retrieve.fast`) is not a retriever: it returns evidence on a fixed 0-10 scale.

A retriever comes from a factory ``(RetrieverSources) -> Sequence[Retriever]``, called once per
catalog (every time the index changes) with the catalog's skills, the settings and the encoders'
vectors; it returns the retrievers it adds (none, when the settings turn it off). A
distribution declares its factory in the entry-point group ``skillpilot.retrievers``::

    [project.entry-points."skillpilot.retrievers"]
    my-retriever = "my_package.retriever:build"

Installed, it is used: every registered factory adds its retrievers to every catalog, built-ins
first (in the order above), then plugins by name. Code may also call
``register_retriever("my-retriever", build)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

import numpy as np

from ..config import Settings
from ..encoders import Encoder
from ..index import VectorSearch
from ..model import IndexedSkill, RetrieverId
from ..plugins import RETRIEVERS
from ..text import Query


class Retriever(Protocol):
    """Scores the whole catalog for a query (see the module docstring for what it declares)."""

    @property
    def id(self) -> RetrieverId:
        """Which list this is, e.g. ``RetrieverId("bm25")``, ``RetrieverId("dense", model)``."""
        ...

    def scores(self, query: Query) -> np.ndarray:
        """One raw score per catalog skill, in catalog order."""
        ...


@dataclass(frozen=True)
class Embedded:
    """One encoder's vectors of the catalog's skills, in vector space ``space``: in memory
    (``vectors``: one ``(parts, dim)`` array per skill in catalog order, empty for a skill
    without), or -- a catalog above ``index.annAbove`` -- searched by the store (``search``, with
    ``keys`` naming each skill as the store does, ``(root, key)``; ``vectors`` is then empty)."""

    encoder: Encoder
    space: str
    vectors: tuple[np.ndarray, ...] = ()
    search: VectorSearch | None = None
    keys: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class RetrieverSources:
    """What a retriever factory builds from: the catalog's skills (in catalog order: position
    ``i`` of a score list is ``skills[i]``), the settings, and ``embedded()`` -- the vectors of
    every configured encoder that has some (the models load, and the store is read, on the first
    call: a factory that needs no vectors does not wait for them)."""

    skills: tuple[IndexedSkill, ...]
    settings: Settings
    embedded: Callable[[], Sequence[Embedded]]


RetrieverFactory = Callable[[RetrieverSources], Sequence[Retriever]]


def register_retriever(name: str, factory: RetrieverFactory) -> None:
    """Add ``factory``'s retrievers to every catalog built from now on (replacing any of that name)."""
    RETRIEVERS.register(name, factory)


def available_retrievers() -> list[str]:
    """The registered retriever factories, in the order their retrievers are built."""
    return RETRIEVERS.names()


def build_retrievers(sources: RetrieverSources) -> list[Retriever]:
    """Every registered factory's retrievers for one catalog, in registry order."""
    built: list[Retriever] = []
    for name in RETRIEVERS.names():
        factory = cast("RetrieverFactory | None", RETRIEVERS.get(name))
        if factory is not None:
            built.extend(factory(sources))
    return built


__all__ = [
    "Embedded",
    "Retriever",
    "RetrieverFactory",
    "RetrieverSources",
    "available_retrievers",
    "build_retrievers",
    "register_retriever",
]
