"""The facade: ``SkillPilot`` wires the stages and is the library's public entry point.

    skills/      load SKILL.md folders / tool catalogs        -> Skill
    fingerprint  derive routing signals                        -> Fingerprint
    index/       store them (SQLite) with their vectors        -> IndexedSkill
    retrieve/    fast path (triggers), BM25, dense (per model) -> Hit lists
    fuse         Reciprocal Rank Fusion + multipliers          -> Candidate list
                 (feedback: learned ln-multipliers per message -> Adjustment)
    conflicts    settle a contest inside a conflict group      -> Resolution
    decide       calibrated confidence + thresholds            -> RouteResult
    plan         several requests in one message: each routed  -> RouteResult.plan
    routelog     every decision appended to log.sqlite         -> LogEntry

Everything heavy (the index, the models, the BM25 postings) is loaded once on first use and
reloaded only when the store's generation changes, so a long-lived router stays warm.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from .config import Settings, default_model_cache, load_settings
from .conflicts import (
    ConflictGroup,
    Resolution,
    Vocabularies,
    conflict_config,
    detect_conflicts,
    group_of,
    groups_from,
    promoted,
    resolve,
)
from .decide import Calibration, confidence_signals, decide, shipped_calibration
from .encoders import Encoder, encoder_key, get_encoder
from .errors import SkillNotFoundError, StoreError
from .feedback import Adjustment, FeedbackStore, Learned, Match, Signal, learn
from .fingerprint import unmet_preconditions
from .fuse import POOL_SIZE, Candidate, fuse, weight_for
from .index import SkillStore, assign_ids, open_store
from .index.builder import Progress, build_index, embed_missing, root_id, vector_space
from .model import (
    Alternative,
    IndexedSkill,
    IndexReport,
    Method,
    RouteResult,
    SearchHit,
    SkillRef,
    StageTrace,
    Stats,
)
from .plan import in_single_steps, plan_steps
from .retrieve.bm25 import BM25Index, BM25Retriever
from .retrieve.dense import EMBEDDING, DenseRetriever
from .retrieve.fast import FastHit, FastMatcher
from .retrieve.keywords import described_terms, keyword_floor, keyword_terms
from .routelog import RouteLog
from .text import cap_query, clean_text

log = logging.getLogger(__name__)

ALTERNATIVES = 4
# The spec's fast-path rule on FastMatcher's 0-10 scale: a trigger phrase hit routes at once.
FAST_ROUTE_SCORE = 8.0
# An author-declared trigger phrase found in the message, with the keyword ranking agreeing,
# is a hard route (the spec's rule); the development sets hold too few trigger hits to fit this.
FAST_ROUTE_CONFIDENCE = 0.95
# Below this a fast hit is only prefer_when words: too weak to count as evidence on its own.
FAST_EVIDENCE_SCORE = 4.0
TRUST_MULTIPLIERS = {"local": 1.0, "official": 1.2, "verified": 1.0, "community": 0.8}
UNMET_PRECONDITION_MULTIPLIER = 0.7
SEARCH_MIN_SCORE = 0.4
SEARCH_GAP = 0.15


@dataclass
class Scored:
    """One query seen by every retriever: full-catalog score lists, fast hits, query vectors,
    and (set by ``_rank``) what feedback learned about messages like it."""

    lists: dict[str, np.ndarray]
    fast_hits: list[FastHit]
    method: Method
    query_vectors: dict[str, np.ndarray]
    learned: Adjustment | None = None
    # The top candidate's confidence without feedback, and its catalog position.
    baseline: tuple[float, int] = (0.0, -1)


@dataclass
class _Catalog:
    """Everything routing needs in memory, built from one store generation."""

    generation: int
    skills: list[IndexedSkill]
    fast: FastMatcher | None
    bm25: BM25Retriever | None
    dense: list[DenseRetriever]
    multipliers: np.ndarray
    unmet: list[tuple[str, ...]]
    conflicts: list[ConflictGroup]
    conflict_of: dict[int, ConflictGroup]
    vocabulary: Vocabularies


class SkillPilot:
    """Index skills and route messages to them. ``SkillPilot(home=..., **setting_overrides)``.

    ``surface`` labels this router's decisions in the routing log (``cli``, ``http``, ``mcp``,
    ``hook`` ...; ``library`` by default). ``store`` is an open ``SkillStore`` or, like the
    ``store`` setting (``index.store``, ``SKILLPILOT_STORE``), a SQLite path or PostgreSQL URL."""

    def __init__(
        self,
        home: Path | str | None = None,
        settings: Settings | None = None,
        store: SkillStore | str | None = None,
        surface: str = "library",
        **overrides: Any,
    ) -> None:
        if isinstance(store, str):
            overrides["store"] = store
            store = None
        if settings is None:
            settings = load_settings(Path(home).expanduser() if home else None, **overrides)
        elif overrides:
            settings = settings.with_overrides(**overrides)
        self.settings = settings
        self.surface = surface
        # Routing multiplies one query vector by the skill matrix: with several BLAS threads
        # that small product spends more time synchronising than computing (10 ms instead of
        # 0.1 ms on a busy 2-core machine), so SkillPilot keeps BLAS single-threaded.
        threadpool_limits(limits=1, user_api="blas")
        self._store = store
        self._encoders: list[Encoder] | None = None
        self._catalog_cache: _Catalog | None = None
        self._query_pool: ThreadPoolExecutor | None = None
        self._feedback: FeedbackStore | None = None
        self._route_log: RouteLog | None = None
        self._learned_cache: tuple[tuple[int, ...] | str, Learned] | None = None
        self._described_cache: tuple[int, BM25Index] | None = None
        self.calibration: Calibration = shipped_calibration()

    # -- parts, loaded on first use -------------------------------------------------------
    @property
    def store(self) -> SkillStore:
        if self._store is None:
            self._store = open_store(self.settings.store or self.settings.index_path)
        return self._store

    @property
    def encoders(self) -> list[Encoder]:
        if self._encoders is None:
            self._encoders = (
                [get_encoder(spec, self.settings) for spec in self.settings.encoder_specs]
                if self.settings.enable_semantic
                else []
            )
        return self._encoders

    @property
    def feedback_store(self) -> FeedbackStore:
        if self._feedback is None:
            self._feedback = FeedbackStore(self.settings.feedback_path, self.settings.log_queries)  # type: ignore[arg-type]
        return self._feedback

    @property
    def route_log(self) -> RouteLog:
        if self._route_log is None:
            settings = self.settings
            self._route_log = RouteLog(
                settings.log_path, settings.log_queries, settings.log_max_rows, settings.log_max_age_days
            )
        return self._route_log

    def close(self) -> None:
        if self._route_log is not None:
            self._route_log.close()
            self._route_log = None
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._feedback is not None:
            self._feedback.close()
            self._feedback = None
        if self._query_pool is not None:
            self._query_pool.shutdown()
            self._query_pool = None
        self._catalog_cache = None
        self._learned_cache = None
        self._described_cache = None

    # -- indexing ---------------------------------------------------------------------------
    def index(
        self, paths: Sequence[Path | str], replace: bool = False, progress: Progress | None = None
    ) -> IndexReport:
        """Add or refresh skill roots (folders of SKILL.md files, or JSON tool catalogs)."""
        # The models load on a second thread while the skills are read and fingerprinted (on
        # the 294 bench skills about 0.7 s of loading beside 0.6 s of reading), unless the index
        # knows the encoders' names: then they load only if something needs embedding.
        specs = self.settings.encoder_specs if self.settings.enable_semantic else ()
        keys = [encoder_key(spec, self.settings) for spec in specs]
        recorded = dict(json.loads(self.store.meta("encoder_keys") or "[]"))
        names = [recorded[k] for k in keys] if all(k in recorded for k in keys) else None
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillpilot-load") as pool:
            loading = pool.submit(lambda: self.encoders) if names is None else None
            return build_index(
                self.store,
                [Path(p) for p in paths],
                encoders=loading.result if loading else lambda: self.encoders,
                texts_for=EMBEDDING,
                replace_roots=replace,
                progress=progress,
                conflict_threshold=self.settings.conflict_threshold,
                encoder_names=names,
                encoder_keys=keys,
            )

    def reindex(self, progress: Progress | None = None) -> IndexReport:
        """Refresh every root the index knows (or the configured skill folders on a new index)."""
        roots = self.store.roots() or [str(Path(d).expanduser()) for d in self.settings.skill_dirs]
        return self.index(roots, progress=progress)

    def _catalog(self) -> _Catalog:
        generation = self.store.generation()
        cached = self._catalog_cache
        if cached is not None and cached.generation == generation:
            return cached
        stored = self.store.load()
        missing = embed_missing(self.store, stored, self.encoders, EMBEDDING)
        if missing:
            log.info("embedded %d skills the index had no vectors for", missing)
            generation = self.store.generation()
        skills = assign_ids(stored)
        dense = []
        descriptions = []
        for encoder in self.encoders:
            vectors = self.store.vectors(vector_space(encoder, EMBEDDING))
            dense.append(
                DenseRetriever(encoder, [vectors[(s.skill.root, s.key)] for s in skills])
            )
            # Part 0 is always "name: description" (EMBEDDING): what a skill is for.
            descriptions.append(
                np.stack([vectors[(s.skill.root, s.key)][0] for s in skills])
                if skills
                else np.zeros((0, encoder.dim), dtype=np.float32)
            )
        conflicts = self._conflict_groups(skills, descriptions)
        unmet = [
            unmet_preconditions(s.fingerprint.preconditions) if self.settings.preconditions else ()
            for s in skills
        ]
        multipliers = np.array(
            [
                self._trust_multiplier(s) * (UNMET_PRECONDITION_MULTIPLIER if u else 1.0)
                for s, u in zip(skills, unmet, strict=True)
            ]
        )
        keyword = self.settings.enable_keyword
        cached = _Catalog(
            generation=generation,
            skills=skills,
            fast=FastMatcher(skills) if keyword else None,
            bm25=BM25Retriever(skills) if keyword else None,
            dense=dense,
            multipliers=multipliers,
            unmet=unmet,
            conflicts=conflicts,
            conflict_of=group_of(conflicts),
            vocabulary=Vocabularies(skills),
        )
        self._catalog_cache = cached
        return cached

    def _conflict_groups(self, skills: list[IndexedSkill], descriptions: list[np.ndarray]) -> list[ConflictGroup]:
        """The groups the index stored for these skills and settings, else computed here (an
        index built with another threshold or models, or before conflict graphs were stored)."""
        threshold = self.settings.conflict_threshold
        if not self.encoders:
            return []
        config = conflict_config([vector_space(e, EMBEDDING) for e in self.encoders], threshold)
        graph = self.store.conflict_graph(pairs=False)
        stored = groups_from(graph, skills) if graph is not None and graph.config == config else None
        if stored is not None:
            return stored
        log.info("conflict groups computed at load (O(N^2)); `skillpilot reindex` stores them in the index")
        return detect_conflicts(skills, descriptions, threshold)

    def _learned(self, catalog: _Catalog) -> Learned | None:
        """The feedback model for this catalog, re-fitted when a signal arrives (any process)."""
        # A router that never got feedback does not create the feedback file just to read it.
        if not self.settings.feedback_enabled or (
            self._feedback is None and not self.settings.feedback_path.exists()
        ):
            return None
        try:
            # Signals fade: the model is re-fitted at least hourly.
            key = (catalog.generation, *self.feedback_store.version(), int(time.time() // 3600))
            if self._learned_cache is None or self._learned_cache[0] != key:
                ids = [s.id for s in catalog.skills]
                encoders = [r.encoder for r in catalog.dense]
                settings = self.settings
                learned = learn(
                    self.feedback_store, ids, encoders, settings.feedback_batch, implicit=settings.feedback_implicit
                )
                self._learned_cache = (key, learned)
        except StoreError as exc:
            # Feedback refines routes; a broken feedback file must not stop them.
            if self._learned_cache is None or self._learned_cache[0] != "broken":
                log.warning("%s", exc)
            self._learned_cache = ("broken", Learned(np.zeros(len(catalog.skills))))
        return self._learned_cache[1]

    def _trust_multiplier(self, skill: IndexedSkill) -> float:
        tier = self.settings.trust_tiers.get(skill.id, skill.skill.trust_tier)
        return TRUST_MULTIPLIERS.get(tier, 1.0)

    # -- routing ----------------------------------------------------------------------------
    def score_lists(self, query: str, allowed: np.ndarray | None = None) -> Scored:
        """Every retriever's score for every skill (catalog order), the fast-path hits, the
        query's vectors and which path answered. Public for calibration and benchmarks.
        ``allowed`` (a mask over the catalog) keeps other skills' trigger phrases from taking
        the fast path."""
        catalog = self._catalog()
        size = len(catalog.skills)
        fast_hits = [
            h
            for h in (catalog.fast.match(query) if catalog.fast else [])
            if h.score >= FAST_EVIDENCE_SCORE and (allowed is None or allowed[h.index])
        ]
        lists: dict[str, np.ndarray] = {}
        vectors: dict[str, np.ndarray] = {}
        if fast_hits:
            fast = np.zeros(size)
            for hit in fast_hits:
                fast[hit.index] = max(fast[hit.index], hit.score)
            lists["fast"] = fast
        if catalog.bm25:
            lists["bm25"] = catalog.bm25.scores(query)
        method: Method
        if self._routes_at_once(fast_hits, lists.get("bm25")):
            method = "fast"
        else:
            readers = [r for r in catalog.dense if r.reads(query)]
            for retriever, vector in zip(readers, self._encode_query(query, readers), strict=True):
                vectors[retriever.encoder.name] = vector
                lists[retriever.name] = retriever.scores_for(vector)
            keyword_found = bool(fast_hits) or bool(catalog.bm25 and lists["bm25"].any())
            method = ("hybrid" if keyword_found else "semantic") if catalog.dense else "fast"
        return Scored(lists, fast_hits, method, vectors)

    def _encode_query(self, query: str, retrievers: Sequence[DenseRetriever]) -> list[np.ndarray]:
        """The query's vector from each of ``retrievers``. With several models the others run
        on a second thread while this one runs the first: onnxruntime and numpy release the
        GIL, so on two cores the slowest model, not the sum, sets the latency."""
        if not retrievers:
            return []
        first, *rest = retrievers
        if not rest:
            return [first.encode(query)]
        if self._query_pool is None:
            self._query_pool = ThreadPoolExecutor(max_workers=len(rest), thread_name_prefix="skillpilot-encode")
        pending = [self._query_pool.submit(r.encode, query) for r in rest]
        return [first.encode(query), *(f.result() for f in pending)]

    def _confidence(self, signals: dict[str, float], method: Method, position: int) -> float:
        """The calibrated probability that the candidate at ``position`` is right. A trigger
        phrase that routed at once skipped the models, whose evidence the calibration expects,
        so its winner is as sure as the fast path makes it."""
        probability = self.calibration.probability(signals)
        if method == "fast" and position == 0:
            return max(probability, FAST_ROUTE_CONFIDENCE)
        return probability

    @staticmethod
    def _routes_at_once(fast_hits: list[FastHit], bm25: np.ndarray | None) -> bool:
        """The spec's fast path: one skill's trigger phrase is in the message (score >= 8) and
        the keyword ranking agrees it is the best match. Then the models are not even asked."""
        triggered = {h.index for h in fast_hits if h.score >= FAST_ROUTE_SCORE}
        if len(triggered) != 1:
            return False
        return bm25 is None or int(np.argmax(bm25)) in triggered

    def _rank(self, query: str, roots: Sequence[str] | None = None) -> tuple[_Catalog, list[Candidate], Scored]:
        catalog = self._catalog()
        if not catalog.skills:
            return catalog, [], Scored({}, [], "no-match", {})
        allowed = _under(catalog, roots) if roots is not None else None
        scored = self.score_lists(query, allowed)
        multipliers = catalog.multipliers
        learned = self._learned(catalog)
        if learned is not None:
            if learned.has_examples and not scored.query_vectors:
                # The fast path skipped the models; feedback examples are matched by meaning.
                scored.query_vectors = {r.encoder.name: r.encode(query) for r in catalog.dense if r.reads(query)}
            scored.learned = learned.adjust(scored.query_vectors)
            if scored.learned.moves:
                plain = fuse(scored.lists, self.calibration.fusion_weights, multipliers)
                if plain:
                    confidence = self._confidence(confidence_signals(plain, 0), scored.method, 0)
                    scored.baseline = (confidence, plain[0].index)
            if scored.learned.matches and scored.method == "fast":
                scored.method = "hybrid"
            multipliers = multipliers * np.exp(scored.learned.log_multipliers)
        candidates = fuse(scored.lists, self.calibration.fusion_weights, multipliers)
        chosen = {m.skill for m in scored.learned.matches if m.sign > 0} if scored.learned else set()
        if chosen - {c.index for c in candidates}:
            # A skill users chose for messages like this one joins the race even when the
            # retrievers left it out of the pool; fusion orders it like any other candidate.
            keep = {c.index for c in candidates} | chosen
            weights = self.calibration.fusion_weights
            everyone = fuse(scored.lists, weights, multipliers, pool=len(catalog.skills))
            candidates = [c for c in everyone if c.index in keep]
        if allowed is not None:
            # Scores stay those of the whole catalog (what the calibration knows); the pool is
            # widened to every skill so that the roots' best skills are in it, then cut back.
            everyone = fuse(scored.lists, self.calibration.fusion_weights, multipliers, pool=len(catalog.skills))
            candidates = [c for c in everyone if allowed[c.index]][:POOL_SIZE]
        if not candidates:
            scored.method = "no-match"
        return catalog, candidates, scored

    def route(
        self,
        query: str,
        trace: bool = False,
        surface: str | None = None,
        roots: Sequence[str] | None = None,
    ) -> RouteResult:
        """Pick the skill for ``query``; always one ``RouteResult`` (pass-through is a result).
        The trace is included when asked for or when the ``debug`` setting is on. The decision
        is appended to the routing log (``log.enabled``) under ``surface`` (default: the
        router's own); a clause routed while planning is part of its message's decision and
        is not. ``roots`` limits the choice to skills indexed under those folders (an agent
        host that offers only some of them)."""
        result = self._route(query, trace, roots)
        if self.settings.log_enabled and not in_single_steps():
            try:
                self.route_log.record(result, surface or self.surface)
            except StoreError as exc:
                # The route is the product and the log a record of it: an unwritable log
                # (read-only home, full disk) is reported, and the agent still gets its skill.
                log.warning("%s", exc)
        return result

    def _route(self, query: str, trace: bool, roots: Sequence[str] | None = None) -> RouteResult:
        started = time.perf_counter()
        trace = trace or self.settings.debug
        query = cap_query(query)
        catalog, candidates, scored = self._rank(query, roots)
        method, fast_hits, lists = scored.method, scored.fast_hits, scored.lists
        if not candidates:
            return RouteResult(
                query=query,
                skill=None,
                confidence=0.0,
                decision="passthrough",
                method="no-match",
                reasons=("no skill matched any word or meaning of the message",),
                trace=() if trace else None,
                latency_ms=(time.perf_counter() - started) * 1000,
            )
        signals = confidence_signals(candidates, 0)
        confidence = self._confidence(signals, method, 0)
        # The confidence above is that the message belongs to the winner's group; inside the
        # group the resolver picks the member.
        resolution = resolve(
            candidates,
            catalog.skills,
            catalog.conflict_of,
            query,
            catalog.fast.match(query) if catalog.fast else [],
            self.settings.prefer,
            scored.learned,
            catalog.vocabulary,
        )
        fused = candidates
        if resolution is not None:
            candidates = promoted(candidates, resolution.winner)
        top = candidates[0]
        if scored.learned is not None and scored.learned.moves:
            # Feedback's word counts, within its bounds (feedback.Adjustment.bounded_confidence).
            baseline, before = scored.baseline
            group = catalog.conflict_of.get(top.index)
            same = before == top.index or (group is not None and catalog.conflict_of.get(before) is group)
            confidence = scored.learned.bounded_confidence(
                confidence, baseline if same else 0.0, top.index, self.settings.hard_threshold
            )
        decision = decide(confidence, self.settings.hard_threshold, self.settings.soft_threshold)
        alternatives = tuple(
            Alternative(
                id=catalog.skills[c.index].id,
                path=catalog.skills[c.index].skill.path,
                score=round(self.calibration.probability(confidence_signals(candidates, n)), 4),
                key=catalog.skills[c.index].key,
            )
            for n, c in enumerate(candidates[1 : 1 + ALTERNATIVES], start=1)
        )
        stages = (
            self._trace(catalog, lists, fused, fast_hits, signals, confidence, decision, scored, resolution)
            if trace
            else None
        )
        return RouteResult(
            query=query,
            skill=_ref(catalog.skills[top.index]),
            confidence=round(confidence, 4),
            decision=decision,
            method=method,
            alternatives=alternatives,
            conflict_resolved=resolution is not None,
            conflict_alternatives=tuple(catalog.skills[i].id for i in resolution.beaten)
            if resolution
            else (),
            reasons=self._reasons(top, fast_hits, catalog, candidates, scored.learned, resolution),
            unmet_preconditions=catalog.unmet[top.index],
            trace=stages,
            # Multi-skill messages: a regex check, and clause routes only when it finds markers.
            plan=plan_steps(self, query, confidence, sequences_only=True),
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
        )

    def plan(self, message: str) -> RouteResult:
        """Route ``message`` and split it into ordered steps at every marker ("and", "then",
        然后 ...), not only the sequence markers ``route`` plans on by itself."""
        result = self.route(message)
        if result.plan:
            return result
        return replace(result, plan=plan_steps(self, result.query, result.confidence))

    def _reasons(
        self,
        top: Candidate,
        fast_hits: list[FastHit],
        catalog: _Catalog,
        candidates: list[Candidate],
        learned: Adjustment | None,
        resolution: Resolution | None,
    ) -> tuple[str, ...]:
        reasons: list[str] = [resolution.reason] if resolution else []
        for match in learned.matches if learned else ():
            if match.skill == top.index:
                verb = "you chose it" if match.sign > 0 else f"you turned it down ({match.kind})"
                reasons.append(f"feedback: {verb} for a similar message: {_about(match)}")
        for hit in fast_hits:
            if hit.index == top.index:
                reasons.extend(hit.evidence)
        for name in sorted(top.raw):
            if name == "fast" or name not in top.ranks:
                continue
            label = "keywords (BM25)" if name == "bm25" else f"meaning ({name.split(':', 1)[1]})"
            reasons.append(f"{label}: rank {top.ranks[name]}, score {top.raw[name]:.3f}")
        static = float(catalog.multipliers[top.index])
        if static != 1.0:
            reasons.append(f"score multiplied by {static:.2f} (trust tier / preconditions)")
        if learned is not None and learned.log_multipliers[top.index]:
            factor = np.exp(learned.log_multipliers[top.index])
            reasons.append(f"score multiplied by {factor:.2f} (feedback)")
        if len(candidates) > 1 and top.score >= candidates[1].score:
            rival = catalog.skills[candidates[1].index]
            reasons.append(f"beat {rival.id} by {top.score - candidates[1].score:.2f} fused score")
        return tuple(reasons)

    def _trace(
        self,
        catalog: _Catalog,
        lists: dict[str, np.ndarray],
        candidates: list[Candidate],
        fast_hits: list[FastHit],
        signals: dict[str, float],
        confidence: float,
        decision: str,
        scored: Scored,
        resolution: Resolution | None,
    ) -> tuple[StageTrace, ...]:
        stages = [
            StageTrace(
                "fast path (0-10; >= 8 routes at once)",
                tuple((catalog.skills[h.index].id, h.score) for h in fast_hits[:5]),
                tuple(f"{catalog.skills[h.index].id}: {', '.join(h.evidence)}" for h in fast_hits[:5])
                or ("no trigger or name matched",),
            )
        ]
        for name, scores in lists.items():
            if name == "fast":
                continue
            order = np.lexsort((np.arange(len(scores)), -scores))[:5]
            stages.append(
                StageTrace(name, tuple((catalog.skills[i].id, round(float(scores[i]), 4)) for i in order))
            )
        if scored.method != "fast":
            stages.extend(
                StageTrace(r.name, (), ("not asked: an English-only model, and the message is mostly CJK",))
                for r in catalog.dense
                if r.name not in lists
            )
        weights = self.calibration.fusion_weights
        stages.append(
            StageTrace(
                "fusion: RRF pool, ordered by weighted z-scores + ln(multiplier)",
                tuple((catalog.skills[c.index].id, round(c.score, 3)) for c in candidates[:5]),
                ("weights: " + ", ".join(f"{n}={weight_for(weights, n):.2f}" for n in lists),)
                + tuple(
                    f"{catalog.skills[c.index].id}: x{c.multiplier:.2f}"
                    for c in candidates[:5]
                    if c.multiplier != 1.0
                ),
            )
        )
        runner_up = (
            f"runner-up {catalog.skills[candidates[1].index].id} lost by "
            f"{candidates[0].score - candidates[1].score:.2f} fused score"
            if len(candidates) > 1
            else "no runner-up"
        )
        stages.append(
            StageTrace(
                "decision",
                (),
                (
                    "signals: " + ", ".join(f"{k}={v:.3f}" for k, v in signals.items()),
                    f"confidence {confidence:.3f} -> {decision} (hard >= {self.settings.hard_threshold}, "
                    f"soft >= {self.settings.soft_threshold})",
                    runner_up,
                    *(
                        f"learned from feedback: {catalog.skills[m.skill].id} {'+' if m.sign > 0 else '-'}"
                        f"{m.strength:.2f} for {_about(m)}"
                        for m in (scored.learned.matches if scored.learned else ())
                    ),
                    f"conflict resolver: {resolution.reason if resolution else 'no contest'}",
                ),
            )
        )
        return tuple(stages)

    def search(self, query: str, top_k: int = 5) -> list[SearchHit]:
        """Ranked skills for ``query`` with OntoSkills' adaptive cut-off (min 0.4, gap 0.15), and
        for a one-to-three-word query the skills whose name or description mention every word
        below them (``retrieve.keywords``: the keyword floor, scores under 0.4)."""
        query = cap_query(query)
        catalog, candidates, scored = self._rank(query)
        hits: list[SearchHit] = []
        for position, candidate in enumerate(candidates[: max(top_k, 1) * 2]):
            score = self._confidence(confidence_signals(candidates, position), scored.method, position)
            hits.append(_hit(catalog.skills[candidate.index], score, tuple(sorted(candidate.ranks))))
        hits.sort(key=lambda h: -h.score)
        kept: list[SearchHit] = []
        for hit in hits[:top_k]:
            if hit.score < SEARCH_MIN_SCORE or (kept and kept[-1].score - hit.score > SEARCH_GAP):
                break
            kept.append(hit)
        terms = keyword_terms(query) if self.settings.enable_keyword and catalog.skills else []
        floor = keyword_floor(self._described(catalog), terms) if terms else np.zeros(0)
        shown = {h.id for h in kept}
        calibrated = {h.id: h for h in hits}
        mentioned = [
            _hit(skill, max(float(floor[i]), calibrated[skill.id].score if skill.id in calibrated else 0.0), ("bm25",))
            for i in np.flatnonzero(floor)
            if (skill := catalog.skills[i]).id not in shown
        ]
        mentioned.sort(key=lambda h: (-h.score, h.id))
        return (kept + mentioned)[:top_k]

    def _described(self, catalog: _Catalog) -> BM25Index:
        """Keywords over every skill's name and description, for the keyword floor."""
        if self._described_cache is None or self._described_cache[0] != catalog.generation:
            terms = [described_terms(s.name, s.skill.description) for s in catalog.skills]
            self._described_cache = (catalog.generation, BM25Index(terms))
        return self._described_cache[1]

    # -- lookups and stats ------------------------------------------------------------------
    def skills(self) -> list[IndexedSkill]:
        return list(self._catalog().skills)

    def get(self, ref: str) -> IndexedSkill:
        """A skill by id, name or folder-relative key; raises ``SkillNotFoundError``."""
        skills = self._catalog().skills
        for match in (
            [s for s in skills if s.id == ref],
            [s for s in skills if s.key == ref],
            [s for s in skills if s.name == ref],
        ):
            if len(match) == 1:
                return match[0]
        close = tuple(s.id for s in skills if ref.lower() in s.id.lower())[:5]
        raise SkillNotFoundError(ref, close)

    def conflict_groups(self) -> list[ConflictGroup]:
        """Skills that overlap (similarity >= ``conflict_threshold``), most similar group first."""
        return list(self._catalog().conflicts)

    def feedback(
        self,
        kind: str,
        query: str,
        skill: str | None = None,
        wrong: str | None = None,
        right: str | None = None,
        *,
        implicit: bool = False,
    ) -> Signal:
        """Record what the user said about a route; it counts from the next route on (whole
        ``feedback_batch`` batches). ``kind``: confirmed / corrected / ignored (or confirm /
        correct / ignore); a correction takes ``wrong`` and ``right``, the others ``skill``.
        Skills are given by id, key or name; an unknown one raises ``SkillNotFoundError``.
        ``implicit``: inferred from what the agent did (a hook), not said by a person: it weighs
        less and fades faster (``skillpilot.feedback``); a hook should send one only where the
        agent chose (a soft shortlist or a pass-through), not where it obeyed a hard route.
        With ``feedback_enabled`` off (or ``feedback_implicit`` off, for implicit signals) the
        signal is still kept, and routing ignores it. The message text is kept as ``log.queries``
        allows."""
        signal = Signal.of(kind, clean_text(query), skill=skill, wrong=wrong, right=right, implicit=implicit)
        catalog = self._catalog()
        canonical = replace(
            signal, skill=self.get(signal.skill).id, wrong=self.get(signal.wrong).id if signal.wrong else None
        )
        vectors = {r.encoder.name: r.encode(signal.query) for r in catalog.dense if r.reads(signal.query)}
        return self.feedback_store.record(canonical, vectors)

    def undo_feedback(self, signal_id: int) -> Signal:
        """Forget one recorded signal (``FeedbackNotFoundError`` if there is none with that id);
        routing stops using it from the next route on. Returns the signal."""
        return self.feedback_store.undo(signal_id)

    def stats(self) -> Stats:
        skills = self._catalog().skills
        last = self.store.meta("last_updated")
        return Stats(
            skills=len(skills),
            roots=tuple(self.store.roots()),
            skipped=tuple(self.store.skipped()),
            conflict_groups=len(self._catalog().conflicts),
            low_quality=tuple(s.id for s in skills if s.fingerprint.quality_issues),
            last_updated=float(last) if last else None,
            embed_provider=self.settings.embed_provider if self.settings.enable_semantic else "off",
            index_path=str(getattr(self.store, "path", self.settings.index_path)),
            model_cache=str(default_model_cache()),
        )


def _hit(skill: IndexedSkill, score: float, matched_by: tuple[str, ...]) -> SearchHit:
    return SearchHit(
        id=skill.id,
        name=skill.name,
        key=skill.key,
        path=skill.skill.path,
        description=skill.skill.description,
        score=round(score, 4),
        matched_by=matched_by,
    )


def _under(catalog: _Catalog, roots: Sequence[str]) -> np.ndarray:
    """Which of the catalog's skills were indexed under one of ``roots`` (named as the store does)."""
    wanted = {root_id(Path(r)) for r in roots}
    return np.array([s.skill.root in wanted for s in catalog.skills], dtype=bool)


def _about(match: Match) -> str:
    """The message a learned example came from, as far as ``log.queries`` kept it."""
    return repr(match.query) if match.query else f"signal #{match.signal} (message not kept)"


def _ref(skill: IndexedSkill) -> SkillRef:
    return SkillRef(
        id=skill.id,
        name=skill.name,
        path=skill.skill.path,
        description=skill.skill.description,
        key=skill.key,
    )
