"""Conflicts: skills that overlap, found once per index generation, and settled at route time.

Detection (the spec's ConflictDetector, section 5.2). Input: the catalog and, per encoder, one
unit vector per skill (its ``name: description`` part). Two skills' similarity is the mean over
encoders of the cosine of those vectors. Groups are built by greedy average linkage over the
pairs at or above the threshold, strongest pair first: two groups merge only when the mean
similarity of all their cross pairs is at or above the threshold. Unlike the spec's union of
pairs, this does not chain (a ~ b ~ c ... into one group of 180 skills at 0.45). Guarantees: a
skill is in at most one group; every group has two or more members and a mean pairwise
similarity at or above the threshold. Cost: one blocked matrix product per encoder, keeping
only the pairs above the threshold.

The threshold is ``index.conflictThreshold`` (default 0.5), calibrated for the default local
encoders (MiniLM + multilingual USE) against the 71 hand-made overlap clusters of the 294-skill
development corpus (``benchmarks/conflict_eval.py``); the spec's 0.85 finds only near-copies
with these models.

Resolution (section 2.2), after fusion. Input: the fused candidates, the groups, the message and
all its fast-path matches, the user's ``prefer`` rules and the feedback adjustment. When the
winner's group has other members in the race, the winner among them is, in order: the one a
user rule names (``prefer: {a: b}`` means "b whenever a and b compete"); else, among members
whose fused score is within ``CONTEST_MARGIN`` of the best, the one with the most of: learned
feedback for messages like this one, trigger phrases found, then ``prefer_when`` phrases and
words of the message that only its name, description or keywords use, then the higher
declared ``route.priority``, then the higher fused score. Members outside the margin are not
contenders: the meaning and keyword evidence fusion weighed outranks a word or a priority.
Output: a ``Resolution`` naming the winner, the members it beat and the reason
(``chose slack-advanced over slack, slack-notifier: 'schedule', 'all channels'``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .model import Adjustment, Candidate, FastHit, IndexedSkill, Resolution
from .text import tokenize

# Rows of the similarity matrix computed at once: bounds memory at BLOCK x catalog floats.
BLOCK = 1024
# Fused-score units (weighted z-scores) within which a group rival is still a contender. On the
# development suites any margin up to 2 leaves every decision as fusion made it (4 breaks two);
# half of that keeps the author's and the user's signals decisive only in near-ties.
CONTEST_MARGIN = 1.0


@dataclass(frozen=True)
class ConflictGroup:
    """Skills one message could plausibly trigger together; ``indices`` are catalog positions."""

    id: int
    indices: tuple[int, ...]
    members: tuple[str, ...]
    keys: tuple[str, ...]
    similarity: float
    tip: str

    def to_dict(self) -> dict[str, Any]:
        """The group as surfaces show it (catalog positions are internal)."""
        return {
            "id": self.id,
            "members": list(self.members),
            "keys": list(self.keys),
            "similarity": self.similarity,
            "tip": self.tip,
        }


def similar_pairs(matrices: Sequence[np.ndarray], threshold: float) -> list[tuple[float, int, int]]:
    """Every pair (i < j) whose mean cosine over ``matrices`` (one (n, dim) array of unit rows per
    encoder) is at least ``threshold``, as (similarity, i, j), strongest first."""
    if not matrices or not len(matrices[0]):
        return []
    size = len(matrices[0])
    pairs: list[tuple[float, int, int]] = []
    for start in range(0, size, BLOCK):
        stop = min(size, start + BLOCK)
        block = sum(m[start:stop] @ m.T for m in matrices) / len(matrices)
        rows, cols = np.nonzero(block >= threshold)
        for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + row
            if col > i:
                pairs.append((float(block[row, col]), i, col))
    pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
    return pairs


def _mean_similarity(matrices: Sequence[np.ndarray], a: Sequence[int], b: Sequence[int]) -> float:
    return float(np.mean([m[list(a)] @ m[list(b)].T for m in matrices]))


def detect_conflicts(
    skills: Sequence[IndexedSkill], matrices: Sequence[np.ndarray], threshold: float
) -> list[ConflictGroup]:
    """Conflict groups of ``skills`` (see the module docstring), most similar group first."""
    groups: dict[int, list[int]] = {}
    owner: dict[int, int] = {}
    for _, i, j in similar_pairs(matrices, threshold):
        gi, gj = owner.get(i, i), owner.get(j, j)
        if gi == gj:
            continue
        left, right = groups.get(gi, [i]), groups.get(gj, [j])
        if _mean_similarity(matrices, left, right) < threshold:
            continue
        merged = left + right
        groups.pop(gj, None)
        groups[gi] = merged
        for member in merged:
            owner[member] = gi
    found = []
    for members in groups.values():
        ordered = tuple(sorted(members))
        pair_sims = [
            _mean_similarity(matrices, [a], [b]) for n, a in enumerate(ordered) for b in ordered[n + 1 :]
        ]
        found.append((round(float(np.mean(pair_sims)), 4), ordered))
    found.sort(key=lambda g: (-g[0], g[1]))
    return [
        ConflictGroup(
            id=number,
            indices=indices,
            members=tuple(skills[i].id for i in indices),
            keys=tuple(skills[i].key for i in indices),
            similarity=similarity,
            tip=_tip([skills[i] for i in indices]),
        )
        for number, (similarity, indices) in enumerate(found, start=1)
    ]


def _tip(members: Sequence[IndexedSkill]) -> str:
    """What an author or user can do so the router tells these skills apart."""
    names = [m.name for m in members]
    if len(set(names)) < len(names):
        return (
            "several skills share a name: remove the copies you do not use, or add "
            "`prefer: {<id>: <id you want>}` to config.yaml"
        )
    bare = [m.id for m in members if not m.skill.route.prefer_when]
    if bare:
        return f"add route.prefer_when to {', '.join(bare)} to disambiguate"
    if len({m.skill.route.priority for m in members}) == 1:
        return "give route.priority (1-10) to the one that should win a tie"
    return "disambiguated by route.prefer_when and route.priority"


def group_of(groups: Sequence[ConflictGroup]) -> dict[int, ConflictGroup]:
    """Catalog position -> its group."""
    return {i: group for group in groups for i in group.indices}


def _declared_evidence(hit: FastHit | None) -> tuple[list[str], list[str]]:
    """(trigger phrases, prefer_when phrases) the fast path found for one skill."""
    evidence = hit.evidence if hit else ()
    return [e.text for e in evidence if e.kind == "trigger"], [e.text for e in evidence if e.kind == "prefer_when"]


def own_words(query: str, member: IndexedSkill, rivals: Sequence[IndexedSkill]) -> list[str]:
    """Query words that this member's name, description or keywords use and no rival's do."""

    def vocabulary(skill: IndexedSkill) -> set[str]:
        text = " ".join((skill.name.replace("-", " "), skill.skill.description, *skill.fingerprint.keywords))
        return set(tokenize(text))

    theirs = set().union(*(vocabulary(r) for r in rivals)) if rivals else set()
    mine = vocabulary(member) - theirs
    seen: dict[str, str] = {}
    for word in re.findall(r"[^\W_]+", query.lower()):
        terms = tokenize(word)
        if terms and terms[0] in mine:
            seen.setdefault(terms[0], word)
    return list(seen.values())


def resolve(
    candidates: Sequence[Candidate],
    skills: Sequence[IndexedSkill],
    groups: Mapping[int, ConflictGroup],
    query: str,
    evidence: Sequence[FastHit],
    prefer: Mapping[str, str],
    learned: Adjustment | None = None,
) -> Resolution | None:
    """Settle the contest around ``candidates[0]``; None when its group has no other member in
    the race. ``evidence`` is every fast-path match of the message, however weak."""
    if not candidates:
        return None
    group = groups.get(candidates[0].index)
    if group is None:
        return None
    racing = [c for c in candidates if c.index in group.indices]
    if len(racing) < 2:
        return None
    ids = {c.index: skills[c.index].id for c in racing}
    by_id = {skill_id: index for index, skill_id in ids.items()}
    for loser, preferred in prefer.items():
        if loser in by_id and preferred in by_id:
            return _resolution(by_id[preferred], racing, ids, f"your rule prefer: {{{loser}: {preferred}}}")

    best = racing[0].score
    contenders = [c for c in racing if best - c.score <= CONTEST_MARGIN]
    hits = {h.index: h for h in evidence}
    said: dict[int, tuple[list[str], list[str]]] = {}
    for c in contenders:
        triggers, prefers = _declared_evidence(hits.get(c.index))
        rivals = [skills[r.index] for r in racing if r.index != c.index]
        covered = {t for phrase in (*triggers, *prefers) for t in tokenize(phrase)}
        words = [w for w in own_words(query, skills[c.index], rivals) if tokenize(w)[0] not in covered]
        said[c.index] = (triggers, prefers + words)

    def learned_for(index: int) -> float:
        return round(learned.example_score(index), 3) if learned else 0.0

    def rank(c: Candidate) -> tuple[float, int, int, int, float]:
        triggers, words = said[c.index]
        return (
            learned_for(c.index),
            len(triggers),
            len(words),
            skills[c.index].skill.route.priority,
            c.score,
        )

    winner = max(contenders, key=rank)
    triggers, words = said[winner.index]
    priorities = [skills[c.index].skill.route.priority for c in contenders]
    if learned_for(winner.index) > 0:
        why = "your feedback on similar messages"
    elif triggers or words:
        why = ", ".join(f"'{w}'" for w in (*triggers, *words))
    elif max(priorities) > min(priorities):
        why = f"declared priority {skills[winner.index].skill.route.priority}"
    else:
        why = "closest in meaning and keywords"
    return _resolution(winner.index, racing, ids, why)


def _resolution(winner: int, racing: Sequence[Candidate], ids: Mapping[int, str], why: str) -> Resolution:
    beaten = tuple(c.index for c in racing if c.index != winner)
    names = ", ".join(ids[i] for i in beaten)
    return Resolution(winner, beaten, f"chose {ids[winner]} over {names}: {why}")


def promoted(candidates: Sequence[Candidate], winner: int) -> list[Candidate]:
    """``candidates`` with the one for catalog position ``winner`` moved to the front."""
    return [c for c in candidates if c.index == winner] + [c for c in candidates if c.index != winner]
