"""How a store writes a skill and its fingerprint as text: JSON, the same for every backend.

Guarantees: ``skill_from_json(skill_to_json(s)) == s`` and likewise for fingerprints (tuples come
back as tuples), so two stores holding the same index hand the router equal objects. An index
written before quality issues had codes (plain sentences), or before fingerprints held redirects,
gets them re-derived from the skill.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, replace
from typing import Any

import numpy as np

from ..fingerprint import quality_issues, redirects
from ..model import Fingerprint, QualityIssue, Redirect, Requirements, RouteHints, Skill
from . import ConflictGraph, StoredSkill


def fingerprint_to_json(fingerprint: Fingerprint) -> str:
    return json.dumps(asdict(fingerprint), ensure_ascii=False)


def skill_to_json(skill: Skill) -> str:
    return json.dumps(asdict(skill), ensure_ascii=False)


def skill_from_json(text: str) -> Skill:
    data: dict[str, Any] = json.loads(text)
    route = data.pop("route")
    requires = data.pop("requires")
    return Skill(
        **data,
        route=RouteHints(
            triggers=tuple(route["triggers"]),
            priority=route["priority"],
            prefer_when=tuple(route["prefer_when"]),
            side_effects=route["side_effects"],
        ),
        requires=Requirements(**{k: tuple(v) for k, v in requires.items()}),
    )


def _fingerprint_from_json(text: str, skill: Skill | None) -> tuple[Fingerprint, bool]:
    """The fingerprint back, and whether part of it was re-derived from ``skill``."""
    data: dict[str, Any] = json.loads(text)
    fingerprint = Fingerprint(
        intent_patterns=tuple(data["intent_patterns"]),
        keywords=tuple(data["keywords"]),
        side_effects=data["side_effects"],
        side_effects_declared=data["side_effects_declared"],
        preconditions=Requirements(**{k: tuple(v) for k, v in data["preconditions"].items()}),
        quality_issues=tuple(QualityIssue(**i) for i in data["quality_issues"] if isinstance(i, dict)),
        redirects=tuple(Redirect(**r) for r in data.get("redirects", ())),
    )
    derived = False
    if skill is not None and any(isinstance(i, str) for i in data["quality_issues"]):
        fingerprint = replace(fingerprint, quality_issues=quality_issues(skill, fingerprint.intent_patterns))
        derived = True
    if skill is not None and "redirects" not in data:
        fingerprint = replace(fingerprint, redirects=redirects(skill))
        derived = True
    return fingerprint, derived


def stored_from_json(skill: str, fingerprint: str, indexed_at: float) -> StoredSkill:
    """A stored row (skill JSON, fingerprint JSON, indexed_at) back as a ``StoredSkill``."""
    return stored_from_rows([(skill, fingerprint, indexed_at)])[0]


def stored_from_rows(rows: Iterable[tuple[str, str, float]]) -> list[StoredSkill]:
    """Stored rows (skill JSON, fingerprint JSON, indexed_at) back as ``StoredSkill`` s. Skills
    whose fingerprint text is the same (forks and copies of one text) share one decoded
    ``Fingerprint``: it is frozen, and a catalog of 50,000 forks holds about half as many."""
    shared: dict[str, Fingerprint] = {}
    stored: list[StoredSkill] = []
    for skill_text, fingerprint_text, indexed_at in rows:
        skill = skill_from_json(skill_text)
        fingerprint = shared.get(fingerprint_text)
        if fingerprint is None:
            fingerprint, derived = _fingerprint_from_json(fingerprint_text, skill)
            if not derived:
                shared[fingerprint_text] = fingerprint
        stored.append(StoredSkill(skill, fingerprint, indexed_at))
    return stored


GraphRow = tuple[str, str, str, bytes, bytes]


def graph_to_row(graph: ConflictGraph) -> GraphRow:
    """A conflict graph as (config, skills JSON, groups JSON, pairs bytes, similarity bytes)."""
    return (
        graph.config,
        json.dumps(graph.skills, ensure_ascii=False),
        json.dumps([[score, list(members)] for score, members in graph.groups]),
        np.ascontiguousarray(graph.pairs, dtype=np.int32).tobytes(),
        np.ascontiguousarray(graph.similarity, dtype=np.float64).tobytes(),
    )


def graph_from_row(config: str, skills: str, groups: str, pairs: bytes, similarity: bytes) -> ConflictGraph:
    return ConflictGraph(
        config=config,
        skills=tuple((root, key, content) for root, key, content in json.loads(skills)),
        pairs=np.frombuffer(bytes(pairs), dtype=np.int32).reshape(-1, 2).astype(np.int64),
        similarity=np.frombuffer(bytes(similarity), dtype=np.float64),
        groups=tuple((float(score), tuple(members)) for score, members in json.loads(groups)),
    )
