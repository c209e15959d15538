"""SkillPilot: route a message to the right agent skill before the LLM runs.

from skillpilot import SkillPilot
pilot = SkillPilot()
pilot.index(["~/.claude/skills"])
result = pilot.route("open a PR for my branch")
"""

from .config import Settings, load_settings
from .errors import (
    ConfigError,
    EncoderError,
    MissingExtraError,
    SkillNotFoundError,
    SkillParseError,
    SkillPilotError,
    StoreError,
)
from .model import (
    Alternative,
    IndexedSkill,
    IndexReport,
    PlanStep,
    RouteResult,
    SearchHit,
    Skill,
    SkillRef,
    Stats,
)
from .router import SkillPilot

__all__ = [
    "Alternative",
    "ConfigError",
    "EncoderError",
    "IndexReport",
    "IndexedSkill",
    "MissingExtraError",
    "PlanStep",
    "RouteResult",
    "SearchHit",
    "Settings",
    "Skill",
    "SkillNotFoundError",
    "SkillParseError",
    "SkillPilot",
    "SkillPilotError",
    "SkillRef",
    "Stats",
    "StoreError",
    "load_settings",
]
