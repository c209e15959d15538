"""Rank: one message against one catalog, every retriever asked once, one frozen ranking out.

Input: a :class:`~skillpilot.catalog.Catalog`, the message read once
(:class:`~skillpilot.text.Query`), the fusion weights (by whether every model reads the
message), the feedback model (or None) and a
function that reads the message with some dense retrievers (their vectors and scores).
Output: a :class:`Ranking`: every retriever's full-catalog score list (keyed by
:class:`~skillpilot.model.RetrieverId`), the fast path's hits (matched once), the query vectors,
the authors' :class:`~skillpilot.model.Redirection` (``skillpilot.redirects``), the feedback
:class:`~skillpilot.model.Adjustment`, which path answered, and the fused
:class:`~skillpilot.model.Candidate` s best first. Nothing in it is changed after it is built.

The fast path (:func:`~skillpilot.retrieve.fast.routes_at_once`): when one skill's trigger
phrase is in the message and the keyword ranking agrees, the retrievers that use a model are
not asked (method ``fast``); else they are, the dense ones that read the message included
(``hybrid`` when a keyword matched too, ``semantic`` when only meaning did). The lists keep the
catalog's order of retrievers, the fast path's first. Feedback examples are matched by meaning,
so a fast route is encoded anyway when there are examples, and a route feedback moved is
``hybrid``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .catalog import Catalog
from .feedback import Learned
from .fuse import Race, fuse, top_order
from .model import (
    BM25,
    EXAMPLES_BM25,
    FAST,
    Adjustment,
    Candidate,
    FastHit,
    Method,
    Redirection,
    RetrieverId,
    dense_id,
)
from .redirects import redirection, targets
from .retrieve import Retriever
from .retrieve.ann import DEPTH, AnnRetriever
from .retrieve.dense import DenseRetriever
from .retrieve.fast import EVIDENCE_SCORE, routes_at_once
from .text import Query

# Each given retriever's reading of the message (``DenseRetriever.read``: its vector and scores), in
# their order.
QueryReader = Callable[[Query, Sequence[DenseRetriever]], list[tuple[np.ndarray, np.ndarray | None]]]


@dataclass(frozen=True)
class Scores:
    """Every retriever's opinion of one message, before feedback and fusion. ``matches`` is
    every fast-path match however weak (the conflict resolver reads prefer_when words);
    ``fast_hits`` those strong enough to count as evidence (a score list of their own).
    ``race`` limits the pool to some skills (the allowed ones, or the nearest-neighbour
    candidates; a nearest-neighbour retriever's list scores -1 outside them); None: every skill."""

    lists: Mapping[RetrieverId, np.ndarray]
    matches: tuple[FastHit, ...]
    fast_hits: tuple[FastHit, ...]
    method: Method
    query_vectors: Mapping[str, np.ndarray]
    race: Race | None = None


@dataclass(frozen=True)
class Ranking:
    """One message ranked: the scores, feedback's adjustment, the fused candidates and the
    authors' redirects that moved them."""

    query: Query
    scores: Scores
    method: Method
    learned: Adjustment | None
    candidates: tuple[Candidate, ...]
    # The fused candidates without feedback's multipliers, when feedback moved something.
    unadjusted: tuple[Candidate, ...] = ()
    redirected: Redirection | None = None
    # Per skill, the relevance multiplier fusion applied: trust tier x unmet preconditions x
    # redirects x feedback (empty for an empty catalog).
    multipliers: np.ndarray = field(default_factory=lambda: np.ones(0))
    # Whether every model of the catalog reads the message (the multilingual one alone reads a
    # Chinese or Japanese one): which fusion weights ordered it.
    every_model_reads: bool = True

    @property
    def lists(self) -> Mapping[RetrieverId, np.ndarray]:
        return self.scores.lists


def score(
    catalog: Catalog,
    query: Query,
    read: QueryReader,
    allowed: np.ndarray | None = None,
    roots: Sequence[str] | None = None,
) -> Scores:
    """Every retriever's score for every skill (catalog order) and which path answered.
    ``allowed`` (a mask over the catalog: the skills under ``roots``, named as the store names
    them) keeps other skills out of the race, their trigger phrases off the fast path included."""
    size = len(catalog.skills)
    matches = tuple(catalog.fast.match(query)) if catalog.fast else ()
    fast_hits = tuple(h for h in matches if h.score >= EVIDENCE_SCORE and (allowed is None or allowed[h.index]))
    lists: dict[RetrieverId, np.ndarray] = {}
    vectors: dict[str, np.ndarray] = {}
    if fast_hits:
        fast = np.zeros(size)
        for hit in fast_hits:
            fast[hit.index] = max(fast[hit.index], hit.score)
        lists[FAST] = fast
    modelled: list[Retriever] = []
    for retriever in catalog.retrievers:
        if getattr(retriever, "uses_model", False):
            modelled.append(retriever)
        else:
            lists[retriever.id] = retriever.scores(query)
    if catalog.example_bm25 is not None:
        lists[EXAMPLES_BM25] = catalog.example_bm25.scores(query.terms)
    race = Race(allowed) if allowed is not None and not allowed.all() else None
    method: Method
    if routes_at_once(fast_hits, lists.get(BM25)):
        method = "fast"
    else:
        readers = [r for r in modelled if isinstance(r, DenseRetriever) and r.reads(query)]
        read_by = dict(zip(readers, read(query, readers), strict=True))
        nearest: list[tuple[AnnRetriever, np.ndarray]] = []
        for retriever in modelled:
            if not isinstance(retriever, DenseRetriever):
                lists[retriever.id] = retriever.scores(query)
                continue
            if retriever not in read_by:
                continue
            vector, scores = read_by[retriever]
            vectors[retriever.encoder.name] = vector
            if isinstance(retriever, AnnRetriever):
                nearest.append((retriever, vector))
            elif scores is not None:
                lists[retriever.id] = scores
        for examples in catalog.example_retrievers:
            # A skill's example requests are parts of its meaning (the dense list takes the best of
            # its texts) and, apart, their own list, so the decision can tell what matched.
            dense = dense_id(examples.encoder.name)
            author = lists.get(dense)
            if author is not None and examples.encoder.name in vectors:
                lists[examples.id], lists[dense] = examples.scores_for(vectors[examples.encoder.name], author)
        keyword_found = bool(fast_hits) or any(_matched(name, scores) for name, scores in lists.items())
        if nearest:
            race = _nearest_race(size, lists, nearest, allowed, roots)
        method = ("hybrid" if keyword_found else "semantic") if modelled else "fast"
    return Scores(lists, matches, fast_hits, method, vectors, race)


def _matched(name: RetrieverId, scores: np.ndarray) -> bool:
    """Whether a keyword list (not ``dense``) found the message's words in some skill."""
    return not name.is_dense and name != FAST and bool((scores > 0).any())


def _nearest_race(
    size: int,
    lists: dict[RetrieverId, np.ndarray],
    nearest: Sequence[tuple[AnnRetriever, np.ndarray]],
    allowed: np.ndarray | None,
    roots: Sequence[str] | None,
) -> Race:
    """The race of a catalog too large to score whole: each nearest-neighbour retriever's
    candidates and the keyword lists' best ``DEPTH`` (allowed ones only). Every candidate gets
    its exact score from every retriever (the nearest-neighbour lists, added to ``lists``, score
    -1 elsewhere, and their z-scores use the spread estimated on the sample); a nearest-neighbour
    retriever votes in RRF only for what it found, as in exact fusion a retriever's votes beyond
    its best few hundred barely count."""
    found = {retriever.id: retriever.nearest(vector, roots) for retriever, vector in nearest}
    keyword = []
    for scores in lists.values():
        best = top_order(scores, DEPTH)
        keyword.append(best[scores[best] > 0])
    positions = np.unique(np.concatenate([*found.values(), *keyword]).astype(np.int64))
    eligible = np.zeros(size, dtype=bool)
    eligible[positions] = True
    if allowed is not None:
        eligible &= allowed
    voters: dict[RetrieverId, np.ndarray] = {}
    spread: dict[RetrieverId, tuple[float, float]] = {}
    for retriever, vector in nearest:
        full = np.full(size, -1.0, dtype=np.float32)
        full[positions] = retriever.scores_at(vector, positions)
        lists[retriever.id] = full
        votes = np.zeros(size, dtype=bool)
        votes[found[retriever.id]] = True
        voters[retriever.id] = votes
        spread[retriever.id] = retriever.spread(vector)
    return Race(eligible, voters, spread)


def rank(
    catalog: Catalog,
    query: Query,
    weights_for: Callable[[bool], Mapping[str, float]],
    learned: Learned | None,
    read: QueryReader,
    allowed: np.ndarray | None = None,
    roots: Sequence[str] | None = None,
) -> Ranking:
    """``query`` ranked over ``catalog`` (see the module docstring), fused with
    ``weights_for(every model of the catalog reads it)``; with ``allowed`` (a mask over the
    catalog: the skills under ``roots``) only those skills enter the pool, ranked and z-scored
    among the whole catalog."""
    if not catalog.skills:
        return Ranking(query, Scores({}, (), (), "no-match", {}), "no-match", None, ())
    every_model_reads = all(r.reads(query) for r in catalog.dense)
    weights = weights_for(every_model_reads)
    scores = score(catalog, query, read, allowed, roots)
    race = scores.race
    method = scores.method
    static = catalog.multipliers
    redirected = redirection(
        catalog.redirects,
        query,
        lambda: fuse(scores.lists, weights, static),
        scores.fast_hits,
        len(catalog.skills),
        allowed,
    )
    multipliers = static * np.exp(redirected.log_multipliers) if redirected else static
    adjustment: Adjustment | None = None
    unadjusted: tuple[Candidate, ...] = ()
    if learned is not None:
        vectors = scores.query_vectors
        if learned.has_examples and not vectors:
            # The fast path skipped the models; feedback examples are matched by meaning.
            vectors = {r.encoder.name: r.encode(query.text) for r in catalog.dense if r.reads(query)}
            scores = Scores(scores.lists, scores.matches, scores.fast_hits, scores.method, vectors, race)
        adjustment = learned.adjust(vectors, query.text)
        if adjustment.moves:
            unadjusted = tuple(fuse(scores.lists, weights, multipliers, race=race))
        if adjustment.matches and method == "fast":
            method = "hybrid"
        multipliers = multipliers * np.exp(adjustment.log_multipliers)
    candidates = fuse(scores.lists, weights, multipliers, race=race)
    chosen = (adjustment.chosen() if adjustment else set()) | targets(redirected)
    if adjustment is not None and adjustment.pinned is not None:
        chosen.add(adjustment.pinned)
    if chosen - {c.index for c in candidates}:
        # A skill users chose for messages like this one, or an author sent it to, joins the
        # race even when the retrievers left it out of the pool; fusion orders it like any other.
        keep = {c.index for c in candidates} | chosen
        everyone = fuse(scores.lists, weights, multipliers, pool=len(catalog.skills), race=race)
        candidates = [c for c in everyone if c.index in keep]
    if not candidates:
        method = "no-match"
    return Ranking(
        query, scores, method, adjustment, tuple(candidates), unadjusted, redirected, multipliers, every_model_reads
    )
