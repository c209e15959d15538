"""Near-duplicate detection on the private view: exact copies, forks and drifted versions.

Input: one :class:`~skillpilot.market.views.PrivateView` per skill (name + description +
instructions, and the listing's declared lineage). Output: :class:`DuplicateCluster` s, each
with its members (id, folder key, folder path), the pairs that joined them, how (``kind``) and
how similar they are.

How a pair is judged, strongest rule first:

1. ``fork`` / ``version``: one skill declares ``forked_from`` / ``version_of`` the other. A
   declared relation wins over any text similarity (a fork may have been rewritten entirely).
2. ``exact``: the same description and instructions (whitespace aside), whatever the names.
3. ``drifted``: copied instructions. The instructions (the behaviour: a copied description
   alone only says "same purpose", which ``conflicts`` handles) are cut into overlapping 8-word
   shingles (w-shingling, Broder 1997, "On the resemblance and containment of documents");
   shingles found in many skills (more than ``max(5, 2% of the catalog)``: licence footers, a
   publisher's template) are boilerplate and ignored. ``similarity`` is the containment of the
   pair: the share of the shorter skill's shingles that occur in the other. A pair is a drifted
   copy when

   - it shares at least ``MIN_SHARED`` shingles (one verbatim passage of ~17 words or more)
     *and* the names are compatible: equal, or one name's words contain the other's
     (``artifacts-builder`` -> ``web-artifacts-builder``); or
   - containment is at least ``RENAMED_COPY`` (0.8), whatever the names.

   Name compatibility keeps apart siblings generated from one template (``convert-pdf-to-md``
   vs ``convert-word-to-md``, ``toggl`` vs ``clockify`` automations): each name has a word the
   other lacks, so they are different products, and folding them would hide one from search.
   Same-name skills that share no copied passage (three ``brand-guidelines`` for three brands)
   stay apart however alike their topic.

Clusters are the connected components of the pairs (copies of copies are one lineage).
Thresholds were set on the 294-skill development corpus against its OVERLAPS.md
(``benchmarks/dedup_eval.py``). Cost: O(total words) to shingle, plus, per non-boilerplate
shingle, the pairs of skills holding it.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any, Literal

from ..model import IndexedSkill
from ..text import words
from .catalog import CatalogFile, listing_of
from .views import PrivateView, private_view

Kind = Literal["fork", "version", "exact", "drifted"]
SHINGLE_WORDS = 8
MIN_SHARED = 10
RENAMED_COPY = 0.8
BOILERPLATE_MIN_SKILLS = 5
BOILERPLATE_SHARE = 0.02


@dataclass(frozen=True)
class DuplicatePair:
    """Two skills judged copies of each other; ``a`` < ``b`` by id."""

    a: str
    b: str
    kind: Kind
    similarity: float
    shared_shingles: int
    evidence: str


@dataclass(frozen=True)
class ClusterMember:
    id: str
    name: str
    key: str
    path: str


@dataclass(frozen=True)
class DuplicateCluster:
    """Skills that are one skill in several copies; ``similarity`` is its strongest pair's."""

    id: int
    kind: Kind
    similarity: float
    members: tuple[ClusterMember, ...]
    pairs: tuple[DuplicatePair, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.members)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def shingles(text: str) -> set[int]:
    """The hashed 8-word shingles of ``text`` (words as ``skillpilot.text.words`` splits them)."""
    tokens = words(text)
    return {hash(tuple(tokens[i : i + SHINGLE_WORDS])) for i in range(len(tokens) - SHINGLE_WORDS + 1)}


def _exact_key(view: PrivateView) -> str:
    text = " ".join(f"{view.public.description}\n{view.instructions}".split())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def names_compatible(a: str, b: str) -> bool:
    """Equal names, or one name's words all in the other (a rename that kept the name)."""
    left, right = set(words(a)), set(words(b))
    return bool(left and right) and (left <= right or right <= left)


def _resolve(ref: str, views: Sequence[PrivateView]) -> int | None:
    for attribute in ("id", "key", "name"):
        found = [
            i for i, v in enumerate(views) if (v.key if attribute == "key" else getattr(v.public, attribute)) == ref
        ]
        if len(found) == 1:
            return found[0]
    return None


def find_pairs(views: Sequence[PrivateView]) -> list[DuplicatePair]:
    """Every duplicate pair among ``views`` (see the module docstring), strongest first."""
    shingle_sets = [shingles(v.instructions) for v in views]
    document_frequency = Counter(s for own in shingle_sets for s in own)
    limit = max(BOILERPLATE_MIN_SKILLS, BOILERPLATE_SHARE * len(views))
    holders: dict[int, list[int]] = defaultdict(list)
    for position, own in enumerate(shingle_sets):
        for shingle in own:
            if 2 <= document_frequency[shingle] <= limit:
                holders[shingle].append(position)
    sizes = [sum(1 for s in own if document_frequency[s] <= limit) for own in shingle_sets]
    shared: Counter[tuple[int, int]] = Counter()
    for positions in holders.values():
        shared.update(combinations(positions, 2))

    def containment(i: int, j: int) -> float:
        return shared[(i, j)] / max(1, min(sizes[i], sizes[j]))

    judged: dict[tuple[int, int], tuple[Kind, str]] = {}
    for (i, j), count in shared.items():
        share = containment(i, j)
        compatible = names_compatible(views[i].public.name, views[j].public.name)
        if share >= RENAMED_COPY or (count >= MIN_SHARED and compatible):
            naming = _naming(views[i].public.name, views[j].public.name, compatible)
            judged[(i, j)] = (
                "drifted",
                f"{naming}; {count} verbatim {SHINGLE_WORDS}-word passages shared "
                f"({share:.0%} of the shorter one's text)",
            )
    by_text: dict[str, list[int]] = defaultdict(list)
    for position, view in enumerate(views):
        by_text[_exact_key(view)].append(position)
    for group in by_text.values():
        for i, j in combinations(group, 2):
            judged[(i, j)] = ("exact", "identical description and instructions")
    for position, view in enumerate(views):
        relations: tuple[tuple[Kind, str | None], ...] = (
            ("fork", view.listing.forked_from),
            ("version", view.listing.version_of),
        )
        for kind, ref in relations:
            other = _resolve(ref, views) if ref else None
            if other is not None and other != position:
                relation = "forked_from" if kind == "fork" else "version_of"
                pair = (min(position, other), max(position, other))
                judged[pair] = (kind, f"{view.public.id} declares {relation}: {views[other].public.id}")
    pairs = []
    for (i, j), (kind, evidence) in judged.items():
        a, b = sorted((views[i].public.id, views[j].public.id))
        similarity = 1.0 if kind == "exact" else containment(i, j)
        pairs.append(DuplicatePair(a, b, kind, round(similarity, 4), shared[(i, j)], evidence))
    pairs.sort(key=lambda p: (-p.similarity, p.a, p.b))
    return pairs


def _naming(a: str, b: str, compatible: bool) -> str:
    if a == b:
        return "same name"
    if compatible:
        short, long = sorted((a, b), key=len)
        return f"name {short!r} kept in {long!r}"
    return f"renamed {a!r} / {b!r}"


def find_duplicates(views: Sequence[PrivateView]) -> list[DuplicateCluster]:
    """Clusters of copies among ``views``, strongest first (see the module docstring)."""
    pairs = find_pairs(views)
    position = {v.public.id: n for n, v in enumerate(views)}
    parent = list(range(len(views)))

    def root(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for pair in pairs:
        parent[root(position[pair.a])] = root(position[pair.b])
    grouped: dict[int, list[DuplicatePair]] = defaultdict(list)
    for pair in pairs:
        grouped[root(position[pair.a])].append(pair)
    found = []
    for group_pairs in grouped.values():
        ids = sorted({p.a for p in group_pairs} | {p.b for p in group_pairs})
        kinds = {p.kind for p in group_pairs}
        declared: tuple[Kind, ...] = ("fork", "version")
        kind = next((k for k in declared if k in kinds), "exact" if kinds == {"exact"} else "drifted")
        members = tuple(
            ClusterMember(i, views[position[i]].public.name, views[position[i]].key, views[position[i]].path)
            for i in ids
        )
        found.append((max(p.similarity for p in group_pairs), kind, members, tuple(group_pairs)))
    found.sort(key=lambda c: (-c[0], c[2][0].id))
    return [
        DuplicateCluster(number, kind, similarity, members, group_pairs)
        for number, (similarity, kind, members, group_pairs) in enumerate(found, start=1)
    ]


def copies_among(skills: Sequence[IndexedSkill]) -> list[tuple[str, ...]]:
    """The ids of each group of copies among ``skills`` (a route's best few, as library mode asks:
    are they one skill several times over?), judged by the rules above on their own frontmatter
    (the catalog file's lineage is the marketplace's; a fork's copied text is found anyway)."""
    views = [private_view(s, listing_of(s, CatalogFile(None), {})) for s in skills]
    return [cluster.ids for cluster in find_duplicates(views)]
