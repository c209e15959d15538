"""The index stage: where skills, fingerprints and vectors are kept between runs.

``SkillStore`` is the Protocol a backend implements (the embedded default is
``SQLiteStore``; ``PostgresStore`` shares one catalog between replicas); ``build_index`` (in
``builder``) turns skill folders into ``IndexChanges`` and hands them to the store in one atomic
``apply``. A store that searches its own vectors says so by implementing ``VectorSearch`` too.

``open_store`` opens the store a ``--store`` value / ``index.store`` names: a URL opens the store
registered under its scheme, a path the one registered as ``sqlite`` (``sqlite://PATH`` is that
path). Stores register as encoders do (``skillpilot.plugins``): the built-ins ``sqlite``,
``postgresql`` and ``postgres`` are declared as entry points are, and a distribution adds one
under its URL scheme in the entry-point group ``skillpilot.stores`` with a factory
``(spec: str) -> SkillStore`` that is given the whole ``--store`` value::

    [project.entry-points."skillpilot.stores"]
    mystore = "my_package.store:MyStore"    # --store mystore://host/db

Code may also call ``register_store("mystore", factory)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, cast, runtime_checkable

import numpy as np

from ..errors import ConfigError
from ..model import Fingerprint, IndexedSkill, Skill, SkippedFile
from ..plugins import STORES


@dataclass(frozen=True)
class StoredSkill:
    skill: Skill
    fingerprint: Fingerprint
    indexed_at: float


@dataclass(frozen=True)
class ConflictGraph:
    """What conflict detection keeps between index runs (``skillpilot.conflicts``): for the skills
    it compared (``(root, key, content hash)`` in catalog order, ``node`` = position here), every
    pair at or above the threshold and the groups those pairs form. ``config`` names the vector
    spaces and threshold it was computed for; a router with other settings ignores it."""

    config: str
    skills: tuple[tuple[str, str, str], ...]
    # (pairs, 2) node positions (i < j) and each pair's similarity; empty when read without pairs.
    pairs: np.ndarray
    similarity: np.ndarray
    # (mean pairwise similarity, sorted node positions) per group
    groups: tuple[tuple[float, tuple[int, ...]], ...]


@dataclass(frozen=True)
class IndexChanges:
    """Everything one index run writes; a store applies it all or nothing."""

    roots: tuple[str, ...] = ()
    dropped_roots: tuple[str, ...] = ()
    upserts: tuple[StoredSkill, ...] = ()
    removed: tuple[tuple[str, str], ...] = ()
    # (root, key, encoder name) -> array of shape (parts, dim)
    vectors: dict[tuple[str, str, str], np.ndarray] = field(default_factory=dict)
    skipped: tuple[tuple[str, SkippedFile], ...] = ()
    meta: dict[str, str] = field(default_factory=dict)
    # The conflict graph of the catalog after this run (None: keep the stored one).
    conflicts: ConflictGraph | None = None
    # Also delete vectors whose skill is gone (left by older versions' read path).
    prune_orphans: bool = False
    # Per root in here, the (size, mtime_ns) of each skill's SKILL.md, replacing the stored ones.
    file_stats: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    # Whether what a router reads (skills, vectors, conflict groups, roots) changed: only then the
    # generation goes up, so a no-op refresh does not make every router rebuild its catalog.
    catalog_changed: bool = True


@dataclass(frozen=True)
class Snapshot:
    """What one read transaction saw: the generation it read, every skill (in ``load`` order),
    per vector space asked for the vectors of those skills that have them, and the stored
    conflict graph (without its pairs)."""

    generation: int
    skills: tuple[StoredSkill, ...]
    vectors: dict[str, dict[tuple[str, str], np.ndarray]]
    conflicts: ConflictGraph | None = None


class SkillStore(Protocol):
    """Where an index lives. One required write (``apply``) plus the reads the router needs.

    ``snapshot`` reads the generation, the skills and the vectors of ``spaces`` in one read
    transaction, so a write committing meanwhile is either wholly in it or wholly out (and the
    generation is the one the rest was read at): a router builds its catalog from one snapshot.
    ``fetch`` re-reads a few skills by ``(root, key)`` (in the order asked, missing ones left
    out), so a search can show current data after ranking on a cached catalog.
    ``file_stats`` is what the last index run saw of each SKILL.md, so an unchanged one is not re-read.
    ``orphan_vectors`` counts stored vectors whose skill is gone; ``apply`` with
    ``prune_orphans`` deletes them. ``path`` says where the index is, fit to show (a URL without
    its password); ``reopen`` opens a second connection to the same index, for a thread of its own.
    """

    @property
    def path(self) -> str | Path: ...
    def reopen(self) -> SkillStore: ...
    def apply(self, changes: IndexChanges) -> None: ...
    def snapshot(self, spaces: Sequence[str]) -> Snapshot: ...
    def orphan_vectors(self) -> int: ...
    def load(self) -> list[StoredSkill]: ...
    def fetch(self, keys: Sequence[tuple[str, str]]) -> list[StoredSkill]: ...
    def vectors(self, encoder: str) -> dict[tuple[str, str], np.ndarray]: ...
    def roots(self) -> list[str]: ...
    def hashes(self, root: str) -> dict[str, str]: ...
    def file_stats(self, root: str) -> dict[str, tuple[int, int]]: ...
    def vector_keys(self, encoder: str) -> set[tuple[str, str]]: ...
    def skipped(self) -> list[SkippedFile]: ...
    def generation(self) -> int: ...
    def meta(self, key: str) -> str | None: ...
    def count(self) -> int: ...
    def conflict_graph(self, pairs: bool = True) -> ConflictGraph | None: ...
    def close(self) -> None: ...


@runtime_checkable
class VectorSearch(Protocol):
    """A store that searches its own vectors (``PostgresStore``: pgvector's HNSW index), so a
    router on a large catalog asks it for candidates instead of holding every vector
    (``skillpilot.retrieve.ann``). ``vector_search`` finds up to ``k`` skills whose nearest part
    in space ``encoder`` is nearest ``vector`` (under ``roots`` only, when given), as (root, key,
    cosine) best first; ``vectors_of`` reads the vectors of a few skills (missing ones left out)."""

    def vector_search(
        self, encoder: str, vector: np.ndarray, k: int, *, roots: Sequence[str] | None = None
    ) -> list[tuple[str, str, float]]: ...
    def vectors_of(self, encoder: str, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], np.ndarray]: ...
    def vector_keys(self, encoder: str) -> set[tuple[str, str]]: ...


def assign_ids(stored: list[StoredSkill]) -> list[IndexedSkill]:
    """Give every skill its user-facing id: its name, or its folder-relative key when two skills
    share a name (and the root's folder name too when even keys collide). Never overwrites."""
    by_name: dict[str, int] = {}
    by_key: dict[str, int] = {}
    for entry in stored:
        by_name[entry.skill.name] = by_name.get(entry.skill.name, 0) + 1
        by_key[entry.skill.key] = by_key.get(entry.skill.key, 0) + 1
    result = []
    for entry in stored:
        skill = entry.skill
        if by_name[skill.name] == 1:
            skill_id = skill.name
        elif by_key[skill.key] == 1:
            skill_id = skill.key
        else:
            skill_id = f"{Path(skill.root).name}/{skill.key}"
        result.append(IndexedSkill(skill_id, skill, entry.fingerprint, entry.indexed_at))
    return result


# What opens a ``--store`` value: the value itself in, an open store out.
StoreFactory = Callable[[str], SkillStore]
# The store a path (a spec without a URL scheme) opens.
PATH_STORE = "sqlite"
_URL_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def register_store(scheme: str, factory: StoreFactory) -> None:
    """Make ``open_store`` open ``scheme://...`` values with ``factory`` (given the whole value)."""
    STORES.register(scheme, factory)


def available_stores() -> list[str]:
    """The URL schemes a store is registered under, installed plugins included, sorted."""
    return sorted(STORES.names())


def open_store(spec: str | Path) -> SkillStore:
    """The store a ``--store`` value names (see the module docstring): a URL opens the store
    registered under its scheme, a path the SQLite store."""
    text = str(spec)
    url = _URL_SCHEME.match(text)
    factory = cast("StoreFactory | None", STORES.get(url[1] if url else PATH_STORE))
    if factory is None:
        # Taken as a path, "mysql://host/db" would quietly become a SQLite file named "mysql:/host/db".
        schemes = ", ".join(f"{scheme}://" for scheme in available_stores())
        raise ConfigError(
            "index.store", f"{spec!r} is no store SkillPilot knows: use a {schemes} URL or a SQLite file path"
        )
    return factory(text)


__all__ = [
    "ConflictGraph",
    "IndexChanges",
    "SkillStore",
    "Snapshot",
    "StoredSkill",
    "VectorSearch",
    "assign_ids",
    "available_stores",
    "open_store",
    "register_store",
]
