"""The resident service trusts no page and no header (real uvicorn on 127.0.0.1, keyword-only
router over real SKILL.md files): Host and Origin checks, any Authorization bytes, the token's
form, and every error in the documented ``{"error": {"type", "message"}}`` shape."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.errors import ConfigError  # noqa: E402
from skillpilot.limits import MAX_MESSAGE_CHARS  # noqa: E402
from skillpilot.serve.http import create_app, serve  # noqa: E402
from skillpilot.serve.protocol import BoundedH11Protocol  # noqa: E402

from .conftest import write_skill  # noqa: E402
from .surfaces_util import uvicorn_on_loopback  # noqa: E402

TOKEN = "s3cret-Token_42"


def send(
    url: str, method: str, path: str, body: bytes | None = None, headers: dict[str, str | bytes] | None = None
) -> tuple[int, Any]:
    """One request whose headers may hold any bytes; the status and the JSON answer."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host="Host" in (headers or {}))
        for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


@pytest.fixture()
def pilot(tmp_path: Path) -> SkillPilot:
    skills = tmp_path / "skills"
    write_skill(skills, "git-commit", "name: git-commit\ndescription: Use when the user wants to commit changes.")
    router = SkillPilot(home=tmp_path / "home", enable_semantic=False, preconditions=False)
    router.index([skills])
    return router


def _is_error(answer: Any, kind: str) -> bool:
    return set(answer) == {"error"} and answer["error"]["type"] == kind and bool(answer["error"]["message"])


def test_host_and_origin_must_name_this_service(pilot: SkillPilot) -> None:
    with uvicorn_on_loopback(create_app(pilot, allowed_hosts=("skills.internal",))) as url:
        port = urlsplit(url).port
        route = json.dumps({"message": "commit my changes"}).encode()
        # DNS rebinding: the page's own name arrives as Host.
        status, answer = send(url, "POST", "/route", route, {"Host": f"evil.example:{port}"})
        assert status == 421 and _is_error(answer, "MisdirectedRequest")
        assert "--allow-host evil.example" in answer["error"]["message"]
        status, answer = send(url, "GET", "/log", None, {"Host": "attacker.test"})
        assert status == 421
        # A cross-site page posting to the right host is refused by its Origin.
        status, answer = send(url, "POST", "/feedback", route, {"Origin": "https://evil.example"})
        assert status == 403 and _is_error(answer, "ForbiddenOrigin")
        status, answer = send(url, "POST", "/route", route, {"Origin": "null"})
        assert status == 403
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "skills.internal", f"SKILLS.internal:{port}"):
            status, answer = send(url, "POST", "/route", route, {"Host": host, "Origin": f"http://{host}"})
            assert (status, answer["skill"]["id"]) == (200, "git-commit"), host
        # Clients that are not browsers send no Origin.
        status, _ = send(url, "POST", "/route", route)
        assert status == 200


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer wrong",
        "Bearer s3cret-Token_4",
        "Basic " + TOKEN,
        "Bearer",
        "",
        "Bearer é".encode("latin-1"),
        b"Bearer \xff\xfe\x80",
        "Bearer \u00e9\u00e8".encode(),
        b"\xf0\x9f\x98\x80",
    ],
)
def test_any_authorization_bytes_get_401_never_500(pilot: SkillPilot, authorization: str | bytes) -> None:
    with uvicorn_on_loopback(create_app(pilot, token=TOKEN)) as url:
        status, answer = send(url, "GET", "/stats", None, {"Authorization": authorization})
        assert status == 401 and _is_error(answer, "Unauthorised")


def test_the_scheme_is_case_insensitive(pilot: SkillPilot) -> None:
    with uvicorn_on_loopback(create_app(pilot, token=TOKEN)) as url:
        for scheme in ("Bearer", "bearer", "BEARER"):
            status, answer = send(url, "GET", "/stats", None, {"Authorization": f"{scheme} {TOKEN}"})
            assert (status, answer["skills"]) == (200, 1), scheme


@pytest.mark.parametrize("token", ["tökén", "two words", "tab\there", "", "nul\x00"])
def test_a_token_a_header_cannot_carry_is_refused_at_start(pilot: SkillPilot, token: str) -> None:
    with pytest.raises(ConfigError, match="printable ASCII"):
        create_app(pilot, token=token)
    with pytest.raises(ConfigError, match="printable ASCII"):
        serve(pilot, port=0, token=token)


def test_every_error_has_the_documented_shape(pilot: SkillPilot) -> None:
    with uvicorn_on_loopback(create_app(pilot)) as url:
        status, answer = send(url, "GET", "/no-such-route")
        assert status == 404 and _is_error(answer, "NotFound")
        status, answer = send(url, "GET", "/route")
        assert status == 405 and _is_error(answer, "MethodNotAllowed")
        status, answer = send(url, "POST", "/route", b'{"message": "commit')
        assert status == 422 and _is_error(answer, "InvalidRequest")
        assert "not valid JSON" in answer["error"]["message"]
        status, answer = send(url, "POST", "/route", b"\xff\xfe not utf-8")
        assert status == 422 and _is_error(answer, "InvalidRequest")
        # One byte that is not UTF-8 inside JSON got FastAPI's own 400.
        status, answer = send(url, "POST", "/route", b'{"message": "commit \xff my changes"}')
        assert status == 422 and _is_error(answer, "InvalidRequest")
        assert answer["error"]["message"] == "(body): not valid JSON (not UTF-8 at byte 20)"
        status, answer = send(url, "POST", "/route", json.dumps({"mesage": "x"}).encode())
        assert status == 422 and _is_error(answer, "InvalidRequest")
        status, answer = send(url, "GET", "/skills/nothing-like-it")
        assert status == 404 and _is_error(answer, "SkillNotFoundError")


def test_lone_surrogates_and_control_characters_in_a_body_get_an_answer(pilot: SkillPilot) -> None:
    with uvicorn_on_loopback(create_app(pilot)) as url:
        # A JSON string holding a lone surrogate is not Unicode text: refused, naming the field.
        for text in ('"commit \\ud800 my changes"', '"\\udfff"'):
            status, answer = send(url, "POST", "/route", ('{"message": ' + text + "}").encode())
            assert status == 422 and _is_error(answer, "InvalidRequest")
            assert answer["error"]["details"][0]["field"] == "message"
        # NUL, bidi and control characters are text: routed, a long line too (up to the limit).
        long_line = "x" * (MAX_MESSAGE_CHARS - 100)
        body = json.dumps({"message": "\u0000\u202e\u0007 commit my changes " + long_line}).encode()
        status, answer = send(url, "POST", "/route", body)
        assert (status, answer["skill"]["id"]) == (200, "git-commit")
        status, answer = send(url, "POST", "/search", json.dumps({"query": "\u202ecommit\u0000"}).encode())
        assert status == 200
        # A path of undecodable bytes is an unknown skill, not a crash.
        status, answer = send(url, "GET", "/skills/%ED%A0%80%FF")
        assert status == 404 and _is_error(answer, "SkillNotFoundError")


BIG = "x" * (MAX_MESSAGE_CHARS + 1)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/plan", {"message": BIG}),
        ("/context", {"query": BIG}),
        ("/feedback", {"kind": "confirm", "query": BIG, "skill": "git-commit"}),
        ("/feedback", {"kind": "confirm", "query": "commit", "skill": "s" * 5000}),
        ("/route", {"message": "commit", "roots": ["/r"] * 65}),
        ("/lint", {"path": "/" * 5000}),
    ],
)
def test_every_route_bounds_its_messages_like_route_does(pilot: SkillPilot, path: str, body: dict[str, Any]) -> None:
    # 1 MB messages were accepted by /plan, /context and /feedback while /route refused 32,001.
    with uvicorn_on_loopback(create_app(pilot)) as url:
        status, answer = send(url, "POST", path, json.dumps(body).encode())
    assert status == 422 and _is_error(answer, "InvalidRequest"), answer


def test_a_body_nested_too_deep_gets_422_before_any_route_parses_it(pilot: SkillPilot) -> None:
    with uvicorn_on_loopback(create_app(pilot)) as url:
        for body in (b'{"filters": {"x": ' + b"[" * 500 + b"]" * 500 + b"}}", b"[" * 100_000 + b"]" * 100_000):
            status, answer = send(url, "POST", "/find_skill", body)
            assert status == 422 and _is_error(answer, "InvalidRequest")
            assert answer["error"]["message"] == "the JSON body is nested deeper than 32 levels"
        assert send(url, "GET", "/healthz")[0] == 200


class _QuickDeadline(BoundedH11Protocol):
    read_seconds = 1.0


def test_a_client_that_sends_its_request_slowly_is_cut_off(pilot: SkillPilot, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    # A route slower than the deadline is answered: only reading the client is bounded.
    route = pilot.route
    monkeypatch.setattr(pilot, "route", lambda *a, **k: (time.sleep(1.5), route(*a, **k))[1])
    config = uvicorn.Config(create_app(pilot), host="127.0.0.1", port=0, log_level="warning", http=_QuickDeadline)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        # Headers that never end, and a body dripping a byte at a time: both cut off.
        slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
        for n, client in enumerate(slow):
            head = b"POST /route HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 40\r\n"
            client.sendall(head + (b"\r\n{" if n % 2 else b"X-Slow: "))
        time.sleep(0.4)
        for client in slow:
            client.sendall(b"a")
        for client in slow:
            client.settimeout(10)
            assert client.recv(65536) == b"", "a slow client kept its connection"
            client.close()
        status, answer = send(f"http://127.0.0.1:{port}", "POST", "/route", b'{"message": "commit my changes"}')
        assert (status, answer["skill"]["id"]) == (200, "git-commit")
    finally:
        server.should_exit = True
        thread.join(timeout=30)
