"""The MCP server (``skillpilot mcp``): SkillPilot as tools any MCP host can call.

Tools (each returns ``structuredContent`` plus a text block for the model to read):

    route(message)                       -> the RouteResult (as ``POST /route``)
    ontoskill(q, top_k=5)                -> OntoSkills-compatible: a skill id or alias gives the
                                            skill's context, anything else a search
    find_skill(intent, scope, top_k, filters) -> skills for an intent (no intent lists them):
                                            ``serve.find.find_skill``, as ``POST /find_skill``
    omni_retrieve(query, sessionId?, graphSpace?, knowledgeBase?, sources?, maxTokens?, topK?)
                                         -> ``OmniResult.to_json()`` (as ``POST /context``)
    lint_skill(skill | path)             -> ``{skills: [lint report], failing, skipped}``
    feedback(kind, message, skill | wrong + right) -> the recorded signal (as ``POST /feedback``):
                                            a correction takes from the next route on

Resource ``ontology://schema``: compact JSON (< 4 KB) naming the classes, properties and
conventions the tools speak in, generated from the answer types (``RouteResult`` and every
dataclass it holds, the OntoSkills TypedDicts of :mod:`skillpilot.ontoskills.shapes`) and the
tools' input schemas.

``ontoskill`` answers in the shapes of OntoSkills' own MCP server (``ontomcp`` 1.1.0;
``../shared/bench/ontoskills/README.md`` sections 7a-7b), built by
:mod:`skillpilot.ontoskills.shapes` (the one OntoSkills layer): a skill context
``{skill: {id, qualified_id, package_id, trust_tier, aliases?, skill_type, nature, intents?,
requirements?}, include_inherited_knowledge}`` or a search ``{mode, query, results[skill_id,
qualified_id, score, matched_by, intents, aliases, trust_tier]}``, with the same compact text.
``q`` names a skill by OntoMCP's rules (qualified id, ``package/id``, short id or alias, ties
by tier), then by SkillPilot's own names (folder-relative key, name). Skills read from
OntoSkills packages keep their package, qualified id, aliases and intents; other skills are
workspace skills to OntoSkills: package ``local``, qualified id ``local/<id>``, no aliases (they
come from an install lock), nature ``Tool``. Additions: ``skill.name``, ``skill.description``,
``skill.path`` and ``instructions`` (the SKILL.md body, never sent for a private skill), and in
the text the description under the heading and the instructions last. With only keywords on
(``enable_semantic`` off) a search is OntoSkills' own BM25 mode, field by field (its scores,
cut-off min 0.1 / gap 0.15, keys and text); with meaning matched too it is SkillPilot's ranking
in the same result shape, ``mode`` ``hybrid`` (SkillPilot scores whole skills, never
OntoSkills' intent-level ``semantic`` shape).

Limits (``skillpilot.limits``, shared with HTTP): ``top_k`` 1-100, messages and queries up to
``MAX_MESSAGE_CHARS`` characters.

Guarantees: bad arguments give ``isError`` results with ``structuredContent.error = {code,
message, argument?, allowed?}``, never a traceback; over stdio nothing but protocol is written
to stdout (the SDK points fd 1 at stderr while it serves), and every line gets an answer: a lone
surrogate reads as U+FFFD, malformed JSON-RPC gets a JSON-RPC error (:mod:`skillpilot.serve.stdio`).
Needs the ``[mcp]`` extra.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, fields, is_dataclass
from typing import TYPE_CHECKING, Annotated, Any, TypedDict, get_args, get_type_hints

from ..errors import MissingExtraError

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, InputRequiredResult, TextContent, Tool
    from pydantic import Field, ValidationError
    from starlette.responses import JSONResponse
    from starlette.types import ASGIApp, Receive, Scope, Send
except ImportError as exc:
    raise MissingExtraError("mcp", "`skillpilot mcp`", exc.name or "mcp") from exc

from ..errors import ConfigError, SkillNotFoundError, SkillPilotError
from ..limits import DEFAULT_TOP_K, MAX_BODY_BYTES, MAX_TOP_K, MIN_TOP_K
from ..model import SIDE_EFFECTS, TRUST_TIERS, Decision, Method
from . import Refresher, SharedPilot, find, is_loopback, package_version
from .find import FILTERS, MATCHED_BY, SCOPES, InvalidArgument, check_query, check_top_k, matched_by
from .protocol import BoundedH11Protocol, replaying
from .stdio import checked, run_stdio

if TYPE_CHECKING:
    # What only tool calls use is imported by the first call that does (see ``run``): a client's
    # ``initialize`` and ``tools/list`` wait for the MCP SDK and this module, never for these.
    from ..config import Settings
    from ..market import Market
    from ..ontoskills import shapes
    from ..router import SkillPilot

log = logging.getLogger(__name__)

FEEDBACK_KINDS = ("confirm", "correct", "ignore")

TOP_K_RANGE = f"{MIN_TOP_K}-{MAX_TOP_K}"
FILTERS_TEXT = "lists of strings: " + ", ".join(
    f"{name} ({'|'.join(allowed) if allowed else 'skill ids'})" for name, allowed in FILTERS.items()
)
# SkillPilot's addition to a skill context: the SKILL.md body.
INSTRUCTIONS = "instructions"


class _Server(MCPServer[Any]):
    """``MCPServer`` whose argument-type errors and unknown tool names are structured too, like
    the tools' own checks."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        names = sorted(tool.name for tool in await self.list_tools())
        if name not in names:
            return _error("unknown_tool", f"there is no tool {name!r}; call one of {', '.join(names)}", allowed=names)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            problems = exc.__cause__.errors(include_url=False)
            fields = [".".join(str(p) for p in e["loc"]) for e in problems]
            message = "; ".join(f"{f}: {e['msg']}" for f, e in zip(fields, problems, strict=True))
            return _error("invalid_argument", message, argument=fields[0] if fields else None)

    async def run_stdio_async(self) -> None:
        # Every stdin line answered: lone surrogates cleaned, malformed JSON-RPC gets its error.
        await run_stdio(self)

    async def run_streamable_http_async(self, *, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        # The SDK's own runner, with a deadline for reading each request (serve.protocol).
        import uvicorn

        app = self.streamable_http_app(host=host, **options)
        level = self.settings.log_level.lower()
        await uvicorn.Server(
            uvicorn.Config(app, host=host, port=port, log_level=level, http=BoundedH11Protocol)
        ).serve()

    def streamable_http_app(self, **options: Any) -> Any:
        # The same checks for every HTTP message as for every stdin line.
        app = super().streamable_http_app(**options)
        app.add_middleware(CheckedBodies)
        return app


class CheckedBodies:
    """Each MCP-over-HTTP request body :func:`~skillpilot.serve.stdio.checked` as a stdin line
    is: lone surrogates become U+FFFD (the SDK's parser refuses them), too deep a message gets
    the JSON-RPC error stdio sends, a body over ``MAX_BODY_BYTES`` gets 413."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = bytearray()
        more = True
        while more and len(body) <= MAX_BODY_BYTES:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if len(body) > MAX_BODY_BYTES:
            await JSONResponse({"error": f"request bodies are limited to {MAX_BODY_BYTES} bytes"}, 413)(
                scope, receive, send
            )
            return
        line, error = checked(body.decode("utf-8", "replace"))
        if error is not None:
            await JSONResponse(error.model_dump(by_alias=True, exclude_none=True), 400)(scope, receive, send)
            return
        assert line is not None
        cleaned = line.encode("utf-8")
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
        scope = {**scope, "headers": [*headers, (b"content-length", str(len(cleaned)).encode())]}
        await self.app(scope, replaying(cleaned, receive), send)


def build_server(pilot: SkillPilot | Callable[[], SkillPilot], warm: bool = False) -> MCPServer[Any]:
    """An ``MCPServer`` whose tools call ``pilot`` (which it then owns: one call at a time), or
    the pilot a function builds on first use; ``warm`` starts building it and loading its models
    in the background at once, beside the handshake."""
    shared = SharedPilot(pilot)
    if warm:
        shared.warm_up_in_background()

    @functools.cache
    def market() -> Market:
        # The marketplace view of the same index (its state is cached per index generation).
        from ..market import Market

        return Market(shared.pilot)

    server = _Server(
        "skillpilot",
        version=package_version(),
        # uvicorn's per-request access lines go to stdout at INFO; the CLI keeps stdout clean.
        log_level="WARNING",
        instructions="Call route(message) with the user's message before choosing a skill yourself: "
        "a 'hard' decision names the skill to use, 'soft' a candidate, 'passthrough' none. "
        "ontoskill and find_skill search the skills; omni_retrieve fetches context for a question; "
        "lint_skill says how to make a skill easier to route to.",
    )

    @server.tool(
        description="Route a user message to the best installed skill. Returns the decision "
        "(hard: use the skill; soft: consider it; passthrough: no skill fits), the skill, "
        "its confidence, the reasons and the runners-up."
    )
    def route(
        message: Annotated[str, Field(description="The user's message, as written.")],
    ) -> CallToolResult:
        return _tool(lambda: _ok(shared(lambda p: p.route(check_query("message", message))).to_dict()))

    @server.tool(
        description="Find or load a skill by name or query. If q matches a known skill id, "
        "returns that skill's structured context. Otherwise, searches for relevant skills."
    )
    def ontoskill(
        q: Annotated[str, Field(description="A skill id or alias, or what you need a skill for.")],
        top_k: Annotated[int, Field(description=f"At most this many search results ({TOP_K_RANGE}).")] = DEFAULT_TOP_K,
    ) -> CallToolResult:
        return _tool(lambda: shared(lambda p: _ontoskill(p, q, check_top_k(top_k))))

    @server.tool(
        description="Find skills for an intent. scope: installed (this machine's index), "
        "market (the marketplace: public text only, near-duplicates folded) or all (both, merged "
        "by id). An empty intent lists skills. filters: exclude_ids, trust_tiers, side_effects (lists)."
    )
    def find_skill(
        intent: Annotated[str, Field(description="What the skill should do; empty to list skills.")] = "",
        scope: Annotated[
            str, Field(description="all, installed or market.", json_schema_extra={"enum": list(SCOPES)})
        ] = "all",
        top_k: Annotated[int, Field(description=f"At most this many skills ({TOP_K_RANGE}).")] = DEFAULT_TOP_K,
        filters: Annotated[
            dict[str, Any] | None,
            Field(description=FILTERS_TEXT),
        ] = None,
    ) -> CallToolResult:
        return _tool(lambda: _ok(shared(lambda p: find.find_skill(p, market(), intent, scope, top_k, filters or {}))))

    @server.tool(
        description="Fetch context for a question from the session's attachments, a knowledge base "
        "and a graph, fused into one token-bounded text with citations. Returns {intent, sources, "
        "items, contextText, warnings, truncated}."
    )
    def omni_retrieve(
        query: Annotated[str, Field(description="The question, as the user asked it.")],
        sessionId: Annotated[  # noqa: N803 (the seed's camelCase names)
            str | None, Field(description="The session whose attachments to search.")
        ] = None,
        graphSpace: Annotated[str | None, Field(description="The graph space (default: default).")] = None,  # noqa: N803
        knowledgeBase: Annotated[str | None, Field(description="The knowledge base to search.")] = None,  # noqa: N803
        sources: Annotated[
            list[str] | None,
            Field(description="Ask only these sources: attachment, knowledge, graph (default: routed)."),
        ] = None,
        maxTokens: Annotated[int, Field(description="Token budget of contextText (>= 1).")] = 2000,  # noqa: N803
        topK: Annotated[int, Field(description="Items per source (>= 1).")] = 5,  # noqa: N803
    ) -> CallToolResult:
        request: dict[str, Any] = {"query": query, "maxTokens": maxTokens, "topK": topK}
        optional = {
            "sessionId": sessionId,
            "graphSpace": graphSpace,
            "knowledgeBase": knowledgeBase,
            "sources": sources,
        }
        request.update({k: v for k, v in optional.items() if v is not None})
        return _tool(lambda: shared(lambda p: _omni(p, request)))

    @server.tool(
        description="Lint a skill for routability: a 0-100 score and findings, each with its "
        "evidence and a fix. Give skill (an installed skill id) or path (a skill folder or SKILL.md)."
    )
    def lint_skill(
        skill: Annotated[str | None, Field(description="An installed skill's id.")] = None,
        path: Annotated[str | None, Field(description="A skill folder or SKILL.md to lint.")] = None,
    ) -> CallToolResult:
        # Not under the routing lock: routes go on while a lint runs.
        return _tool(lambda: _lint(shared, skill, path))

    @server.tool(
        description="Tell the router what the user said about a route: kind confirm (skill was right), "
        "correct (wrong was routed, right was meant) or ignore (skill was not used). Counts from the next "
        "route on: the same message then goes to the corrected skill."
    )
    def feedback(
        kind: Annotated[
            str, Field(description="confirm, correct or ignore.", json_schema_extra={"enum": list(FEEDBACK_KINDS)})
        ],
        message: Annotated[str, Field(description="The user's message the route was for.")],
        skill: Annotated[str | None, Field(description="confirm / ignore: the routed skill's id.")] = None,
        wrong: Annotated[str | None, Field(description="correct: the skill that was routed.")] = None,
        right: Annotated[str | None, Field(description="correct: the skill that was meant.")] = None,
    ) -> CallToolResult:
        def record() -> CallToolResult:
            if kind not in FEEDBACK_KINDS:
                raise InvalidArgument("kind", f"unknown feedback kind {kind!r}", FEEDBACK_KINDS)
            query = check_query("message", message)
            return _ok(asdict(shared(lambda p: p.feedback(kind, query, skill=skill, wrong=wrong, right=right))))

        return _tool(record)

    @server.resource(
        "ontology://schema",
        name="Ontology Schema",
        mime_type="application/json",
        description="Compact schema for querying the skills",
    )
    async def schema() -> str:
        return json.dumps(schema_of(shared.pilot, await server.list_tools()), separators=(",", ":"))

    return server


def _tool(call: Callable[[], CallToolResult]) -> CallToolResult:
    """Run a tool body; turn bad arguments and SkillPilot errors into structured error results."""
    try:
        return call()
    except InvalidArgument as exc:
        return _error(
            "invalid_argument",
            str(exc),
            argument=exc.argument,
            **({"allowed": list(exc.allowed)} if exc.allowed is not None else {}),
        )
    except SkillNotFoundError as exc:
        return _error("not_found", str(exc), suggestions=list(exc.suggestions))
    except SkillPilotError as exc:
        return _error(type(exc).__name__, str(exc))


def _ok(data: dict[str, Any], text: str | None = None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text if text is not None else json.dumps(data, ensure_ascii=False))],
        structured_content=data,
    )


def _error(code: str, message: str, **details: Any) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=f"error ({code}): {message}")],
        structured_content={"error": {"code": code, "message": message, **details}},
        is_error=True,
    )


def _omni(pilot: SkillPilot, request: dict[str, Any]) -> CallToolResult:
    from ..omni import SOURCE_NAMES
    from . import calls

    if not request["query"].strip():
        raise InvalidArgument("query", "query must be a question, got an empty string")
    check_query("query", request["query"])
    if bad := [s for s in request.get("sources") or () if s not in SOURCE_NAMES]:
        raise InvalidArgument("sources", f"unknown source(s) {', '.join(bad)}", SOURCE_NAMES)
    for name in ("maxTokens", "topK"):
        if request[name] < 1:
            raise InvalidArgument(name, f"{name} must be >= 1, got {request[name]}")
    try:
        answer = calls.context(pilot, request)
    except ValueError as exc:
        raise InvalidArgument("query", str(exc)) from exc
    return _ok(answer)


def _lint(shared: SharedPilot, skill: str | None, path: str | None) -> CallToolResult:
    if (skill is None) == (path is None):
        raise InvalidArgument("skill", "give exactly one of skill (an installed skill id) or path")
    from . import calls

    try:
        return _ok(calls.lint_report(shared, skill=skill, path=path))
    except ValueError as exc:
        raise InvalidArgument("path" if path is not None else "skill", str(exc)) from exc


# -- ontoskill ------------------------------------------------------------------------------
def _ontoskill(pilot: SkillPilot, q: str, top_k: int) -> CallToolResult:
    from ..ontoskills import shapes

    if not q.strip():
        raise InvalidArgument("q", "q must be a skill id or a query, got an empty string")
    check_query("q", q)
    views = [shapes.view(s, pilot.settings.trust_tiers) for s in pilot.skills()]
    target = shapes.resolve(q, views) or _by_key_or_name(q, views)
    if target is not None:
        return _context(q, target, views)
    if not pilot.settings.enable_semantic:
        # Keywords only: OntoSkills' own BM25 mode, its cut-off (min 0.1, gap 0.15) and its
        # result shape field by field.
        answer = shapes.KeywordSearch(views).search(q, top_k)
    else:
        by_id = {v.skill.id: v for v in views}
        results = [shapes.search_result(by_id[h.id], h.score, matched_by(h.matched_by)) for h in pilot.search(q, top_k)]
        answer = {"mode": "hybrid", "query": q, "results": results}
    return _ok(answer, shapes.search_text(answer))


def _by_key_or_name(q: str, views: list[shapes.OntoView]) -> shapes.OntoView | None:
    """The skill whose id as this server gives it out (``skill_id``, ``qualified_id``: a search
    result's, whatever characters it holds, "Ahrefs Automation" too), SkillPilot key
    (folder-relative path) or name is ``q``, ignoring case: names OntoMCP does not know, tried
    after its own rules."""
    from ..ontoskills import shapes

    wanted = q.lower()
    given = [v for v in views if wanted in (v.skill_id.lower(), v.qualified_id.lower())]
    if given:
        return min(given, key=shapes.tie_break)
    if not shapes.looks_like_id(q):
        return None
    named = [v for v in views if wanted in (v.skill.key.lower(), v.skill.name.lower())]
    return min(named, key=shapes.tie_break, default=None)


class SkillAdditions(TypedDict):
    """What ``ontoskill``'s skill context adds to OntoMCP's ``skill`` object."""

    description: str
    name: str
    path: str


def _context(q: str, target: shapes.OntoView, views: list[shapes.OntoView]) -> CallToolResult:
    """OntoMCP's skill context plus :class:`SkillAdditions`, and the instructions (the SKILL.md
    body) unless the skill is private."""
    from ..ontoskills import shapes

    skill = target.skill.skill
    context: dict[str, Any] = dict(shapes.skill_context(target, views))
    additions = SkillAdditions(description=skill.description, name=skill.name, path=skill.path)
    # Keys in OntoMCP's (alphabetical) order, the additions among them.
    context["skill"] = dict(sorted({**context["skill"], **additions}.items()))
    if not skill.private:
        context[INSTRUCTIONS] = skill.body
    instructions = "(private skill: its instructions are not shared)" if skill.private else skill.body
    return _ok(context, shapes.context_text(q, context, skill.description, instructions))


# -- ontology://schema ----------------------------------------------------------------------
def schema_of(pilot: SkillPilot, tools: Sequence[Tool]) -> dict[str, Any]:
    """What the tools' answers mean, in the shape of OntoSkills' schema resource. Classes and
    their properties come from the types the answers are built from, the tools' arguments from
    their input schemas, so a new field or argument is in the schema the day it is answered."""
    from ..catalog import TRUST_MULTIPLIERS
    from ..model import RouteResult
    from ..ontoskills import shapes, vocab

    settings = pilot.settings
    classes = {
        "Skill": {
            "description": "ontoskill(q)'s skill: OntoSkills' fields, then SkillPilot's",
            "properties": [*shapes.ContextSkill.__annotations__, *SkillAdditions.__annotations__],
        },
        "SkillContext": {
            "description": "ontoskill(q) when q is a skill id or alias",
            "properties": [*shapes.SkillContext.__annotations__, INSTRUCTIONS],
        },
        "SearchResult": {
            "description": "ontoskill(q) when q is not a skill id",
            "properties": list(shapes.SearchResult.__annotations__),
        },
        **_classes_of(RouteResult, "route(message): exactly one decision per message"),
    }
    return {
        "version": package_version(),
        "prefix": vocab.LOCAL_PACKAGE,
        "classes": classes,
        "properties": {
            "id": {"type": "string", "description": "the skill's name; its folder path when names collide"},
            "qualified_id": {"type": "string", "convention": f"{vocab.LOCAL_PACKAGE}/<id>"},
            "decision": {
                "type": "string",
                "values": list(get_args(Decision)),
                "convention": f"hard: confidence >= {settings.hard_threshold}, use the skill; "
                f"soft: >= {settings.soft_threshold}, consider it; passthrough: no skill",
            },
            "method": {
                "type": "string",
                "values": list(get_args(Method)),
                "description": "fast: a trigger phrase matched; semantic/hybrid: meaning (and keywords)",
            },
            "confidence": {"type": "number", "description": "calibrated probability (0-1) that the skill is right"},
            "score": {
                "type": "number",
                "description": "hybrid: calibrated 0-1 relevance, below 0.4 cut; bm25: OntoSkills' "
                "raw BM25 x tier factor, adaptive cut-off (min 0.1, gap 0.15)",
            },
            "matched_by": {"type": "string", "values": list(MATCHED_BY)},
            "trust_tier": {
                "type": "string",
                "values": list(TRUST_TIERS),
                "convention": "score multiplier " + ", ".join(f"{k} {v}" for k, v in TRUST_MULTIPLIERS.items()),
            },
            "side_effects": {"type": "string", "values": list(SIDE_EFFECTS)},
            "intents": {"type": "string[]", "description": "the author's trigger phrases, then inferred intents"},
            "requirements": {"type": "object[]", "description": "requirement_type Tool|EnvVar|OS, value, optional"},
        },
        "tools": {tool.name: _arguments(tool.input_schema) for tool in tools},
        "example_calls": [
            {"tool": "route", "arguments": {"message": "commit my changes"}},
            {"tool": "ontoskill", "arguments": {"q": "git-commit"}},
            {"tool": "find_skill", "arguments": {"intent": "resize an image", "scope": "installed", "top_k": 3}},
        ],
    }


def _classes_of(kind: type[Any], description: str) -> dict[str, dict[str, Any]]:
    """``kind`` and every dataclass its fields hold (transitively), each with its field names;
    a nested class says where it appears (``RouteResult.plan``)."""
    found: dict[str, dict[str, Any]] = {}
    pending: list[tuple[type[Any], str]] = [(kind, description)]
    while pending:
        current, where = pending.pop(0)
        if current.__name__ in found:
            continue
        hints = get_type_hints(current)
        found[current.__name__] = {"description": where, "properties": [f.name for f in fields(current)]}
        for field in fields(current):
            pending.extend(
                (inner, f"in {current.__name__}.{field.name}") for inner in _dataclasses_in(hints[field.name])
            )
    return found


def _dataclasses_in(annotation: Any) -> list[type[Any]]:
    if isinstance(annotation, type) and is_dataclass(annotation):
        return [annotation]
    return [inner for arg in get_args(annotation) for inner in _dataclasses_in(arg)]


def _arguments(input_schema: Mapping[str, Any]) -> dict[str, str]:
    """A tool's arguments, compactly: ``type`` (``?`` when optional), its choices and default."""
    required = set(input_schema.get("required", ()))
    return {name: _argument(spec, name in required) for name, spec in input_schema.get("properties", {}).items()}


def _argument(spec: Mapping[str, Any], required: bool) -> str:
    variants = [v for v in spec.get("anyOf", [spec]) if v.get("type") != "null"]
    kinds = "|".join(
        f"{v['items'].get('type', 'any')}[]" if v.get("type") == "array" else v.get("type", "any") for v in variants
    )
    text = "|".join(spec["enum"]) if "enum" in spec else kinds
    if kinds == "object":
        # An object's keys are in its description (the JSON schema of a free-form dict has none).
        text += f" {{{spec.get('description', '')}}}"
    if not required and spec.get("default") is None:
        text += "?"
    elif "default" in spec:
        text += f" ({json.dumps(spec['default'])})"
    return text


def run(
    settings: Settings,
    http_port: int | None = None,
    host: str = "127.0.0.1",
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve over stdio, or over streamable HTTP at ``http://host:http_port/mcp`` (loopback only:
    this server has no authentication), calling ``ready(url)`` before it listens. Either way the
    skill folders are re-scanned every ``index.refreshInterval`` minutes.

    Over stdio the client waits for ``initialize`` before anything else, so only the MCP SDK and
    this module are imported before it is answered (``benchmarks/mcp_startup.py``): the router
    is imported, its models loaded and the watcher started on background threads from the
    start, and the first call waits for whatever of that is left."""

    def pilot() -> SkillPilot:
        from ..router import SkillPilot

        return SkillPilot(settings=settings, surface="mcp")

    server = build_server(pilot, warm=True)
    if http_port is None:
        refresher = Refresher(settings)

        def watch() -> None:
            try:
                refresher.start()
            except SkillPilotError as exc:  # every tool call reports it too, to its caller
                log.warning("not watching the skill folders: %s", exc)

        watching = threading.Thread(target=watch, name="skillpilot-watch-start", daemon=True)
        watching.start()
        try:
            server.run("stdio")
        finally:
            watching.join()
            refresher.stop()
        return
    if not is_loopback(host):
        raise ConfigError(
            "--host",
            f"{host} is reachable from other machines and the MCP server has no authentication: keep it on 127.0.0.1",
        )
    if ready is not None:
        ready(f"http://{host}:{http_port}/mcp")
    with Refresher(settings):
        server.run("streamable-http", host=host, port=http_port)
