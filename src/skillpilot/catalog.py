"""The catalog: one store snapshot in, everything routing holds in memory out.

Input: a :class:`~skillpilot.index.Snapshot` (one read transaction: generation, skills, the
vectors of the configured encoders), the encoders, the settings and the home's example requests
(:class:`~skillpilot.examples.ExampleStore`, when it has any). Output: a frozen
:class:`Catalog`: the skills with their ids (catalog positions are the order of the snapshot),
the fast-path matcher, the retrievers every registered factory builds (``skillpilot.retrieve``:
the BM25 postings, one dense retriever per encoder that has vectors, any plugin's), apart from
them the BM25 postings of the skills' example requests and one example retriever per encoder that
has example vectors, the static multipliers (trust tier x unmet preconditions), the conflict
groups, the authors' redirects (``skillpilot.redirects``, built on first use) and what is missing.

Guarantees: building a catalog never writes the index. A skill without vectors for an encoder
(indexed keyword-only, or with another model) is embedding the indexer's job: that encoder's
retriever scores it ``-1`` (found by words only), an encoder with no vectors at all is left out,
and ``missing`` says so for ``explain`` and ``stats``. The generation is the snapshot's, so a
catalog is never labelled newer than what it holds.

A catalog of more than ``index.annAbove`` skills on a store that searches its own vectors
(PostgreSQL) holds no vectors but a sample: its dense retrievers are
:class:`~skillpilot.retrieve.ann.AnnRetriever` s, which ask the store's HNSW index for each
message's candidates (``nearest_neighbours``; ``explain`` and ``stats`` say so). Below that, or
on SQLite, every vector is in memory and every skill is scored.

The trust tier of a skill is :func:`trust_tier` everywhere (routing, MCP filters and OntoSkills
views, dashboard, market listings): ``trustTiers`` in config.yaml by skill id, else what is
declared for the skill.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

import numpy as np

from .config import Settings
from .conflicts import ConflictGroup, Vocabularies, conflict_config, detect_conflicts, group_of, groups_from
from .encoders import Encoder
from .examples import ExampleSet, ExampleStore, example_sets
from .fingerprint import unmet_preconditions
from .index import ConflictGraph, Snapshot, VectorSearch, assign_ids
from .index.builder import root_id, vector_space
from .model import IndexedSkill
from .redirects import Redirects
from .retrieve import Embedded, Retriever, RetrieverSources, build_retrievers
from .retrieve.ann import AnnRetriever
from .retrieve.bm25 import BM25Index, BM25Retriever
from .retrieve.dense import EMBEDDING, DenseRetriever, single_threaded_blas
from .retrieve.examples import ExampleRetriever
from .retrieve.fast import FastMatcher
from .retrieve.keywords import described_terms
from .text import tokenize

log = logging.getLogger(__name__)

TRUST_MULTIPLIERS = {"local": 1.0, "official": 1.2, "verified": 1.0, "community": 0.8}
UNMET_PRECONDITION_MULTIPLIER = 0.7


def trust_tier(skill: IndexedSkill, tiers: Mapping[str, str], declared: str | None = None) -> str:
    """The skill's trust tier: the user's ``trustTiers`` entry for its id, else what is declared
    for it (``declared``: e.g. a market catalog file's entry), else its own."""
    return tiers.get(skill.id, declared or skill.skill.trust_tier)


def trust_multiplier(tier: str) -> float:
    return TRUST_MULTIPLIERS.get(tier, 1.0)


@dataclass(frozen=True)
class MissingVectors:
    """Skills an encoder has no stored vectors for (``reindex`` embeds them)."""

    encoder: str
    skills: int
    of: int

    @property
    def note(self) -> str:
        used = "left out" if self.skills == self.of else "found by words only"
        return (
            f"{self.skills} of {self.of} skills have no {self.encoder} vectors ({used}); "
            "run `skillpilot reindex` to embed them"
        )


@dataclass(frozen=True)
class CatalogExamples:
    """The example requests of a catalog's skills (catalog order; ``()`` for a skill without),
    what made each set (``""`` for none), and the generation of the examples store they were
    read at (-1: no store)."""

    requests: tuple[tuple[str, ...], ...] = ()
    made_by: tuple[str, ...] = ()
    generation: int = -1

    @property
    def skills(self) -> int:
        """How many skills have examples."""
        return sum(1 for r in self.requests if r)


@dataclass(frozen=True)
class Catalog:
    """Everything routing needs in memory, built from one store snapshot."""

    generation: int
    skills: tuple[IndexedSkill, ...]
    fast: FastMatcher | None
    # In the order their lists are fused (``retrieve.build_retrievers``).
    retrievers: tuple[Retriever, ...]
    multipliers: np.ndarray
    unmet: tuple[tuple[str, ...], ...]
    conflicts: tuple[ConflictGroup, ...]
    conflict_of: Mapping[int, ConflictGroup]
    vocabulary: Vocabularies
    missing: tuple[MissingVectors, ...] = ()
    examples: CatalogExamples = CatalogExamples()
    # Keywords of the skills' example requests, a field scored on its own (None: no examples).
    example_bm25: BM25Index | None = None
    # One per dense retriever whose encoder has example vectors (same order; none at ANN scale).
    example_retrievers: tuple[ExampleRetriever, ...] = ()

    @cached_property
    def example_share(self) -> float:
        """The share of skills with example requests (asked on every route: it picks the model)."""
        return self.examples.skills / len(self.skills) if self.skills else 0.0

    @cached_property
    def bm25(self) -> BM25Retriever | None:
        """The keyword retriever (its IDF weighs redirect cases, its list confirms a fast route)."""
        return next((r for r in self.retrievers if isinstance(r, BM25Retriever)), None)

    @cached_property
    def dense(self) -> tuple[DenseRetriever, ...]:
        """The encoders' retrievers, in the configured order (feedback matches by their vectors)."""
        return tuple(r for r in self.retrievers if isinstance(r, DenseRetriever))

    @cached_property
    def described(self) -> BM25Index:
        """Keywords over every skill's name and description, for search's keyword floor (built
        on first use, once per catalog)."""
        return BM25Index([described_terms(s.name, s.skill.description) for s in self.skills])

    @cached_property
    def redirects(self) -> Redirects:
        """The skills' redirects whose targets are installed, weighted by the keyword index's IDF
        (built on first use, once per catalog)."""
        bm25 = self.bm25
        return Redirects(self.skills, (lambda term: bm25.index.ceiling([term])) if bm25 else (lambda term: 1.0))

    @property
    def nearest_neighbours(self) -> bool:
        """Whether the dense retrievers take their candidates from the store's HNSW index
        (``index.annAbove``) instead of scoring every skill."""
        return any(isinstance(r, AnnRetriever) for r in self.dense)

    @staticmethod
    def root_ids(roots: Sequence[str]) -> list[str]:
        """``roots`` (folders) named as the store names them."""
        return sorted({root_id(Path(r)) for r in roots})

    @cached_property
    def _root_codes(self) -> tuple[list[str], np.ndarray]:
        """The distinct roots, and each skill's root as a position in them (once per catalog)."""
        names = sorted({s.skill.root for s in self.skills})
        position = {name: n for n, name in enumerate(names)}
        return names, np.array([position[s.skill.root] for s in self.skills], dtype=np.int64)

    def under(self, roots: Sequence[str]) -> np.ndarray:
        """Which skills were indexed under one of ``roots`` (folders), as a mask. Asked on every
        route a host limits to its folders, so it compares root codes, not each skill's root."""
        wanted = set(self.root_ids(roots))
        names, codes = self._root_codes
        return np.isin(codes, [n for n, name in enumerate(names) if name in wanted])


def spaces(encoders: Sequence[Encoder]) -> list[str]:
    """The vector spaces a snapshot must hold for ``encoders``."""
    return [vector_space(encoder, EMBEDDING) for encoder in encoders]


def build_catalog(
    snapshot: Snapshot,
    encoders: Callable[[], Sequence[Encoder]],
    settings: Settings,
    search: VectorSearch | None = None,
    examples: ExampleStore | None = None,
) -> Catalog:
    """The catalog of ``snapshot`` (see the module docstring). ``encoders`` is asked for the
    models only once the keyword parts are built, so they can be loading meanwhile. With
    ``search`` (the store, when the catalog is above ``index.annAbove``: ``snapshot`` then holds
    no vectors) the dense retrievers search it. ``examples``: the home's example requests."""
    skills = assign_ids(list(snapshot.skills))
    generation = examples.generation() if examples is not None else -1
    sets = example_sets(skills, examples)
    requests = tuple(sets[s.skill.content_hash].requests if s.skill.content_hash in sets else () for s in skills)
    made_by = tuple(sets[s.skill.content_hash].model if s.skill.content_hash in sets else "" for s in skills)
    fast = FastMatcher(skills) if settings.enable_keyword else None
    example_bm25 = BM25Index(example_terms(requests)) if settings.enable_keyword and any(requests) else None
    vocabulary = Vocabularies(skills)
    missing: list[MissingVectors] = []

    @cache
    def embedded() -> tuple[list[Encoder], tuple[Embedded, ...]]:
        # Asked by the first factory that needs vectors, so the keyword parts build while the
        # models load; reported in ``missing`` once.
        loaded = list(encoders())
        found = _embedded(snapshot, loaded, skills, search, missing)
        return loaded, found

    retrievers = build_retrievers(RetrieverSources(tuple(skills), settings, lambda: embedded()[1]))
    loaded, found = embedded()
    # Each used encoder's per-skill vectors, read for conflict groups only if the index stores none.
    read = [(e.encoder.dim, e.vectors) for e in found if e.search is None]
    example_retrievers = _example_retrievers(found, skills, sets, examples)
    conflicts = _conflict_groups(
        snapshot.conflicts,
        skills,
        (lambda: [_descriptions(dim, vectors) for dim, vectors in read]) if search is None else None,
        spaces(loaded),
        settings,
    )
    unmet = tuple(unmet_preconditions(s.fingerprint.preconditions) if settings.preconditions else () for s in skills)
    multipliers = np.array(
        [
            trust_multiplier(trust_tier(s, settings.trust_tiers)) * (UNMET_PRECONDITION_MULTIPLIER if u else 1.0)
            for s, u in zip(skills, unmet, strict=True)
        ]
    )
    return Catalog(
        generation=snapshot.generation,
        skills=tuple(skills),
        fast=fast,
        retrievers=tuple(retrievers),
        multipliers=multipliers,
        unmet=unmet,
        conflicts=tuple(conflicts),
        conflict_of=group_of(conflicts),
        vocabulary=vocabulary,
        missing=tuple(missing),
        examples=CatalogExamples(requests, made_by, generation),
        example_bm25=example_bm25,
        example_retrievers=example_retrievers,
    )


def example_terms(requests: Sequence[Sequence[str]]) -> list[list[str]]:
    """Each skill's example requests as one BM25 document (empty for a skill without)."""
    read: dict[str, list[str]] = {}
    documents = []
    for asked in requests:
        terms: list[str] = []
        for request in asked:
            known = read.get(request)
            if known is None:
                known = read[request] = tokenize(request)
            terms.extend(known)
        documents.append(terms)
    return documents


def _example_retrievers(
    embedded: Sequence[Embedded],
    skills: Sequence[IndexedSkill],
    sets: Mapping[str, ExampleSet],
    store: ExampleStore | None,
) -> tuple[ExampleRetriever, ...]:
    """One example retriever per encoder with vectors in memory that has vectors of some skill's
    examples (a set not embedded yet counts by its words only until ``index`` embeds it; none
    above ``index.annAbove``, where the store searches the vectors)."""
    if store is None or not sets:
        return ()
    retrievers = []
    for found in embedded:
        if found.search is not None:
            continue
        encoder = found.encoder
        stored = store.vectors(encoder.name, sets.values())
        empty = np.zeros((0, encoder.dim), dtype=np.float32)
        vectors = [stored.get(s.skill.content_hash, empty) for s in skills]
        if any(len(v) for v in vectors):
            retrievers.append(ExampleRetriever(encoder, vectors))
    return tuple(retrievers)


def _embedded(
    snapshot: Snapshot,
    encoders: Sequence[Encoder],
    skills: Sequence[IndexedSkill],
    search: VectorSearch | None,
    missing: list[MissingVectors],
) -> tuple[Embedded, ...]:
    """Each encoder's vectors of ``skills`` (from the snapshot, or searched by the store), leaving
    out an encoder that has none; every skill without vectors is noted in ``missing``."""
    found: list[Embedded] = []
    for encoder, space in zip(encoders, spaces(encoders), strict=True):
        if search is not None:
            keys = tuple((s.skill.root, s.key) for s in skills)
            lacking = len(set(keys) - search.vector_keys(space))
            if lacking:
                missing.append(MissingVectors(encoder.name, lacking, len(skills)))
            if lacking < len(skills):
                found.append(Embedded(encoder, space, search=search, keys=keys))
            continue
        stored = snapshot.vectors.get(space, {})
        empty = np.zeros((0, encoder.dim), dtype=np.float32)
        vectors = tuple(stored.get((s.skill.root, s.key), empty) for s in skills)
        lacking = sum(1 for v in vectors if not len(v))
        if lacking:
            missing.append(MissingVectors(encoder.name, lacking, len(skills)))
            if lacking == len(skills):
                continue
        found.append(Embedded(encoder, space, vectors))
    return tuple(found)


def _descriptions(dim: int, vectors: Sequence[np.ndarray]) -> np.ndarray:
    """Each skill's part 0, "name: description" (``EMBEDDING``): what a skill is for. A skill
    without vectors is like nothing (a zero row) and so in no conflict by meaning."""
    if not vectors:
        return np.zeros((0, dim), dtype=np.float32)
    return np.stack([v[0] if len(v) else np.zeros(dim, dtype=np.float32) for v in vectors])


def _conflict_groups(
    graph: ConflictGraph | None,
    skills: list[IndexedSkill],
    descriptions: Callable[[], list[np.ndarray]] | None,
    vector_spaces: Sequence[str],
    settings: Settings,
) -> list[ConflictGroup]:
    """The groups the index stored for these skills and settings, else computed here (an index
    built with another threshold or models, or before conflict graphs were stored) from the
    ``descriptions`` (read only then; None: the vectors are not in memory, so no groups until a
    re-index)."""
    if not vector_spaces:
        return []
    threshold = settings.conflict_threshold
    config = conflict_config(vector_spaces, threshold)
    stored = groups_from(graph, skills) if graph is not None and graph.config == config else None
    if stored is not None:
        return stored
    if descriptions is None:
        log.warning("no conflict groups: the index stores none for these settings; run `skillpilot reindex`")
        return []
    log.info("conflict groups computed at load (O(N^2)); `skillpilot reindex` stores them in the index")
    with single_threaded_blas():
        return detect_conflicts(skills, descriptions(), threshold)
