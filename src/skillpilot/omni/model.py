"""The data omni-retrieval's stages hand on: small frozen dataclasses, no behaviour beyond views.

OmniRequest     what the caller asks (the seed's inputs, snake_case here, camelCase in JSON)
Classification  classify -> the intent and how much each source is trusted for it
OmniItem        sources  -> one chunk, entity or path, with the seed's item fields
SourceOutcome   fetch    -> one source's items, or why it has none
OmniResult      fuse     -> the answer, serialised by ``to_json`` in the seed's exact shape
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

SourceName = Literal["attachment", "knowledge", "graph"]
# Canonical order: the seed's order of sections in contextText and of sources in a result.
SOURCE_NAMES: tuple[SourceName, ...] = ("attachment", "knowledge", "graph")
Intent = Literal["ATTACHMENT", "KNOWLEDGE", "GRAPH", "MIXED", "UNKNOWN"]
INTENTS: tuple[Intent, ...] = ("ATTACHMENT", "KNOWLEDGE", "GRAPH", "MIXED", "UNKNOWN")
Status = Literal["ok", "timeout", "error", "unavailable"]

DEFAULT_GRAPH_SPACE = "default"
DEFAULT_MAX_TOKENS = 2000
DEFAULT_TOP_K = 5


@dataclass(frozen=True)
class OmniRequest:
    """The seed's input parameters; ``sources`` forces which sources are asked (else: routing)."""

    query: str
    session_id: str | None = None
    graph_space: str = DEFAULT_GRAPH_SPACE
    knowledge_base: str | None = None
    sources: tuple[SourceName, ...] | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    top_k: int = DEFAULT_TOP_K

    def __post_init__(self) -> None:
        if not self.query.strip():
            raise ValueError("query must not be empty")
        if self.max_tokens < 1 or self.top_k < 1:
            raise ValueError(f"maxTokens and topK must be >= 1, got {self.max_tokens} and {self.top_k}")
        unknown = [s for s in self.sources or () if s not in SOURCE_NAMES]
        if unknown:
            raise ValueError(f"unknown source(s) {unknown}; use {', '.join(SOURCE_NAMES)}")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OmniRequest:
        """A request from the seed's camelCase JSON (what the MCP tool and HTTP endpoint receive)."""
        known = {"query", "sessionId", "graphSpace", "knowledgeBase", "sources", "maxTokens", "topK"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown field(s) {unknown}; allowed: {', '.join(sorted(known))}")
        if not isinstance(data.get("query"), str):
            raise ValueError("query is required and must be a string")
        sources = data.get("sources")
        return cls(
            query=data["query"],
            session_id=data.get("sessionId"),
            graph_space=data.get("graphSpace") or DEFAULT_GRAPH_SPACE,
            knowledge_base=data.get("knowledgeBase"),
            sources=tuple(sources) if sources else None,
            max_tokens=int(data.get("maxTokens", DEFAULT_MAX_TOKENS)),
            top_k=int(data.get("topK", DEFAULT_TOP_K)),
        )


@dataclass(frozen=True)
class Classification:
    """An intent, its confidence, and each source's weight in the fusion (1.0 = fully trusted)."""

    intent: Intent
    confidence: float
    weights: dict[SourceName, float]
    keyword_hits: dict[SourceName, tuple[str, ...]] = field(default_factory=dict)
    method: str = "keyword"


@dataclass(frozen=True)
class OmniItem:
    """One piece of context. ``key`` (a chunk id or an entity id, never serialised) de-duplicates;
    ``score`` is in [0, 1]: the source's relevance, then times the source's weight once fused."""

    source: SourceName
    key: str
    score: float
    snippet: str
    title: str | None = None
    entity_name: str | None = None
    entity_type: str | None = None
    chunk_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The seed's item: ``source``, ``score``, then whichever of ``title``, ``entityName``,
        ``entityType``, ``chunkId`` apply, then ``snippet``."""
        data: dict[str, Any] = {"source": self.source, "score": round(self.score, 4)}
        optional = {
            "title": self.title,
            "entityName": self.entity_name,
            "entityType": self.entity_type,
            "chunkId": self.chunk_id,
        }
        data.update({k: v for k, v in optional.items() if v is not None})
        data["snippet"] = self.snippet
        return data


@dataclass(frozen=True)
class SourceOutcome:
    """What one source gave: its items (``status`` ok) or why not, after ``attempts`` tries."""

    source: SourceName
    status: Status
    items: tuple[OmniItem, ...] = ()
    message: str = ""
    attempts: int = 1
    elapsed_ms: float = 0.0

    @property
    def warning(self) -> str | None:
        """The line for the result's ``warnings``, or None when the source answered."""
        if self.status == "ok":
            return None
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{self.source}: {self.status}{tries}: {self.message}"


@dataclass(frozen=True)
class OmniResult:
    """The fused answer. ``items`` are exactly what ``context_text`` holds, best first; citation
    ``[n]`` in ``context_text`` is ``items[n - 1]``."""

    intent: Intent
    sources: tuple[SourceName, ...]
    items: tuple[OmniItem, ...]
    context_text: str
    warnings: tuple[str, ...]
    truncated: bool
    classification: Classification | None = None
    outcomes: tuple[SourceOutcome, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The seed's output structure, field for field (camelCase)."""
        return {
            "intent": self.intent,
            "sources": list(self.sources),
            "items": [item.to_json() for item in self.items],
            "contextText": self.context_text,
            "warnings": list(self.warnings),
            "truncated": self.truncated,
        }
