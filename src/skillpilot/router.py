"""The facade: ``SkillPilot`` wires the stages and is the library's public entry point.

    skills/      load SKILL.md folders / tool catalogs          -> Skill
    fingerprint  derive routing signals                          -> Fingerprint
    index/       store them (SQLite / PostgreSQL) with vectors   -> StoredSkill; Snapshot (one read)
    catalog      one snapshot in memory: ids, retrievers,        -> Catalog
                 trust x precondition multipliers, conflicts
    text         a message read once: capped, split, stemmed     -> Query
    retrieve/    fast path (triggers), registered retrievers      -> FastHit, score lists by RetrieverId
                 (BM25, dense per model, plugins)
    feedback     learned ln-multipliers per message              -> Adjustment
    rank         every retriever once, then fuse (RRF + z-score) -> Ranking (frozen, Candidates)
    decide       conflict contest, calibrated confidence, rules  -> Verdict (Resolution, decision)
    explain      reasons and the stage-by-stage trace            -> reasons, StageTrace
    plan         several requests in one message: each routed    -> RouteResult.plan (PlanStep)
    routelog     every decision appended to log.sqlite           -> LogEntry

The facade only wires: it reads one snapshot per index generation (never writing the index),
asks the stages in order and assembles the ``RouteResult``. Everything heavy (the index, the
models, the BM25 postings) is loaded once on first use and reloaded only when the store's
generation changes, so a long-lived router stays warm; that loading is ``load_ms``, apart from
the routing time ``latency_ms``.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from . import explain
from .catalog import Catalog, build_catalog, spaces
from .config import Settings, default_model_cache, load_settings
from .conflicts import ConflictGroup
from .decide import Calibrations, candidate_confidence, judge, shipped_calibration
from .encoders import Encoder, encoder_key, get_encoder
from .enrich import EnrichOptions, EnrichReport
from .enrich import enrich as run_enrich
from .enrich.prompt import catalog_languages
from .enrich.writers import ExampleWriter, available_writers, get_writer
from .errors import ConfigError, SkillNotFoundError, StoreError
from .examples import (
    ExampleSet,
    ExampleStore,
    ImportReport,
    embed_missing,
    example_sets,
    match_references,
    open_examples,
    printable,
    read_examples_file,
    write_examples_file,
)
from .feedback import FeedbackStats, FeedbackStore, Learned, Signal, learn
from .index import SkillStore, Snapshot, VectorSearch, assign_ids, open_store
from .index.builder import Progress, build_index, space_named
from .model import (
    BM25,
    Alternative,
    Candidate,
    IndexedSkill,
    IndexReport,
    RetrieverId,
    RouteResult,
    SearchHit,
    SkillRef,
    Stats,
)
from .plan import plan_steps
from .rank import Ranking, rank
from .retrieve.dense import EMBEDDING, DenseRetriever, single_threaded_blas
from .retrieve.keywords import keyword_floor, keyword_terms
from .routelog import LogEntry, LogFilter, RouteLog, SurfaceLatency
from .smalltalk import is_small_talk
from .text import Query, clean_text
from .tokens import TokenCounter

logger = logging.getLogger(__name__)

SEARCH_MIN_SCORE = 0.4
SEARCH_GAP = 0.15
# The models' vectors of the last messages routed: feedback on one of them (a hook's skill-used
# event follows its prompt's route) reuses them instead of reading the message again (~22 ms).
RECENT_READS = 32


class SkillPilot:
    """Index skills and route messages to them. ``SkillPilot(home=..., **setting_overrides)``.

    ``surface`` labels this router's decisions in the routing log (``cli``, ``http``, ``mcp``,
    ``hook`` ...; ``library`` by default). ``store`` is an open ``SkillStore`` or, like the
    ``store`` setting (``index.store``, ``SKILLPILOT_STORE``), a SQLite path or PostgreSQL URL."""

    settings: Settings
    surface: str
    # The fusion weights and the confidence models (``calibration.json``), one chosen per catalog
    # (``Calibrations.for_share``); a benchmark may set its own.
    calibration: Calibrations

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
        self._store = store
        self._encoders: list[Encoder] | None = None
        self._catalog_cache: Catalog | None = None
        self._query_pool: ThreadPoolExecutor | None = None
        self._recent_reads: OrderedDict[str, Mapping[str, np.ndarray]] = OrderedDict()
        self._recent_lock = threading.Lock()
        self._feedback: FeedbackStore | None = None
        self._route_log: RouteLog | None = None
        self._learned_cache: tuple[tuple[int, ...] | str, Learned] | None = None
        self._examples: ExampleStore | None = None
        self.calibration = shipped_calibration()

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
    def _feedback_store(self) -> FeedbackStore:
        if self._feedback is None:
            self._feedback = FeedbackStore(self.settings.feedback_path, self.settings.log_queries)  # type: ignore[arg-type]
        return self._feedback

    @property
    def _log(self) -> RouteLog:
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
        if self._examples is not None:
            self._examples.close()
            self._examples = None
        self._catalog_cache = None
        self._learned_cache = None

    # -- indexing ---------------------------------------------------------------------------
    def index(
        self, paths: Sequence[Path | str], replace: bool = False, progress: Progress | None = None
    ) -> IndexReport:
        """Add or refresh skill roots (folders of SKILL.md files, or JSON tool catalogs)."""
        # The models load on a second thread while the skills are read and fingerprinted (on
        # the 294 bench skills about 0.7 s of loading beside 0.6 s of reading), unless the index
        # knows the encoders' names: then they load only if something needs embedding. Embedding
        # runs with BLAS single-threaded, as routing does, so a vector is the same bits either way.
        keys, names = self._recorded_encoders()
        with (
            single_threaded_blas(),
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillpilot-load") as pool,
        ):
            loading = pool.submit(lambda: self.encoders) if names is None else None
            report = build_index(
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
            if report.added or report.updated or self.examples_store() is not None:
                self._sync_examples(names, progress)
        return report

    def reindex(self, progress: Progress | None = None) -> IndexReport:
        """Refresh every root the index knows (or the configured skill folders on a new index)."""
        roots = self.store.roots() or [str(Path(d).expanduser()) for d in self.settings.skill_dirs]
        return self.index(roots, progress=progress)

    # -- example requests (skillpilot.examples, skillpilot.enrich) ---------------------------------
    def examples_store(self, create: bool = False) -> ExampleStore | None:
        """The home's example requests (None when it has none yet and ``create`` is off)."""
        if self._examples is None:
            self._examples = open_examples(self.settings.home, create=create)
        return self._examples

    def enrich(
        self,
        writer: str | ExampleWriter | None = None,
        *,
        include_private: bool = False,
        force: bool = False,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> EnrichReport:
        """Have an LLM write example requests for every indexed skill whose text has none
        (``skillpilot.enrich``), with ``writer`` (a name: ``enrich.with``'s default), then embed
        them. ``dry_run``: only say what would be sent."""
        settings = self.settings
        chosen = writer or settings.enrich_with
        if not chosen:
            raise ConfigError("enrich.with", f"no LLM to write with: pass one of {', '.join(available_writers())}")
        model = get_writer(chosen, settings) if isinstance(chosen, str) else chosen
        skills = assign_ids(self.store.load())
        options = EnrichOptions(
            languages=settings.enrich_languages or tuple(catalog_languages([s.skill for s in skills])),
            per_skill=settings.enrich_per_skill,
            batch_size=settings.enrich_batch,
            concurrency=settings.enrich_concurrency,
            timeout=settings.enrich_timeout,
            retries=settings.enrich_retries,
            token_budget=settings.enrich_token_budget,
            include_private=include_private,
            force=force,
        )
        store = self.examples_store(create=not dry_run)
        report = run_enrich(
            skills, store, model, options, count=TokenCounter().count, dry_run=dry_run, progress=progress
        )
        if report.written:
            self._sync_examples(None, progress)
        return report

    def import_examples(self, path: Path | str, progress: Progress | None = None) -> ImportReport:
        """Store the example requests of a file (``{key: [requests]}`` or an OntoSkills
        ``intents.json``) for the indexed skills it names, and embed them."""
        found = read_examples_file(Path(path))
        skills = assign_ids(self.store.load())
        matched, unmatched = match_references(found.requests, skills)
        now = time.time()
        made_by = f"import:{printable(Path(path).name)}"
        sets = [
            ExampleSet(s.skill.content_hash, s.key, s.name, found.requests[ref], made_by, "", now, "import")
            for ref, chosen in matched.items()
            if found.requests[ref]
            for s in chosen
        ]
        store = self.examples_store(create=True)
        assert store is not None
        store.put(sets)
        self._sync_examples(None, progress)
        return ImportReport(
            str(path),
            tuple(dict.fromkeys(e.key for e in sets)),
            tuple((printable(ref), why) for ref, why in unmatched.items()),
            found.rejected,
        )

    def export_examples(self, path: Path | str) -> int:
        """Write every indexed skill's example requests to ``path`` as ``{key: [requests]}`` (the
        id where two roots share a key); how many skills."""
        skills = assign_ids(self.store.load())
        examples = self._example_sets(skills)
        keys = [s.key for s in skills]
        shown = {
            (s.key if keys.count(s.key) == 1 else s.id): list(examples[s.skill.content_hash].requests)
            for s in skills
            if s.skill.content_hash in examples
        }
        write_examples_file(Path(path), shown)
        return len(shown)

    def example_sets(self) -> dict[str, ExampleSet]:
        """Skill id -> the example requests its text has (stored, or its own), for the indexed
        skills that have some."""
        skills = assign_ids(self.store.load())
        sets = self._example_sets(skills)
        return {s.id: sets[s.skill.content_hash] for s in skills if s.skill.content_hash in sets}

    def _example_sets(self, skills: Sequence[IndexedSkill]) -> dict[str, ExampleSet]:
        """The example set of each skill text that has one (stored, or the skill's own)."""
        return example_sets(skills, self.examples_store())

    def _sync_examples(self, names: Sequence[str] | None, progress: Progress | None) -> None:
        """After an index run or new examples: keep the skills' own requests in the store and
        embed whatever an encoder has not (loading the models only then; ``names``: the
        encoders' names when known without loading them)."""
        skills = assign_ids(self.store.load())
        sets = self._example_sets(skills)
        if not sets:
            return
        store = self.examples_store(create=True)
        assert store is not None
        held = store.get(sets)
        store.put(e for h, e in sets.items() if h not in held)
        if not self.settings.enable_semantic:
            return
        wanted = list(sets.values())
        if names is not None and not any(store.missing_vectors(name, wanted) for name in names):
            return
        embed_missing(store, wanted, self.encoders, progress)

    def _recorded_encoders(self) -> tuple[list[str], list[str] | None]:
        """The configured encoders' keys, and the names the index recorded for them (None if it
        has not seen one of them): what their vectors are stored under, without loading a model."""
        specs = self.settings.encoder_specs if self.settings.enable_semantic else ()
        keys = [encoder_key(spec, self.settings) for spec in specs]
        recorded = dict(json.loads(self.store.meta("encoder_keys") or "[]"))
        return keys, [recorded[k] for k in keys] if all(k in recorded for k in keys) else None

    def _catalog(self) -> Catalog:
        return self._timed_catalog()[0]

    def _timed_catalog(self) -> tuple[Catalog, float]:
        """The catalog of the store's current generation, and the seconds spent loading it (and
        the models) now: 0.0 when the cached one is current."""
        cached = self._catalog_cache
        examples = self.examples_store()
        # Example requests written meanwhile (an enrich run in another process) rebuild it too.
        written = examples.generation() if examples is not None else -1
        if (
            cached is not None
            and cached.generation == self.store.generation()
            and cached.examples.generation == written
        ):
            return cached, 0.0
        started = time.perf_counter()
        store = self.store
        search = self._nearest_neighbour_search()

        def snapshot(wanted: list[str]) -> Snapshot:
            return store.snapshot(wanted if search is None else [])

        names = None if self._encoders is not None else self._recorded_encoders()[1]
        if names is None:
            encoders = self.encoders
            catalog = build_catalog(snapshot(spaces(encoders)), lambda: encoders, self.settings, search, examples)
        else:
            # The models load on a second thread while the skills are read and the keyword
            # parts built (at 10,000 skills ~1 s of loading beside several of reading).
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillpilot-load") as pool:
                loading = pool.submit(lambda: self.encoders)
                catalog = build_catalog(
                    snapshot([space_named(name, EMBEDDING) for name in names]),
                    loading.result,
                    self.settings,
                    search,
                    examples,
                )
            if [encoder.name for encoder in self.encoders] != names:
                # The recorded names are stale (a model package changed): read the right vectors.
                encoders = self.encoders
                catalog = build_catalog(snapshot(spaces(encoders)), lambda: encoders, self.settings, search, examples)
        for missing in catalog.missing:
            logger.warning("%s", missing.note)
        self._catalog_cache = catalog
        _return_freed_memory()
        return catalog, time.perf_counter() - started

    def _nearest_neighbour_search(self) -> VectorSearch | None:
        """The store, when it searches its own vectors and holds more skills than
        ``index.annAbove``: too many to hold every vector, so its HNSW index finds the candidates."""
        store = self.store
        if not (self.settings.enable_semantic and self.settings.encoder_specs and isinstance(store, VectorSearch)):
            return None
        return store if store.count() > self.settings.ann_above else None

    def _learned(self, catalog: Catalog) -> Learned | None:
        """The feedback model for this catalog, re-fitted when a signal arrives (any process)."""
        # A router that never got feedback does not create the feedback file just to read it.
        if not self.settings.feedback_enabled or (self._feedback is None and not self.settings.feedback_path.exists()):
            return None
        try:
            # Signals fade: the model is re-fitted at least hourly.
            key = (catalog.generation, *self._feedback_store.version(), int(time.time() // 3600))
            if self._learned_cache is None or self._learned_cache[0] != key:
                ids = [s.id for s in catalog.skills]
                encoders = [r.encoder for r in catalog.dense]
                settings = self.settings
                learned = learn(
                    self._feedback_store, ids, encoders, settings.feedback_batch, implicit=settings.feedback_implicit
                )
                self._learned_cache = (key, learned)
        except StoreError as exc:
            # Feedback refines routes; a broken feedback file must not stop them.
            if self._learned_cache is None or self._learned_cache[0] != "broken":
                logger.warning("%s", exc)
            self._learned_cache = ("broken", Learned(np.zeros(len(catalog.skills))))
        return self._learned_cache[1]

    # -- routing ----------------------------------------------------------------------------
    def ranking(self, query: str, roots: Sequence[str] | None = None) -> Ranking:
        """``query`` ranked: every retriever's score list (``scores``), the fused candidates (the
        pool a route decides on, best first) and the multipliers fusion applied, before the
        decision. Public for calibration and benchmarks (``benchmarks/pg_scale.py`` compares pools)."""
        with single_threaded_blas():
            return self._rank(self._catalog(), Query.of(query), roots)

    def _read_query(
        self, query: Query, retrievers: Sequence[DenseRetriever]
    ) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """Each retriever's ``read`` of the query (its vector and scores). With several models
        the others run on a second thread while this one runs the first: onnxruntime and numpy
        release the GIL, so on two cores the slowest model, not the sum, sets the latency; the
        scores go with them (at 50,000 skills scoring a model's vectors costs as much as
        encoding the message)."""
        if not retrievers:
            return []
        first, *rest = retrievers
        if not rest:
            return [first.read(query)]
        if self._query_pool is None:
            self._query_pool = ThreadPoolExecutor(max_workers=len(rest), thread_name_prefix="skillpilot-encode")
        pending = [self._query_pool.submit(r.read, query) for r in rest]
        return [first.read(query), *(f.result() for f in pending)]

    def _rank(self, catalog: Catalog, query: Query, roots: Sequence[str] | None = None) -> Ranking:
        learned = self._learned(catalog) if catalog.skills else None
        allowed = catalog.under(roots) if roots is not None else None
        stored_roots = catalog.root_ids(roots) if roots is not None else None
        weights_for = self.calibration.for_share(catalog.example_share).fusion_weights_for
        return rank(catalog, query, weights_for, learned, self._read_query, allowed, stored_roots)

    def route(
        self,
        query: str | Query,
        trace: bool = False,
        surface: str | None = None,
        roots: Sequence[str] | None = None,
        *,
        plan: bool = True,
        log: bool = True,
    ) -> RouteResult:
        """Pick the skill for ``query`` (a message, or a ``Query`` read from one); always one
        ``RouteResult`` (pass-through is a result).
        The trace is included when asked for or when the ``debug`` setting is on. A message
        with a sequence marker ("then" ...) is planned unless ``plan`` is off. The decision is
        appended to the routing log (``log.enabled``) under ``surface`` (default: the router's
        own) unless ``log`` is off: a clause routed while planning, or a probe lint sends, is
        part of another decision. ``roots`` limits the choice to skills indexed under those
        folders (an agent host that offers only some of them)."""
        result = self._route(query, trace, plan, roots)
        if log and self.settings.log_enabled:
            try:
                self._log.record(result, surface or self.surface)
            except StoreError as exc:
                # The route is the product and the log a record of it: an unwritable log
                # (read-only home, full disk) is reported, and the agent still gets its skill.
                logger.warning("%s", exc)
        return result

    def _route(self, message: str | Query, trace: bool, plan: bool, roots: Sequence[str] | None = None) -> RouteResult:
        started = time.perf_counter()
        catalog, loading = self._timed_catalog()
        trace = trace or self.settings.debug
        query = message if isinstance(message, Query) else Query.of(message)
        settings = self.settings
        calibration = self.calibration.for_share(catalog.example_share)
        with single_threaded_blas():
            unmatched = self._nothing_to_rank(catalog, query, roots)
            ranking = self._rank(catalog, query, roots) if unmatched is None else None
            if ranking is None or not ranking.candidates:
                return RouteResult(
                    query=query.text,
                    skill=None,
                    confidence=0.0,
                    decision="passthrough",
                    method="no-match",
                    reasons=(unmatched or "no skill matched any word or meaning of the message",),
                    trace=explain.catalog_stages(catalog) if trace else None,
                    latency_ms=(time.perf_counter() - started - loading) * 1000,
                    load_ms=round(loading * 1000, 3),
                )
            verdict = judge(
                ranking, catalog, calibration, settings.prefer, settings.hard_threshold, settings.soft_threshold
            )
        self._remember_read(query.text, ranking.scores.query_vectors)
        top = verdict.candidates[0]
        skills = catalog.skills
        alternatives = tuple(
            Alternative(id=skills[c.index].id, path=skills[c.index].skill.path, score=score, key=skills[c.index].key)
            for c, score in zip(verdict.candidates[1:], verdict.alternative_scores, strict=False)
        )
        resolution = verdict.resolution
        return RouteResult(
            query=query.text,
            skill=_ref(skills[top.index]),
            confidence=round(verdict.confidence, 4),
            decision=verdict.decision,
            method=ranking.method,
            alternatives=alternatives,
            conflict_resolved=resolution is not None,
            conflict_alternatives=tuple(skills[i].id for i in resolution.beaten) if resolution else (),
            reasons=explain.reasons(catalog, ranking, verdict),
            unmet_preconditions=catalog.unmet[top.index],
            trace=explain.trace(
                catalog,
                ranking,
                verdict,
                calibration,
                settings.hard_threshold,
                settings.soft_threshold,
            )
            if trace
            else None,
            # Multi-skill messages: a regex check, and clause routes only when it finds markers.
            plan=plan_steps(self, query, verdict.confidence, sequences_only=True) if plan else (),
            latency_ms=round((time.perf_counter() - started - loading) * 1000, 3),
            load_ms=round(loading * 1000, 3),
        )

    def _nothing_to_rank(self, catalog: Catalog, query: Query, roots: Sequence[str] | None) -> str | None:
        """Why ``query`` cannot go to any skill before anything is ranked (None: rank it): the
        index or the folders asked for hold no skill, or the message is small talk."""
        if not catalog.skills:
            return "the index holds no skills: index a folder of them first (`skillpilot index FOLDER`)"
        if roots is not None and not catalog.under(roots).any():
            missing = [r for r in roots if not Path(r).expanduser().exists()]
            if missing:
                return f"no skill can be under {', '.join(missing)}: no such file or folder"
            listed = ", ".join(roots) or "no folder (the roots given are empty)"
            return f"no indexed skill is under {listed}: index it first (`skillpilot index FOLDER`)"
        if is_small_talk(query):
            return "the message asks for nothing a skill does (greetings, thanks, yes / no and numbers name no task)"
        return None

    def plan(self, message: str) -> RouteResult:
        """Route ``message`` and split it into ordered steps at every marker ("and", "then",
        然后 ...), not only the sequence markers ``route`` plans on by itself."""
        query = Query.of(message)
        result = self.route(query)
        if result.plan:
            return result
        return replace(result, plan=plan_steps(self, query, result.confidence))

    def search(self, query: str, top_k: int = 5) -> list[SearchHit]:
        """Ranked skills for ``query`` with OntoSkills' adaptive cut-off (min 0.4, gap 0.15), and
        for a one-to-three-word query the skills whose name or description mention every word
        below them (``retrieve.keywords``: the keyword floor, scores under 0.4)."""
        read = Query.of(query)
        catalog = self._catalog()
        with single_threaded_blas():
            ranking = self._rank(catalog, read)
        candidates = ranking.candidates
        calibration = self.calibration.for_share(catalog.example_share)
        keywords = ranking.scores.lists.get(BM25)
        if keywords is not None and not keywords.any():
            # None of the query's terms is in any skill (a Chinese query over English skills): the
            # keyword index cannot read it, as MiniLM cannot read Chinese, so it is not asked, and
            # the skills are scored on the evidence of the models that read the query.
            candidates = tuple(_unread(c, BM25) for c in candidates)
        hits: list[SearchHit] = []
        for position, candidate in enumerate(candidates[: max(top_k, 1) * 2]):
            score = candidate_confidence(calibration, candidates, ranking.method, position)
            hits.append(_hit(catalog.skills[candidate.index], score, tuple(sorted(candidate.ranks, key=str))))
        hits.sort(key=lambda h: -h.score)
        kept: list[SearchHit] = []
        for hit in hits[:top_k]:
            if hit.score < SEARCH_MIN_SCORE or (kept and kept[-1].score - hit.score > SEARCH_GAP):
                break
            kept.append(hit)
        terms = keyword_terms(read) if self.settings.enable_keyword and catalog.skills else []
        floor = keyword_floor(catalog.described, terms) if terms else np.zeros(0)
        shown = {h.id for h in kept}
        # Below the cut-off a mention ranks by its keyword floor alone, as the market scope's
        # keyword gate does, so that both scopes list the same skills for the same words.
        mentioned = [
            _hit(skill, float(floor[i]), (BM25,))
            for i in np.flatnonzero(floor)
            if (skill := catalog.skills[i]).id not in shown
        ]
        mentioned.sort(key=lambda h: (-h.score, h.id))
        return (kept + mentioned)[:top_k]

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
        read = Query.of(signal.query)
        with self._recent_lock:
            recent = self._recent_reads.get(read.text, {})
        with single_threaded_blas():
            vectors = {
                r.encoder.name: recent[r.encoder.name] if r.encoder.name in recent else r.encode(read.text)
                for r in catalog.dense
                if r.reads(read)
            }
        return self._feedback_store.record(canonical, vectors)

    def _remember_read(self, text: str, vectors: Mapping[str, np.ndarray]) -> None:
        if not vectors:
            return
        with self._recent_lock:
            self._recent_reads[text] = vectors
            self._recent_reads.move_to_end(text)
            while len(self._recent_reads) > RECENT_READS:
                self._recent_reads.popitem(last=False)

    def undo_feedback(self, signal_id: int) -> Signal:
        """Forget one recorded signal (``FeedbackNotFoundError`` if there is none with that id);
        routing stops using it from the next route on. Returns the signal."""
        return self._feedback_store.undo(signal_id)

    def feedback_signals(self) -> list[Signal]:
        """Every recorded feedback signal, oldest first (their ids are what ``undo_feedback`` takes)."""
        return self._feedback_store.signals()

    def feedback_stats(self) -> FeedbackStats:
        """The signals recorded, how many the model uses (whole ``feedback_batch`` batches; implicit
        ones only with ``feedback_implicit``) and the per-skill weights they give."""
        return self._feedback_store.stats(self.settings.feedback_batch, self.settings.feedback_implicit)

    def reset_feedback(self) -> int:
        """Forget every feedback signal (routing is as shipped from the next route on); returns
        how many there were."""
        return self._feedback_store.reset()

    # -- the routing log, read ----------------------------------------------------------------
    def log_entries(
        self, where: LogFilter | None = None, offset: int = 0, limit: int | None = None
    ) -> tuple[list[LogEntry], int]:
        """The logged decisions ``where`` selects (every one when None), newest first: ``limit``
        of them (all when None) from ``offset``, and how many it selects in all."""
        return self._log.page(where or LogFilter(), offset, limit)

    def log_surfaces(self) -> list[str]:
        """Every surface with a decision in the routing log, sorted."""
        return self._log.surfaces()

    def log_decisions(self, since: float) -> dict[str, int]:
        """How many decisions of each kind (hard, soft, passthrough) were logged since ``since``
        (epoch seconds)."""
        return self._log.decisions(since)

    def log_latency(self, since: float, buckets: int, now: float | None = None) -> list[SurfaceLatency]:
        """Each surface's routing-time percentiles from ``since`` to ``now``, overall and in
        ``buckets`` equal slices; surfaces sorted by name."""
        return self._log.latency(since, buckets, now)

    def stats(self) -> Stats:
        """What the index holds, what routing lacks (``missing_vectors``: skills per encoder
        without vectors) and what it should not hold (``orphan_vectors``: removed by reindex)."""
        catalog = self._catalog()
        skills = catalog.skills
        last = self.store.meta("last_updated")
        return Stats(
            skills=len(skills),
            roots=tuple(self.store.roots()),
            skipped=tuple(self.store.skipped()),
            conflict_groups=len(catalog.conflicts),
            low_quality=tuple(s.id for s in skills if s.fingerprint.quality_issues),
            last_updated=float(last) if last else None,
            embed_provider=self.settings.embed_provider if self.settings.enable_semantic else "off",
            index_path=str(self.store.path),
            model_cache=str(default_model_cache()),
            missing_vectors={m.encoder: m.skills for m in catalog.missing},
            orphan_vectors=self.store.orphan_vectors(),
            nearest_neighbours=catalog.nearest_neighbours,
            examples=catalog.examples.skills,
        )


def _unread(candidate: Candidate, retriever: RetrieverId) -> Candidate:
    """``candidate`` as if ``retriever`` had not been asked (its scores were all zero, so RRF
    counted none of them and the fused score holds none of its evidence)."""
    return replace(
        candidate,
        ranks={r: rank for r, rank in candidate.ranks.items() if r != retriever},
        raw={r: score for r, score in candidate.raw.items() if r != retriever},
    )


def _hit(skill: IndexedSkill, score: float, matched_by: tuple[RetrieverId, ...]) -> SearchHit:
    return SearchHit(
        id=skill.id,
        name=skill.name,
        key=skill.key,
        path=skill.skill.path,
        description=skill.skill.description,
        score=round(score, 4),
        matched_by=matched_by,
    )


def _ref(skill: IndexedSkill) -> SkillRef:
    return SkillRef(
        id=skill.id,
        name=skill.name,
        path=skill.skill.path,
        description=skill.skill.description,
        key=skill.key,
    )


def _return_freed_memory() -> None:
    """Give the heap the catalog build (and a replaced catalog) freed back to the system.

    glibc keeps freed blocks for reuse; after a load that is the snapshot's rows and blobs,
    ~80 MB at 10,000 skills that would otherwise stay in the router's resident set for good.
    """
    if sys.platform != "linux":
        return
    with contextlib.suppress(OSError, AttributeError):  # not glibc (musl): nothing to trim with
        ctypes.CDLL("libc.so.6").malloc_trim(0)
