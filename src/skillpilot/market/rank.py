"""Re-ranking: fused relevance plus marketplace signals, then diversity for related lists.

Input: per candidate, its RRF relevance and ranks (from ``skillpilot.fuse.rrf_scores``), its
listing and a weight :class:`~skillpilot.market.catalog.Profile`. Output: :class:`Ranked`
candidates, best first, each with every signal's 0-1 value, its weighted contribution and the
sentences that explain them.

    final(d) = sum over signals s of weight_s * s(d)      (weights: the profile)

    relevance(d)  = RRF(d) / RRF_max, RRF_max = L / (k + 1) for L retrievers (k = 60): 1 when
                    every retriever ranks d first (Cormack, Clarke & Buettcher 2009)
    quality(d)    = the declared 0-1 quality, else 0.5 (neutral)
    popularity(d) = ln(1 + installs) / ln(1 + most installs in the catalog)
    recency(d)    = 2 ** (-age_days / half_life_days) from ``updated``, 0 when unknown
    trust(d)      = official 1.0, verified 0.7, local 0.5, community 0.3
    category(d)   = 1 when d shares a category with the related list's subject, else 0

Related lists then pick by Maximal Marginal Relevance (Carbonell & Goldstein, SIGIR 1998):

    MMR = argmax over d in R \\ S of  lambda * final(d) - (1 - lambda) * max over s in S of sim(d, s)

with ``sim`` the cosine of the two skills' public vectors, so a second card must be good *and*
not a rewording of the first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..fuse import RRF_K
from .catalog import NEUTRAL_QUALITY, SIGNALS, TRUST_VALUES, Listing, Profile

DAY = 86400.0


@dataclass
class Ranked:
    """One candidate through re-ranking; ``index`` is its catalog position."""

    index: int
    relevance: float
    similarity: float | None
    ranks: dict[str, int]
    signals: dict[str, float] = field(default_factory=dict)
    contributions: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    notes: list[str] = field(default_factory=list)


def relevance_of(rrf: float, retrievers: int) -> float:
    """RRF on a 0-1 scale: 1 when every retriever ranked the skill first."""
    return rrf / (retrievers / (RRF_K + 1)) if retrievers else 0.0


def signals_of(
    listing: Listing, profile: Profile, now: float, most_installs: int, shares_category: bool
) -> dict[str, float]:
    """The 0-1 value of every non-relevance signal for one skill."""
    installs = listing.installs or 0
    age_days = max(0.0, (now - listing.updated) / DAY) if listing.updated is not None else None
    return {
        "quality": NEUTRAL_QUALITY if listing.quality is None else listing.quality,
        "popularity": math.log1p(installs) / math.log1p(most_installs) if most_installs else 0.0,
        "recency": 0.0 if age_days is None else 2.0 ** (-age_days / profile.recency_half_life_days),
        "trust": TRUST_VALUES[listing.trust_tier],
        "category": 1.0 if shares_category else 0.0,
    }


def score(candidates: list[Ranked], profile: Profile) -> list[Ranked]:
    """Weighted sum of signals (``signals`` must be filled in), best first, ties by position."""
    for candidate in candidates:
        candidate.signals["relevance"] = candidate.relevance
        candidate.contributions = {
            s: profile.weight(s) * candidate.signals[s] for s in SIGNALS if profile.weight(s) > 0
        }
        candidate.score = sum(candidate.contributions.values())
    return sorted(candidates, key=lambda c: (-c.score, c.index))


def explain(
    shown: Sequence[Ranked],
    pool: Sequence[Ranked],
    listings: Sequence[Listing],
    names: Mapping[str, str],
) -> None:
    """Fill the ``notes`` of each shown candidate: what the retrievers said, which signals lifted
    or held it back (its contribution versus the pool's mean) and where relevance alone put it."""
    if not pool:
        return
    by_relevance = sorted(pool, key=lambda c: (-c.relevance, c.index))
    relevance_place = {c.index: n for n, c in enumerate(by_relevance, start=1)}
    means = {s: sum(c.contributions.get(s, 0.0) for c in pool) / len(pool) for s in pool[0].contributions}
    for place, candidate in enumerate(shown, start=1):
        listing = listings[candidate.index]
        evidence = ", ".join(f"{names.get(r, r)} rank {n}" for r, n in sorted(candidate.ranks.items()))
        notes = [
            f"relevance {candidate.relevance:.2f} ({evidence})"
            if evidence
            else "no query: ordered by its signals alone"
        ]
        if candidate.similarity is not None:
            notes.append(f"public-text similarity {candidate.similarity:.2f}")
        for signal, value in candidate.contributions.items():
            delta = value - means[signal]
            if signal != "relevance" and abs(delta) >= 0.005:
                verb = "lifted" if delta > 0 else "held back"
                notes.append(
                    f"{signal} {candidate.signals[signal]:.2f}{_detail(signal, listing)} {verb} it "
                    f"({delta:+.3f} vs the average candidate)"
                )
        if relevance_place[candidate.index] != place:
            notes.append(f"shown #{place}; #{relevance_place[candidate.index]} by relevance alone")
        candidate.notes = notes + candidate.notes


def _detail(signal: str, listing: Listing) -> str:
    if signal == "popularity" and listing.installs is not None:
        return f" ({listing.installs:,} installs)"
    if signal == "trust":
        return f" ({listing.trust_tier})"
    if signal == "category" and listing.categories:
        return f" ({', '.join(listing.categories)})"
    if signal == "quality" and listing.quality is None:
        return " (not rated)"
    return ""


def mmr(
    ranked: Sequence[Ranked],
    similarity: Callable[[int, int], float],
    k: int,
    lam: float,
    label: Callable[[int], str],
) -> list[Ranked]:
    """Maximal Marginal Relevance selection of ``k`` of ``ranked`` (Carbonell & Goldstein 1998);
    each pick notes the redundancy penalty it paid and to whom."""
    chosen: list[Ranked] = []
    left = list(ranked)
    while left and len(chosen) < k:
        best, best_value, best_penalty, rival = left[0], -math.inf, 0.0, None
        for candidate in left:
            redundancy, nearest = max(
                ((similarity(candidate.index, s.index), s.index) for s in chosen), default=(0.0, None)
            )
            value = lam * candidate.score - (1 - lam) * redundancy
            if value > best_value:
                best, best_value, best_penalty, rival = candidate, value, redundancy, nearest
        if rival is not None:
            best.notes.append(
                f"diversity: similarity {best_penalty:.2f} to {label(rival)} cost {(1 - lam) * best_penalty:.3f}"
            )
        chosen.append(best)
        left.remove(best)
    return chosen
