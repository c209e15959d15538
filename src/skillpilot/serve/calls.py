"""Library calls shared by the MCP tools and the HTTP routes: arguments in, plain JSON out.

    context(pilot, data)             -> omni-retrieval's OmniResult.to_json() for the seed's
                                        camelCase request (query, sessionId, graphSpace, ...)
    lint_report(pilot, skill, path)  -> {"skills": [SkillLint + failing], "failing", "skipped"}

Bad arguments raise ``ValueError`` (the surfaces turn it into their own error shape); an unknown
skill id raises ``SkillNotFoundError``. ``lint_report`` never routes through the serving router:
it lints with feedback and preconditions off, as ``skillpilot lint`` does, so linting neither
learns from nor depends on this machine. A path is indexed into a scratch home and its skills
are checked against one another (as ``skillpilot lint PATH``); a skill id is checked against the
whole index and only its own report is returned.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..lint import SkillLint, lint
from ..omni import OmniRequest, omni_retrieve
from ..router import SkillPilot


def context(pilot: SkillPilot, data: dict[str, Any]) -> dict[str, Any]:
    """Omni-retrieval for the seed's camelCase request ``data``; its answer in camelCase."""
    return omni_retrieve(OmniRequest.from_json(data), pilot.settings).to_json()


def lint_report(pilot: SkillPilot, skill: str | None = None, path: str | None = None) -> dict[str, Any]:
    """Lint one indexed skill (``skill``: an id, key or name) or the skills under ``path``."""
    if (skill is None) == (path is None):
        raise ValueError("give exactly one of skill (a skill id) or path (a skill folder or SKILL.md)")
    settings = pilot.settings.with_overrides(preconditions=False, feedback_enabled=False)
    if skill is not None:
        target = pilot.get(skill)
        # The serving router's own store (which may not be the home's SQLite file); not closed
        # here, since closing a SkillPilot closes its store and the server keeps using it.
        checker = SkillPilot(settings=settings, store=pilot.store)
        return _report([r for r in lint(checker) if r.id == target.id], [])
    folder = Path(str(path)).expanduser()
    if not folder.exists():
        raise ValueError(f"path {path} does not exist")
    with tempfile.TemporaryDirectory(prefix="skillpilot-lint-") as scratch:
        checker = SkillPilot(settings=settings.with_overrides(home=Path(scratch), store=""))
        try:
            report = checker.index([folder], replace=True)
            results = lint(checker)
        finally:
            checker.close()
    return _report(results, [asdict(s) for s in report.skipped])


def _report(results: list[SkillLint], skipped: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "skills": [{**asdict(r), "failing": r.failing} for r in results],
        "failing": sum(r.failing for r in results),
        "skipped": skipped,
    }
