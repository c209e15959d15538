"""More routes of the resident HTTP service, as one FastAPI ``APIRouter`` (``serve/http.py``
includes it in ``create_app``, behind the same token and body limit):

    POST /context  {"query", "sessionId"?, "graphSpace"?, "knowledgeBase"?, "sources"?,
                    "maxTokens"?, "topK"?}           -> OmniResult.to_json() (camelCase, the seed's)
    POST /lint     {"skill": id} | {"path": folder}  -> {"skills": [lint report], "failing", "skipped"}
    POST /plan     {"message"}                       -> the RouteResult with its ``plan``
                                                        (``SkillPilot.plan``: every step marker)
    POST /find_skill {"intent"?, "scope"?, "top_k"?, "filters"?}
                                                     -> as the MCP tool ``find_skill``
                                                        (``serve.find.find_skill``)

Errors follow the service's shape ``{"error": {"type", "message"}}``: malformed fields 422 (the
app's validation handler), a request the library rejects 400 (``InvalidRequest``), an unknown
skill 404; a find_skill argument out of range 422 naming it. The routes call the library
through the app's ``SharedPilot`` (one call at a time).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter
from fastapi.params import Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from ..limits import DEFAULT_TOP_K as DEFAULT_SKILLS
from ..limits import MAX_ID_CHARS, MAX_MESSAGE_CHARS, MAX_TOP_K, MIN_TOP_K
from ..market import Market
from ..omni.model import DEFAULT_MAX_TOKENS, DEFAULT_TOP_K, SourceName
from . import SharedPilot, calls, find
from .guard import error_response


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ContextRequest(_Body):
    query: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS, description="The question, as the user asked it.")
    sessionId: str | None = Field(  # noqa: N815
        None, max_length=MAX_ID_CHARS, description="The session whose attachments to search."
    )
    graphSpace: str | None = Field(  # noqa: N815
        None, max_length=MAX_ID_CHARS, description="The graph space (default: default)."
    )
    knowledgeBase: str | None = Field(  # noqa: N815
        None, max_length=MAX_ID_CHARS, description="The knowledge base to search."
    )
    sources: list[SourceName] | None = Field(None, description="Ask only these sources.")
    maxTokens: int = Field(DEFAULT_MAX_TOKENS, ge=1, description="Token budget of contextText.")  # noqa: N815
    topK: int = Field(DEFAULT_TOP_K, ge=1, description="Items per source.")  # noqa: N815


class LintRequest(_Body):
    skill: str | None = Field(None, min_length=1, max_length=MAX_ID_CHARS, description="An installed skill's id.")
    path: str | None = Field(
        None, min_length=1, max_length=MAX_ID_CHARS, description="A skill folder or SKILL.md to lint."
    )


class PlanRequest(_Body):
    message: str = Field(
        min_length=1, max_length=MAX_MESSAGE_CHARS, description="The user message to route and split into steps."
    )


class FindSkillRequest(_Body):
    intent: str = Field("", max_length=MAX_MESSAGE_CHARS, description="What the skill should do; empty lists skills.")
    scope: str = Field("all", description="all, installed or market.", json_schema_extra={"enum": list(find.SCOPES)})
    top_k: int = Field(DEFAULT_SKILLS, ge=MIN_TOP_K, le=MAX_TOP_K, description="At most this many skills.")
    filters: dict[str, Any] | None = Field(
        None,
        description='e.g. {"exclude_ids": ["git-commit"], "trust_tiers": ["local"], "side_effects": ["read-only"]}',
    )


def _invalid(message: str) -> JSONResponse:
    return error_response(400, "InvalidRequest", message)


def router_for(shared: SharedPilot, dependencies: Sequence[Depends] = ()) -> APIRouter:
    """The routes, calling the library through ``shared`` (the app's pilot), each behind
    ``dependencies`` (the app's token check)."""
    router = APIRouter(dependencies=list(dependencies))

    @router.post("/context")
    def context(body: ContextRequest) -> Any:
        try:
            return shared(lambda p: calls.context(p, body.model_dump(exclude_none=True)))
        except ValueError as exc:
            return _invalid(str(exc))

    @router.post("/lint")
    def lint(body: LintRequest) -> Any:
        try:
            # Not under the routing lock: routes go on while a lint runs (POST /jobs/lint for a
            # whole index with a progress report).
            return calls.lint_report(shared, skill=body.skill, path=body.path)
        except ValueError as exc:
            return _invalid(str(exc))

    @router.post("/plan")
    def plan(body: PlanRequest) -> dict[str, Any]:
        return shared(lambda p: p.plan(body.message)).to_dict()

    # The marketplace view of the served index (its state is cached per index generation).
    market = Market(shared.pilot)

    @router.post("/find_skill")
    def find_skill(body: FindSkillRequest) -> Any:
        try:
            return shared(lambda p: find.find_skill(p, market, body.intent, body.scope, body.top_k, body.filters or {}))
        except find.InvalidArgument as exc:
            problem = {"field": exc.argument, "message": str(exc)}
            allowed = {"allowed": list(exc.allowed)} if exc.allowed is not None else {}
            return error_response(422, "InvalidRequest", str(exc), details=[problem], **allowed)

    return router
