"""SkillPilot: route a message to the right agent skill before the LLM runs.

from skillpilot import SkillPilot
pilot = SkillPilot()
pilot.index(["~/.claude/skills"])
result = pilot.route("open a PR for my branch")

Everything here is public: ``SkillPilot`` and the types its methods take and return, every
error it raises on purpose (``skillpilot.errors``), and the extension points -- the part
Protocols (``Encoder``, ``Retriever``, ``SkillStore``) and their ``register_*`` functions (or
the ``skillpilot.encoders`` / ``skillpilot.retrievers`` / ``skillpilot.stores`` entry points).
Names load on first use (PEP 562): ``import skillpilot.serve.mcp`` or ``skillpilot --help`` pay
for the modules they use, not for the router's.
"""

import importlib
import typing

if typing.TYPE_CHECKING:
    from .config import Settings, load_settings
    from .conflicts import ConflictGroup
    from .decide import Calibration, Calibrations
    from .encoders import Encoder, register_encoder
    from .enrich import Batch, EnrichReport
    from .enrich.prompt import RequestPlan
    from .enrich.writers import Completion, ExampleWriter
    from .errors import (
        BenchError,
        ConfigError,
        DocumentError,
        EncoderError,
        EnrichError,
        FeedbackError,
        FeedbackNotFoundError,
        MissingExtraError,
        RegistryError,
        ServiceError,
        SkillNotFoundError,
        SkillParseError,
        SkillPilotError,
        SourceUnavailableError,
        StoreError,
    )
    from .examples import ExampleSet, ExampleStore, ImportReport
    from .feedback import FeedbackStats, Signal
    from .fuse import Race
    from .index import (
        ConflictGraph,
        IndexChanges,
        SkillStore,
        Snapshot,
        StoredSkill,
        VectorSearch,
        open_store,
        register_store,
    )
    from .model import (
        Adjustment,
        Alternative,
        AppliedRedirect,
        Candidate,
        Evidence,
        FastHit,
        Fingerprint,
        IndexedSkill,
        IndexReport,
        Match,
        PlanStep,
        QualityIssue,
        Redirect,
        Redirection,
        Requirements,
        RetrieverId,
        RouteHints,
        RouteResult,
        SearchHit,
        Skill,
        SkillRef,
        SkippedFile,
        StageTrace,
        Stats,
    )
    from .rank import Ranking, Scores
    from .retrieve import Embedded, Retriever, RetrieverSources, register_retriever
    from .routelog import LogEntry, LogFilter, Percentiles, SurfaceLatency
    from .router import SkillPilot
    from .text import Query

# Each public name -> the module that defines it, imported when the name is first read.
_EXPORTS: dict[str, str] = {
    "Adjustment": "model",
    "Alternative": "model",
    "AppliedRedirect": "model",
    "Batch": "enrich",
    "BenchError": "errors",
    "Calibration": "decide",
    "Calibrations": "decide",
    "Candidate": "model",
    "Completion": "enrich.writers",
    "ConfigError": "errors",
    "ConflictGraph": "index",
    "ConflictGroup": "conflicts",
    "DocumentError": "errors",
    "Embedded": "retrieve",
    "Encoder": "encoders",
    "EncoderError": "errors",
    "EnrichError": "errors",
    "EnrichReport": "enrich",
    "Evidence": "model",
    "ExampleSet": "examples",
    "ExampleStore": "examples",
    "ExampleWriter": "enrich.writers",
    "FastHit": "model",
    "FeedbackError": "errors",
    "FeedbackNotFoundError": "errors",
    "FeedbackStats": "feedback",
    "Fingerprint": "model",
    "ImportReport": "examples",
    "IndexChanges": "index",
    "IndexReport": "model",
    "IndexedSkill": "model",
    "LogEntry": "routelog",
    "LogFilter": "routelog",
    "Match": "model",
    "MissingExtraError": "errors",
    "Percentiles": "routelog",
    "PlanStep": "model",
    "QualityIssue": "model",
    "Query": "text",
    "Race": "fuse",
    "Ranking": "rank",
    "Redirect": "model",
    "Redirection": "model",
    "RegistryError": "errors",
    "RequestPlan": "enrich.prompt",
    "Requirements": "model",
    "Retriever": "retrieve",
    "RetrieverId": "model",
    "RetrieverSources": "retrieve",
    "RouteHints": "model",
    "RouteResult": "model",
    "Scores": "rank",
    "SearchHit": "model",
    "ServiceError": "errors",
    "Settings": "config",
    "Signal": "feedback",
    "Skill": "model",
    "SkillNotFoundError": "errors",
    "SkillParseError": "errors",
    "SkillPilot": "router",
    "SkillPilotError": "errors",
    "SkillRef": "model",
    "SkillStore": "index",
    "SkippedFile": "model",
    "Snapshot": "index",
    "SourceUnavailableError": "errors",
    "StageTrace": "model",
    "Stats": "model",
    "StoreError": "errors",
    "StoredSkill": "index",
    "SurfaceLatency": "routelog",
    "VectorSearch": "index",
    "load_settings": "config",
    "open_store": "index",
    "register_encoder": "encoders",
    "register_retriever": "retrieve",
    "register_store": "index",
}

__all__ = [
    "Adjustment",
    "Alternative",
    "AppliedRedirect",
    "Batch",
    "BenchError",
    "Calibration",
    "Calibrations",
    "Candidate",
    "Completion",
    "ConfigError",
    "ConflictGraph",
    "ConflictGroup",
    "DocumentError",
    "Embedded",
    "Encoder",
    "EncoderError",
    "EnrichError",
    "EnrichReport",
    "Evidence",
    "ExampleSet",
    "ExampleStore",
    "ExampleWriter",
    "FastHit",
    "FeedbackError",
    "FeedbackNotFoundError",
    "FeedbackStats",
    "Fingerprint",
    "ImportReport",
    "IndexChanges",
    "IndexReport",
    "IndexedSkill",
    "LogEntry",
    "LogFilter",
    "Match",
    "MissingExtraError",
    "Percentiles",
    "PlanStep",
    "QualityIssue",
    "Query",
    "Race",
    "Ranking",
    "Redirect",
    "Redirection",
    "RegistryError",
    "RequestPlan",
    "Requirements",
    "Retriever",
    "RetrieverId",
    "RetrieverSources",
    "RouteHints",
    "RouteResult",
    "Scores",
    "SearchHit",
    "ServiceError",
    "Settings",
    "Signal",
    "Skill",
    "SkillNotFoundError",
    "SkillParseError",
    "SkillPilot",
    "SkillPilotError",
    "SkillRef",
    "SkillStore",
    "SkippedFile",
    "Snapshot",
    "SourceUnavailableError",
    "StageTrace",
    "Stats",
    "StoreError",
    "StoredSkill",
    "SurfaceLatency",
    "VectorSearch",
    "load_settings",
    "open_store",
    "register_encoder",
    "register_retriever",
    "register_store",
]


def __getattr__(name: str) -> typing.Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
