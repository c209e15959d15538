"""Omni-retrieval: route a question to attachments, a knowledge base and a graph, fetch them in
parallel, and fuse one token-bounded context to inject into a prompt.

    from skillpilot import load_settings
    from skillpilot.omni import OmniRequest, omni_retrieve
    result = omni_retrieve(OmniRequest("张三和李四是什么关系？", session_id="s1"), load_settings())
    result.to_json()   # {"intent", "sources", "items", "contextText", "warnings", "truncated"}

The stages and what each hands on are listed in :mod:`skillpilot.omni.pipeline`.
"""

from .classify import IntentClassifier
from .model import (
    INTENTS,
    SOURCE_NAMES,
    Classification,
    Intent,
    OmniItem,
    OmniRequest,
    OmniResult,
    SourceName,
    SourceOutcome,
)
from .pipeline import attach_files, build_knowledge_base, load_triples, omni_retrieve
from .sources import Source

__all__ = [
    "INTENTS",
    "SOURCE_NAMES",
    "Classification",
    "Intent",
    "IntentClassifier",
    "OmniItem",
    "OmniRequest",
    "OmniResult",
    "Source",
    "SourceName",
    "SourceOutcome",
    "attach_files",
    "build_knowledge_base",
    "load_triples",
    "omni_retrieve",
]
