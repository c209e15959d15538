"""The resident HTTP service: one warm ``SkillPilot`` behind a small JSON API (FastAPI + uvicorn).

    POST /route     {"message", "trace"?, "roots"?}        -> RouteResult
    POST /explain   {"message"}                            -> RouteResult with its trace
    POST /action    {"message", "via"?}                    -> {"action": AdapterAction, "result",
                                                               "footer"} for plugins (OpenClaw)
    POST /search    {"query", "top_k"?}                    -> {"query", "results": [SearchHit]}
    GET  /skills/{id}                                      -> the skill (no body if private)
    POST /feedback  {"kind", "query", "skill" | "wrong" + "right", "implicit"?} -> the recorded signal
    DELETE /feedback/{id}                                  -> the signal, forgotten (undo)
    GET  /stats     GET /conflicts                         -> as ``skillpilot stats|conflicts --json``
    GET  /hook/hello  (X-SkillPilot-Challenge: <hex>)      -> {"proof", "pid"}: the service proves it is
                                                              this home's (``hook_client.exchange``)
    POST /hook/{host}  {the host's hook JSON}             -> {"output": what the hook prints | null, ...}
                                                              (claude-code, gemini, codex: adapters.hosts;
                                                              X-SkillPilot-Hook-Key needed)
    GET  /service                                          -> pid, url, uptime, generation, skills,
                                                              p50 of recent routes (``skillpilot service status``)
    GET  /healthz                                          -> {"status": "ok", "pid"} (no token needed)
    GET  /docs      GET /openapi.json                      -> the OpenAPI description (``/docs``
                                                               works offline: ``serve.apidocs``)
    POST /jobs/lint GET /jobs/{id}                         -> long jobs off the routing path
                                                              (``serve.jobs``)

Guarantees: a request body over ``MAX_BODY_BYTES`` gets 413 before anything parses it; malformed
JSON or fields, and a hook event past the hook bounds, get 422; a hook event without this home's
hook key 403; an unknown skill or feedback id 404; an unknown feedback kind 400; with a token, every
data route answers 401 without ``Authorization: Bearer <token>`` or the browser session cookie
(``serve.browser``: a one-time link or the /login form sets it); any bytes in that header give
401, never 500; a ``Host`` or ``Origin`` naming another site is refused (421 / 403,
:mod:`skillpilot.serve.guard`). Every error, 404 and 405 included, is
``{"error": {"type", "message"}}``. The models stay loaded between requests and the catalog is
reloaded when the index changes (the facade checks the store's generation on every call).
Needs the ``[server]`` extra.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

from ..errors import MissingExtraError

try:
    import uvicorn
    from fastapi import Body, Depends, FastAPI, Header, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from pydantic import BaseModel, ConfigDict, Field
    from starlette.types import ASGIApp, Receive, Scope, Send
except ImportError as exc:
    raise MissingExtraError("server", "`skillpilot serve`", exc.name or "fastapi") from exc

from ..adapters import action_for, footer_for
from ..adapters.hook_client import CHALLENGE_HEADER, HOOK_KEY_HEADER, hook_key, service_proof
from ..adapters.hooks import RootIndexer
from ..adapters.hosts import get_host
from ..adapters.hosts.hooks import HostHooks
from ..errors import ConfigError, FeedbackNotFoundError, SkillNotFoundError, SkillPilotError
from ..limits import (
    DEFAULT_TOP_K,
    MAX_BODY_BYTES,
    MAX_ID_CHARS,
    MAX_JSON_DEPTH,
    MAX_MESSAGE_CHARS,
    MAX_REQUEST_ROOTS,
    MAX_TOP_K,
    MIN_TOP_K,
    too_deep,
)
from ..model import IndexedSkill, RouteResult
from ..router import SkillPilot
from . import (
    Refresher,
    ServeInfo,
    SharedPilot,
    apidocs,
    browser,
    dashboard,
    extra_routes,
    hold_service_lock,
    home_key,
    is_loopback,
    jobs,
    package_version,
    remove_serve_file,
    write_serve_file,
)
from .guard import (
    HostGuard,
    SafeJSONResponse,
    bearer_matches,
    check_token,
    error_response,
    install_error_handlers,
)
from .protocol import BoundedH11Protocol, replaying

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
RECENT_ROUTES = 200


class _Body(BaseModel):
    # A misspelt field ("mesage") is an error, not a silently empty request.
    model_config = ConfigDict(extra="forbid")


class RouteRequest(_Body):
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS, description="The user message to route.")
    trace: bool = Field(False, description="Include every stage of the decision.")
    surface: str = Field(
        "http", pattern=r"^[a-z][a-z0-9-]{0,31}$", description="Who asks, for the routing log (e.g. hook)."
    )
    roots: list[Annotated[str, Field(max_length=MAX_ID_CHARS)]] | None = Field(
        None,
        max_length=MAX_REQUEST_ROOTS,
        description="Route only over skills indexed under these folders (default: every skill).",
    )


class ExplainRequest(_Body):
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)


class ActionRequest(_Body):
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    via: str | None = Field(
        None, max_length=MAX_ID_CHARS, description='The tool that invokes a skill, e.g. "your Skill tool".'
    )


class SearchRequest(_Body):
    query: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    top_k: int = Field(DEFAULT_TOP_K, ge=MIN_TOP_K, le=MAX_TOP_K)


class FeedbackRequest(_Body):
    kind: str = Field(max_length=32, description="confirm, correct or ignore (or confirmed, corrected, ignored).")
    query: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS, description="The message that was routed.")
    skill: str | None = Field(None, max_length=MAX_ID_CHARS, description="confirm/ignore: the skill it was routed to.")
    wrong: str | None = Field(None, max_length=MAX_ID_CHARS, description="correct: the skill it was routed to.")
    right: str | None = Field(None, max_length=MAX_ID_CHARS, description="correct: the skill that was meant.")
    implicit: bool = Field(
        False, description="Inferred from what the agent did (hooks), not said by a person: weighs less, fades faster."
    )


class _Unauthorised(Exception):
    """A data route called without the service's bearer token."""


class _NotThisHomesHook(Exception):
    """A hook route called without this home's hook key."""


def _problem(error: dict[str, Any]) -> dict[str, str]:
    """One validation error as ``{field, message}``; the first ``loc`` part is always "body"."""
    if error["type"] == "json_invalid":
        # Its loc is a character offset, not a field; the parser's reason says more.
        reason = error.get("ctx", {}).get("error")
        return {"field": "(body)", "message": f"not valid JSON ({reason})" if reason else "not valid JSON"}
    return {"field": ".".join(str(p) for p in error["loc"][1:]) or "(body)", "message": error["msg"]}


_error = error_response


class BodyLimit:
    """Answer 413 to any request body over ``limit`` bytes, declared or streamed (chunked), and
    422 to a JSON body nested deeper than ``MAX_JSON_DEPTH``, before anything else parses it."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = _error(413, "PayloadTooLarge", f"request bodies are limited to {self.limit} bytes")
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            await too_large(scope, receive, send)
            return
        # The body is read here, whole, so that a chunked upload is cut off at the limit too.
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if len(body) > self.limit:
                await too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        problem = _json_problem(body, dict(scope["headers"]).get(b"content-type", b""))
        if problem:
            await _error(422, "InvalidRequest", problem)(scope, receive, send)
            return
        await self.app(scope, replaying(bytes(body), receive), send)


def _json_problem(body: bytearray, content_type: bytes) -> str | None:
    """Why the JSON body ``body`` is refused before any route parses it: nested deeper than
    ``MAX_JSON_DEPTH``, or (sent as JSON, as FastAPI would read it) not UTF-8, which FastAPI
    answers with a 400 of its own. Any other body that is not JSON is the route's own validation's
    to answer."""
    try:
        return f"the JSON body is nested deeper than {MAX_JSON_DEPTH} levels" if too_deep(json.loads(body)) else None
    except RecursionError:  # deeper than the parser itself goes
        return f"the JSON body is nested deeper than {MAX_JSON_DEPTH} levels"
    except UnicodeDecodeError as exc:
        sent_as_json = not content_type or b"json" in content_type.lower()
        return f"(body): not valid JSON (not UTF-8 at byte {exc.start})" if sent_as_json else None
    except ValueError:
        return None


def create_app(
    pilot: SkillPilot, token: str | None = None, allowed_hosts: Sequence[str] = (), url: str | None = None
) -> FastAPI:
    """The service's ASGI app around ``pilot`` (which it then owns: one call at a time), answering
    requests addressed to loopback names and ``allowed_hosts`` only; ``url`` is where it is
    served, for ``GET /service``."""
    check_token(token)
    shared = SharedPilot(pilot)
    sessions = browser.BrowserSessions(token) if token is not None else None
    started = time.time()
    # The latencies of the service's latest routes, for `skillpilot service status`.
    recent: deque[float] = deque(maxlen=RECENT_ROUTES)

    def routed(result: RouteResult) -> RouteResult:
        recent.append(result.latency_ms)
        return result

    # One HostHooks per host that has sent a hook, made on its first event; one indexer for all.
    host_hooks: dict[str, HostHooks] = {}
    host_hooks_lock = threading.Lock()
    indexer = RootIndexer(pilot.settings)

    def hooks_for(name: str) -> HostHooks:
        with host_hooks_lock:
            if name not in host_hooks:
                host = get_host(name)
                host_hooks[name] = HostHooks(host, pilot, shared, host.library_roots(pilot.settings), indexer)
            return host_hooks[name]

    key = home_key(pilot.settings.home)
    expected_hook_key = hook_key(key).encode("ascii")

    def hook_caller(hook_key_header: Annotated[str | None, Header(alias=HOOK_KEY_HEADER)] = None) -> None:
        given = (hook_key_header or "").encode("utf-8", "surrogatepass")
        if not secrets.compare_digest(given, expected_hook_key):
            raise _NotThisHomesHook

    def authorised(request: Request, authorization: Annotated[str | None, Header()] = None) -> None:
        if token is None or sessions is None:
            return
        if bearer_matches(authorization, token):
            return
        if not browser.cookie_allows(sessions, request):
            raise _Unauthorised

    app = FastAPI(
        title="SkillPilot",
        summary="Route a message to the right agent skill before the LLM runs.",
        version=package_version(),
        default_response_class=SafeJSONResponse,
        docs_url=None,
        redoc_url=None,
    )
    apidocs.add_docs(app)
    app.add_middleware(BodyLimit)
    # Added last, so it runs first: a request for another site is refused before its body is read.
    app.add_middleware(HostGuard, allowed_hosts=allowed_hosts)
    install_error_handlers(app)
    # serve() prints a one-time sign-in link from it; None without a token.
    app.state.browser_sessions = sessions
    if sessions is not None:
        app.include_router(browser.router_for(sessions))
    guarded = [Depends(authorised)]

    @app.exception_handler(_Unauthorised)
    async def unauthorised(_: Request, __: Exception) -> JSONResponse:
        response = _error(
            401, "Unauthorised", "send the token as `Authorization: Bearer <token>`; in a browser, sign in at /login"
        )
        response.headers["WWW-Authenticate"] = "Bearer"
        return response

    @app.exception_handler(_NotThisHomesHook)
    async def not_this_homes_hook(_: Request, __: Exception) -> JSONResponse:
        return _error(
            403,
            "NotThisHomesHook",
            f"hook events need the {HOOK_KEY_HEADER} header derived from this home's serve.key "
            "(the hook process sends it: run it as `skillpilot setup HOST` configures it)",
        )

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        details = [_problem(e) for e in exc.errors()]
        return _error(
            422,
            "InvalidRequest",
            "; ".join(f"{d['field']}: {d['message']}" for d in details),
            details=details,
        )

    @app.exception_handler(SkillNotFoundError)
    async def not_found(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, SkillNotFoundError)
        return _error(404, "SkillNotFoundError", str(exc), suggestions=list(exc.suggestions))

    @app.exception_handler(SkillPilotError)
    async def failed(_: Request, exc: Exception) -> JSONResponse:
        return _error(500, type(exc).__name__, str(exc))

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"status": "ok", "pid": os.getpid()}

    @app.post("/route", dependencies=guarded)
    def route(body: RouteRequest) -> dict[str, Any]:
        return routed(
            shared(lambda p: p.route(body.message, trace=body.trace, surface=body.surface, roots=body.roots))
        ).to_dict()

    @app.post("/explain", dependencies=guarded)
    def explain(body: ExplainRequest) -> dict[str, Any]:
        return shared(lambda p: p.route(body.message, trace=True)).to_dict()

    @app.post("/action", dependencies=guarded)
    def action(body: ActionRequest) -> dict[str, Any]:
        """The shared adapter contract, so that plugins in other languages stay thin."""
        result = routed(shared(lambda p: p.route(body.message)))
        settings = pilot.settings
        return {
            "action": asdict(action_for(result, via=body.via)),
            "result": result.to_dict(),
            "footer": footer_for(result, settings.show_routing_info, settings.show_conflict_info),
        }

    @app.get("/hook/hello")
    def hook_hello(request: Request, challenge: Annotated[str, Header(alias=CHALLENGE_HEADER)] = "") -> Any:
        """The service's proof that it is this home's: a MAC of the hook's challenge, the port the
        hook connected to and this process's id, under the home's key. Needs no token: it comes
        before the hook sends anything."""
        if not 16 <= len(challenge) <= 128 or not all(c in "0123456789abcdef" for c in challenge):
            return _error(422, "InvalidRequest", f"{CHALLENGE_HEADER} must be 16-128 lower-case hex digits")
        port = int(request.scope["server"][1])
        return {"proof": service_proof(key, challenge, port, os.getpid()), "pid": os.getpid()}

    @app.post("/hook/{host}", dependencies=[Depends(hook_caller), *guarded])
    def host_hook(host: str, payload: Annotated[dict[str, Any], Body()]) -> Any:
        """What the host's hook prints for this event; the hook process forwards it as is."""
        try:
            hooks = hooks_for(host)
        except ConfigError as exc:
            return _error(404, "UnknownHost", str(exc))
        try:
            answer = hooks.answer(payload)
        except ValueError as exc:
            return _error(422, "InvalidRequest", str(exc), details=[{"field": "(body)", "message": str(exc)}])
        if "result" in answer:
            recent.append(answer["result"]["latency_ms"])
        return answer

    @app.get("/service", dependencies=guarded)
    def service() -> dict[str, Any]:
        def state(p: SkillPilot) -> tuple[int, int]:
            return p.store.generation(), len(p.skills())

        generation, skills = shared(state)
        latencies = sorted(recent)
        return {
            "pid": os.getpid(),
            "url": url,
            "home": str(pilot.settings.home),
            "started_at": started,
            "uptime_s": round(time.time() - started, 1),
            "generation": generation,
            "skills": skills,
            "recent_routes": len(latencies),
            "route_p50_ms": round(latencies[len(latencies) // 2], 3) if latencies else None,
        }

    @app.post("/search", dependencies=guarded)
    def search(body: SearchRequest) -> dict[str, Any]:
        hits = shared(lambda p: p.search(body.query, top_k=body.top_k))
        return {"query": body.query, "results": [h.to_dict() for h in hits]}

    @app.get("/skills/{ref:path}", dependencies=guarded)
    def skill(ref: str) -> dict[str, Any]:
        return skill_detail(shared(lambda p: p.get(ref)))

    @app.post("/feedback", dependencies=guarded)
    def feedback(body: FeedbackRequest) -> Any:
        try:
            signal = shared(
                lambda p: p.feedback(
                    body.kind, body.query, skill=body.skill, wrong=body.wrong, right=body.right, implicit=body.implicit
                )
            )
        except ValueError as exc:
            return _error(400, "InvalidFeedback", str(exc))
        return asdict(signal)

    @app.delete("/feedback/{signal_id}", dependencies=guarded)
    def undo_feedback(signal_id: int) -> Any:
        try:
            return asdict(shared(lambda p: p.undo_feedback(signal_id)))
        except FeedbackNotFoundError as exc:
            return _error(404, "FeedbackNotFoundError", str(exc))

    @app.get("/stats", dependencies=guarded)
    def stats() -> dict[str, Any]:
        return shared(lambda p: p.stats()).to_dict()

    @app.get("/conflicts", dependencies=guarded)
    def conflicts() -> dict[str, Any]:
        def groups(p: SkillPilot) -> dict[str, Any]:
            skills = p.skills()
            return {
                "threshold": p.settings.conflict_threshold,
                "groups": [
                    {
                        "id": g.id,
                        "members": list(g.members),
                        "keys": [skills[i].key for i in g.indices],
                        "similarity": g.similarity,
                        "tip": g.tip,
                    }
                    for g in p.conflict_groups()
                ],
            }

        return shared(groups)

    app.include_router(extra_routes.router_for(shared, guarded))
    app.include_router(dashboard.router_for(shared, guarded))
    app.include_router(jobs.router_for(shared, guarded))
    return app


def skill_detail(indexed: IndexedSkill) -> dict[str, Any]:
    """A skill as the service shows it: what it is, how it routes, and its body unless private."""
    skill = indexed.skill
    detail: dict[str, Any] = {
        "id": indexed.id,
        "name": skill.name,
        "key": skill.key,
        "description": skill.description,
        "path": skill.path,
        "root": skill.root,
        "source_kind": skill.source_kind,
        "trust_tier": skill.trust_tier,
        "private": skill.private,
        "route": asdict(skill.route),
        "requires": asdict(indexed.fingerprint.preconditions),
        "intents": list(indexed.fingerprint.intent_patterns),
        "keywords": list(indexed.fingerprint.keywords),
        "side_effects": indexed.fingerprint.side_effects,
        "quality_issues": [issue.message for issue in indexed.fingerprint.quality_issues],
    }
    if not skill.private:
        detail["body"] = skill.body
    return detail


def serve(
    pilot: SkillPilot,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    token: str | None = None,
    ready: Callable[[str], None] | None = None,
    allowed_hosts: Sequence[str] = (),
    login: Callable[[str], None] | None = None,
) -> None:
    """Warm ``pilot`` up, listen on ``host:port`` (0: any free port), advertise the address in
    ``$SKILLPILOT_HOME/serve.json``, call ``ready(url)`` (and with a token ``login(link)``, a
    one-time sign-in link for a browser) and serve until interrupted (SIGINT or SIGTERM);
    ``serve.json`` is removed on the way out. A non-loopback ``host`` needs a token; requests are
    answered for loopback names, ``host`` and ``allowed_hosts``."""
    check_token(token)
    if not is_loopback(host) and not token:
        raise ConfigError(
            "--host",
            f"{host} is reachable from other machines: give a --token "
            "(or SKILLPILOT_SERVE_TOKEN) so that only its holders can use the service",
        )
    home: Path = pilot.settings.home
    # One service per home, decided before the models load: a second one would overwrite the
    # first's serve.json and remove it on exit while the first still runs.
    lock = hold_service_lock(home)
    try:
        # Load the models and the catalog before advertising: a hook that finds serve.json should
        # get a warm answer, not wait behind the first model load.
        pilot.search("warm up")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            raise ConfigError(
                "--port", f"cannot listen on {host}:{port} ({exc.strerror}); choose another port"
            ) from exc
        sock.listen(128)
        url = "http://{}:{}".format(f"[{host}]" if family == socket.AF_INET6 else host, sock.getsockname()[1])
        write_serve_file(home, ServeInfo(url=url, pid=os.getpid(), token=token))
        app = create_app(pilot, token, allowed_hosts=(host, *allowed_hosts), url=url)
        if ready is not None:
            ready(url)
        if login is not None and app.state.browser_sessions is not None:
            login(f"{url}/login?code={app.state.browser_sessions.new_code()}")
        config = uvicorn.Config(app, log_level="warning", access_log=False, http=BoundedH11Protocol)
        try:
            with _sigterm_exits(), Refresher(pilot.settings):
                uvicorn.Server(config).run(sockets=[sock])
        finally:
            remove_serve_file(home, os.getpid())
            sock.close()
    finally:
        os.close(lock)


@contextlib.contextmanager
def _sigterm_exits() -> Iterator[None]:
    """Make SIGTERM a normal exit. uvicorn shuts down gracefully on it and then re-raises it;
    under the default handler that kills the process before ``serve.json`` is removed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(0)

    previous = signal.signal(signal.SIGTERM, leave)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
