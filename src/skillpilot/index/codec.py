"""How a store writes a skill and its fingerprint as text: JSON, the same for every backend.

Guarantees: ``skill_from_json(skill_to_json(s)) == s`` and likewise for fingerprints (tuples come
back as tuples), so two stores holding the same index hand the router equal objects.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import numpy as np

from ..model import Fingerprint, Requirements, RouteHints, Skill
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


def fingerprint_from_json(text: str) -> Fingerprint:
    data: dict[str, Any] = json.loads(text)
    return Fingerprint(
        intent_patterns=tuple(data["intent_patterns"]),
        keywords=tuple(data["keywords"]),
        side_effects=data["side_effects"],
        side_effects_declared=data["side_effects_declared"],
        preconditions=Requirements(**{k: tuple(v) for k, v in data["preconditions"].items()}),
        quality_issues=tuple(data["quality_issues"]),
    )


def stored_from_json(skill: str, fingerprint: str, indexed_at: float) -> StoredSkill:
    """A stored row (skill JSON, fingerprint JSON, indexed_at) back as a ``StoredSkill``."""
    return StoredSkill(skill_from_json(skill), fingerprint_from_json(fingerprint), indexed_at)


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
