"""The routing methods a benchmark run puts side by side, all behind one small Protocol.

Input: a :class:`~skillpilot.bench.suites.Catalog` (built once per run) and one
:class:`~skillpilot.bench.suites.Query` at a time. Output: a :class:`Ranking` per query: up to
``RANK_DEPTH`` catalog keys best first, whether the method passes the message through to the LLM,
and the keys whose descriptions it would put into the prompt.

Built-in methods (``METHODS``):

- ``skillpilot``          the full router (fast path + BM25 + dense, fused and calibrated);
- ``skillpilot-keyword``  the same router with ``enable_semantic=False``;
- ``dense``               the same router with ``enable_keyword=False`` (same encoders);
- ``bm25``                plain Okapi BM25 (bm25s, Lucene variant, k1=1.5, b=0.75) over name +
                          description, with bm25s' English stop words and Snowball stemmer;
- ``semantic-router``     the peer, aurelio-labs semantic-router 1.x ``IndexedRouter``: one route
                          per skill whose one utterance is the description (with ``--examples``,
                          its example requests too), embedded by the same encoders through a
                          ``DenseEncoder`` subclass, calibrated with its ``fit()`` and routed at
                          its documented ``confidence_threshold = 0.5``.

Guarantees: no method reaches the network or an LLM; every method is deterministic for a given
catalog, query set and seed; a new method is a class with ``name``, ``config``, ``build`` and
``rank`` plus one line in ``METHODS``.
"""

from __future__ import annotations

import logging
import random
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..config import Settings
from ..errors import BenchError, MissingExtraError
from .suites import Catalog, Query

if TYPE_CHECKING:
    from ..encoders import Encoder

log = logging.getLogger(__name__)

# Every method's ranking is cut here, so MRR means the same for all of them (MRR@5): the router
# returns its pick plus four alternatives.
RANK_DEPTH = 5
# A soft decision offers the LLM the top skill and its closest alternatives, at most this many.
SOFT_INJECT = 3
# semantic-router's README: after fit(), "act only when it's more likely right than wrong".
SEMANTIC_ROUTER_THRESHOLD = 0.5
# Folds for cross-fitting semantic-router's calibrator: each query is routed with a calibrator
# fitted on the other folds only, as its docs ask ("labelled queries the router hasn't seen").
SEMANTIC_ROUTER_FOLDS = 2
# A per-call threshold below every score: semantic-router then ranks all routes (raw cosines,
# which can be negative, when uncalibrated).
_EVERY_SCORE = float("-inf")


@dataclass(frozen=True)
class Ranking:
    """One method's answer to one query."""

    keys: tuple[str, ...]
    passthrough: bool
    injected: tuple[str, ...]


@dataclass(frozen=True)
class MethodOptions:
    """What the command line fixes for every method of a run. ``examples``: a file of example
    requests (``{key: [requests]}``) that SkillPilot imports after indexing (``enrich --import``)
    and semantic-router takes as more utterances of each route."""

    encoder: str = Settings.embed_provider
    seed: int = 0
    examples: Path | None = None


def read_examples(options: MethodOptions) -> dict[str, tuple[str, ...]]:
    """The run's example requests by key (none without ``--examples``)."""
    from ..examples import read_examples_file

    return read_examples_file(options.examples).requests if options.examples is not None else {}


class Method(Protocol):
    """A router under test. ``build`` is timed as index build time, ``rank`` per query.

    ``queries`` are the run's labelled queries: a method may fit itself on them only if it never
    ranks a query with what it learnt from that query's own label (semantic-router cross-fits).
    ``config`` states every setting the method ran with, for the results file.
    """

    name: str

    @property
    def config(self) -> Mapping[str, Any]: ...

    def build(self, catalog: Catalog, queries: Sequence[Query]) -> None: ...

    def rank(self, query: Query) -> Ranking: ...


def _depth(keys: Sequence[str]) -> tuple[str, ...]:
    return tuple(keys[:RANK_DEPTH])


class SkillPilotMethod:
    """SkillPilot itself, in a fresh home, preconditions and feedback off, fixed overrides."""

    def __init__(self, name: str, options: MethodOptions, **overrides: Any) -> None:
        self.name = name
        self._examples = options.examples
        self._overrides: dict[str, Any] = {
            "preconditions": False,
            "feedback_enabled": False,
            "embed_provider": options.encoder,
            **overrides,
        }
        self._home: tempfile.TemporaryDirectory[str] | None = None
        self._pilot: Any = None

    @property
    def config(self) -> Mapping[str, Any]:
        examples = {"examples": str(self._examples)} if self._examples is not None else {}
        if self._pilot is None:
            return {**self._overrides, **examples}
        settings = self._pilot.settings
        return {
            **self._overrides,
            **examples,
            "hard_threshold": settings.hard_threshold,
            "soft_threshold": settings.soft_threshold,
            "encoders": [e.name for e in self._pilot.encoders],
        }

    def build(self, catalog: Catalog, queries: Sequence[Query]) -> None:
        from ..router import SkillPilot

        self._home = tempfile.TemporaryDirectory(prefix="skillpilot-bench-")
        # A scratch index: never the configured store (index.store / SKILLPILOT_STORE).
        self._pilot = SkillPilot(home=Path(self._home.name), store="", **self._overrides)
        self._pilot.index([catalog.root], replace=True)
        if self._examples is not None:
            self._pilot.import_examples(self._examples)

    def rank(self, query: Query) -> Ranking:
        result = self._pilot.route(query.query)
        keys = ([result.skill.key] if result.skill is not None else []) + [a.key for a in result.alternatives]
        injected: Sequence[str] = ()
        if result.decision == "hard":
            injected = keys[:1]
        elif result.decision == "soft":
            injected = keys[:SOFT_INJECT]
        return Ranking(_depth(keys), result.decision == "passthrough", tuple(injected))


class BM25Method:
    """Plain BM25 over ``name + description``: pass-through when no query term is in the catalog."""

    name = "bm25"

    def __init__(self) -> None:
        self._keys: list[str] = []
        self._retriever: Any = None
        self._stemmer: Any = None

    @property
    def config(self) -> Mapping[str, Any]:
        return {
            "library": "bm25s",
            "method": "lucene",
            "k1": 1.5,
            "b": 0.75,
            "fields": "name description",
            "stopwords": "en",
            "stemmer": "english (PyStemmer)",
        }

    def build(self, catalog: Catalog, queries: Sequence[Query]) -> None:
        try:
            import bm25s
        except ImportError as exc:
            raise MissingExtraError("bench", "the BM25 baseline", "bm25s") from exc
        import Stemmer

        self._stemmer = Stemmer.Stemmer("english")
        self._keys = [e.key for e in catalog.entries]
        corpus = [f"{e.name} {e.description}" for e in catalog.entries]
        tokens = bm25s.tokenize(corpus, stopwords="en", stemmer=self._stemmer, show_progress=False)
        self._retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        self._retriever.index(tokens, show_progress=False)

    def rank(self, query: Query) -> Ranking:
        import bm25s

        terms = bm25s.tokenize(
            [query.query], stopwords="en", stemmer=self._stemmer, show_progress=False, return_ids=False
        )[0]
        scores = np.asarray(self._retriever.get_scores(terms), dtype=np.float64)
        # Stable order on ties (catalog order), so reruns give the same ranking.
        order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0]
        keys = _depth([self._keys[i] for i in order])
        return Ranking(keys, not keys, keys[:1])


def _dense_encoder_class() -> type:
    """A semantic-router ``DenseEncoder`` over SkillPilot encoders (built lazily: optional extra)."""
    try:
        from semantic_router.encoders import DenseEncoder
    except ImportError as exc:
        raise MissingExtraError("bench", "the semantic-router baseline", "semantic_router") from exc

    class SkillPilotDenseEncoder(DenseEncoder):
        """Unit vectors of every SkillPilot encoder, concatenated and scaled by 1/sqrt(m).

        The result is a unit vector whose cosine with another is the mean of the m encoders'
        cosines, so semantic-router sees the same models SkillPilot fuses, in its one-vector form.
        """

        encoders: list[Any]

        def __call__(self, docs: list[Any]) -> list[list[float]]:
            texts = [str(d) for d in docs]
            parts = [np.asarray(e.encode_batch(texts), dtype=np.float64) for e in self.encoders]
            joined = np.concatenate(parts, axis=1) / np.sqrt(len(parts))
            return [[float(x) for x in row] for row in joined]

    return SkillPilotDenseEncoder


def local_encoders(spec: str) -> list[Encoder]:
    """SkillPilot's encoders for an ``embed_provider`` spec (``"minilm+use-multilingual"``)."""
    from ..encoders import get_encoder

    settings = Settings().with_overrides(embed_provider=spec)
    return [get_encoder(s, settings) for s in settings.encoder_specs]


class SemanticRouterMethod:
    """The peer: semantic-router ``IndexedRouter``, one route per skill from its description."""

    name = "semantic-router"

    def __init__(
        self,
        encoders: Sequence[Encoder],
        encoder_spec: str,
        seed: int,
        examples: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self._encoders = list(encoders)
        self._spec = encoder_spec
        self._seed = seed
        self._examples = dict(examples or {})
        self._router: Any = None
        self._fold: dict[str, int] = {}
        # One calibrator per fold (fitted on the other folds); None when a fold's training
        # queries were all right or all wrong, which calibration cannot fit.
        self._calibrators: list[Any] = []
        self.fit_notes: list[str] = []

    @property
    def config(self) -> Mapping[str, Any]:
        import semantic_router

        return {
            "version": semantic_router.__version__,
            "router": f"IndexedRouter(top_k={RANK_DEPTH}, aggregation='mean')",
            "route": "one per skill, utterances=[description]"
            + (" + its example requests" if self._examples else "")
            + ", description=description",
            "encoder": f"{self._spec} via a DenseEncoder subclass",
            "encoders": [e.name for e in self._encoders],
            "calibration": (f"fit(method='platt'), {SEMANTIC_ROUTER_FOLDS}-fold cross-fitted, seed {self._seed}"),
            "confidence_threshold": SEMANTIC_ROUTER_THRESHOLD,
            "fit_notes": list(self.fit_notes),
        }

    def build(self, catalog: Catalog, queries: Sequence[Query]) -> None:
        try:
            from semantic_router import IndexedRouter, Route
        except ImportError as exc:
            raise MissingExtraError("bench", "the semantic-router baseline", "semantic_router") from exc

        encoder = _dense_encoder_class()(name=f"skillpilot:{self._spec}", encoders=self._encoders)
        routes = [
            Route(name=e.key, utterances=[e.description, *self._examples.get(e.key, ())], description=e.description)
            for e in catalog.entries
        ]
        self._router = IndexedRouter(encoder=encoder, routes=routes, top_k=RANK_DEPTH)
        self._fit(queries)

    def _fit(self, queries: Sequence[Query]) -> None:
        self._fold = _folds(queries, SEMANTIC_ROUTER_FOLDS, self._seed)
        # A query with several acceptable skills is labelled with the one the router ranks
        # first when that one is acceptable, so fit() counts it as right, as the metrics do.
        top = {q.id: self._top(q.query) for q in queries}
        self._calibrators = []
        for fold in range(SEMANTIC_ROUTER_FOLDS):
            train = [q for q in queries if self._fold[q.id] != fold]
            x = [q.query for q in train]
            y = [(top[q.id] if top[q.id] in q.expected else q.expected[0]) if q.expected else None for q in train]
            self._router.calibrator = None
            try:
                report = self._router.fit(x, y)
            except ValueError as exc:
                self.fit_notes.append(f"fold {fold}: not calibrated ({exc}); no pass-through")
                self._calibrators.append(None)
                continue
            self.fit_notes.append(
                f"fold {fold}: fitted on {report.n} queries, accuracy {report.accuracy:.3f}, ECE {report.ece:.3f}"
            )
            self._calibrators.append(self._router.calibrator)

    def _top(self, text: str) -> str | None:
        choice = self._router(text, limit=1, threshold=_EVERY_SCORE)
        return str(choice.name) if choice.name is not None else None

    def rank(self, query: Query) -> Ranking:
        calibrator = self._calibrators[self._fold.get(query.id, 0)]
        self._router.calibrator = calibrator
        self._router.confidence_threshold = None if calibrator is None else SEMANTIC_ROUTER_THRESHOLD
        # A -inf threshold lists every scored route; the router's own answer (limit=1, its
        # threshold) is the first of them when its confidence clears the bar, else none.
        choices = self._router(query.query, limit=RANK_DEPTH, threshold=_EVERY_SCORE)
        keys = tuple(str(c.name) for c in choices)
        bar = self._router.confidence_threshold
        passthrough = not choices or (bar is not None and float(choices[0].confidence) < bar)
        return Ranking(keys, passthrough, () if passthrough else keys[:1])


def _folds(queries: Sequence[Query], folds: int, seed: int) -> dict[str, int]:
    """A seeded fold per query id, stratified by kind so each fold sees every kind."""
    rng = random.Random(seed)
    assignment: dict[str, int] = {}
    for kind in sorted({q.kind for q in queries}):
        ids = sorted(q.id for q in queries if q.kind == kind)
        rng.shuffle(ids)
        for i, qid in enumerate(ids):
            assignment[qid] = i % folds
    return assignment


MethodFactory = Callable[[MethodOptions], Method]

METHODS: dict[str, MethodFactory] = {
    "skillpilot": lambda o: SkillPilotMethod("skillpilot", o),
    "skillpilot-keyword": lambda o: SkillPilotMethod("skillpilot-keyword", o, enable_semantic=False),
    "dense": lambda o: SkillPilotMethod("dense", o, enable_keyword=False),
    "bm25": lambda o: BM25Method(),
    "semantic-router": lambda o: SemanticRouterMethod(local_encoders(o.encoder), o.encoder, o.seed, read_examples(o)),
}


def make_method(name: str, options: MethodOptions) -> Method:
    """Build a registered method by name."""
    factory = METHODS.get(name)
    if factory is None:
        raise BenchError(f"unknown method {name!r}; choose from {', '.join(METHODS)}")
    return factory(options)
