"""What the resident HTTP service trusts, and the one shape of its errors (``serve/http.py``).

- :class:`HostGuard`: every request's ``Host`` must name this machine (``localhost``, a loopback
  address) or a host the service was told about (``--allow-host``, the ``--host`` it listens
  on); a browser request's ``Origin`` must be ``http(s)://`` one of those. Anything else is
  refused before the app sees it (421 and 403), so a web page the user visits cannot reach the
  service through DNS rebinding or a cross-site form, as ``mcp --http`` refuses them.
- :func:`bearer_matches`: ``Authorization`` checked as bytes, in constant time, the scheme in any
  case; whatever bytes a client sends, the answer is yes or no, never an exception.
- :func:`check_token`: a token must be printable ASCII (a header can carry nothing else).
- :func:`error_body` / :func:`error_response`: ``{"error": {"type", "message", ...}}``, the body
  of every error the service answers (validation, 401, 404, 405, 413, 500 included); responses
  are encoded so that no text, not even a lone surrogate a client sent, can fail to encode.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import ConfigError

log = logging.getLogger(__name__)

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
# Types for the HTTP statuses the framework raises itself (unknown path, wrong method ...).
_STATUS_TYPES = {404: "NotFound", 405: "MethodNotAllowed", 400: "BadRequest"}


def error_body(kind: str, message: str, **details: Any) -> dict[str, Any]:
    """The service's error shape: ``{"error": {"type": kind, "message": message, **details}}``."""
    return {"error": {"type": kind, "message": message, **details}}


class SafeJSONResponse(JSONResponse):
    """JSON whose text always encodes: a lone surrogate (from a ``\\ud800`` escape) becomes ``?``."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8", "replace")


def error_response(status: int, kind: str, message: str, **details: Any) -> SafeJSONResponse:
    return SafeJSONResponse(error_body(kind, message, **details), status_code=status)


def install_error_handlers(app: FastAPI) -> None:
    """Framework errors (404, 405 ...) and unexpected ones in the service's error shape."""

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: Exception) -> SafeJSONResponse:
        assert isinstance(exc, HTTPException)
        kind = _STATUS_TYPES.get(exc.status_code, f"HTTP{exc.status_code}")
        response = error_response(exc.status_code, kind, str(exc.detail))
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> SafeJSONResponse:
        log.exception("%s %s failed", request.method, request.url.path)
        return error_response(500, "InternalError", f"{type(exc).__name__}: the service failed; see its log")


def bearer_matches(header: str | None, token: str) -> bool:
    """Whether ``Authorization`` is ``Bearer <token>`` (scheme in any case), compared in constant
    time as bytes: a header of any bytes (latin-1, lone surrogates) is just a wrong one."""
    scheme, _, credentials = (header or "").strip().partition(" ")
    given = credentials.strip().encode("utf-8", "surrogatepass")
    # compare_digest even for a wrong scheme: the time taken must not depend on the header.
    matches = secrets.compare_digest(given, token.encode("ascii"))
    return matches and scheme.lower() == "bearer"


def check_token(token: str | None, option: str = "--token") -> None:
    """Refuse a token that an ``Authorization`` header cannot carry as it is."""
    if token is not None and (not token or not all("!" <= c <= "~" for c in token)):
        raise ConfigError(
            option,
            "the token must be printable ASCII without spaces (letters, digits, punctuation): "
            "generate one with `python -c 'import secrets; print(secrets.token_urlsafe(32))'`",
        )


def _host_name(value: str) -> str:
    """``value`` (a Host header or netloc) without its port, lower-cased, IPv6 brackets removed."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    return value.rpartition(":")[0] if value.count(":") == 1 else value


class HostGuard:
    """Refuse requests whose ``Host`` or ``Origin`` names another site (see the module docstring)."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = {*LOOPBACK_NAMES, *(_host_name(h) for h in allowed_hosts if h)} - {"0.0.0.0", "::", ""}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = _host_name(headers.get(b"host", ""))
        origin = headers.get(b"origin")
        refusal = None
        if host not in self.allowed:
            refusal = error_response(
                421,
                "MisdirectedRequest",
                f"Host {host or '(none)'!r} is not this service's: start it with --allow-host {host} "
                "to serve that name",
            )
        elif origin is not None and not self._origin_allowed(origin):
            refusal = error_response(
                403, "ForbiddenOrigin", f"requests from pages at {origin!r} are refused (not this service's origin)"
            )
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _origin_allowed(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and _host_name(parts.netloc) in self.allowed
