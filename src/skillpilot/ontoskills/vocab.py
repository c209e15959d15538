"""The OntoSkills vocabulary facts SkillPilot relies on, in one place (no rdflib needed).

- the three namespace generations of ``oc:`` (current first); reading normalises the older two
  to the current one, writing always uses the current one;
- how OntoSkills names a skill's subject IRI from its qualified id (``skill_uri_for_id`` in
  OntoCore's ``serialization.py``) and how it compacts IRIs for display (``oc:FileExists``);
- trust tiers and their score multipliers (OntoMCP ``catalog.rs``), the knowledge-node
  dimensions (OntoCore ``core_ontology.py``), and the embedding model ``intents.json`` names.
"""

from __future__ import annotations

import re

from ..model import TRUST_TIERS, TrustTier

CURRENT_NS = "https://ontoskills.sh/ontology#"
#: Every ``oc:`` namespace OntoSkills has used, newest first; they never mix in one file.
NAMESPACES: tuple[str, ...] = (
    CURRENT_NS,
    "https://ontoskills.marea.software/ontology#",
    "http://ontoclaw.marea.software/ontology#",
)
DCTERMS = "http://purl.org/dc/terms/"
SKOS = "http://www.w3.org/2004/02/skos/core#"
PROV = "http://www.w3.org/ns/prov#"

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_DIMENSION = 384
#: OntoMCP cannot load a skill without ``oc:nature``; OntoCore's LLM picks "Tool" for most
#: action-shaped skills, so a skill that states none (a SKILL.md) is written and shown as one.
DEFAULT_NATURE = "Tool"
#: Local packages and workspace skills: OntoSkills' synthesised package id for them.
LOCAL_PACKAGE = "local"

#: OntoMCP's tier factors (``catalog.rs``); a tier it does not know counts 1.0.
TIER_MULTIPLIERS: dict[str, float] = {"official": 1.2, "verified": 1.0, "local": 1.0, "community": 0.8}
#: OntoMCP breaks short-id ties in this tier order.
TIER_ORDER: dict[str, int] = {"official": 0, "local": 1, "verified": 2, "community": 3}

#: Knowledge-node kind -> its dimension (the ten groups of OntoCore's core ontology).
DIMENSION_OF: dict[str, str] = {
    "Constraint": "NormativeRule",
    "Standard": "NormativeRule",
    "AntiPattern": "NormativeRule",
    "DesignPrinciple": "StrategicInsight",
    "Heuristic": "StrategicInsight",
    "WorkflowStrategy": "StrategicInsight",
    "KnownIssue": "ResilienceTactic",
    "RecoveryTactic": "ResilienceTactic",
    "Idempotency": "ExecutionPhysics",
    "PerformanceProfile": "ExecutionPhysics",
    "SideEffect": "ExecutionPhysics",
    "SuccessIndicator": "Observability",
    "TelemetryPattern": "Observability",
    "DestructivePotential": "SecurityGuardrail",
    "FallbackStrategy": "SecurityGuardrail",
    "SecurityImplication": "SecurityGuardrail",
    "AmbiguityTolerance": "CognitiveBoundary",
    "AssumptionBoundary": "CognitiveBoundary",
    "RequiresHumanClarification": "CognitiveBoundary",
    "ComputeCost": "ResourceProfile",
    "TokenEconomy": "ResourceProfile",
    "DataProvenance": "TrustMetric",
    "ExecutionDeterminism": "TrustMetric",
    "PostFlightValidation": "LifecycleHook",
    "PreFlightCheck": "LifecycleHook",
    "RollbackProcedure": "LifecycleHook",
}

_SLUG_SEP = re.compile(r"[/@]")
_SLUG_OTHER = re.compile(r"[^a-z0-9_]")
_SLUG_REPEAT = re.compile(r"_+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def skill_slug(qualified_id: str) -> str:
    """``obra/superpowers/test-driven-development`` -> ``skill_obra_superpowers_test_driven_development``."""
    slug = _SLUG_OTHER.sub("_", _SLUG_SEP.sub("_", qualified_id.lower()))
    return "skill_" + _SLUG_REPEAT.sub("_", slug).strip("_")


def compact(iri: str) -> str:
    """An IRI in any ``oc:`` generation as ``oc:Local``; other IRIs unchanged."""
    for namespace in NAMESPACES:
        if iri.startswith(namespace):
            return "oc:" + iri[len(namespace) :]
    return iri


def snake_case(name: str) -> str:
    """``AntiPattern`` -> ``anti_pattern``, as OntoMCP names kinds and dimensions."""
    return _CAMEL.sub("_", name).lower()


def trust_tier(value: object, default: TrustTier = "verified") -> TrustTier:
    """A manifest's tier as a SkillPilot tier; retired or unknown tiers ("trusted") get ``default``,
    which is OntoMCP's neutral 1.0 factor."""
    for tier in TRUST_TIERS:
        if value == tier:
            return tier
    return default
