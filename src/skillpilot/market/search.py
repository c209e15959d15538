"""``Market``: public search, related skills and near-duplicates over one SkillPilot index.

    catalog  listings from frontmatter + the catalog file         -> Listing, Profile
    views    public projection / private view                      -> PublicSkill, PrivateView
    recall   BM25 over public text, cosine over public vectors     -> full-catalog score lists
    fuse     Reciprocal Rank Fusion (skillpilot.fuse.rrf_scores)   -> candidate pool, relevance
    rank     relevance + quality, popularity, recency, trust       -> Ranked (related: + MMR)
    dedup    copies found on the private view, folded in any list  -> DuplicateCluster
    hydrate  the shown skills re-read from the store               -> MarketHit

Public retrieval reads only the public projection of every skill: BM25 indexes
:func:`~skillpilot.market.views.public_text`, and the dense side uses each skill's stored
``name: description`` vector (the first part every index embeds, see
``skillpilot.retrieve.dense``), never the body parts. So the same query finds the same skills
whether or not their instructions are private, and no recommendation rests on hidden text.

Guarantees: every list holds at most one member of a near-duplicate cluster (the best-ranked;
the others are named in its ``duplicates``); a candidate whose public similarity to the query is
below the profile's ``min_similarity`` is not shown (half of it for a search's keyword
matches; none for a one-to-three-word search that its name or description mentions in full,
the same keyword floor installed search has), so a short list beats filler; the shown skills
are re-read from the store (``SkillStore.fetch``) after ranking, and one deleted meanwhile is
dropped. State is cached per index generation and catalog-file modification time and size.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..fuse import catalog_ranks, rrf_scores
from ..index.builder import vector_space
from ..model import BM25, TRUST_TIERS, IndexedSkill, RetrieverId
from ..retrieve.bm25 import BM25Index
from ..retrieve.dense import EMBEDDING, DenseRetriever
from ..retrieve.keywords import described_terms, keyword_terms
from ..router import SkillPilot
from ..text import Query, tokenize
from .catalog import CATALOG_FILE, CatalogFile, Listing, Profile, listing_of, read_catalog_file
from .dedup import DuplicateCluster, find_duplicates
from .rank import Ranked, explain, mmr, relevance_of, score, signals_of
from .views import PublicSkill, private_view, public_projection, public_text


@dataclass(frozen=True)
class SearchFilters:
    """Hard constraints on a list: skills to leave out, categories and trust tiers to keep."""

    exclude_ids: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    trust_tiers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = sorted(set(self.trust_tiers) - set(TRUST_TIERS))
        if unknown:
            raise ConfigError("filters.trust_tiers", f"{', '.join(unknown)}: use {', '.join(TRUST_TIERS)}")

    def admits(self, skill_id: str, listing: Listing) -> bool:
        return (
            skill_id not in self.exclude_ids
            and (not self.categories or bool(set(self.categories) & set(listing.categories)))
            and (not self.trust_tiers or listing.trust_tier in self.trust_tiers)
        )


@dataclass(frozen=True)
class MarketHit:
    """One public result: the skill's projection, its final score and why it is here."""

    skill: PublicSkill
    score: float
    relevance: float
    similarity: float | None
    signals: dict[str, float]
    explanation: tuple[str, ...]
    duplicates: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _State:
    """Everything public ranking needs, built from one index generation and catalog file."""

    key: tuple[int, tuple[int, int] | None]
    catalog: CatalogFile
    skills: list[IndexedSkill]
    listings: list[Listing]
    public: list[PublicSkill]
    bm25: BM25Index
    described: BM25Index
    heads: list[np.ndarray]
    has_vector: np.ndarray
    dense: list[DenseRetriever]
    position: dict[str, int]
    most_installs: int
    clusters: list[DuplicateCluster] | None = None
    cluster_of: dict[int, int] = field(default_factory=dict)


class Market:
    """Marketplace search over the skills a ``SkillPilot`` has indexed.

    ``catalog`` is the catalog metadata file (default ``$SKILLPILOT_HOME/market.yaml``).
    """

    def __init__(self, pilot: SkillPilot, catalog: Path | None = None) -> None:
        self.pilot = pilot
        self.catalog_path = catalog if catalog is not None else pilot.settings.home / CATALOG_FILE
        self._cached: _State | None = None
        self._lock = threading.Lock()

    # -- state ------------------------------------------------------------------------------
    def _state(self) -> _State:
        # The generation is read first: a write landing in between makes the next call rebuild.
        info = self.catalog_path.stat() if self.catalog_path.is_file() else None
        stamp = (info.st_mtime_ns, info.st_size) if info else None
        key = (self.pilot.store.generation(), stamp)
        skills = self.pilot.skills()
        with self._lock:
            if self._cached is None or self._cached.key != key:
                self._cached = self._build(key, skills)
            return self._cached

    def _build(self, key: tuple[int, tuple[int, int] | None], skills: list[IndexedSkill]) -> _State:
        catalog = read_catalog_file(self.catalog_path)
        listings = [listing_of(s, catalog, self.pilot.settings.trust_tiers) for s in skills]
        public = [public_projection(s, listing) for s, listing in zip(skills, listings, strict=True)]
        heads: list[np.ndarray] = []
        dense: list[DenseRetriever] = []
        has_vector = np.ones(len(skills), dtype=bool)
        for encoder in self.pilot.encoders:
            stored = self.pilot.store.vectors(vector_space(encoder, EMBEDDING))
            none = np.zeros((0, encoder.dim), np.float32)
            rows = [stored.get((s.skill.root, s.key), none)[:1] for s in skills]
            has_vector &= np.array([len(r) == 1 for r in rows], dtype=bool)
            heads.append(
                np.stack([r[0] if len(r) else np.zeros(encoder.dim, np.float32) for r in rows])
                if rows
                else np.zeros((0, encoder.dim), np.float32)
            )
            dense.append(DenseRetriever(encoder, rows))
        return _State(
            key=key,
            catalog=catalog,
            skills=skills,
            listings=listings,
            public=public,
            bm25=BM25Index([tokenize(public_text(p)) for p in public]),
            described=BM25Index([described_terms(p.name, p.description) for p in public]),
            heads=heads,
            has_vector=has_vector if heads else np.zeros(len(skills), dtype=bool),
            dense=dense,
            position={s.id: n for n, s in enumerate(skills)},
            most_installs=max((listing.installs or 0 for listing in listings), default=0),
        )

    def _clusters(self, state: _State) -> list[DuplicateCluster]:
        if state.clusters is None:
            views = [private_view(s, x) for s, x in zip(state.skills, state.listings, strict=True)]
            state.clusters = find_duplicates(views)
            state.cluster_of = {state.position[i]: c.id for c in state.clusters for i in c.ids}
        return state.clusters

    # -- public lists -----------------------------------------------------------------------
    def search(self, query: str, top_k: int = 10, filters: SearchFilters | None = None) -> list[MarketHit]:
        """Public skills for ``query``, best first, near-duplicates folded, at most ``top_k``."""
        state = self._state()
        read = Query.of(query)
        if not read.text.strip() or not state.skills:
            return []
        vectors = [r.encode(read.text) for r in state.dense]
        lists, similarity = self._recall(state, list(read.terms), vectors)
        profile = state.catalog.profile("search")
        # A keyword match ("pgvector") is evidence of its own, so it needs only half the
        # similarity floor; a stray shared word with an unrelated skill (near 0) still fails.
        gate = lists[BM25] > 0
        if similarity is not None:
            floor = profile.min_similarity
            gate = (similarity >= floor) | (gate & (similarity >= floor / 2))
        # One to three words: every skill whose name or description mentions them all, as the
        # installed search's keyword floor (skillpilot.retrieve.keywords) admits them.
        gate |= state.described.mentioning_all(keyword_terms(read))
        pool = self._rank(state, lists, similarity, profile, gate, filters or SearchFilters(), set())
        return self._show(state, self._fold(state, pool)[:top_k], pool)

    def related(self, skill: str, top_k: int = 3) -> list[MarketHit]:
        """Skills to show on ``skill``'s detail page: relevant, diverse (MMR), never a copy of it
        or of each other; fewer than ``top_k`` when too few are similar enough."""
        state = self._state()
        source = state.position[self.pilot.get(skill).id]
        self._clusters(state)
        own = state.cluster_of.get(source, -1)
        excluded = tuple(state.skills[i].id for i, c in state.cluster_of.items() if c == own)
        excluded += (state.skills[source].id,)
        others = np.array([s.id not in excluded for s in state.skills], dtype=bool)
        vectors = [h[source] for h in state.heads] if state.has_vector[source] else []
        lists, similarity = self._recall(state, tokenize(public_text(state.public[source])), vectors)
        profile = state.catalog.profile("related")
        categories = set(state.listings[source].categories)
        if similarity is not None:
            gate = (similarity >= profile.min_similarity) | _stands_out(similarity, others, profile)
        else:
            # Cold start (no vectors for this skill yet): keyword matches and its categories.
            shares = np.array([bool(categories & set(x.categories)) for x in state.listings], dtype=bool)
            gate = (lists[BM25] > 0) | shares
        filters = SearchFilters(exclude_ids=excluded)
        pool = self._rank(state, lists, similarity, profile, gate, filters, categories)
        folded = self._fold(state, pool)
        chosen = mmr(
            [r for r, _ in folded],
            lambda i, j: self._similarity(state, i, j),
            top_k,
            profile.mmr_lambda,
            lambda i: state.skills[i].id,
        )
        duplicates = {r.index: d for r, d in folded}
        return self._show(state, [(r, duplicates[r.index]) for r in chosen], pool)

    def browse(self, top_k: int = 10, filters: SearchFilters | None = None) -> list[MarketHit]:
        """List mode: no query, so skills ordered by their signals alone (search weights)."""
        state = self._state()
        profile = state.catalog.profile("search")
        filters = filters or SearchFilters()
        pool = [
            Ranked(i, 0.0, None, {}, signals_of(listing, profile, time.time(), state.most_installs, False))
            for i, listing in enumerate(state.listings)
            if filters.admits(state.skills[i].id, listing)
        ]
        pool = score(pool, profile)
        return self._show(state, self._fold(state, pool)[:top_k], pool)

    def public(self, skill: str) -> PublicSkill:
        """One skill's public projection, by id, folder key or name."""
        state = self._state()
        return state.public[state.position[self.pilot.get(skill).id]]

    def dedup(self) -> list[DuplicateCluster]:
        """Near-duplicate clusters over the private view (see ``skillpilot.market.dedup``)."""
        return list(self._clusters(self._state()))

    # -- stages -----------------------------------------------------------------------------
    @staticmethod
    def _recall(
        state: _State, terms: list[str], vectors: Sequence[np.ndarray]
    ) -> tuple[dict[RetrieverId, np.ndarray], np.ndarray | None]:
        """Full-catalog score lists (BM25 and one per encoder) and the mean public cosine."""
        lists: dict[RetrieverId, np.ndarray] = {BM25: state.bm25.scores(terms)}
        for retriever, vector in zip(state.dense, vectors, strict=False):
            lists[retriever.id] = retriever.scores_for(vector)
        dense = [lists[r.id] for r in state.dense if r.id in lists]
        return lists, (np.mean(dense, axis=0) if dense else None)

    def _rank(
        self,
        state: _State,
        lists: dict[RetrieverId, np.ndarray],
        similarity: np.ndarray | None,
        profile: Profile,
        gate: np.ndarray,
        filters: SearchFilters,
        categories: set[str],
    ) -> list[Ranked]:
        """RRF picks the pool among admitted skills that pass the gate; the profile orders it."""
        rrf = rrf_scores(lists)
        admitted = np.array(
            [filters.admits(s.id, x) for s, x in zip(state.skills, state.listings, strict=True)], dtype=bool
        )
        ids = np.flatnonzero(gate & admitted & (rrf > 0))
        ids = ids[np.lexsort((ids, -rrf[ids]))][: profile.pool]
        ranks = {name: _ranks(name, scores) for name, scores in lists.items()}
        now = time.time()
        pool = []
        for i in ids.tolist():
            listing = state.listings[i]
            pool.append(
                Ranked(
                    index=i,
                    relevance=relevance_of(float(rrf[i]), len(lists)),
                    similarity=None if similarity is None else round(float(similarity[i]), 4),
                    ranks={str(n): int(r[i]) for n, r in ranks.items() if r[i] > 0},
                    signals=signals_of(
                        listing, profile, now, state.most_installs, bool(categories & set(listing.categories))
                    ),
                )
            )
        return score(pool, profile)

    def _fold(self, state: _State, ranked: Sequence[Ranked]) -> list[tuple[Ranked, tuple[str, ...]]]:
        """Keep the best-ranked member of each near-duplicate cluster; name the others."""
        self._clusters(state)
        kept: list[tuple[Ranked, list[str]]] = []
        seen: dict[int, list[str]] = {}
        for candidate in ranked:
            cluster = state.cluster_of.get(candidate.index)
            if cluster is not None and cluster in seen:
                seen[cluster].append(state.skills[candidate.index].id)
                continue
            folded: list[str] = []
            if cluster is not None:
                seen[cluster] = folded
            kept.append((candidate, folded))
        return [(c, tuple(f)) for c, f in kept]

    @staticmethod
    def _similarity(state: _State, i: int, j: int) -> float:
        return float(np.mean([h[i] @ h[j] for h in state.heads])) if state.heads else 0.0

    def _show(
        self, state: _State, shown: Sequence[tuple[Ranked, tuple[str, ...]]], pool: Sequence[Ranked]
    ) -> list[MarketHit]:
        """Explain, then re-read the shown skills from the store so they carry current data."""
        names = {"bm25": "keywords (BM25)", **{r.name: f"meaning ({r.encoder.name})" for r in state.dense}}
        explain([r for r, _ in shown], pool, state.listings, names)
        skills = [state.skills[r.index] for r, _ in shown]
        stored_now = self.pilot.store.fetch([(s.skill.root, s.key) for s in skills])
        fresh = {(s.skill.root, s.skill.key): s for s in stored_now}
        hits = []
        for (candidate, duplicates), old in zip(shown, skills, strict=True):
            stored = fresh.get((old.skill.root, old.key))
            if stored is None:
                continue
            current = IndexedSkill(old.id, stored.skill, stored.fingerprint, stored.indexed_at)
            notes = list(candidate.notes)
            if duplicates:
                notes.append(f"folded near-duplicates: {', '.join(duplicates)}")
            hits.append(
                MarketHit(
                    skill=public_projection(
                        current, listing_of(current, state.catalog, self.pilot.settings.trust_tiers)
                    ),
                    score=round(candidate.score, 4),
                    relevance=round(candidate.relevance, 4),
                    similarity=candidate.similarity,
                    signals={k: round(v, 4) for k, v in candidate.signals.items()},
                    explanation=tuple(notes),
                    duplicates=duplicates,
                )
            )
        return hits


def _stands_out(similarity: np.ndarray, others: np.ndarray, profile: Profile) -> np.ndarray:
    """Among ``others`` (a mask: not the page's skill nor its copies), the neighbours whose
    similarity stands ``profile.standout`` standard deviations above the page's mean similarity
    to them (``standout_first`` for the nearest), and reaches half ``min_similarity``."""
    if others.sum() < 2 or float(similarity[others].std()) == 0.0:
        return np.zeros(len(similarity), dtype=bool)
    z = (similarity - float(similarity[others].mean())) / float(similarity[others].std())
    nearest = np.zeros(len(similarity), dtype=bool)
    nearest[int(np.argmax(np.where(others, similarity, -np.inf)))] = True
    outlying = (z >= profile.standout) | (nearest & (z >= profile.standout_first))
    return np.asarray(others & outlying & (similarity >= profile.min_similarity / 2), dtype=bool)


def _ranks(retriever: RetrieverId, scores: np.ndarray) -> np.ndarray:
    """1-based rank of every skill in one list (0 where the keyword list has no match)."""
    ranks = catalog_ranks(scores)
    if retriever == BM25:
        ranks[scores <= 0] = 0
    return ranks
