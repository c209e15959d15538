"""The facade: ``SkillPilot`` wires the stages and is the library's public entry point.

    skills/      load SKILL.md folders / tool catalogs        -> Skill
    fingerprint  derive routing signals                        -> Fingerprint
    index/       store them (SQLite) with their vectors        -> IndexedSkill
    retrieve/    fast path (triggers), BM25, dense (per model) -> Hit lists
    fuse         Reciprocal Rank Fusion + multipliers          -> Candidate list
    decide       calibrated confidence + thresholds            -> RouteResult

Everything heavy (the index, the models, the BM25 postings) is loaded once on first use and
reloaded only when the store's generation changes, so a long-lived router stays warm.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from .config import Settings, load_settings
from .decide import Calibration, confidence_signals, decide, shipped_calibration
from .encoders import Encoder, get_encoder
from .errors import SkillNotFoundError
from .fingerprint import unmet_preconditions
from .fuse import Candidate, fuse, weight_for
from .index import SkillStore, assign_ids
from .index.builder import Progress, build_index, embed_missing
from .index.sqlite import SQLiteStore
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
from .retrieve.bm25 import BM25Retriever
from .retrieve.dense import DenseRetriever, embedding_texts
from .retrieve.fast import FastHit, FastMatcher
from .text import cap_query

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
class _Catalog:
    """Everything routing needs in memory, built from one store generation."""

    generation: int
    skills: list[IndexedSkill]
    fast: FastMatcher | None
    bm25: BM25Retriever | None
    dense: list[DenseRetriever]
    multipliers: np.ndarray
    unmet: list[tuple[str, ...]]


class SkillPilot:
    """Index skills and route messages to them. ``SkillPilot(home=..., **setting_overrides)``."""

    def __init__(
        self,
        home: Path | str | None = None,
        settings: Settings | None = None,
        store: SkillStore | None = None,
        **overrides: Any,
    ) -> None:
        if settings is None:
            settings = load_settings(Path(home).expanduser() if home else None, **overrides)
        elif overrides:
            settings = settings.with_overrides(**overrides)
        self.settings = settings
        # Routing multiplies one query vector by the skill matrix: with several BLAS threads
        # that small product spends more time synchronising than computing (10 ms instead of
        # 0.1 ms on a busy 2-core machine), so SkillPilot keeps BLAS single-threaded.
        threadpool_limits(limits=1, user_api="blas")
        self._store = store
        self._encoders: list[Encoder] | None = None
        self._catalog_cache: _Catalog | None = None
        self.calibration: Calibration = shipped_calibration()

    # -- parts, loaded on first use -------------------------------------------------------
    @property
    def store(self) -> SkillStore:
        if self._store is None:
            self._store = SQLiteStore(self.settings.index_path)
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

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        self._catalog_cache = None

    # -- indexing ---------------------------------------------------------------------------
    def index(
        self, paths: Sequence[Path | str], replace: bool = False, progress: Progress | None = None
    ) -> IndexReport:
        """Add or refresh skill roots (folders of SKILL.md files, or JSON tool catalogs)."""
        return build_index(
            self.store,
            [Path(p) for p in paths],
            encoders=self.encoders,
            texts_for=embedding_texts,
            replace_roots=replace,
            progress=progress,
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
        missing = embed_missing(self.store, stored, self.encoders, embedding_texts)
        if missing:
            log.info("embedded %d skills the index had no vectors for", missing)
            generation = self.store.generation()
        skills = assign_ids(stored)
        dense = []
        for encoder in self.encoders:
            vectors = self.store.vectors(encoder.name)
            dense.append(
                DenseRetriever(encoder, [vectors[(s.skill.root, s.key)] for s in skills])
            )
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
        )
        self._catalog_cache = cached
        return cached

    def _trust_multiplier(self, skill: IndexedSkill) -> float:
        tier = self.settings.trust_tiers.get(skill.id, skill.skill.trust_tier)
        return TRUST_MULTIPLIERS.get(tier, 1.0)

    # -- routing ----------------------------------------------------------------------------
    def score_lists(self, query: str) -> tuple[dict[str, np.ndarray], list[FastHit], Method]:
        """Every retriever's score for every skill (catalog order), the fast-path hits, and
        which path answered. Public for calibration and benchmarks."""
        catalog = self._catalog()
        size = len(catalog.skills)
        fast_hits = [
            h for h in (catalog.fast.match(query) if catalog.fast else []) if h.score >= FAST_EVIDENCE_SCORE
        ]
        lists: dict[str, np.ndarray] = {}
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
            for retriever in catalog.dense:
                lists[retriever.name] = retriever.scores(query)
            keyword_found = bool(fast_hits) or bool(catalog.bm25 and lists["bm25"].any())
            method = ("hybrid" if keyword_found else "semantic") if catalog.dense else "fast"
        return lists, fast_hits, method

    @staticmethod
    def _routes_at_once(fast_hits: list[FastHit], bm25: np.ndarray | None) -> bool:
        """The spec's fast path: one skill's trigger phrase is in the message (score >= 8) and
        the keyword ranking agrees it is the best match. Then the models are not even asked."""
        triggered = {h.index for h in fast_hits if h.score >= FAST_ROUTE_SCORE}
        if len(triggered) != 1:
            return False
        return bm25 is None or int(np.argmax(bm25)) in triggered

    def _rank(
        self, query: str
    ) -> tuple[_Catalog, list[Candidate], Method, list[FastHit], dict[str, np.ndarray]]:
        catalog = self._catalog()
        if not catalog.skills:
            return catalog, [], "no-match", [], {}
        lists, fast_hits, method = self.score_lists(query)
        candidates = fuse(lists, self.calibration.fusion_weights, catalog.multipliers)
        if not candidates:
            method = "no-match"
        return catalog, candidates, method, fast_hits, lists

    def route(self, query: str, trace: bool = False) -> RouteResult:
        """Pick the skill for ``query``; always one ``RouteResult`` (pass-through is a result)."""
        started = time.perf_counter()
        query = cap_query(query)
        catalog, candidates, method, fast_hits, lists = self._rank(query)
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
        confidence = self.calibration.probability(signals)
        if method == "fast":
            confidence = max(confidence, FAST_ROUTE_CONFIDENCE)
        decision = decide(confidence, self.settings.hard_threshold, self.settings.soft_threshold)
        top = candidates[0]
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
            self._trace(catalog, lists, candidates, fast_hits, signals, confidence, decision)
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
            reasons=self._reasons(top, fast_hits, catalog, candidates),
            unmet_preconditions=catalog.unmet[top.index],
            trace=stages,
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
        )

    def _reasons(
        self, top: Candidate, fast_hits: list[FastHit], catalog: _Catalog, candidates: list[Candidate]
    ) -> tuple[str, ...]:
        reasons: list[str] = []
        for hit in fast_hits:
            if hit.index == top.index:
                reasons.extend(hit.evidence)
        for name in sorted(top.raw):
            if name == "fast" or name not in top.ranks:
                continue
            label = "keywords (BM25)" if name == "bm25" else f"meaning ({name.split(':', 1)[1]})"
            reasons.append(f"{label}: rank {top.ranks[name]}, score {top.raw[name]:.3f}")
        if top.multiplier != 1.0:
            reasons.append(f"score multiplied by {top.multiplier:.2f} (trust tier / preconditions)")
        if len(candidates) > 1:
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
                ),
            )
        )
        return tuple(stages)

    def search(self, query: str, top_k: int = 5) -> list[SearchHit]:
        """Ranked skills for ``query`` with OntoSkills' adaptive cut-off (min 0.4, gap 0.15)."""
        catalog, candidates, _, _, _ = self._rank(cap_query(query))
        hits: list[SearchHit] = []
        for position, candidate in enumerate(candidates[: max(top_k, 1) * 2]):
            score = self.calibration.probability(confidence_signals(candidates, position))
            skill = catalog.skills[candidate.index]
            hits.append(
                SearchHit(
                    id=skill.id,
                    name=skill.name,
                    key=skill.key,
                    path=skill.skill.path,
                    description=skill.skill.description,
                    score=round(score, 4),
                    matched_by=tuple(sorted(candidate.ranks)),
                )
            )
        hits.sort(key=lambda h: -h.score)
        kept: list[SearchHit] = []
        for hit in hits[:top_k]:
            if hit.score < SEARCH_MIN_SCORE or (kept and kept[-1].score - hit.score > SEARCH_GAP):
                break
            kept.append(hit)
        return kept

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

    def stats(self) -> Stats:
        skills = self._catalog().skills
        last = self.store.meta("last_updated")
        return Stats(
            skills=len(skills),
            roots=tuple(self.store.roots()),
            skipped=tuple(self.store.skipped()),
            conflict_groups=0,
            low_quality=tuple(s.id for s in skills if s.fingerprint.quality_issues),
            last_updated=float(last) if last else None,
            embed_provider=self.settings.embed_provider if self.settings.enable_semantic else "off",
            index_path=str(self.settings.index_path),
        )


def _ref(skill: IndexedSkill) -> SkillRef:
    return SkillRef(
        id=skill.id,
        name=skill.name,
        path=skill.skill.path,
        description=skill.skill.description,
        key=skill.key,
    )
