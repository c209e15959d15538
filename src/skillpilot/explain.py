"""Explain: why a route went where it went, in words (``reasons``) and stage by stage (``trace``).

Input: the catalog, the :class:`~skillpilot.rank.Ranking` and the
:class:`~skillpilot.decide.Verdict` of one message. Output: the ``reasons`` a
:class:`~skillpilot.model.RouteResult` carries (the contest's outcome, feedback, the fast path's
evidence, the authors' redirects, each retriever's rank and score, multipliers, the margin over the
runner-up) and, when asked for, one :class:`~skillpilot.model.StageTrace` per stage: the fast path,
each retriever's top five (the example requests' retrievers among them), the example request of
each of the top three that came closest (when skills have examples), the redirects that applied
(only when one did), fusion, the decision.
A catalog missing some vectors, or routing from the store's nearest-neighbour candidates
(``index.annAbove``), says so in a first stage.
Nothing here changes a decision.
"""

from __future__ import annotations

import numpy as np

from .catalog import Catalog
from .decide import Calibration, Verdict
from .fuse import weight_for
from .model import BM25, FAST, Candidate, Match, RetrieverId, StageTrace
from .rank import Ranking
from .redirects import described
from .retrieve.ann import DEPTH

TRACE_TOP = 5


def _label(retriever: RetrieverId) -> str:
    if retriever.part == "examples":
        return f"example requests ({retriever.model or 'BM25'})"
    return "keywords (BM25)" if retriever == BM25 else f"meaning ({retriever.model})"


def closest_examples(catalog: Catalog, ranking: Ranking, skill: int) -> list[tuple[str, str, float]]:
    """(encoder, the skill's example request closest to the message, its cosine) per example
    retriever that read the message: which example matched, for ``explain``."""
    found = []
    vectors = ranking.scores.query_vectors
    for retriever in catalog.example_retrievers:
        vector = vectors.get(retriever.encoder.name)
        closest = retriever.closest(vector, skill) if vector is not None else None
        if closest is not None:
            found.append((retriever.encoder.name, catalog.examples.requests[skill][closest[0]], closest[1]))
    return found


def _about(match: Match) -> str:
    """The message a learned example came from, as far as ``log.queries`` kept it."""
    return repr(match.query) if match.query else f"signal #{match.signal} (message not kept)"


def reasons(catalog: Catalog, ranking: Ranking, verdict: Verdict) -> tuple[str, ...]:
    """Why the winner won, most decisive first."""
    top = verdict.candidates[0]
    candidates = verdict.candidates
    learned = ranking.learned
    said: list[str] = [verdict.resolution.reason] if verdict.resolution else []
    if learned is not None and learned.pinned == top.index:
        said.append("feedback: you corrected this very message to it")
    for match in learned.matches if learned else ():
        if match.skill == top.index:
            verb = "you chose it" if match.sign > 0 else f"you turned it down ({match.kind})"
            said.append(f"feedback: {verb} for a similar message: {_about(match)}")
    for hit in ranking.scores.fast_hits:
        if hit.index == top.index:
            said.extend(str(e) for e in hit.evidence)
    redirected = ranking.redirected
    for applied in redirected.applied if redirected else ():
        if top.index in (applied.source, applied.target):
            said.append(f"redirect: {described(applied, catalog.skills)}")
    for retriever in sorted(top.raw, key=str):
        if retriever == FAST or retriever not in top.ranks:
            continue
        said.append(f"{_label(retriever)}: rank {top.ranks[retriever]}, score {top.raw[retriever]:.3f}")
    for encoder, request, cosine in closest_examples(catalog, ranking, top.index):
        said.append(f"closest example request ({encoder}): {request!r}, cosine {cosine:.3f}")
    static = float(catalog.multipliers[top.index])
    if static != 1.0:
        said.append(f"score multiplied by {static:.2f} (trust tier / preconditions)")
    if redirected is not None and redirected.log_multipliers[top.index]:
        said.append(f"score multiplied by {np.exp(redirected.log_multipliers[top.index]):.2f} (redirect)")
    if learned is not None and learned.log_multipliers[top.index]:
        factor = np.exp(learned.log_multipliers[top.index])
        said.append(f"score multiplied by {factor:.2f} (feedback)")
    if len(candidates) > 1 and top.score >= candidates[1].score:
        rival = catalog.skills[candidates[1].index]
        said.append(f"beat {rival.id} by {top.score - candidates[1].score:.2f} fused score")
    return tuple(said)


def catalog_stages(catalog: Catalog) -> tuple[StageTrace, ...]:
    """First stages about the catalog: the encoders whose vectors the index lacks, and whether
    the candidates came from the store's nearest-neighbour index; () when neither applies."""
    stages = []
    if catalog.missing:
        stages.append(StageTrace("catalog: vectors missing", (), tuple(m.note for m in catalog.missing)))
    if catalog.nearest_neighbours:
        stages.append(
            StageTrace(
                "catalog: candidates from the HNSW index",
                (),
                (
                    f"{len(catalog.skills)} skills, more than index.annAbove: each model's {DEPTH} nearest "
                    f"skills and the keywords' best {DEPTH} race, scored exactly (z-scores over a sample)",
                ),
            )
        )
    return tuple(stages)


def trace(
    catalog: Catalog,
    ranking: Ranking,
    verdict: Verdict,
    calibration: Calibration,
    hard_threshold: float,
    soft_threshold: float,
) -> tuple[StageTrace, ...]:
    """The decision stage by stage (see the module docstring)."""
    skills = catalog.skills
    weights = calibration.fusion_weights_for(ranking.every_model_reads)
    partial = weights is not calibration.fusion_weights
    fast_hits = ranking.scores.fast_hits[:TRACE_TOP]
    lists = ranking.lists
    fused: tuple[Candidate, ...] = ranking.candidates
    stages = [
        *catalog_stages(catalog),
        StageTrace(
            "fast path (0-10; >= 8 routes at once)",
            tuple((skills[h.index].id, h.score) for h in fast_hits),
            tuple(f"{skills[h.index].id}: {', '.join(str(e) for e in h.evidence)}" for h in fast_hits)
            or ("no trigger or name matched",),
        ),
    ]
    for retriever, scores in lists.items():
        if retriever == FAST:
            continue
        order = np.lexsort((np.arange(len(scores)), -scores))[:TRACE_TOP]
        stages.append(StageTrace(str(retriever), tuple((skills[i].id, round(float(scores[i]), 4)) for i in order)))
    if ranking.method != "fast":
        stages.extend(
            StageTrace(r.name, (), ("not asked: an English-only model, and the message is mostly CJK",))
            for r in catalog.dense
            if r.id not in lists
        )
    if catalog.examples.skills:
        stages.append(
            StageTrace(
                f"example requests ({catalog.examples.skills} of {len(skills)} skills have them)",
                (),
                (
                    *(
                        tuple(
                            f"{skills[c.index].id}: {request!r} ({cosine:.3f}, {encoder})"
                            for c in fused[:3]
                            for encoder, request, cosine in closest_examples(catalog, ranking, c.index)
                        )
                        or ("no example request read this message",)
                    ),
                    # Which model decided depends on how many skills have examples (``Calibrations.for_share``).
                    f"fusion weights and confidence fitted on {calibration.fitted_on}",
                ),
            )
        )
    redirected = ranking.redirected
    if redirected is not None:
        moved = np.flatnonzero(redirected.log_multipliers)
        stages.append(
            StageTrace(
                "redirects: skills' own 'not for X, use Y'",
                tuple((skills[i].id, round(float(np.exp(redirected.log_multipliers[i])), 2)) for i in moved),
                tuple(described(a, skills) for a in redirected.applied),
            )
        )
    stages.append(
        StageTrace(
            "fusion: RRF pool, ordered by weighted z-scores + ln(multiplier)",
            tuple((skills[c.index].id, round(c.score, 3)) for c in fused[:TRACE_TOP]),
            (
                ("weights for a message not every model reads: " if partial else "weights: ")
                + ", ".join(f"{r}={weight_for(weights, r):.2f}" for r in lists),
            )
            + tuple(f"{skills[c.index].id}: x{c.multiplier:.2f}" for c in fused[:TRACE_TOP] if c.multiplier != 1.0),
        )
    )
    runner_up = (
        f"runner-up {skills[fused[1].index].id} lost by {fused[0].score - fused[1].score:.2f} fused score"
        if len(fused) > 1
        else "no runner-up"
    )
    resolution = verdict.resolution
    stages.append(
        StageTrace(
            "decision",
            (),
            (
                "signals: " + ", ".join(f"{k}={v:.3f}" for k, v in verdict.signals.items()),
                f"confidence {verdict.confidence:.3f} -> {verdict.decision} (hard >= {hard_threshold}, "
                f"soft >= {soft_threshold})",
                runner_up,
                *(
                    f"learned from feedback: {skills[m.skill].id} {'+' if m.sign > 0 else '-'}"
                    f"{m.strength:.2f} for {_about(m)}"
                    for m in (ranking.learned.matches if ranking.learned else ())
                ),
                f"conflict resolver: {resolution.reason if resolution else 'no contest'}",
            ),
        )
    )
    return tuple(stages)
