"""The resident service on a real uvicorn on 127.0.0.1, and `skillpilot serve` as a real process."""

from __future__ import annotations

import http.client
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.limits import MAX_BODY_BYTES, MAX_MESSAGE_CHARS  # noqa: E402
from skillpilot.serve import Refresher, read_serve_file, serve_file  # noqa: E402
from skillpilot.serve.http import create_app  # noqa: E402

from .conftest import EXAMPLES, write_skill  # noqa: E402
from .surfaces_util import (  # noqa: E402
    SKILL_COUNT,
    SKILLS,
    cli,
    indexed,
    prompt_payload,
    uvicorn_on_loopback,
)

# Bounds for polling a live process; reaching them is a failure, not a measurement.
POLL_SECONDS = 60.0


def request(
    url: str, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    """One HTTP request with the standard library; the status and the decoded JSON answer."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def post(url: str, path: str, data: Any, **headers: str) -> tuple[int, Any]:
    return request(url, "POST", path, json.dumps(data).encode("utf-8"), headers)


@pytest.fixture()
def pilot(tmp_path: Path) -> SkillPilot:
    return indexed(tmp_path / "home")


def test_every_route_answers_with_the_library_result(pilot: SkillPilot) -> None:
    with uvicorn_on_loopback(create_app(pilot)) as url:
        status, routed = post(url, "/route", {"message": "commit my changes"})
        assert status == 200
        assert (routed["skill"]["id"], routed["decision"], routed["method"]) == ("git-commit", "hard", "fast")
        assert "trace" not in routed
        status, explained = post(url, "/explain", {"message": "commit my changes"})
        assert status == 200
        assert explained["trace"][0]["stage"].startswith("fast path")
        status, acted = post(url, "/action", {"message": "commit my changes", "via": "your Skill tool"})
        assert status == 200
        assert (acted["action"]["type"], acted["action"]["candidates"]) == ("route", ["git-commit"])
        assert "invoke the skill `git-commit` with your Skill tool" in acted["action"]["context"]
        assert (acted["result"]["skill"]["id"], acted["footer"]) == ("git-commit", "")
        status, found = post(url, "/search", {"query": "resize banner.png to 1200 pixels wide", "top_k": 3})
        assert (status, found["results"][0]["id"]) == (200, "image-resize")
        status, skill = request(url, "GET", "/skills/media/image-resize")
        assert (status, skill["id"], skill["key"]) == (200, "image-resize", "media/image-resize")
        assert skill["body"].startswith("#")
        status, missing = request(url, "GET", "/skills/image-resise")
        assert status == 404
        assert missing["error"]["type"] == "SkillNotFoundError"
        status, stats = request(url, "GET", "/stats")
        assert (status, stats["skills"], stats["roots"]) == (200, SKILL_COUNT, [str(SKILLS)])
        status, conflicts = request(url, "GET", "/conflicts")
        assert status == 200
        assert conflicts["threshold"] == pilot.settings.conflict_threshold
        assert [g["members"] for g in conflicts["groups"]] == [list(g.members) for g in pilot.conflict_groups()]
        assert request(url, "GET", "/healthz") == (200, {"status": "ok", "pid": os.getpid()})
        status, openapi = request(url, "GET", "/openapi.json")
        assert status == 200
        assert {
            "/route",
            "/explain",
            "/action",
            "/search",
            "/skills/{ref}",
            "/feedback",
            "/stats",
            "/conflicts",
            "/healthz",
        } <= set(openapi["paths"])


def test_bad_requests_get_4xx_and_big_bodies_413(pilot: SkillPilot) -> None:
    with uvicorn_on_loopback(create_app(pilot)) as url:
        status, answer = request(url, "POST", "/route", b'{"message": "commit', {})
        assert (status, answer["error"]["type"]) == (422, "InvalidRequest")
        assert answer["error"]["message"].startswith("(body): not valid JSON (")
        status, answer = post(url, "/route", {"mesage": "commit my changes"})
        assert status == 422
        assert {d["field"] for d in answer["error"]["details"]} == {"message", "mesage"}
        assert post(url, "/search", {"query": "x", "top_k": 0})[0] == 422
        huge = json.dumps({"message": "x" * MAX_BODY_BYTES}).encode("utf-8")
        status, answer = request(url, "POST", "/route", huge)
        assert (status, answer["error"]["type"]) == (413, "PayloadTooLarge")
        # A chunked upload declares no length; it is cut off at the limit all the same.
        parts = urlsplit(url)
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
        connection.request(
            "POST",
            "/route",
            body=iter([huge[:600_000], huge[600_000:]]),
            headers={"Content-Type": "application/json"},
            encode_chunked=True,
        )
        assert connection.getresponse().status == 413
        connection.close()
        # Padded with JSON whitespace: the message itself stays under the query cap.
        just_under = b'{"message": "commit my changes"' + b" " * (MAX_BODY_BYTES - 100) + b"}"
        assert len(just_under) <= MAX_BODY_BYTES
        assert request(url, "POST", "/route", just_under)[0] == 200
        too_long = post(url, "/route", {"message": "x" * (MAX_MESSAGE_CHARS + 1)})
        assert too_long[0] == 422 and "message" in too_long[1]["error"]["message"]


def test_bearer_token_guards_the_data_routes(pilot: SkillPilot) -> None:
    with uvicorn_on_loopback(create_app(pilot, token="s3cret")) as url:
        assert post(url, "/route", {"message": "commit my changes"})[0] == 401
        assert post(url, "/route", {"message": "commit my changes"}, Authorization="Bearer wrong")[0] == 401
        assert request(url, "GET", "/stats")[0] == 401
        status, routed = post(url, "/route", {"message": "commit my changes"}, Authorization="Bearer s3cret")
        assert (status, routed["skill"]["id"]) == (200, "git-commit")
        assert request(url, "GET", "/healthz")[0] == 200


def test_feedback_is_recorded_and_changes_the_next_route(pilot: SkillPilot) -> None:
    message = "write up what changed for the release"
    with uvicorn_on_loopback(create_app(pilot)) as url:
        before = post(url, "/route", {"message": message})[1]["skill"]["id"]
        right = "git-commit" if before != "git-commit" else "changelog-writer"
        status, signal_ = post(url, "/feedback", {"kind": "correct", "query": message, "wrong": before, "right": right})
        assert status == 200
        assert (signal_["kind"], signal_["skill"], signal_["wrong"]) == ("corrected", right, before)
        assert post(url, "/route", {"message": message})[1]["skill"]["id"] == right
        status, answer = post(url, "/feedback", {"kind": "applaud", "query": message, "skill": right})
        assert (status, answer["error"]["type"]) == (400, "InvalidFeedback")
        assert post(url, "/feedback", {"kind": "confirm", "query": message, "skill": "nope"})[0] == 404


def test_service_follows_index_changes_and_refreshes_folders(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home", refresh_interval=0.002)
    extra = tmp_path / "more-skills"
    write_skill(
        extra,
        "pdf-merge",
        "name: pdf-merge\ndescription: Merge several PDF files into one document."
        "\nroute:\n  triggers: [merge these pdfs]",
    )
    with uvicorn_on_loopback(create_app(pilot)) as url:
        assert request(url, "GET", "/skills/pdf-merge")[0] == 404
        # Another process (here: another router) indexes a folder; the service sees the new generation.
        SkillPilot(home=pilot.settings.home, preconditions=False).index([extra])
        status, routed = post(url, "/route", {"message": "merge these pdfs"})
        assert (status, routed["skill"]["id"]) == (200, "pdf-merge")
        # The refresher re-scans the known folders on its own, every refresh_interval minutes.
        write_skill(extra, "zip-archive", "name: zip-archive\ndescription: Pack files into a zip archive.")
        with Refresher(pilot.settings):
            deadline = time.monotonic() + POLL_SECONDS
            while request(url, "GET", "/skills/zip-archive")[0] != 200:
                assert time.monotonic() < deadline, "the refresher never indexed the new skill"
                time.sleep(0.05)
        assert request(url, "GET", "/stats")[1]["skills"] == SKILL_COUNT + 2


def test_serve_command_advertises_itself_and_the_hook_uses_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    indexed(home)
    environment = {
        **os.environ,
        "SKILLPILOT_HOME": str(home),
        "SKILLPILOT_PRECONDITIONS": "off",
        # Only the service's routes use this threshold, so its answers are recognisable.
        "SKILLPILOT_HARD_THRESHOLD": "0.99",
        # A trigger phrase is routed: the service need not load (and warm) the models.
        "SKILLPILOT_ENABLE_SEMANTIC": "false",
        # Claude Code's skills/ folder is examples/skills, the index's root.
        "CLAUDE_CONFIG_DIR": str(EXAMPLES),
    }
    service = subprocess.Popen(
        [sys.executable, "-m", "skillpilot", "serve", "--port", "0"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + POLL_SECONDS
        while (info := read_serve_file(home)) is None:
            assert service.poll() is None, service.stderr.read() if service.stderr else ""
            assert time.monotonic() < deadline, "serve.json never appeared"
            time.sleep(0.05)
        assert info.pid == service.pid
        assert info.url.startswith("http://127.0.0.1:")
        assert stat.S_IMODE(serve_file(home).stat().st_mode) == 0o600
        assert request(info.url, "GET", "/healthz") == (200, {"status": "ok", "pid": service.pid})

        payload = prompt_payload("commit my changes", tmp_path)
        via_service = cli("hook", "claude-code", home=home, stdin=payload)
        assert via_service.returncode == 0, via_service.stderr
        context = json.loads(via_service.stdout)["hookSpecificOutput"]["additionalContext"]
        assert context.startswith("SkillPilot: the skill `git-commit` may fit this prompt (confidence 0.95).")
    finally:
        service.send_signal(signal.SIGTERM)
        stdout, stderr = service.communicate(timeout=POLL_SECONDS)
    assert service.returncode == 0, stderr
    assert stdout == ""
    assert f"SkillPilot service on {info.url}" in stderr
    assert not serve_file(home).exists()


def test_serve_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    proc = cli("serve", "--host", "0.0.0.0", home=tmp_path)
    assert proc.returncode == 1
    assert "0.0.0.0 is reachable from other machines: give a --token" in proc.stderr
    assert not serve_file(tmp_path).exists()
