"""Build or refresh an index: skill roots in, one atomic ``IndexChanges`` out.

Incremental: a skill whose content hash is unchanged is neither re-fingerprinted nor
re-embedded; a skill gone from its folder is removed; a skill whose SKILL.md became unreadable
keeps its previous entry (and is reported), so one broken file never costs a working skill.
Vectors are computed before the write starts, so the slow part never holds the index. An
OntoSkills skill whose ``intents.json`` holds this encoder's model stores those vectors instead of
being embedded (a loader's ``vectors``, :mod:`skillpilot.skills.loaders`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Protocol

import numpy as np

from ..conflicts import conflict_config, update_graph
from ..encoders import Encoder
from ..fingerprint import fingerprint
from ..model import Fingerprint, IndexReport, Skill, SkippedFile
from ..skills import load_skills
from ..skills.loaders import shipped_vectors
from . import ConflictGraph, IndexChanges, SkillStore, StoredSkill

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


class TextsFor(Protocol):
    """What to embed for a skill; ``version`` names the recipe, so changing it re-embeds."""

    version: str

    def __call__(self, skill: Skill, fingerprint: Fingerprint) -> list[str]: ...


def vector_space(encoder: Encoder, texts_for: TextsFor) -> str:
    """The key stored vectors live under: the model and the recipe of texts it embedded."""
    return space_named(encoder.name, texts_for)


def space_named(encoder_name: str, texts_for: TextsFor) -> str:
    """``vector_space`` of the encoder called ``encoder_name``, without loading it."""
    return f"{encoder_name}|{texts_for.version}"


def root_id(path: Path) -> str:
    """How the store names a root: its absolute path (symlinks kept, ``~`` expanded)."""
    return str(Path(path).expanduser().absolute())


def _key_of_skipped(root: str, skipped: SkippedFile) -> str | None:
    path = Path(skipped.path)
    if path.name != "SKILL.md":
        return None
    try:
        return path.parent.relative_to(root).as_posix()
    except ValueError:
        return None


def build_index(
    store: SkillStore,
    paths: Sequence[Path],
    *,
    encoders: Callable[[], Sequence[Encoder]],
    texts_for: TextsFor,
    replace_roots: bool = False,
    progress: Progress | None = None,
    conflict_threshold: float | None = None,
    encoder_names: Sequence[str] | None = None,
    encoder_keys: Sequence[str] = (),
) -> IndexReport:
    """Index ``paths`` (skill folders or tool catalogs) into ``store`` in one transaction.

    ``encoders`` is called once the skills are read, so a caller can load the models meanwhile.
    ``replace_roots`` drops every known root not named in ``paths``. With ``conflict_threshold``
    the conflict graph (``skillpilot.conflicts``) is brought up to date in the same write.
    ``encoder_names``, when the caller knows them without loading the models (the names the
    index recorded under ``encoder_keys``), let a run with nothing to embed skip the models.
    """
    started = time.perf_counter()
    roots = [root_id(p) for p in paths]
    upserts: list[StoredSkill] = []
    removed: list[tuple[str, str]] = []
    skipped: list[tuple[str, SkippedFile]] = []
    warnings: list[str] = []
    file_stats: dict[str, dict[str, tuple[int, int]]] = {}
    unchanged = added = updated = 0
    now = time.time()
    for path, root in zip(paths, roots, strict=True):

        def on_file(done: int, total: int, label: str = f"reading {path}") -> None:
            if progress:
                progress(label, done, total)

        known = store.hashes(root)
        # A SKILL.md whose size and mtime are as last indexed is not re-read (its hash cannot have changed).
        reuse = {key: stat for key, stat in store.file_stats(root).items() if key in known}
        loaded = load_skills([Path(root)], progress=on_file, reuse=reuse)
        warnings.extend(loaded.warnings)
        skipped.extend((root, s) for s in loaded.skipped)
        file_stats[root] = loaded.file_stats
        seen: set[str] = set(loaded.reused)
        unchanged += len(loaded.reused)
        for skill in loaded.skills:
            skill = replace(skill, root=root)
            if skill.key in seen:
                warnings.append(f"{skill.path}: a second skill with key {skill.key!r} in {root}; kept the first")
                continue
            seen.add(skill.key)
            previous = known.get(skill.key)
            if previous == skill.content_hash:
                unchanged += 1
                continue
            added += previous is None
            updated += previous is not None
            upserts.append(StoredSkill(skill, fingerprint(skill), now))
        broken = {_key_of_skipped(root, s) for _, s in skipped}
        for key in known.keys() - seen:
            if key in broken:
                warnings.append(f"{root}/{key}: kept the previously indexed version (its SKILL.md is unreadable)")
            else:
                removed.append((root, key))
    dropped = tuple(r for r in store.roots() if replace_roots and r not in roots)
    gone = set(removed)
    needs_models = (
        encoder_names is None or bool(upserts) or _lacks_vectors(store, roots, gone, encoder_names, texts_for)
    )
    models = encoders() if needs_models else ()
    names = [e.name for e in models] if needs_models else list(encoder_names or ())
    in_roots = (
        [s for s in store.load() if s.skill.root in roots and (s.skill.root, s.skill.key) not in gone] if models else []
    )
    vectors = _vectors_for(store, upserts, in_roots, models, texts_for, progress)
    spaces = [space_named(name, texts_for) for name in names]
    stored_graph = store.conflict_graph(pairs=False) if conflict_threshold is not None else None
    # An index from before conflict graphs were stored, or for other settings, gets one now.
    stale = (
        conflict_threshold is not None
        and bool(spaces)
        and (stored_graph is None or stored_graph.config != conflict_config(spaces, conflict_threshold))
    )
    changed = bool(upserts or removed or dropped or vectors) or stale
    conflicts = (
        _conflict_graph(store, upserts, gone, dropped, vectors, spaces, conflict_threshold, progress)
        if changed and spaces and conflict_threshold is not None
        else None
    )
    meta = {"encoders": "+".join(names)}
    if needs_models and encoder_keys:
        meta["encoder_keys"] = json.dumps(list(zip(encoder_keys, names, strict=True)))
    store.apply(
        IndexChanges(
            roots=tuple(roots),
            dropped_roots=dropped,
            upserts=tuple(upserts),
            removed=tuple(removed),
            vectors=vectors,
            skipped=tuple(skipped),
            meta=meta,
            conflicts=conflicts,
            prune_orphans=True,
            file_stats=file_stats,
            catalog_changed=changed or bool(set(roots) - set(store.roots())),
        )
    )
    return IndexReport(
        roots=tuple(roots),
        added=added,
        updated=updated,
        unchanged=unchanged,
        removed=len(removed),
        skipped=tuple(s for _, s in skipped),
        total=store.count(),
        seconds=time.perf_counter() - started,
        warnings=tuple(warnings),
    )


def _vectors_for(
    store: SkillStore,
    fresh: Sequence[StoredSkill],
    stored: Sequence[StoredSkill],
    encoders: Sequence[Encoder],
    texts_for: TextsFor,
    progress: Progress | None,
) -> dict[tuple[str, str, str], np.ndarray]:
    """Vectors for new/changed skills, and for stored skills an encoder has not embedded yet
    (a changed encoder therefore re-embeds everything once)."""
    fresh_keys = {(s.skill.root, s.skill.key) for s in fresh}

    def embed(encoder: Encoder) -> dict[tuple[str, str, str], np.ndarray]:
        space = vector_space(encoder, texts_for)
        done = store.vector_keys(space) | fresh_keys
        todo = list(fresh) + [s for s in stored if (s.skill.root, s.skill.key) not in done]
        texts: list[str] = []
        owners: list[tuple[str, str]] = []
        grouped: dict[tuple[str, str], list[np.ndarray]] = {}
        for entry in todo:
            # A skill's format may ship this model's vectors (OntoSkills' intents.json): nothing to embed.
            ready = shipped_vectors(entry.skill, encoder.name, encoder.dim)
            if ready is not None:
                grouped[(entry.skill.root, entry.skill.key)] = list(ready)
                continue
            parts = texts_for(entry.skill, entry.fingerprint)
            texts.extend(parts)
            owners.extend([(entry.skill.root, entry.skill.key)] * len(parts))
        if texts:
            # A text several skills share (one skill in two roots, a re-published copy) is embedded
            # once where that is exact: other encoders' rows can move in the last bits with the batch.
            distinct = list(dict.fromkeys(texts)) if getattr(encoder, "batch_invariant", False) else texts
            matrix = _encode_with_progress(encoder, distinct, progress)
            if distinct is not texts:
                row_of = {text: n for n, text in enumerate(distinct)}
                matrix = matrix[[row_of[text] for text in texts]]
            for owner, row in zip(owners, matrix, strict=True):
                grouped.setdefault(owner, []).append(row)
        return {(root, key, space): np.stack(rows) for (root, key), rows in grouped.items()}

    # One thread per encoder: the runtimes release the GIL, and an encoder that uses one core
    # (USE) leaves the other to the next one.
    vectors: dict[tuple[str, str, str], np.ndarray] = {}
    with ThreadPoolExecutor(max_workers=max(1, len(encoders))) as pool:
        for part in pool.map(embed, encoders):
            vectors.update(part)
    return vectors


def _lacks_vectors(
    store: SkillStore, roots: Sequence[str], gone: set[tuple[str, str]], names: Sequence[str], texts_for: TextsFor
) -> bool:
    """Whether a skill of ``roots`` misses a vector of one of the encoders ``names``."""
    for name in names:
        have = store.vector_keys(space_named(name, texts_for))
        if any((root, key) not in have for root in roots for key in store.hashes(root) if (root, key) not in gone):
            return True
    return False


def _conflict_graph(
    store: SkillStore,
    upserts: Sequence[StoredSkill],
    removed: set[tuple[str, str]],
    dropped: Sequence[str],
    vectors: dict[tuple[str, str, str], np.ndarray],
    spaces: Sequence[str],
    threshold: float,
    progress: Progress | None,
) -> ConflictGraph | None:
    """The conflict graph of the catalog this run leaves behind, updated from the stored one
    (only new and edited skills are compared with the rest); None if a skill lacks a vector."""
    catalog = {
        (root, key): content
        for root in store.roots()
        if root not in dropped
        for key, content in store.hashes(root).items()
        if (root, key) not in removed
    }
    catalog.update({(s.skill.root, s.skill.key): s.skill.content_hash for s in upserts})
    skills = [(root, key, catalog[(root, key)]) for root, key in sorted(catalog)]
    matrices = []
    for space in spaces:
        stored = store.vectors(space)
        rows = [vectors.get((root, key, space), stored.get((root, key))) for root, key, _ in skills]
        if any(row is None for row in rows):
            return None
        matrices.append(
            np.stack([row[0] for row in rows if row is not None]) if rows else np.zeros((0, 1), dtype=np.float32)
        )
    if progress:
        progress("updating conflict groups", 0, 1)

    def compared(done: int, total: int) -> None:
        if progress:
            progress("comparing skills for conflict groups", done, total)

    graph = update_graph(
        store.conflict_graph(), skills, matrices, threshold, conflict_config(spaces, threshold), compared
    )
    if progress:
        progress("updating conflict groups", 1, 1)
    return graph


def _encode_with_progress(encoder: Encoder, texts: list[str], progress: Progress | None) -> np.ndarray:
    batch = 64
    chunks = []
    for start in range(0, len(texts), batch):
        chunks.append(encoder.encode_batch(texts[start : start + batch]))
        if progress:
            progress(f"embedding with {encoder.name}", min(start + batch, len(texts)), len(texts))
    return np.concatenate(chunks) if chunks else np.zeros((0, encoder.dim), dtype=np.float32)
