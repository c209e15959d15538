"""The graph source: entities and relations, with entity, one/two-hop neighbour and path queries.

Input: a graph space and a question. Output: items with ``entityName``, ``entityType`` and a
``snippet`` of facts in the seed's form (``张三 → 参与 → 项目A``):

- a **path** between every pair of the first ``PATH_ANCHORS`` entities the question names
  (shortest, at most ``MAX_PATH_HOPS`` relations, either direction: ``张三 → 参与 → 项目A ← 参与 ←
  李四``), scored like the weaker of its two ends;
- each named entity with its one-hop facts (those sharing a term with the question first),
  scored by how well the question names it (1.0 when its full name appears);
- each one-hop neighbour with its own facts -- the named entity's two-hop facts --, scored
  ``TWO_HOP_RELEVANT`` (its facts share a term with the question) or ``TWO_HOP_OTHER`` times
  the named entity's score.

Storage sits behind :class:`GraphStore`; the embedded default is :class:`SQLiteGraphStore` (one
file of entities and triples, keyed by space). Entity ids are names normalised by
:func:`entity_id` (NFKC, case-folded, single spaces), so ``Acme Corp`` and ``acme  corp`` are
one entity. Triples load from CSV (header ``subject,predicate,object`` plus optional
``subject_type,object_type``) or a JSON array of objects with those keys.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Protocol

from ...errors import DocumentError, SourceUnavailableError
from ...sqlitefile import connection_per_call
from ...text import STOP_WORDS, cap_query, stem, tokenize, words
from ..model import OmniItem, SourceName

PATH_ANCHORS = 3
MAX_PATH_HOPS = 3
MAX_FACTS = 10
# A partial name match ("Apollo" for "Project Apollo") is worth this much per share of the
# name's words the question holds; a partial match needs at least half of them.
PARTIAL_MATCH = 0.8
MIN_COVERAGE = 0.5
TWO_HOP_RELEVANT = 0.6
TWO_HOP_OTHER = 0.4
# A hub entity can have thousands of relations; past this many a neighbourhood stops growing.
MAX_TRIPLES = 500

_ASCII_WORD = re.compile(r"[0-9a-z]")


def entity_id(name: str) -> str:
    """The id of the entity called ``name``: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


@dataclass(frozen=True)
class Entity:
    id: str
    name: str
    type: str | None = None


@dataclass(frozen=True)
class Triple:
    """``subject --predicate--> object``."""

    subject: Entity
    predicate: str
    object: Entity

    def text(self) -> str:
        return f"{self.subject.name} → {self.predicate} → {self.object.name}"

    def other(self, entity: str) -> Entity:
        """The end of this relation that is not ``entity`` (an id)."""
        return self.object if self.subject.id == entity else self.subject


@dataclass(frozen=True)
class TripleRecord:
    """One row of a triples file."""

    subject: str
    predicate: str
    object: str
    subject_type: str | None = None
    object_type: str | None = None


@dataclass(frozen=True)
class GraphLoadReport:
    space: str
    read: int
    added: int
    entities: int
    triples: int
    replaced: bool


class GraphStore(Protocol):
    """An entity/relation store; the SQLite default and, e.g., a Neo4j adapter implement it."""

    def spaces(self) -> list[str]:
        """The spaces that hold at least one triple."""
        ...

    def match_entities(self, space: str, query: str, k: int) -> list[tuple[Entity, float]]:
        """At most ``k`` entities the question names, with a match score in (0, 1], best first."""
        ...

    def neighbourhood(self, space: str, entity: str, hops: int) -> list[Triple]:
        """Every relation within ``hops`` relations of entity id ``entity``, in either direction."""
        ...

    def shortest_path(self, space: str, source: str, target: str, max_hops: int) -> list[Triple] | None:
        """The relations of a shortest undirected path from ``source`` to ``target`` (ids), in
        order, or None when there is none within ``max_hops``."""
        ...


def _mentions(name_id: str, text: str) -> Iterator[tuple[int, int]]:
    """Spans of ``text`` where ``name_id`` occurs, not inside a longer Latin word or number."""
    start = text.find(name_id)
    while start >= 0:
        end = start + len(name_id)
        before_ok = not (_ASCII_WORD.match(name_id[0]) and start > 0 and _ASCII_WORD.match(text[start - 1]))
        after_ok = not (_ASCII_WORD.match(name_id[-1]) and end < len(text) and _ASCII_WORD.match(text[end]))
        if before_ok and after_ok:
            yield start, end
        start = text.find(name_id, start + 1)


def _name_words(name: str) -> set[str]:
    return {stem(w) for w in words(name) if w not in STOP_WORDS and _ASCII_WORD.match(w)}


def match_names(entities: Iterable[Entity], query: str, k: int) -> list[tuple[Entity, float]]:
    """Entities named in ``query``: a full name (longest first, no overlaps) scores 1.0; else
    ``PARTIAL_MATCH`` times the share of a Latin multi-word name's words found elsewhere in it."""
    text = entity_id(cap_query(query))
    candidates = sorted(entities, key=lambda e: (-len(e.id), e.id))
    taken = [False] * len(text)
    found: dict[str, tuple[Entity, float]] = {}
    for entity in candidates:
        for start, end in _mentions(entity.id, text):
            if not any(taken[start:end]):
                taken[start:end] = [True] * (end - start)
                found[entity.id] = (entity, 1.0)
    rest = "".join(" " if used else char for char, used in zip(text, taken, strict=True))
    rest_words = _name_words(rest)
    for entity in candidates:
        name_words = _name_words(entity.name)
        if entity.id in found or len(name_words) < 2:
            continue
        coverage = len(name_words & rest_words) / len(name_words)
        if coverage >= MIN_COVERAGE:
            found[entity.id] = (entity, PARTIAL_MATCH * coverage)
    return sorted(found.values(), key=lambda pair: (-pair[1], pair[0].id))[:k]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS entities (
    space TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, type TEXT,
    PRIMARY KEY (space, id)
);
CREATE TABLE IF NOT EXISTS triples (
    space TEXT NOT NULL, subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL,
    PRIMARY KEY (space, subject, predicate, object)
);
CREATE INDEX IF NOT EXISTS triples_object ON triples (space, object);
"""
_SELECT_TRIPLES = """
SELECT t.subject, s.name, s.type, t.predicate, t.object, o.name, o.type FROM triples t
JOIN entities s ON s.space = t.space AND s.id = t.subject
JOIN entities o ON o.space = t.space AND o.id = t.object
"""


class SQLiteGraphStore:
    """The embedded graph: entities and triples in one SQLite file, a connection per call."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        return connection_per_call(self.path, "graph store", _SCHEMA)

    def load(self, space: str, records: Sequence[TripleRecord], *, replace: bool = False) -> GraphLoadReport:
        """Add ``records`` to ``space`` in one transaction (``replace``: empty the space first).
        A known entity keeps its first spelling; a type given later fills in a missing one."""
        with self._connect() as db:
            if replace:
                db.execute("DELETE FROM triples WHERE space = ?", (space,))
                db.execute("DELETE FROM entities WHERE space = ?", (space,))
            for record in records:
                for name, kind in (
                    (record.subject, record.subject_type),
                    (record.object, record.object_type),
                ):
                    db.execute(
                        "INSERT INTO entities VALUES (?, ?, ?, ?) ON CONFLICT (space, id) "
                        "DO UPDATE SET type = COALESCE(entities.type, excluded.type)",
                        (space, entity_id(name), name.strip(), kind or None),
                    )
            entity_changes = db.total_changes
            for record in records:
                db.execute(
                    "INSERT OR IGNORE INTO triples VALUES (?, ?, ?, ?)",
                    (space, entity_id(record.subject), record.predicate.strip(), entity_id(record.object)),
                )
            added = db.total_changes - entity_changes
            entities = db.execute("SELECT COUNT(*) FROM entities WHERE space = ?", (space,)).fetchone()[0]
            triples = db.execute("SELECT COUNT(*) FROM triples WHERE space = ?", (space,)).fetchone()[0]
        return GraphLoadReport(space, len(records), added, entities, triples, replace)

    def spaces(self) -> list[str]:
        if not self.path.exists():  # asking must not create an empty store
            return []
        with self._connect() as db:
            return [r[0] for r in db.execute("SELECT DISTINCT space FROM triples ORDER BY 1")]

    def match_entities(self, space: str, query: str, k: int) -> list[tuple[Entity, float]]:
        with self._connect() as db:
            rows = db.execute("SELECT id, name, type FROM entities WHERE space = ?", (space,)).fetchall()
        return match_names((Entity(*row) for row in rows), query, k)

    @staticmethod
    def _touching(db: sqlite3.Connection, space: str, ids: Sequence[str], limit: int) -> list[Triple]:
        marks = ", ".join("?" * len(ids))
        rows = db.execute(
            f"{_SELECT_TRIPLES} WHERE t.space = ? AND (t.subject IN ({marks}) OR t.object IN ({marks})) "
            "ORDER BY t.subject, t.predicate, t.object LIMIT ?",
            (space, *ids, *ids, limit),
        ).fetchall()
        return [Triple(Entity(r[0], r[1], r[2]), r[3], Entity(r[4], r[5], r[6])) for r in rows]

    def neighbourhood(self, space: str, entity: str, hops: int) -> list[Triple]:
        seen_entities = {entity}
        frontier = [entity]
        found: dict[tuple[str, str, str], Triple] = {}
        with self._connect() as db:
            for _ in range(hops):
                if not frontier or len(found) >= MAX_TRIPLES:
                    break
                next_frontier: list[str] = []
                for triple in self._touching(db, space, frontier, MAX_TRIPLES - len(found)):
                    found.setdefault((triple.subject.id, triple.predicate, triple.object.id), triple)
                    for end in (triple.subject.id, triple.object.id):
                        if end not in seen_entities:
                            seen_entities.add(end)
                            next_frontier.append(end)
                frontier = next_frontier
        return list(found.values())

    def shortest_path(self, space: str, source: str, target: str, max_hops: int) -> list[Triple] | None:
        # Breadth-first from ``source``; ``parent`` maps each reached entity to the relation
        # that reached it, so the path is read back from ``target``.
        parent: dict[str, Triple | None] = {source: None}
        frontier = [source]
        with self._connect() as db:
            for _ in range(max_hops):
                if target in parent or not frontier:
                    break
                next_frontier: list[str] = []
                for triple in self._touching(db, space, frontier, MAX_TRIPLES):
                    for near, far in (
                        (triple.subject.id, triple.object.id),
                        (triple.object.id, triple.subject.id),
                    ):
                        if near in frontier and far not in parent:
                            parent[far] = triple
                            next_frontier.append(far)
                frontier = next_frontier
        if target not in parent:
            return None
        path: list[Triple] = []
        node = target
        while (step := parent[node]) is not None:
            path.append(step)
            node = step.other(node).id
        return path[::-1]


def read_triples(path: Path) -> list[TripleRecord]:
    """Triples from a ``.csv`` or ``.json`` file (module docstring); errors name the row."""
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError(path, f"cannot read it as UTF-8 text ({exc})") from exc
    if suffix == ".csv":
        rows: list[object] = list(csv.DictReader(text.splitlines()))
    elif suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DocumentError(path, f"not valid JSON (line {exc.lineno}: {exc.msg})") from exc
        if not isinstance(data, list):
            raise DocumentError(path, 'expected a JSON array of {"subject", "predicate", "object"} objects')
        rows = data
    else:
        raise DocumentError(path, f"unsupported triples file {suffix or '(none)'}; use .csv or .json")
    records = []
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise DocumentError(path, f"row {number}: expected an object with subject, predicate, object")
        values = {k.strip(): str(v).strip() for k, v in row.items() if k and v is not None and str(v).strip()}
        missing = [k for k in ("subject", "predicate", "object") if k not in values]
        if missing:
            raise DocumentError(path, f"row {number}: missing {', '.join(missing)}")
        records.append(
            TripleRecord(
                values["subject"],
                values["predicate"],
                values["object"],
                values.get("subject_type"),
                values.get("object_type"),
            )
        )
    if not records:
        raise DocumentError(path, "no triples in it")
    return records


def _path_text(start: str, path: Sequence[Triple]) -> str:
    """``a → p → b ← q ← c``: each relation in its own direction, from ``start`` (an id)."""
    node = start
    text = next(t for t in (path[0].subject, path[0].object) if t.id == start).name
    for triple in path:
        if triple.subject.id == node:
            text += f" → {triple.predicate} → {triple.object.name}"
        else:
            text += f" ← {triple.predicate} ← {triple.subject.name}"
        node = triple.other(node).id
    return text


class GraphSource:
    """Entities, neighbours and paths of one graph space (module docstring)."""

    name: SourceName = "graph"

    def __init__(self, store: GraphStore, space: str) -> None:
        self.store = store
        self.space = space

    def fetch(self, query: str, top_k: int) -> list[OmniItem]:
        if self.space not in self.store.spaces():
            raise SourceUnavailableError(
                self.name,
                f"graph space {self.space!r} holds no triples; load some with "
                f"`skillpilot graph load FILE --space {self.space}`",
            )
        anchors = self.store.match_entities(self.space, query, top_k)
        terms = set(tokenize(query))

        def relevance(triple: Triple) -> int:
            return len(terms.intersection(tokenize(triple.text())))

        best: dict[str, OmniItem] = {}

        def add(item: OmniItem) -> None:
            if item.key not in best or item.score > best[item.key].score:
                best[item.key] = item

        for (a, score_a), (b, score_b) in combinations(anchors[:PATH_ANCHORS], 2):
            path = self.store.shortest_path(self.space, a.id, b.id, MAX_PATH_HOPS)
            if path:
                add(
                    OmniItem(
                        source=self.name,
                        key=f"path:{a.id}|{b.id}",
                        score=min(score_a, score_b),
                        snippet=_path_text(a.id, path),
                        entity_name=a.name,
                        entity_type=a.type,
                    )
                )
        neighbourhoods = [self.store.neighbourhood(self.space, a.id, hops=2) for a, _ in anchors]
        own = [
            [t for t in facts if a.id in (t.subject.id, t.object.id)]
            for (a, _), facts in zip(anchors, neighbourhoods, strict=True)
        ]
        # A fact already in a named entity's item is not repeated in a neighbour's.
        shown = {t for facts in own for t in facts}
        for (anchor, score), facts, anchor_facts in zip(anchors, neighbourhoods, own, strict=True):
            add(self._entity_item(anchor, score, anchor_facts, relevance))
            neighbours = {t.other(anchor.id).id: t.other(anchor.id) for t in anchor_facts}
            by_neighbour: dict[str, list[Triple]] = defaultdict(list)
            for triple in facts:
                if triple not in shown:
                    for end in (triple.subject.id, triple.object.id):
                        if end in neighbours:
                            by_neighbour[end].append(triple)
            for neighbour_id, neighbour_facts in by_neighbour.items():
                hop = TWO_HOP_RELEVANT if any(relevance(t) for t in neighbour_facts) else TWO_HOP_OTHER
                add(self._entity_item(neighbours[neighbour_id], score * hop, neighbour_facts, relevance))
        # On a tie a path comes first: it is the direct answer to "how are A and B related".
        return sorted(best.values(), key=lambda i: (-i.score, not i.key.startswith("path:"), i.key))[:top_k]

    def _entity_item(
        self, entity: Entity, score: float, facts: Sequence[Triple], relevance: Callable[[Triple], int]
    ) -> OmniItem:
        ordered = sorted(facts, key=lambda t: (-relevance(t), t.predicate, t.text()))[:MAX_FACTS]
        return OmniItem(
            source=self.name,
            key=f"entity:{entity.id}",
            score=score,
            snippet="; ".join(t.text() for t in ordered) or entity.name,
            entity_name=entity.name,
            entity_type=entity.type,
        )
