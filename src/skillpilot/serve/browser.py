"""Browser sign-in for a service with a token, so that the token never stays in an address bar:

    GET  /login?code=C   a one-time link (``skillpilot serve --token`` prints one; ``POST
                         /login/link`` makes another): sets the session cookie, redirects to /
    GET  /login          a form to paste the token into (it is POSTed, never put in the URL)
    POST /login          the form (``token=...``): sets the session cookie, redirects to /
    POST /login/link     (bearer token) -> {"url": "/login?code=..."}: a fresh one-time link
    POST /logout         clears the cookie

The cookie (``COOKIE``) is ``HttpOnly`` (page scripts cannot read it), ``SameSite=Strict`` (no
other site's page sends it) and holds an HMAC of the token, not the token. A request the cookie
authenticates may change something (any method but GET/HEAD/OPTIONS) only with an ``Origin``
header naming the service itself, so no other site can make a signed-in browser act. One-time
codes expire after ``CODE_SECONDS`` and work once.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import secrets
import threading
import time
from urllib.parse import parse_qs, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from .guard import SafeJSONResponse, bearer_matches, error_response

COOKIE = "skillpilot_session"
CODE_SECONDS = 600.0
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class BrowserSessions:
    """The cookie value a token signs in with, and the outstanding one-time codes."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.cookie_value = hmac.new(token.encode(), b"skillpilot dashboard session", hashlib.sha256).hexdigest()
        self._codes: dict[str, float] = {}
        self._lock = threading.Lock()

    def new_code(self) -> str:
        code = secrets.token_urlsafe(24)
        with self._lock:
            now = time.monotonic()
            self._codes = {c: t for c, t in self._codes.items() if t > now}
            self._codes[code] = now + CODE_SECONDS
        return code

    def redeem(self, code: str) -> bool:
        with self._lock:
            expires = self._codes.pop(code, None)
        return expires is not None and expires > time.monotonic()

    def token_matches(self, candidate: str) -> bool:
        # compare_digest: the time a wrong token takes to reject must not reveal its prefix.
        return secrets.compare_digest(candidate.encode("utf-8", "surrogatepass"), self.token.encode())

    def signed_in(self, request: Request) -> bool:
        return secrets.compare_digest(request.cookies.get(COOKIE, ""), self.cookie_value)


def same_origin(request: Request) -> bool:
    """Whether the request's ``Origin`` is the service itself (scheme and host it was sent to)."""
    origin = request.headers.get("origin")
    if not origin:
        return False
    parts = urlsplit(origin)
    return parts.scheme == request.url.scheme and parts.netloc == request.headers.get("host", "")


def cookie_allows(sessions: BrowserSessions, request: Request) -> bool:
    """Whether the session cookie authenticates ``request`` (an unsafe method needs our Origin)."""
    return sessions.signed_in(request) and (request.method in SAFE_METHODS or same_origin(request))


def router_for(sessions: BrowserSessions) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    def signed_in_response() -> Response:
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, sessions.cookie_value, httponly=True, samesite="strict", path="/", secure=False)
        return response

    @router.get("/login")
    def login_page(code: str | None = None) -> Response:
        if code is not None:
            if sessions.redeem(code):
                return signed_in_response()
            return _form("That sign-in link was used already or has expired: paste the token instead.", 401)
        return _form("This SkillPilot service needs its token.", 200)

    @router.post("/login")
    async def login(request: Request) -> Response:
        if not same_origin(request):
            return _form("Sign in from this service's own page.", 403)
        fields = parse_qs((await request.body()).decode("utf-8", "replace"))
        if sessions.token_matches((fields.get("token") or [""])[0]):
            return signed_in_response()
        return _form("That is not this service's token.", 401)

    @router.post("/login/link")
    def login_link(request: Request) -> Response:
        # Bearer only: a cookie must not mint new links for whoever can reach the page.
        if not bearer_matches(request.headers.get("authorization"), sessions.token):
            return error_response(401, "Unauthorised", "send the token as `Authorization: Bearer <token>`")
        return SafeJSONResponse({"url": f"/login?code={sessions.new_code()}"})

    @router.post("/logout")
    def logout(request: Request) -> Response:
        if not same_origin(request):
            return _form("Sign out from this service's own page.", 403)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    return router


def _form(message: str, status: int) -> HTMLResponse:
    page = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>SkillPilot sign-in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font:15px/1.5 system-ui,"Noto Sans CJK SC","Noto Sans CJK JP",sans-serif;max-width:32em;
margin:10vh auto;padding:0 16px;color:#1d2430}}input,button{{font:inherit;padding:6px 8px}}
input{{width:100%;box-sizing:border-box}}</style>
</head><body><h1>SkillPilot</h1><p id="login-message">{html.escape(message)}</p>
<form method="post" action="/login"><label>Token <input name="token" type="password" autocomplete="current-password"
autofocus></label><p><button>Sign in</button></p></form>
<p>The token is the one the service was started with (<code>--token</code> or <code>SKILLPILOT_SERVE_TOKEN</code>).
Signing in sets a cookie for this site only; the token does not appear in the address bar.</p></body></html>"""
    return HTMLResponse(page, status_code=status)
