"""The dashboard of the resident HTTP service, as one FastAPI ``APIRouter``:

    GET /            the dashboard page (``dashboard.html``: one file of HTML, CSS and vanilla JS,
                     nothing fetched from elsewhere, so it works offline)
    GET /skills      {"skills": [{id, name, key, path, description, source_kind, trust_tier, root,
                     triggers, quality_issues}], "skipped": [{path, reason}]}
    GET /log         ?since=1h|ISO&limit=N&surface=S&decision=D -> {"entries": [routing log entry]}
    GET /feedback    {"signals": [{id, at, kind, query, skill, wrong}]}

The page reads the JSON routes with the same bearer token (``?token=`` in the page's address,
kept by the page) and uses ``POST /explain`` for its "try a message" box.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from importlib.resources import files
from typing import Any

from fastapi import APIRouter, Query
from fastapi.params import Depends
from fastapi.responses import HTMLResponse, JSONResponse

from ..catalog import trust_tier
from ..routelog import iso, parse_since
from ..router import SkillPilot
from . import SharedPilot

MAX_LOG_ROWS = 5000


def router_for(shared: SharedPilot, guarded: Sequence[Depends]) -> APIRouter:
    router = APIRouter()
    page = files("skillpilot.serve").joinpath("dashboard.html").read_text(encoding="utf-8")

    @router.get("/", response_class=HTMLResponse, include_in_schema=False)
    def dashboard() -> HTMLResponse:
        return HTMLResponse(page)

    @router.get("/skills", dependencies=list(guarded))
    def skills() -> dict[str, Any]:
        def listing(p: SkillPilot) -> dict[str, Any]:
            return {
                "skills": [
                    {
                        "id": s.id,
                        "name": s.name,
                        "key": s.key,
                        "path": s.skill.path,
                        "description": s.skill.description,
                        "source_kind": s.skill.source_kind,
                        "trust_tier": trust_tier(s, p.settings.trust_tiers),
                        "root": s.skill.root,
                        "triggers": list(s.skill.route.triggers),
                        "quality_issues": [issue.message for issue in s.fingerprint.quality_issues],
                    }
                    for s in p.skills()
                ],
                "skipped": [asdict(f) for f in p.stats().skipped],
            }

        return shared(listing)

    @router.get("/log", dependencies=list(guarded), response_model=None)
    def routing_log(
        since: str | None = None,
        limit: int = Query(500, ge=1, le=MAX_LOG_ROWS),
        surface: str | None = None,
        decision: str | None = None,
    ) -> dict[str, Any] | JSONResponse:
        try:
            start = parse_since(since) if since else None
        except ValueError as exc:
            return JSONResponse({"error": {"type": "InvalidRequest", "message": str(exc)}}, status_code=400)
        entries = shared(lambda p: p.route_log.entries(since=start, limit=MAX_LOG_ROWS))
        kept = [
            asdict(e) | {"time": iso(e.at)}
            for e in entries
            if (surface is None or e.surface == surface) and (decision is None or e.decision == decision)
        ]
        return {"entries": kept[:limit]}

    @router.get("/feedback", dependencies=list(guarded))
    def feedback_history() -> dict[str, Any]:
        signals = shared(lambda p: p.feedback_store.signals())
        return {"signals": [asdict(s) | {"time": iso(s.at)} for s in signals]}

    return router
