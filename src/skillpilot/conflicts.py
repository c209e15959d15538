"""Conflicts: skills that overlap, found once per index generation, and settled at route time.

Detection (the spec's ConflictDetector, section 5.2). Input: the catalog and, per encoder, one
unit vector per skill (its ``name: description`` part). Two skills' similarity is the mean over
encoders of the cosine of those vectors. Groups are built by greedy average linkage over the
pairs at or above the threshold, strongest pair first: two groups merge only when the mean
similarity of all their cross pairs is at or above the threshold. Unlike the spec's union of
pairs, this does not chain (a ~ b ~ c ... into one group of 180 skills at 0.45). Guarantees: a
skill is in at most one group; every group has two or more members and a mean pairwise
similarity at or above the threshold. Cost: one blocked matrix product over every encoder's
dimensions at once, keeping only the pairs above the threshold, then one Python step per pair
in linkage (a merge already found too weak is not scored again).

The threshold is ``index.conflictThreshold`` (default 0.5), calibrated for the default local
encoders (MiniLM + multilingual USE) against the 71 hand-made overlap clusters of the 294-skill
development corpus (``benchmarks/conflict_eval.py``); the spec's 0.85 finds only near-copies
with these models.

Resolution (section 2.2), after fusion. Input: the fused candidates, the groups, the message and
all its fast-path matches, the user's ``prefer`` rules and the feedback adjustment. When the
winner's group has other members in the race, the winner among them is, in order: the one a
user rule names (``prefer: {a: b}`` means "b whenever a and b compete"); else, among members
whose fused score is within the calibration's contest margin (``CONTEST_MARGIN`` for a catalog
without example requests) of the best, the one with the most of: learned
feedback for messages like this one, an author's redirect (``skillpilot.redirects``: +1 for the
skill it sends the message to, -1 for the one sending it away), trigger phrases found, then
``prefer_when`` phrases and words of the message that only its name, description or keywords
use, then the higher declared ``route.priority``, then the higher fused score. Members outside
the margin are not contenders: the meaning and keyword evidence fusion weighed outranks a word or
a priority.
Output: a ``Resolution`` naming the winner, the members it beat and the reason
(``chose slack-advanced over slack, slack-notifier: 'schedule', 'all channels'``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .index import ConflictGraph
from .model import Adjustment, Candidate, FastHit, IndexedSkill, Redirection, Resolution
from .text import Query, tokenize, word_terms

# Rows of the similarity matrix computed at once: bounds memory at BLOCK x catalog floats.
BLOCK = 1024
# float32 dot products of unit vectors are off by well under this: pairs this close below the
# threshold are re-scored exactly before they are kept or dropped.
FLOAT32_SLACK = 1e-4
# Pairs re-scored at once (bounds memory at PAIR_BATCH x dim doubles per side).
PAIR_BATCH = 16384
# Fused-score units (weighted z-scores) within which a group rival is still a contender, for the
# plain model (the with-examples model ships its own: ``decide.Calibration.contest_margin``). On the
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


def conflict_config(spaces: Sequence[str], threshold: float) -> str:
    """The settings a conflict graph depends on: the vector spaces compared and the threshold."""
    return f"{'+'.join(spaces)}@{threshold!r}"


class _Vectors:
    """Each encoder's unit vectors of the catalog, as the steps below read them. Comparing many
    skills (a whole catalog) pays up front for a float64 copy and a copy with every encoder's
    vectors end to end; an update's few changed skills convert only the rows they read. The values
    are the same either way."""

    def __init__(self, matrices: Sequence[np.ndarray], compared: int) -> None:
        self.matrices = list(matrices)
        many = compared * 4 >= len(self.matrices[0])
        self._wide = [m.astype(np.float64) for m in self.matrices] if many else None
        # End to end, one product sums the encoders' cosines: no per-encoder block to add up.
        self.joined = [np.concatenate(self.matrices, axis=1)] if many and len(self.matrices) > 1 else self.matrices

    def __len__(self) -> int:
        return len(self.matrices)

    def rows(self, encoder: int, index: np.ndarray | int) -> np.ndarray:
        """Rows ``index`` of one encoder's vectors, as float64."""
        found: np.ndarray = (
            self._wide[encoder][index] if self._wide is not None else self.matrices[encoder][index].astype(np.float64)
        )
        return found


def _exact(vectors: _Vectors, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The similarity of the pairs (a[n], b[n]): mean over encoders of their cosine, in float64
    and pair by pair, so a pair scores the same bits whichever run or batch computes it."""
    result = np.zeros(len(a))
    for start in range(0, len(a), PAIR_BATCH):
        left, right = a[start : start + PAIR_BATCH], b[start : start + PAIR_BATCH]
        cosines = [np.einsum("nd,nd->n", vectors.rows(e, left), vectors.rows(e, right)) for e in range(len(vectors))]
        result[start : start + len(left)] = np.mean(cosines, axis=0)
    return result


def _pairs_from(
    vectors: _Vectors,
    rows: np.ndarray,
    threshold: float,
    later_only: bool,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Similar pairs (i, j), i < j, with i or j in ``rows``: ``rows`` against the whole catalog
    (``later_only``: against the skills after each row, enough when ``rows`` is the catalog).
    Cost: len(rows) x catalog dot products in BLOCK-row chunks, then exact scores for the few
    within float32 noise of the threshold or above. ``progress(rows done, rows)`` after each chunk."""
    # Summed cosines against len(vectors) x threshold: no block is divided.
    bar = len(vectors) * (threshold - FLOAT32_SLACK)
    size = len(vectors.matrices[0])
    # One buffer for every chunk's block: a fresh one per chunk costs as much in page faults as the product.
    scratch = np.empty(min(BLOCK, len(rows)) * size, dtype=np.float32)
    found: list[np.ndarray] = []
    for start in range(0, len(rows), BLOCK):
        chunk = rows[start : start + BLOCK]
        offset = int(chunk[0]) if later_only else 0
        block = scratch[: len(chunk) * (size - offset)].reshape(len(chunk), -1)
        first, *others = vectors.joined
        np.matmul(first[chunk], first[offset:].T, out=block)
        for m in others:
            block += m[chunk] @ m[offset:].T
        near_rows, near_cols = np.nonzero(block >= bar)
        left, right = chunk[near_rows], near_cols + offset
        if later_only:
            # Each pair once, from its earlier skill; rows and columns run in catalog order, so the
            # pairs come out sorted, as np.unique would leave them.
            keep = right > left
            found.append(np.stack([left[keep], right[keep]], axis=1))
        else:
            keep = left != right
            found.append(np.stack([np.minimum(left, right), np.maximum(left, right)], axis=1)[keep])
        if progress:
            progress(start + len(chunk), len(rows))
    pairs = np.concatenate(found) if found else np.zeros((0, 2), dtype=np.int64)
    if not later_only:
        pairs = np.unique(pairs, axis=0)  # a pair of two changed skills is found from both
    similarity = _exact(vectors, pairs[:, 0], pairs[:, 1]) if len(pairs) else np.zeros(0)
    keep = similarity >= threshold
    return pairs[keep], similarity[keep]


def _link(vectors: _Vectors, pairs: np.ndarray, similarity: np.ndarray, threshold: float) -> list[list[int]]:
    """Greedy average linkage over ``pairs``, strongest first (ties: lower positions first). A
    group's mean cross similarity comes from its members' summed vectors (the mean of a . b over
    a in A, b in B is sum(A) . sum(B) / |A||B|), so a merge costs one dot product per encoder."""
    order = np.lexsort((pairs[:, 1], pairs[:, 0], -similarity))
    owner: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    # A skill's vectors of every encoder end to end: the mean over encoders of a . b is then
    # one dot product divided by the number of encoders.
    sums: dict[int, np.ndarray] = {}

    def total(group: int) -> np.ndarray:
        if group not in sums:
            sums[group] = np.concatenate([vectors.rows(e, group) for e in range(len(vectors))])
        return sums[group]

    # Merges found too weak, by (group, its size) of both sides. A group only grows, keeping its
    # id, so its id and size name its members: the same two groups score the same again, and on a
    # fork-heavy catalog ~97 % of the pairs left to look at are such repeats (two large groups).
    rejected: set[tuple[int, int, int, int]] = set()
    ordered = pairs[order]
    for i, j in zip(ordered[:, 0].tolist(), ordered[:, 1].tolist(), strict=True):
        gi, gj = owner.get(i, i), owner.get(j, j)
        if gi == gj:
            continue
        left, right = members.get(gi, [i]), members.get(gj, [j])
        if len(left) + len(right) > 2:
            state = (gi, len(left), gj, len(right)) if gi < gj else (gj, len(right), gi, len(left))
            if state in rejected:
                continue
            cross = float(total(gi) @ total(gj)) / (len(vectors) * len(left) * len(right))
            if cross < threshold:
                rejected.add(state)
                continue
        sums[gi] = total(gi) + total(gj)
        sums.pop(gj, None)
        members.pop(gj, None)
        members[gi] = left + right
        for member in right:
            owner[member] = gi
    return list(members.values())


def _scored(vectors: _Vectors, groups: Sequence[Sequence[int]]) -> list[tuple[float, tuple[int, ...]]]:
    """Each group with its mean pairwise similarity (4 decimals)."""
    scored = []
    for group in groups:
        ordered = tuple(sorted(group))
        first, second = np.triu_indices(len(ordered), 1)
        index = np.array(ordered)
        scored.append((round(float(np.mean(_exact(vectors, index[first], index[second]))), 4), ordered))
    return scored


def build_graph(
    skills: Sequence[tuple[str, str, str]],
    matrices: Sequence[np.ndarray],
    threshold: float,
    config: str,
    progress: Callable[[int, int], None] | None = None,
) -> ConflictGraph:
    """The conflict graph of a whole catalog (``skills``: (root, key, content hash) in catalog
    order; ``matrices``: per encoder, the unit ``name: description`` vectors in that order).
    ``progress(skills compared, skills to compare)`` as the comparison goes."""
    if not len(skills) or not matrices:
        return ConflictGraph(config, tuple(skills), np.zeros((0, 2), dtype=np.int64), np.zeros(0), ())
    vectors = _Vectors(matrices, len(skills))
    pairs, similarity = _pairs_from(vectors, np.arange(len(skills)), threshold, True, progress)
    groups = _scored(vectors, _link(vectors, pairs, similarity, threshold))
    return ConflictGraph(config, tuple(skills), pairs, similarity, tuple(groups))


def update_graph(
    previous: ConflictGraph | None,
    skills: Sequence[tuple[str, str, str]],
    matrices: Sequence[np.ndarray],
    threshold: float,
    config: str,
    progress: Callable[[int, int], None] | None = None,
) -> ConflictGraph:
    """``previous`` brought up to date with ``skills``: a new or edited skill (new content hash)
    is compared with the catalog, a removed one drops its pairs, and linkage re-runs only in the
    connected components (of the pair graph) that gained or lost a pair. Linkage never crosses
    components, so the result equals ``build_graph`` on the same catalog. ``progress`` as in ``build_graph``."""
    if previous is None or previous.config != config or not len(previous.pairs) and previous.groups:
        return build_graph(skills, matrices, threshold, config, progress)
    position = {(root, key): n for n, (root, key, _) in enumerate(skills)}
    was = {(root, key): content for root, key, content in previous.skills}
    changed = np.array(
        [n for n, (root, key, content) in enumerate(skills) if was.get((root, key)) != content], dtype=np.int64
    )
    gone = {(root, key) for root, key, _ in previous.skills} - position.keys()
    if not len(changed) and not gone:
        return ConflictGraph(config, tuple(skills), previous.pairs, previous.similarity, previous.groups)
    old_to_new = np.array([position.get((root, key), -1) for root, key, _ in previous.skills] or [0], dtype=np.int64)[
        : len(previous.skills)
    ]
    moved = old_to_new[previous.pairs] if len(previous.pairs) else np.zeros((0, 2), dtype=np.int64)
    stale = np.zeros(len(skills), dtype=bool)
    stale[changed] = True
    lost = (moved < 0).any(axis=1) | (stale[np.maximum(moved, 0)].any(axis=1) & (moved >= 0).all(axis=1))
    # Where the graph changed: the changed skills and every surviving end of a lost pair.
    touched = set(changed.tolist()) | {int(n) for n in moved[lost].ravel().tolist() if n >= 0}
    vectors = _Vectors(matrices, len(changed))
    fresh, fresh_similarity = _pairs_from(vectors, changed, threshold, False, progress)
    pairs = np.concatenate([moved[~lost], fresh]).astype(np.int64)
    similarity = np.concatenate([previous.similarity[~lost], fresh_similarity])
    component = _components(len(skills), pairs)
    redo = np.isin(component, list({int(component[n]) for n in touched}))
    kept = [
        (score, tuple(sorted(int(old_to_new[n]) for n in members)))
        for score, members in previous.groups
        if all(old_to_new[n] >= 0 for n in members) and not redo[old_to_new[members[0]]]
    ]
    inside = redo[pairs[:, 0]] if len(pairs) else np.zeros(0, dtype=bool)
    relinked = _scored(vectors, _link(vectors, pairs[inside], similarity[inside], threshold))
    return ConflictGraph(config, tuple(skills), pairs, similarity, tuple(kept + relinked))


def _components(size: int, pairs: np.ndarray) -> np.ndarray:
    """Each node's connected component in the pair graph."""
    # Imported here: only an index update needs it, and scipy costs a router ~0.2 s to import.
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(size, size))
    labels: np.ndarray = connected_components(graph, directed=False)[1]
    return labels


def groups_from(graph: ConflictGraph, skills: Sequence[IndexedSkill]) -> list[ConflictGroup] | None:
    """The graph's groups over ``skills`` (most similar first), or None when the graph was
    computed for another catalog (a skill added, removed or edited since)."""
    if len(graph.skills) != len(skills) or any(
        (s.skill.root, s.key, s.skill.content_hash) != seen for s, seen in zip(skills, graph.skills, strict=True)
    ):
        return None
    found = sorted(graph.groups, key=lambda g: (-g[0], g[1]))
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


def catalog_keys(skills: Sequence[IndexedSkill]) -> list[tuple[str, str, str]]:
    """How a conflict graph names ``skills``: (root, key, content hash)."""
    return [(s.skill.root, s.key, s.skill.content_hash) for s in skills]


def detect_conflicts(
    skills: Sequence[IndexedSkill], matrices: Sequence[np.ndarray], threshold: float
) -> list[ConflictGroup]:
    """Conflict groups of ``skills`` (see the module docstring), most similar group first."""
    graph = build_graph(catalog_keys(skills), matrices, threshold, "")
    found = groups_from(graph, skills)
    assert found is not None  # the graph was built for exactly these skills
    return found


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


class Vocabularies:
    """Each skill's routing words (name, description, keywords), tokenized on first use and kept
    for the catalog's lifetime, so a contest does not re-tokenize its members on every route."""

    def __init__(self, skills: Sequence[IndexedSkill]) -> None:
        self._skills = skills
        self._words: dict[int, frozenset[str]] = {}

    def __call__(self, index: int) -> frozenset[str]:
        words = self._words.get(index)
        if words is None:
            skill = self._skills[index]
            text = " ".join((skill.name.replace("-", " "), skill.skill.description, *skill.fingerprint.keywords))
            words = self._words[index] = frozenset(tokenize(text))
        return words


def own_words(words: Sequence[str], member: int, rivals: Sequence[int], vocabulary: Vocabularies) -> list[str]:
    """Of ``words`` (surface words, :func:`~skillpilot.text.words`), those whose index term this
    member's name, description or keywords use and no rival's do."""
    theirs = set().union(*(vocabulary(r) for r in rivals)) if rivals else set()
    mine = vocabulary(member) - theirs
    seen: dict[str, str] = {}
    for word in words:
        terms = word_terms(word)
        if terms and terms[0] in mine:
            seen.setdefault(terms[0], word)
    return list(seen.values())


def resolve(
    candidates: Sequence[Candidate],
    skills: Sequence[IndexedSkill],
    groups: Mapping[int, ConflictGroup],
    query: Query,
    evidence: Sequence[FastHit],
    prefer: Mapping[str, str],
    learned: Adjustment | None = None,
    vocabulary: Vocabularies | None = None,
    redirected: Redirection | None = None,
    margin: float = CONTEST_MARGIN,
) -> Resolution | None:
    """Settle the contest around ``candidates[0]``; None when its group has no other member in
    the race. ``evidence`` is every fast-path match of the message, however weak; ``vocabulary``
    (one per catalog) keeps the members' words between routes; ``redirected`` the authors'
    redirects that apply to the message; ``margin`` the fused-score gap within which a member
    is a contender (the calibration's, ``decide.Calibration.contest_margin``)."""
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

    words_of = vocabulary or Vocabularies(skills)
    best = racing[0].score
    contenders = [c for c in racing if best - c.score <= margin]
    hits = {h.index: h for h in evidence}
    said: dict[int, tuple[list[str], list[str]]] = {}
    for c in contenders:
        triggers, prefers = _declared_evidence(hits.get(c.index))
        rivals = [r.index for r in racing if r.index != c.index]
        covered = {t for phrase in (*triggers, *prefers) for t in tokenize(phrase)}
        words = [w for w in own_words(query.words, c.index, rivals, words_of) if word_terms(w)[0] not in covered]
        said[c.index] = (triggers, prefers + words)

    def learned_for(index: int) -> float:
        return round(learned.example_score(index), 3) if learned else 0.0

    def sent_for(index: int) -> int:
        moved = float(redirected.log_multipliers[index]) if redirected else 0.0
        return int(np.sign(moved))

    def rank(c: Candidate) -> tuple[float, int, int, int, int, float]:
        triggers, words = said[c.index]
        return (
            learned_for(c.index),
            sent_for(c.index),
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
    elif redirected and sent_for(winner.index) > 0:
        sender = next(a for a in redirected.applied if a.target == winner.index)
        why = f"{skills[sender.source].id} sends {sender.redirect.case!r} to it"
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
