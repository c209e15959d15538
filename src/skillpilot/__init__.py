"""SkillPilot: route a message to the right agent skill before the LLM runs.

from skillpilot import SkillPilot
pilot = SkillPilot()
pilot.index(["~/.claude/skills"])
result = pilot.route("open a PR for my branch")

Everything here is public: ``SkillPilot`` and the types its methods take and return, every
error it raises on purpose (``skillpilot.errors``), and the extension points -- the part
Protocols (``Encoder``, ``Retriever``, ``SkillStore``) and their ``register_*`` functions (or
the ``skillpilot.encoders`` / ``skillpilot.retrievers`` / ``skillpilot.stores`` entry points).
"""

from .config import Settings, load_settings
from .conflicts import ConflictGroup
from .decide import Calibration
from .encoders import Encoder, register_encoder
from .errors import (
    BenchError,
    ConfigError,
    DocumentError,
    EncoderError,
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

__all__ = [
    "Adjustment",
    "Alternative",
    "AppliedRedirect",
    "BenchError",
    "Calibration",
    "Candidate",
    "ConfigError",
    "ConflictGraph",
    "ConflictGroup",
    "DocumentError",
    "Embedded",
    "Encoder",
    "EncoderError",
    "Evidence",
    "FastHit",
    "FeedbackError",
    "FeedbackNotFoundError",
    "FeedbackStats",
    "Fingerprint",
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
