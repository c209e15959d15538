"""The dashboard of the resident HTTP service, as one FastAPI ``APIRouter``:

    GET /            the dashboard page (``dashboard.html``: one file of HTML, CSS and vanilla JS,
                     nothing fetched from elsewhere, so it works offline)
    GET /skills      ?offset=&limit=&q=&tier=&source= -> {"skills": [{id, name, key, path,
                     description, source_kind, trust_tier, root, triggers, quality_issues,
                     examples (its example requests), examples_by (what wrote them)}],
                     "total" (matching), "count" (all), "offset", "limit", "tiers", "sources",
                     "skipped": [{path, reason}]}
    GET /log         ?offset=&limit=&since=1h|ISO&surface=S&decision=D&q=TEXT -> {"entries":
                     [routing log entry], "total" (matching), "offset", "limit", "surfaces"}
    GET /activity    ?window=hour|day -> {"window", "since", "bucket_seconds", "thresholds":
                     {hard, soft}, "signed_in" (has the session cookie), "decisions":
                     {kind: n}, "surfaces": [{surface, count, p50, p95, p99, buckets: [{start,
                     count, p50, p95, p99}]}]}: routing time (``latency_ms``, never model or
                     index loading) by surface, overall and in 12 (hour) or 24 (day) slices
    GET /feedback    ?offset=&limit= -> {"signals": [{id, at, time, kind, query, skill, wrong}],
                     newest first, "total", "offset", "limit"}

Both listings page on the server, so the page stays small at any catalog or log size. The page
signs in with a cookie (``serve.browser``) or calls without one on a service with no token; its
"try a message" box calls ``POST /route`` with the trace, logged as surface ``dashboard``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from importlib.resources import files
from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.params import Depends
from fastapi.responses import HTMLResponse, JSONResponse

from ..catalog import trust_tier
from ..examples import ExampleSet
from ..model import Decision, IndexedSkill
from ..routelog import LogFilter, iso, parse_since
from ..router import SkillPilot
from . import SharedPilot, browser
from .guard import error_response

MAX_PAGE = 500
DEFAULT_PAGE = 50
# Chart slices: 5 minutes over the last hour, 1 hour over the last day.
WINDOWS = {"hour": (3600.0, 12), "day": (86400.0, 24)}

Offset = Query(0, ge=0)
Limit = Query(DEFAULT_PAGE, ge=1, le=MAX_PAGE)


def router_for(shared: SharedPilot, guarded: Sequence[Depends]) -> APIRouter:
    router = APIRouter()
    page = files("skillpilot.serve").joinpath("dashboard.html").read_text(encoding="utf-8")

    @router.get("/", response_class=HTMLResponse, include_in_schema=False)
    def dashboard() -> HTMLResponse:
        return HTMLResponse(page)

    @router.get("/skills", dependencies=list(guarded))
    def skills(
        offset: int = Offset,
        limit: int = Limit,
        q: str | None = Query(None, description="Only skills whose id, name or description contains it."),
        tier: str | None = None,
        source: str | None = None,
    ) -> dict[str, Any]:
        def listing(p: SkillPilot) -> dict[str, Any]:
            every = p.skills()
            tiers = {s.id: trust_tier(s, p.settings.trust_tiers) for s in every}
            examples = p.example_sets()
            needle = (q or "").lower()
            matching = [
                s
                for s in every
                if (not needle or needle in f"{s.id} {s.name} {s.skill.description}".lower())
                and (tier is None or tiers[s.id] == tier)
                and (source is None or s.skill.source_kind == source)
            ]
            return {
                "skills": [_listed(s, tiers[s.id], examples.get(s.id)) for s in matching[offset : offset + limit]],
                "total": len(matching),
                "count": len(every),
                "offset": offset,
                "limit": limit,
                "tiers": sorted(set(tiers.values())),
                "sources": sorted({s.skill.source_kind for s in every}),
                "skipped": [asdict(f) for f in p.stats().skipped],
            }

        return shared(listing)

    @router.get("/log", dependencies=list(guarded), response_model=None)
    def routing_log(
        offset: int = Offset,
        limit: int = Limit,
        since: str | None = None,
        surface: str | None = None,
        decision: Decision | None = None,
        q: str | None = Query(None, description="Only decisions whose message or skill id contains it."),
    ) -> dict[str, Any] | JSONResponse:
        try:
            start = parse_since(since) if since else None
        except ValueError as exc:
            return error_response(400, "InvalidRequest", str(exc))
        where = LogFilter(since=start, surface=surface, decision=decision, text=q)

        def listing(p: SkillPilot) -> dict[str, Any]:
            entries, total = p.log_entries(where, offset, limit)
            return {
                "entries": [asdict(e) | {"time": iso(e.at)} for e in entries],
                "total": total,
                "offset": offset,
                "limit": limit,
                "surfaces": p.log_surfaces(),
            }

        return shared(listing)

    @router.get("/activity", dependencies=list(guarded))
    def activity(request: Request, window: Literal["hour", "day"] = "hour") -> dict[str, Any]:
        seconds, slices = WINDOWS[window]
        settings = shared.pilot.settings
        now = time.time()
        since = now - seconds
        decisions, surfaces = shared(lambda p: (p.log_decisions(since), p.log_latency(since, slices, now=now)))
        return {
            "window": window,
            "since": iso(since),
            "bucket_seconds": seconds / slices,
            "thresholds": {"hard": settings.hard_threshold, "soft": settings.soft_threshold},
            "signed_in": browser.COOKIE in request.cookies,
            "decisions": {kind: decisions.get(kind, 0) for kind in ("hard", "soft", "passthrough")},
            "surfaces": [
                {
                    "surface": s.surface,
                    **asdict(s.overall),
                    "buckets": [
                        {"start": iso(since + n * seconds / slices), **asdict(b)} for n, b in enumerate(s.buckets)
                    ],
                }
                for s in surfaces
            ],
        }

    @router.get("/feedback", dependencies=list(guarded))
    def feedback_history(offset: int = Offset, limit: int = Limit) -> dict[str, Any]:
        signals = shared(lambda p: p.feedback_signals())
        newest = signals[::-1][offset : offset + limit]
        return {
            "signals": [asdict(s) | {"time": iso(s.at)} for s in newest],
            "total": len(signals),
            "offset": offset,
            "limit": limit,
        }

    return router


def _listed(skill: IndexedSkill, tier: str, examples: ExampleSet | None) -> dict[str, Any]:
    return {
        "id": skill.id,
        "name": skill.name,
        "key": skill.key,
        "path": skill.skill.path,
        "description": skill.skill.description,
        "source_kind": skill.skill.source_kind,
        "trust_tier": tier,
        "root": skill.skill.root,
        "triggers": list(skill.skill.route.triggers),
        "quality_issues": [issue.message for issue in skill.fingerprint.quality_issues],
        "examples": list(examples.requests) if examples else [],
        "examples_by": examples.model if examples else "",
    }
