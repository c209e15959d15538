"""Signing a browser in to a service with a token (serve.browser), over real HTTP on 127.0.0.1:
a one-time link or the form sets an HttpOnly, SameSite=Strict cookie that is not the token, and
what the cookie authenticates may change something only from the service's own origin."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.serve.browser import COOKIE  # noqa: E402
from skillpilot.serve.http import create_app  # noqa: E402

from .surfaces_util import indexed, uvicorn_on_loopback  # noqa: E402

TOKEN = "s3cret-token"


def call(
    url: str, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> http.client.HTTPResponse:
    """One request; the response, its body read into ``response.text``."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    response.text = response.read().decode("utf-8")  # type: ignore[attr-defined]
    connection.close()
    return response


def session_cookie(response: http.client.HTTPResponse) -> tuple[str, str]:
    """The cookie's value and its attributes, from the Set-Cookie header."""
    header = response.getheader("set-cookie") or ""
    value = header.split(";", 1)[0].removeprefix(f"{COOKIE}=")
    return value, header


@pytest.fixture()
def pilot(tmp_path: Path) -> SkillPilot:
    return indexed(tmp_path / "home")


def test_one_time_link_sets_a_strict_httponly_cookie_that_is_not_the_token(pilot: SkillPilot) -> None:
    with uvicorn_on_loopback(create_app(pilot, token=TOKEN)) as url:
        assert call(url, "GET", "/skills").status == 401
        assert call(url, "POST", "/login/link").status == 401
        minted = call(url, "POST", "/login/link", headers={"Authorization": f"Bearer {TOKEN}"})
        assert minted.status == 200
        link = json.loads(minted.text)["url"]  # type: ignore[attr-defined]
        assert link.startswith("/login?code=") and TOKEN not in link
        signed_in = call(url, "GET", link)
        value, header = session_cookie(signed_in)
        assert (signed_in.status, signed_in.getheader("location")) == (303, "/")
        assert "httponly" in header.lower() and "samesite=strict" in header.lower()
        assert value and TOKEN not in value
        assert call(url, "GET", "/skills", headers={"Cookie": f"{COOKIE}={value}"}).status == 200
        assert call(url, "GET", "/skills", headers={"Cookie": f"{COOKIE}=forged"}).status == 401
        # The link works once.
        assert call(url, "GET", link).status == 401


def test_cookie_posts_need_the_services_own_origin(pilot: SkillPilot) -> None:
    with uvicorn_on_loopback(create_app(pilot, token=TOKEN)) as url:
        own = url.rstrip("/")
        form = f"token={TOKEN}".encode()
        form_headers = {"Content-Type": "application/x-www-form-urlencoded"}
        assert call(url, "POST", "/login", form, {**form_headers, "Origin": "http://evil.example"}).status == 403
        assert call(url, "POST", "/login", b"token=wrong", {**form_headers, "Origin": own}).status == 401
        signed_in = call(url, "POST", "/login", form, {**form_headers, "Origin": own})
        value, _ = session_cookie(signed_in)
        assert signed_in.status == 303 and value
        body = json.dumps({"kind": "confirm", "query": "commit my changes", "skill": "git-commit"}).encode()
        cookie = {"Cookie": f"{COOKIE}={value}", "Content-Type": "application/json"}
        assert call(url, "POST", "/feedback", body, cookie).status == 401
        # A foreign Origin is refused by the Host/Origin guard before the cookie is even read.
        assert call(url, "POST", "/feedback", body, {**cookie, "Origin": "http://evil.example"}).status == 403
        assert call(url, "POST", "/feedback", body, {**cookie, "Origin": own}).status == 200
        # The bearer token needs no Origin: scripts and hooks are not browsers.
        bearer = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        assert call(url, "POST", "/feedback", body, bearer).status == 200
    assert [s.skill for s in pilot.feedback_signals()] == ["git-commit", "git-commit"]
