"""The data every stage hands to the next: small frozen dataclasses, no behaviour beyond views.

Pipeline and the type each stage produces:

    skills/      -> Skill            (one SKILL.md folder, catalog tool or ontoskill.ttl skill, as written)
    fingerprint  -> Fingerprint      (routing signals derived from a Skill, no model needed)
    index/       -> IndexedSkill     (Skill + Fingerprint + id, as stored)
    retrieve/    -> score lists      (one raw score per catalog skill, per RetrieverId) and
                    FastHit          (a skill the fast path found, with its Evidence)
    redirects    -> Redirection      (authors' "not for X, use Y" clauses that apply to one message)
    feedback     -> Adjustment       (learned ln-multipliers for one message, with their Matches)
    fuse         -> Candidate        (one skill in the race: fused score, per-retriever ranks)
    conflicts    -> Resolution       (the winner of a contest inside a conflict group)
    decide       -> RouteResult      (the decision a user sees)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

import numpy as np

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


IssueCode = Literal["short-description", "no-use-when", "long-description", "empty-body", "name-format"]


@dataclass(frozen=True)
class QualityIssue:
    """A problem the fingerprint sees in a skill's text: a stable ``code`` checks match on, and
    the sentence an author reads."""

    code: IssueCode
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Redirect:
    """A case the skill's author sends elsewhere ("NOT for testing — use playwright-pro"): the
    case as written, and the skill named for it as written ("" when the author names none:
    "not for affinity prediction")."""

    case: str
    target: str = ""


@dataclass(frozen=True)
class Fingerprint:
    """Routing signals derived from a skill's text without any model (zero-config)."""

    intent_patterns: tuple[str, ...]
    keywords: tuple[str, ...]
    side_effects: SideEffects
    side_effects_declared: bool
    preconditions: Requirements
    quality_issues: tuple[QualityIssue, ...] = ()
    redirects: tuple[Redirect, ...] = ()


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
class RetrieverId:
    """Which retriever produced a score list: its kind and, for one of several of a kind (a dense
    one per model), which. Shown as ``fast``, ``bm25``, ``dense:<model>`` or a plugin's own
    (``str``), the label traces and fusion weights use. The kind says how fusion reads the list
    (``skillpilot.retrieve``): ``dense`` lists are graded, any other kind's hold matches."""

    kind: str
    model: str = ""

    def __str__(self) -> str:
        return f"{self.kind}:{self.model}" if self.model else self.kind

    @property
    def is_dense(self) -> bool:
        return self.kind == "dense"

    @property
    def shared_label(self) -> str | None:
        """The fusion-weight label every retriever of this kind shares (``dense:*``), if any."""
        return f"{self.kind}:*" if self.model else None


FAST = RetrieverId("fast")
BM25 = RetrieverId("bm25")


def dense_id(model: str) -> RetrieverId:
    return RetrieverId("dense", model)


EvidenceKind = Literal["trigger", "name", "prefer_when"]


@dataclass(frozen=True)
class Evidence:
    """One phrase the fast path found in a message: what kind (an author's trigger, the skill's
    name, a ``prefer_when`` word), the phrase as the author wrote it, and whether a name is
    ``generic`` (many other descriptions use it). ``str`` is how explanations quote it."""

    kind: EvidenceKind
    text: str
    generic: bool = False

    def __str__(self) -> str:
        return f"{self.kind} {self.text!r}" + (" (generic)" if self.generic else "")


@dataclass(frozen=True)
class FastHit:
    """One skill the fast path found: catalog position, 0-10 score, why (best evidence first)."""

    index: int
    score: float
    evidence: tuple[Evidence, ...]


FeedbackKind = Literal["confirmed", "corrected", "ignored"]


@dataclass(frozen=True)
class Match:
    """A learned example the message resembles: the skill it moves, which way, how strongly
    (similarity ramp times the signal's weight), and the message it came from ("" when
    ``log.queries`` kept no text; ``signal`` is then how to find it)."""

    skill: int
    sign: int
    strength: float
    query: str
    kind: FeedbackKind
    signal: int = 0
    implicit: bool = False


@dataclass(frozen=True)
class Adjustment:
    """Per-skill ln-multipliers for one message, and the examples behind them."""

    log_multipliers: np.ndarray
    matches: tuple[Match, ...] = ()

    @property
    def moves(self) -> bool:
        """Whether feedback changes anything for this message."""
        return bool(np.any(self.log_multipliers))

    def example_score(self, skill: int) -> float:
        """Net learned-example evidence for ``skill`` in [-1, 1] (positive: users chose it for
        messages like this one): the strongest example for it minus the strongest against."""
        towards = max((m.strength for m in self.matches if m.skill == skill and m.sign > 0), default=0.0)
        away = max((m.strength for m in self.matches if m.skill == skill and m.sign < 0), default=0.0)
        return towards - away

    def support(self, skill: int) -> int:
        """How many distinct similar messages were routed to ``skill`` by feedback, net of those
        that turned it down."""
        towards = sum(1 for m in self.matches if m.skill == skill and m.sign > 0)
        away = sum(1 for m in self.matches if m.skill == skill and m.sign < 0)
        return max(0, towards - away)

    def chosen(self) -> set[int]:
        """Catalog positions users chose for messages like this one."""
        return {m.skill for m in self.matches if m.sign > 0}


@dataclass(frozen=True)
class AppliedRedirect:
    """One author's redirect that applies to a message: the skill that sends the case away
    (``source``) and the one it names (``target``; None when it names none), as catalog
    positions, the redirect as written, and the part of its case the message matched ("flowcharts"
    of "flowcharts, circuits, pathways, and technical diagrams")."""

    source: int
    target: int | None
    redirect: Redirect
    matched: str


@dataclass(frozen=True)
class Redirection:
    """Per-skill ln-multipliers the authors' redirects set for one message, and the redirects."""

    log_multipliers: np.ndarray
    applied: tuple[AppliedRedirect, ...] = ()


@dataclass(frozen=True)
class Candidate:
    """One skill in the race: its fused score and, per retriever, its rank and raw score."""

    index: int
    score: float
    rrf: float
    ranks: Mapping[RetrieverId, int] = field(default_factory=dict)
    raw: Mapping[RetrieverId, float] = field(default_factory=dict)
    multiplier: float = 1.0


@dataclass(frozen=True)
class Resolution:
    """The outcome of a contest inside one group: who won, whom it beat (catalog positions), why."""

    winner: int
    beaten: tuple[int, ...]
    reason: str


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
    ``latency_ms`` is the routing time alone; loading the index or the models during the call
    is ``load_ms`` (0.0 when the router was warm).
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
    load_ms: float = 0.0

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
            # A result from a server older than load_ms has none: it counted loading in latency.
            load_ms=float(data.get("load_ms", 0.0)),
        )


def _skill_ref(data: Mapping[str, Any] | None) -> SkillRef | None:
    return None if data is None else SkillRef(**data)


def _literal(value: Any, kind: Any) -> Any:
    if value not in get_args(kind):
        raise KeyError(f"{value!r} is not one of {', '.join(get_args(kind))}")
    return value


@dataclass(frozen=True)
class SearchHit:
    """One ``search`` result: a skill and its calibrated 0-1 relevance, with the retrievers that
    matched it (``to_dict`` shows them as their labels: ``bm25``, ``dense:<model>``)."""

    id: str
    name: str
    key: str
    path: str
    description: str
    score: float
    matched_by: tuple[RetrieverId, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "matched_by": [str(r) for r in self.matched_by]}


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
    # Where models derived from shipped weights (MiniLM's lean copy) are kept.
    model_cache: str
    # Encoder -> skills it has no vectors for (routing uses the other retrievers; reindex fixes).
    missing_vectors: dict[str, int] = field(default_factory=dict)
    # Stored vectors of skills the index no longer holds (reindex removes them).
    orphan_vectors: int = 0
    # Routes take their dense candidates from the store's HNSW index (above index.annAbove).
    nearest_neighbours: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
