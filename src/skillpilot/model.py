"""The data every stage hands to the next: small frozen dataclasses, no behaviour beyond views.

Pipeline and the type each stage produces:

    skills/      -> Skill            (one SKILL.md folder, catalog tool or ontoskill.ttl skill, as written)
    fingerprint  -> Fingerprint      (routing signals derived from a Skill, no model needed)
    index/       -> IndexedSkill     (Skill + Fingerprint + id, as stored)
    retrieve/    -> Hit              (a catalog position and a raw score, per retriever)
    fuse/decide  -> RouteResult      (the decision a user sees)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

SideEffects = Literal["read-only", "write-local", "write-remote", "network"]
SIDE_EFFECTS: tuple[SideEffects, ...] = ("read-only", "write-local", "write-remote", "network")
Decision = Literal["hard", "soft", "passthrough"]
Method = Literal["fast", "semantic", "hybrid", "no-match"]
TrustTier = Literal["local", "official", "verified", "community"]
TRUST_TIERS: tuple[TrustTier, ...] = ("local", "official", "verified", "community")
SourceKind = Literal["skill-md", "tool-catalog", "ontoskill"]


@dataclass(frozen=True)
class RouteHints:
    """The optional ``route:`` frontmatter block a skill author writes."""

    triggers: tuple[str, ...] = ()
    priority: int = 5
    prefer_when: tuple[str, ...] = ()
    side_effects: SideEffects | None = None


@dataclass(frozen=True)
class Requirements:
    """What a skill needs on the machine (``requires:`` or OpenClaw ``metadata``)."""

    env: tuple[str, ...] = ()
    bins: tuple[str, ...] = ()
    os: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        return not (self.env or self.bins or self.os)


@dataclass(frozen=True)
class Skill:
    """One routable unit as its author wrote it.

    ``key`` is the skill folder's path relative to the root it was found under (for a tool
    catalog: the tool name), ``path`` the folder's absolute path (for a catalog: the file's).
    """

    key: str
    name: str
    description: str
    body: str
    path: str
    root: str
    source_kind: SourceKind = "skill-md"
    route: RouteHints = field(default_factory=RouteHints)
    requires: Requirements = field(default_factory=Requirements)
    trust_tier: TrustTier = "local"
    private: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    content_hash: str = ""


@dataclass(frozen=True)
class Fingerprint:
    """Routing signals derived from a skill's text without any model (zero-config)."""

    intent_patterns: tuple[str, ...]
    keywords: tuple[str, ...]
    side_effects: SideEffects
    side_effects_declared: bool
    preconditions: Requirements
    quality_issues: tuple[str, ...] = ()


@dataclass(frozen=True)
class IndexedSkill:
    """A skill as the index holds it. ``id`` is its name, or its key when names collide."""

    id: str
    skill: Skill
    fingerprint: Fingerprint
    indexed_at: float

    @property
    def name(self) -> str:
        return self.skill.name

    @property
    def key(self) -> str:
        return self.skill.key


@dataclass(frozen=True)
class SkippedFile:
    """A file an index run could not read, and why (the index goes on without it)."""

    path: str
    reason: str


@dataclass(frozen=True)
class IndexReport:
    """What one ``index`` run did."""

    roots: tuple[str, ...]
    added: int
    updated: int
    unchanged: int
    removed: int
    skipped: tuple[SkippedFile, ...]
    total: int
    seconds: float
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hit:
    """One retriever's opinion of one catalog entry: position in the catalog and raw score."""

    index: int
    score: float


@dataclass(frozen=True)
class SkillRef:
    id: str
    name: str
    path: str
    description: str
    key: str


@dataclass(frozen=True)
class Alternative:
    id: str
    path: str
    score: float
    key: str


@dataclass(frozen=True)
class StageTrace:
    """One stage of a decision, for ``explain``: its name, its ranked candidates, its notes."""

    stage: str
    candidates: tuple[tuple[str, float], ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanStep:
    """One step of a message that asks for several things in order (see ``skillpilot.plan``):
    the words of the step, the skill they route to, and that route's confidence and decision."""

    text: str
    skill: SkillRef | None
    confidence: float
    decision: Decision


@dataclass(frozen=True)
class RouteResult:
    """The one thing ``route`` returns, match or not.

    ``skill`` is the top candidate (null only when nothing matched at all); ``decision`` says
    what an agent should do with it: ``hard`` invoke it, ``soft`` offer it to the LLM,
    ``passthrough`` let the LLM decide alone. ``plan`` is empty unless the message asks for
    several things in order that go to different skills: then it holds one step per thing.
    """

    query: str
    skill: SkillRef | None
    confidence: float
    decision: Decision
    method: Method
    alternatives: tuple[Alternative, ...] = ()
    conflict_resolved: bool = False
    conflict_alternatives: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    unmet_preconditions: tuple[str, ...] = ()
    trace: tuple[StageTrace, ...] | None = None
    latency_ms: float = 0.0
    plan: tuple[PlanStep, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if self.trace is None:
            data.pop("trace")
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RouteResult:
        """The RouteResult whose ``to_dict`` (or that dict's JSON) is ``data``: every field, plan and
        trace included, so ``from_dict(r.to_dict()) == r``. Raises ``ValueError`` when ``data`` is
        not such a dict (a missing field, a wrong type, an unknown decision or method)."""
        try:
            return cls._from_dict(data)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a RouteResult: {exc!r}") from exc

    @classmethod
    def _from_dict(cls, data: Mapping[str, Any]) -> RouteResult:
        trace = data.get("trace")
        return cls(
            query=str(data["query"]),
            skill=_skill_ref(data["skill"]),
            confidence=float(data["confidence"]),
            decision=_literal(data["decision"], Decision),
            method=_literal(data["method"], Method),
            alternatives=tuple(Alternative(**a) for a in data["alternatives"]),
            conflict_resolved=bool(data["conflict_resolved"]),
            conflict_alternatives=tuple(data["conflict_alternatives"]),
            reasons=tuple(data["reasons"]),
            unmet_preconditions=tuple(data["unmet_preconditions"]),
            trace=None
            if trace is None
            else tuple(
                StageTrace(
                    stage=t["stage"],
                    candidates=tuple((str(skill_id), float(score)) for skill_id, score in t["candidates"]),
                    notes=tuple(t["notes"]),
                )
                for t in trace
            ),
            latency_ms=float(data["latency_ms"]),
            plan=tuple(
                PlanStep(
                    text=str(step["text"]),
                    skill=_skill_ref(step["skill"]),
                    confidence=float(step["confidence"]),
                    decision=_literal(step["decision"], Decision),
                )
                for step in data["plan"]
            ),
        )


def _skill_ref(data: Mapping[str, Any] | None) -> SkillRef | None:
    return None if data is None else SkillRef(**data)


def _literal(value: Any, kind: Any) -> Any:
    if value not in get_args(kind):
        raise KeyError(f"{value!r} is not one of {', '.join(get_args(kind))}")
    return value


@dataclass(frozen=True)
class SearchHit:
    """One ``search`` result: a skill and its calibrated 0-1 relevance, with what matched."""

    id: str
    name: str
    key: str
    path: str
    description: str
    score: float
    matched_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stats:
    skills: int
    roots: tuple[str, ...]
    skipped: tuple[SkippedFile, ...]
    conflict_groups: int
    low_quality: tuple[str, ...]
    last_updated: float | None
    embed_provider: str
    index_path: str
    # Where models derived from shipped weights (MiniLM's integer-kernel copy) are kept.
    model_cache: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
