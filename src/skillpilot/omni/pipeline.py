"""Omni-retrieval's facade: a question in, one fused, token-bounded context out.

    classify  keyword rules + embedding classifier          -> Classification
    route     intent (or the request's forced sources)      -> source names, top_k
    sources   attachments / knowledge base / graph          -> Source per name
    fetch     in parallel, per-source timeouts, retry       -> SourceOutcome per source
    fuse      weight, de-duplicate, rank, bound by tokens   -> FusedContext
                                                            -> OmniResult (``to_json``: the seed's shape)

Routing is the seed's: ATTACHMENT, KNOWLEDGE and GRAPH ask their one source; MIXED asks all
three, each weighted by the classifier's confidence in it; UNKNOWN asks all three with ``top_k``
lowered to ``UNKNOWN_TOP_K``. Forced ``sources`` are asked as given, each with weight 1.

Storage lives under ``$SKILLPILOT_HOME/omni/``: ``documents.sqlite`` (attachments and knowledge
bases) and ``graph.sqlite`` (triples); the ingest functions below fill them. Encoders come from
SkillPilot's settings (``embed.provider``); with ``router.enableSemantic`` off everything runs on
keywords and BM25 alone.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..config import Settings
from ..encoders import Encoder, get_encoder
from ..tokens import TokenCounter
from .classify import IntentClassifier, shared_classifier
from .fetch import FetchPolicy, fetch_all
from .fuse import fit, merge
from .model import SOURCE_NAMES, Intent, OmniRequest, OmniResult, SourceName
from .sources import Source
from .sources.attachments import AttachmentSource, ingest_attachments
from .sources.chunkstore import ChunkStore, IngestReport
from .sources.graph import GraphLoadReport, GraphSource, SQLiteGraphStore, read_triples
from .sources.knowledge import KnowledgeSource, ingest_folder

logger = logging.getLogger(__name__)

SOURCES_FOR: dict[Intent, tuple[SourceName, ...]] = {
    "ATTACHMENT": ("attachment",),
    "KNOWLEDGE": ("knowledge",),
    "GRAPH": ("graph",),
    "MIXED": SOURCE_NAMES,
    "UNKNOWN": SOURCE_NAMES,
}
UNKNOWN_TOP_K = 3
NOTHING_FOUND = "no source found anything relevant to the question"

_counter: TokenCounter | None = None


def _token_counter() -> TokenCounter:
    # Loading tokenizer.json takes ~50 ms: once per process is enough.
    global _counter
    if _counter is None:
        _counter = TokenCounter()
    return _counter


def encoders_for(settings: Settings) -> list[Encoder]:
    """SkillPilot's configured encoders, or none when semantic matching is off."""
    return [get_encoder(spec, settings) for spec in settings.encoder_specs] if settings.enable_semantic else []


def document_store(settings: Settings) -> ChunkStore:
    return ChunkStore(settings.omni_path / "documents.sqlite")


def graph_store(settings: Settings) -> SQLiteGraphStore:
    return SQLiteGraphStore(settings.omni_path / "graph.sqlite")


def open_sources(request: OmniRequest, settings: Settings) -> dict[SourceName, Source]:
    """The three built-in sources, bound to the request's session, knowledge base and graph space."""
    documents = document_store(settings)
    encoders = encoders_for(settings)
    return {
        "attachment": AttachmentSource(documents, request.session_id, encoders),
        "knowledge": KnowledgeSource(documents, request.knowledge_base, encoders),
        "graph": GraphSource(graph_store(settings), request.graph_space),
    }


def omni_retrieve(
    request: OmniRequest,
    settings: Settings,
    *,
    sources: Mapping[SourceName, Source] | None = None,
    classifier: IntentClassifier | None = None,
) -> OmniResult:
    """Classify, fetch in parallel and fuse (module docstring). ``sources`` replaces the built-in
    sources by name (a custom or remote source); never raises for a source's failure: it is
    skipped and named in ``warnings``."""
    classifier = classifier or shared_classifier(encoders_for(settings))
    classification = classifier.classify(request.query)
    if request.sources:
        chosen = tuple(s for s in SOURCE_NAMES if s in request.sources)
        weights: dict[SourceName, float] = dict.fromkeys(chosen, 1.0)
        top_k = request.top_k
    else:
        chosen = SOURCES_FOR[classification.intent]
        weights = {s: classification.weights.get(s, 1.0) for s in chosen}
        top_k = min(request.top_k, UNKNOWN_TOP_K) if classification.intent == "UNKNOWN" else request.top_k
    available = {**open_sources(request, settings), **(sources or {})}
    logger.info(
        "omni %s (%.2f, %s) -> %s, top_k %d",
        classification.intent,
        classification.confidence,
        classification.method,
        ", ".join(chosen),
        top_k,
    )
    outcomes = fetch_all(
        {name: available[name] for name in chosen}, request.query, top_k, FetchPolicy.from_settings(settings)
    )
    fused = fit(merge(outcomes, weights), request.max_tokens, _token_counter())
    warnings = [o.warning for o in outcomes if o.warning is not None]
    if not fused.items and not warnings:
        warnings.append(NOTHING_FOUND)
    return OmniResult(
        intent=classification.intent,
        sources=chosen,
        items=fused.items,
        context_text=fused.context_text,
        warnings=tuple(warnings),
        truncated=fused.truncated,
        classification=classification,
        outcomes=tuple(outcomes),
    )


def attach_files(settings: Settings, session_id: str, paths: Sequence[Path]) -> IngestReport:
    """Register files to a session (a file name already there is replaced)."""
    return ingest_attachments(document_store(settings), session_id, paths, encoders_for(settings))


def build_knowledge_base(settings: Settings, name: str, folder: Path) -> IngestReport:
    """Index a folder as knowledge base ``name`` (incremental; files gone from it are dropped)."""
    return ingest_folder(document_store(settings), name, folder, encoders_for(settings))


def load_triples(settings: Settings, path: Path, space: str, *, replace: bool = False) -> GraphLoadReport:
    """Load a CSV or JSON triples file into graph space ``space``."""
    return graph_store(settings).load(space, read_triples(path), replace=replace)
