"""How a store writes a skill and its fingerprint as text: JSON, the same for every backend.

Guarantees: ``skill_from_json(skill_to_json(s)) == s`` and likewise for fingerprints (tuples come
back as tuples), so two stores holding the same index hand the router equal objects.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from ..model import Fingerprint, Requirements, RouteHints, Skill
from . import StoredSkill


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
