"""Stage 1, load: skill folders and tool catalogs in, :class:`~skillpilot.model.Skill` out.

- :func:`load_skills` finds and reads everything under a list of roots (``discover``);
- :func:`parse_skill_md` / :func:`read_skill_md` read one ``SKILL.md`` (``skillmd``);
- :func:`parse_tool_catalog` reads one JSON tool catalog (``catalog``).

Every reader raises :class:`~skillpilot.errors.SkillParseError` for input it cannot use and
nothing else; ``load_skills`` turns those into ``SkippedFile`` entries and carries on.
"""

from __future__ import annotations

from ..limits import MAX_CATALOG_BYTES, MAX_SKILL_BYTES
from .catalog import parse_tool_catalog
from .discover import LoadResult, load_skills
from .skillmd import parse_skill_md, read_skill_md

__all__ = [
    "MAX_CATALOG_BYTES",
    "MAX_SKILL_BYTES",
    "LoadResult",
    "load_skills",
    "parse_skill_md",
    "parse_tool_catalog",
    "read_skill_md",
]
