"""``skillpilot compile``: skill roots in, an OntoSkills tree out.

Input: any roots the loader reads (SKILL.md folders, tool catalogs, OntoSkills trees), an output
folder, optionally an all-MiniLM-L6-v2 encoder, a SHACL shapes file and a package id.
Output, for every skill with intents, in ``<out>/<skill key>/``:

- ``ontoskill.ttl``: :func:`writer.skill_graph` of the skill (an OntoSkills module is migrated
  to the current namespace instead, keeping all it says);
- ``intents.json`` (when an encoder is given): its intents embedded, OntoSkills' format;
- with ``package_id``: ``<out>/package.json``, an OntoSkills manifest listing every module, so
  the folder can be published as a registry package.

A skill's intents are its OntoSkills intents, or its ``route.triggers`` and the fingerprint's
"use when" clauses. A skill with none is warned about and skipped: OntoSkills' shapes require an
intent, and an intents.json without one would be empty. With a shapes file, a module that does
not conform is skipped with pyshacl's report and never written. Files are written atomically.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..encoders import Encoder
from ..fingerprint import fingerprint
from ..model import Skill, SkippedFile, TrustTier
from ..skills import load_skills
from . import vocab, writer
from .files import safe_relative, write_json_atomic, write_text_atomic
from .intents import write_intents
from .reader import INTENTS_FILE, MANIFEST_FILE, MODULE_FILE

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompiledSkill:
    key: str
    skill_id: str
    qualified_id: str
    module: str
    intents: tuple[str, ...]
    intents_json: str | None


@dataclass(frozen=True)
class CompileReport:
    output: str
    compiled: tuple[CompiledSkill, ...]
    skipped: tuple[SkippedFile, ...]
    warnings: tuple[str, ...]
    manifest: str | None = None


def skill_intents(skill: Skill) -> tuple[str, ...]:
    """What a skill resolves, as OntoSkills intents (distinct, in order)."""
    if skill.source_kind == "ontoskill":
        return tuple(skill.metadata["ontoskills"]["intents"])
    return tuple(dict.fromkeys([*skill.route.triggers, *fingerprint(skill).intent_patterns]))


def compile_skills(
    roots: Sequence[Path],
    output: Path,
    *,
    encoder: Encoder | None = None,
    shapes: Path | None = None,
    package_id: str | None = None,
    trust_tier: TrustTier = "community",
) -> CompileReport:
    """Compile every skill under ``roots`` into ``output``; see the module docstring."""
    output = Path(output)
    loaded = load_skills(list(roots))
    skipped = list(loaded.skipped)
    warnings = list(loaded.warnings)
    planned: list[tuple[Skill, tuple[str, ...], str, Path]] = []
    ids: dict[str, str] = {}
    for skill in loaded.skills:
        intents = skill_intents(skill)
        relative = safe_relative(skill.key) or safe_relative(skill.name)
        if not intents:
            warnings.append(
                f"{skill.path}: {skill.name!r} has no intents (add route.triggers or a 'Use when ...' "
                "sentence); skipped"
            )
            continue
        if relative is None:
            skipped.append(SkippedFile(skill.path, f"key {skill.key!r} is not a safe folder name; skipped"))
            continue
        if package_id and skill.name in ids:
            skipped.append(
                SkippedFile(skill.path, f"id {skill.name!r} is already used in {package_id} by {ids[skill.name]}")
            )
            continue
        ids[skill.name] = skill.key
        qualified = _qualified_id(skill, package_id)
        planned.append((skill, intents, qualified, output / relative))

    vectors = None
    if encoder is not None:
        texts = [intent for _, intents, _, _ in planned for intent in intents]
        vectors = encoder.encode_batch(texts) if texts else None
    compiled: list[CompiledSkill] = []
    row = 0
    for skill, intents, qualified, folder in planned:
        graph = (
            writer.migrated_graph(Path(skill.metadata["ontoskills"]["module"]))
            if skill.source_kind == "ontoskill"
            else writer.skill_graph(skill, intents, qualified)
        )
        start, row = row, row + len(intents)
        if shapes is not None:
            conforms, report = writer.validate(graph, shapes)
            if not conforms:
                skipped.append(SkippedFile(skill.path, f"does not conform to {shapes}: {report.strip()}"))
                continue
        module = folder / MODULE_FILE
        write_text_atomic(module, writer.turtle(graph))
        intents_json = None
        if vectors is not None:
            intents_json = str(folder / INTENTS_FILE)
            write_intents(Path(intents_json), intents, vectors[start:row], [skill.name])
        compiled.append(CompiledSkill(skill.key, skill.name, qualified, str(module), intents, intents_json))
    manifest = None
    if package_id:
        manifest = str(output / MANIFEST_FILE)
        write_json_atomic(Path(manifest), _manifest(package_id, trust_tier, output, compiled, loaded.skills))
    log.debug("compiled %d skills into %s", len(compiled), output)
    return CompileReport(str(output), tuple(compiled), tuple(skipped), tuple(warnings), manifest)


def _qualified_id(skill: Skill, package_id: str | None) -> str:
    if package_id:
        return f"{package_id}/{skill.name}"
    if skill.source_kind == "ontoskill":
        return str(skill.metadata["ontoskills"]["qualified_id"])
    # The key, not the name: same-named skills must not share a subject IRI in a merged graph.
    return f"{vocab.LOCAL_PACKAGE}/{skill.key}"


def _manifest(
    package_id: str,
    trust_tier: str,
    output: Path,
    compiled: Sequence[CompiledSkill],
    skills: Sequence[Skill],
) -> dict[str, object]:
    """An OntoSkills ``package.json`` (OntoCore's ``PackageManifest`` fields)."""
    by_key = {s.key: s for s in skills}

    def relative(path: str) -> str:
        return Path(path).relative_to(output).as_posix()

    return {
        "package_id": package_id,
        "version": "0.1.0",
        "trust_tier": trust_tier,
        "source_kind": "ontology",
        "modules": [relative(c.module) for c in compiled],
        "embedding_files": [relative(c.intents_json) for c in compiled if c.intents_json],
        "skills": [
            {
                "id": c.skill_id,
                "path": relative(c.module),
                "default_enabled": True,
                "aliases": list((by_key[c.key].metadata.get("ontoskills") or {}).get("aliases", [])),
                "description": by_key[c.key].description,
                "intents": list(c.intents),
            }
            for c in compiled
        ],
    }
