"""Fusion: one score vector per retriever in (every skill scored), one ranking out.

Two fusions, each for what it is good at:

- Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009) picks the candidate pool:
  ``rrf(d) = sum over retrievers of 1 / (k + rank_r(d))`` with k = 60, over the ranks of the whole
  catalog (a skill missing from one retriever's top-k is not punished for it). It needs no score
  normalisation, so it is the robust way to say *which* skills are in the race.
- Inside the pool, the order comes from a learned linear combination of each retriever's
  per-query z-scores (``(score - mean) / std`` over the catalog), with weights fitted on the
  development queries (``benchmarks/calibrate.py``). Unlike ranks, z-scores keep *how far*
  ahead a skill is, which is what separates a clear winner from a coin toss.

A :class:`Race` limits the pool to some skills (the ones under an agent host's roots, or the
nearest-neighbour candidates of a catalog too large to score whole). Ranks, RRF scores and
z-scores stay those of the whole catalog, which the calibrated confidence was fitted on: a skill
that is only the best of the allowed ones does not look like the catalog's best.

Multipliers (trust tier, precondition penalty, learned feedback weight) treat ``exp(score)`` as
the skill's relevance, so multiplying relevance by m adds ``ln m`` to the score; they are applied
before calibration, so the calibrated confidence sees the final ranking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .model import FAST, Candidate, RetrieverId

# One score per catalog skill, per retriever.
ScoreLists = Mapping[RetrieverId, np.ndarray]

RRF_K = 60
POOL_SIZE = 20
FAST_SCALE = 10.0
# The weight of a list the calibration has not fitted (a plugin's, until
# ``benchmarks/calibrate.py --write`` fits it): about what it gives the keyword lists (bm25
# 0.58, fast 0.54), so a new retriever counts from its first route, no more than a fitted one.
UNCALIBRATED_WEIGHT = 0.5


@dataclass(frozen=True)
class Race:
    """Which skills may enter the pool, and how to read lists that do not score every skill.

    ``eligible`` (a mask over the catalog) holds the skills the pool is chosen from; every
    retriever still ranks the whole catalog. ``voters`` says, per retriever, which skills it
    votes for in RRF (a nearest-neighbour search ranks only what it found), the others vote as
    ``fuse`` says; ``spread`` gives a retriever's (mean, std) over the catalog where its list
    cannot (one estimated on a sample, for a list that scores only the candidates)."""

    eligible: np.ndarray
    voters: Mapping[RetrieverId, np.ndarray] = field(default_factory=dict)
    spread: Mapping[RetrieverId, tuple[float, float]] = field(default_factory=dict)


def zscore(scores: np.ndarray) -> np.ndarray:
    """Per-query standardisation; a retriever with no opinion (all equal) contributes zeros."""
    std = float(scores.std())
    if std < 1e-9:
        return np.zeros_like(scores, dtype=np.float64)
    standardised: np.ndarray = (scores - scores.mean()) / std
    return standardised


def catalog_ranks(scores: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """Every skill's 1-based rank in one score list (ties: lower catalog position first);
    ``order``: the list's whole ``top_order``, when the caller has it already."""
    size = len(scores)
    if order is None:
        order = np.lexsort((np.arange(size), -scores))
    ranks = np.empty(size, dtype=np.int64)
    ranks[order] = np.arange(1, size + 1)
    return ranks


def rrf_scores(lists: ScoreLists, k: int = RRF_K, orders: Mapping[RetrieverId, np.ndarray] | None = None) -> np.ndarray:
    """Reciprocal Rank Fusion over full-catalog rankings; zero keyword scores do not count.
    ``orders``: each list's whole ``top_order``, when the caller has them already."""
    size = len(next(iter(lists.values())))
    fused = np.zeros(size, dtype=np.float64)
    for name, scores in lists.items():
        contribution = 1.0 / (k + catalog_ranks(scores, orders[name] if orders is not None else None))
        if not name.is_dense:
            contribution[scores <= 0] = 0.0
        fused += contribution
    return fused


def weight_for(weights: Mapping[str, float], retriever: RetrieverId) -> float:
    """A retriever's fusion weight (``weights`` are keyed by label); one without a fitted weight
    shares its kind's (``dense:*`` for a new model), else gets ``UNCALIBRATED_WEIGHT``."""
    label = str(retriever)
    if label in weights:
        return weights[label]
    shared = retriever.shared_label
    return weights[shared] if shared is not None and shared in weights else UNCALIBRATED_WEIGHT


def normalised(name: RetrieverId, scores: np.ndarray) -> np.ndarray:
    """Retriever scores on a common scale: z-scores, except the fast path's fixed 0-10 scale
    (mostly zeros, so its z-score would grow with the catalog size)."""
    return scores / FAST_SCALE if name == FAST else zscore(scores)


def _normalised_at(
    name: RetrieverId, scores: np.ndarray, positions: np.ndarray, spread: tuple[float, float] | None = None
) -> np.ndarray:
    """``normalised(name, scores)[positions]``, with the catalog read once for its mean and std
    (or those given as ``spread``)."""
    if name == FAST:
        at: np.ndarray = scores[positions] / FAST_SCALE
        return at
    mean, std = spread if spread is not None else (float(scores.mean()), float(scores.std()))
    if std < 1e-9:
        return np.zeros(len(positions), dtype=np.float64)
    standardised: np.ndarray = (scores[positions] - mean) / std
    return standardised


def top_order(scores: np.ndarray, count: int) -> np.ndarray:
    """The catalog positions of the ``count`` best scores, best first (ties: lower position first),
    exactly what a full sort would put first, for the price of one partition of a few of them."""
    size = len(scores)
    if count >= size:
        return np.lexsort((np.arange(size), -scores))
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    best, floor = _holding_top(scores, count)
    held = scores[best]
    if floor is not None and np.count_nonzero(held > floor) < count:
        # Fewer than ``count`` beat the floor, and with it at least ``count`` are there: the
        # floor is the cut (a keyword list whose best few hundred end in zeros).
        cut = floor
    else:
        cut = held[np.argpartition(-held, count - 1)[count - 1]]
    above = best[held > cut]
    tied = best[held == cut][: count - len(above)]
    chosen = np.concatenate([above, tied])
    return chosen[np.lexsort((chosen, -scores[chosen]))]


# Scores sampled to guess where a catalog's best ``count`` begin; the guess asks for twice the
# expected number, so it almost never falls short (then every skill is partitioned).
_SAMPLE = 2048


def _holding_top(scores: np.ndarray, count: int) -> tuple[np.ndarray, float | None]:
    """Positions (ascending) of a few skills among which the ``count`` best all are, and the
    floor they reach (None: every skill): those at or above a threshold a strided sample
    suggests, checked to be at least ``count``. Partitioning those few instead of the catalog
    is what makes ``top_order`` cheap."""
    step = len(scores) // _SAMPLE
    if step < 2:
        return np.arange(len(scores)), None
    sample = scores[::step]
    wanted = min(len(sample), 2 * (count // step) + 8)
    threshold = np.partition(sample, len(sample) - wanted)[len(sample) - wanted]
    best = np.flatnonzero(scores >= threshold)
    return (best, threshold) if len(best) >= count else (np.arange(len(scores)), None)


def _ranks_of(scores: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The 1-based catalog ranks (as ``catalog_ranks``) of ``positions`` only: one pass over the
    catalog, however many positions are asked about."""
    values = scores[positions]
    # Only scores not below the lowest asked value can beat or tie one (NaN stays in, as it
    # would in a full ranking), and those are usually a small part of the catalog.
    contenders = np.flatnonzero(~(scores < values.min()))
    rivals = scores[contenders]
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    # below[i] = how many asked values are strictly below rival i; a rival beats the asked
    # value j exactly when below > j.
    below = np.searchsorted(ordered, rivals, side="left")
    beaten_by = np.cumsum(np.bincount(below, minlength=len(ordered) + 1)[::-1])[::-1]
    at_most = np.searchsorted(ordered, rivals, side="right")
    reached_by = np.cumsum(np.bincount(at_most, minlength=len(ordered) + 1)[::-1])[::-1]
    greater = np.empty(len(values), dtype=np.int64)
    greater[order] = beaten_by[1:]
    equal = np.empty(len(values), dtype=np.int64)
    equal[order] = reached_by[1:] - beaten_by[1:]
    ranks = greater + 1
    tied = np.flatnonzero(equal > 1)
    if len(tied):
        # Equal scores rank by catalog position (copies of one text score alike): count the
        # equal ones before each skill among the few skills holding a tied value.
        holders = contenders[np.isin(rivals, values[tied])]
        held = scores[holders]
        for n in tied.tolist():
            ranks[n] += np.count_nonzero((held == values[n]) & (holders < positions[n]))
    return ranks


# Per retriever, the skills it votes for in RRF, where fusion is told (``Race.voters``).
Voters = Mapping[RetrieverId, np.ndarray]


def _contributes(name: RetrieverId, scores: np.ndarray, voters: Voters | None = None) -> np.ndarray | None:
    """Which skills a retriever votes for in RRF: those ``voters`` name, else every one for a
    dense retriever (None), the positive scores for keyword ones."""
    if voters and name in voters:
        return voters[name]
    return None if name.is_dense else scores > 0


def rrf_pool(
    lists: ScoreLists, pool: int, k: int = RRF_K, race: Race | None = None
) -> tuple[np.ndarray, np.ndarray, dict[RetrieverId, np.ndarray]]:
    """The ``pool`` skills with the best ``rrf_scores`` (ties: lower position first; zero scores
    never), their RRF scores, and each retriever's best skills in order (at least ``2 * pool``),
    without ranking the whole catalog.

    Exact: each retriever's best ``depth`` skills are ranked; a skill outside all of them scores
    at most ``voters / (k + depth + 1)``; skills that could still beat the pool's last member are
    scored exactly; the depth doubles until that bound falls below the pool's last score. With
    ``race``, only its eligible skills enter the pool (ranked among the whole catalog)."""
    size = len(next(iter(lists.values())))
    depth = min(size, max(10 * pool, 64))
    if depth * 2 > size:
        # A first look at most of the catalog may as well be all of it: nothing is left to bound,
        # and without a race the whole catalog's RRF is the exact one, in a few array operations.
        depth = size
        if race is None:
            tops = {name: top_order(scores, size) for name, scores in lists.items()}
            fused = rrf_scores(lists, k, tops)
            entered = np.flatnonzero(fused > 0)
            best = np.lexsort((entered, -fused[entered]))[:pool]
            return entered[best], fused[entered][best], tops
    voters = race.voters if race is not None else None
    eligible = race.eligible if race is not None else None
    entrants = int(eligible.sum()) if eligible is not None else size
    while True:
        tops = {name: top_order(scores, depth) for name, scores in lists.items()}
        voted: dict[RetrieverId, np.ndarray] = {}
        open_lists: list[RetrieverId] = []
        for name, scores in lists.items():
            order = tops[name]
            votes = _contributes(name, scores, voters)
            if votes is not None:
                order = order[votes[order]]
            if len(order) == depth and depth < size:
                open_lists.append(name)
            voted[name] = order
        entered = np.concatenate(list(voted.values()))
        positions = np.unique(entered if eligible is None else entered[eligible[entered]])
        if not len(positions):
            return np.zeros(0, dtype=np.int64), np.zeros(0), tops
        outside = len(open_lists) / (k + depth + 1)
        known = {name: _ranks_in(order, positions) for name, order in voted.items()}
        exact = _exact_rrf(lists, positions, known, open_lists, pool, depth, k, voters)
        order = np.lexsort((positions, -exact))[:pool]
        settled = len(order) == pool and exact[order[-1]] > outside
        if depth >= size or settled or not open_lists or len(positions) == entrants:
            return positions[order], exact[order], tops
        depth = min(size, depth * 2)


def _ranks_in(order: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The 1-based place in ``order`` (distinct catalog positions) of each of ``positions``
    (ascending), 0 where it is not in ``order``."""
    ranks = np.zeros(len(positions), dtype=np.int64)
    at = np.minimum(np.searchsorted(positions, order), len(positions) - 1)
    found = positions[at] == order
    ranks[at[found]] = np.flatnonzero(found) + 1
    return ranks


def _exact_rrf(
    lists: ScoreLists,
    positions: np.ndarray,
    known: dict[RetrieverId, np.ndarray],
    open_lists: Sequence[RetrieverId],
    pool: int,
    depth: int,
    k: int,
    voters: Voters | None = None,
) -> np.ndarray:
    """RRF scores of ``positions`` (the skills some retriever ranked in its top ``depth``; their
    ranks there are ``known``, 0: not among them, and are filled in), summed in ``lists`` order as
    ``rrf_scores`` does. Skills that cannot reach the pool get a lower bound instead (their
    unknown ranks count zero), which is all the selection needs.

    A skill that might still reach the pool gets its missing ranks from a deeper look at each
    list (its best ``DEEPER * depth`` or so); below that look its rank is at least the look's
    size, and only a skill that this bound leaves hopeful is ranked against the whole list."""
    ranks = known
    least = {name: np.full(len(positions), depth + 1, dtype=np.int64) for name in open_lists}
    # Without open lists every rank is known, and no skill needs a bound.
    hopeful = _hopeful(lists, ranks, least, pool, k) if open_lists else np.zeros(0, dtype=bool)
    beyond: dict[RetrieverId, np.ndarray] = {}
    for name in open_lists:
        scores = lists[name]
        missing = hopeful & (ranks[name] == 0)
        if voters and name in voters:
            missing &= voters[name][positions]
        elif not name.is_dense:
            missing &= scores[positions] > 0
        asked = np.flatnonzero(missing)
        if len(asked):
            near, bound = _ranks_near(scores, positions[asked], DEEPER * depth)
            ranks[name][asked] = near
            least[name][asked[near == 0]] = bound
            beyond[name] = asked[near == 0]
    if any(len(asked) for asked in beyond.values()):
        hopeful = _hopeful(lists, ranks, least, pool, k)
        for name, asked in beyond.items():
            still = asked[hopeful[asked]]
            if len(still):
                ranks[name][still] = _ranks_of(lists[name], positions[still])
    fused = np.zeros(len(positions))
    for name in lists:
        fused += np.where(ranks[name] > 0, 1.0 / (k + np.maximum(ranks[name], 1)), 0.0)
    return fused


# How much deeper than the pool's first look the missing ranks of hopeful skills are looked for.
DEEPER = 8


def _hopeful(
    lists: ScoreLists,
    ranks: Mapping[RetrieverId, np.ndarray],
    least: Mapping[RetrieverId, np.ndarray],
    pool: int,
    k: int,
) -> np.ndarray:
    """Which skills could still be in the pool: the known ranks' RRF (a floor) plus, in each list
    still open, the most an unknown rank (at least ``least``) could add reaches the pool's
    ``pool``-th best floor."""
    floor = np.zeros(len(next(iter(ranks.values()))))
    ceiling = np.zeros(len(floor))
    for name in lists:
        found = ranks[name] > 0
        share = np.where(found, 1.0 / (k + np.maximum(ranks[name], 1)), 0.0)
        floor += share
        ceiling += share
        if name in least:
            ceiling += np.where(found, 0.0, 1.0 / (k + least[name]))
    cut = np.sort(floor)[::-1][min(pool, len(floor)) - 1]
    hopeful: np.ndarray = ceiling >= cut
    return hopeful


def _ranks_near(scores: np.ndarray, positions: np.ndarray, look: int) -> tuple[np.ndarray, int]:
    """The ranks (as ``_ranks_of``) of those ``positions`` among about the ``look`` best scores,
    0 for the others, and a rank every other one is at least."""
    best, floor = _holding_top(scores, look) if look < len(scores) else (None, None)
    if best is None or floor is None:
        return _ranks_of(scores, positions), 0
    near = ~(scores[positions] < floor)
    ranks = np.zeros(len(positions), dtype=np.int64)
    if near.any():
        ranks[near] = _ranks_of(scores, positions[near])
    # Every score at or above the floor beats one below it.
    return ranks, len(best) + 1


def fuse(
    lists: ScoreLists,
    weights: Mapping[str, float],
    multipliers: np.ndarray,
    pool: int = POOL_SIZE,
    race: Race | None = None,
) -> list[Candidate]:
    """Candidates best first: RRF picks the pool, the weighted z-score (+ ln multiplier) orders it.
    Only the pool is scored: the catalog is read by a partition and a mean/std per retriever.
    With ``race``, the pool holds its eligible skills only (see ``Race``)."""
    if not lists:
        return []
    pool_ids, rrf, tops = rrf_pool(lists, pool, race=race)
    spread = race.spread if race is not None else {}
    if not len(pool_ids):
        return []
    fused = np.zeros(len(pool_ids))
    for name, scores in lists.items():
        fused += weight_for(weights, name) * _normalised_at(name, scores, pool_ids, spread.get(name))
    fused = fused + np.log(multipliers[pool_ids])
    members = pool_ids.tolist()
    # Per retriever, each member's rank among its best 2 * pool (0 below) and raw score, read
    # column by column: this builds every route's candidates.
    ranks_at = {name: _places(order[: pool * 2].tolist(), members) for name, order in tops.items()}
    raw_at = {name: scores[pool_ids].tolist() for name, scores in lists.items()}
    candidates = [
        Candidate(
            index=i,
            score=score,
            rrf=votes,
            ranks={name: ranks[n] for name, ranks in ranks_at.items() if ranks[n]},
            raw={name: raw[n] for name, raw in raw_at.items()},
            multiplier=multiplier,
        )
        for n, (i, score, votes, multiplier) in enumerate(
            zip(members, fused.tolist(), rrf.tolist(), multipliers[pool_ids].tolist(), strict=True)
        )
    ]
    return sorted(candidates, key=lambda c: (-c.score, c.index))


def _places(order: list[int], members: list[int]) -> list[int]:
    """Each member's 1-based place in ``order``, 0 where it is not there."""
    place = {position: rank for rank, position in enumerate(order, 1)}
    return [place.get(member, 0) for member in members]
