"""The hook path inside the service, and the hook process in front of it, against hostile input and
hostile peers: symlink loops in a project's skills, a Stop event naming /dev/zero or a FIFO,
events past the hook bounds or without the home's hook key, `index --replace` behind the hook's
back, indexing beside live routes, and a serve.json whose port another program took (one that
answers wrong, one that drips a byte at a time). Real uvicorn on 127.0.0.1, the real hook process
as settings.json runs it; keyword-only routers where no model is needed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.adapters.hook_client import HOOK_KEY_HEADER, SERVICE_TIMEOUT  # noqa: E402
from skillpilot.adapters.hooks import RECHECK_SECONDS  # noqa: E402
from skillpilot.adapters.hosts import available_hosts, get_host  # noqa: E402
from skillpilot.adapters.hosts.files import hook_command  # noqa: E402
from skillpilot.limits import HOOK_FIELD_CHARS, MAX_MESSAGE_CHARS  # noqa: E402
from skillpilot.serve import ServeInfo, hold_service_lock, write_serve_file  # noqa: E402
from skillpilot.serve import service as lifecycle  # noqa: E402

from .conftest import write_skill  # noqa: E402
from .surfaces_util import advertised_service, hook_headers, prompt_payload  # noqa: E402
from .test_hardening_serve import send  # noqa: E402

SESSION = "3f6c2a9e-5a51-4c1e-9d0b-6e2f1c7a8b90"
# Every host the service answers hook JSON for (OpenClaw's plugin sends none).
SERVED_HOSTS = [name for name in available_hosts() if get_host(name).hooks]
TOKEN = "s3cret-Token_42"
POLL_SECONDS = 60.0


def run_hook(home: Path, payload: str) -> subprocess.CompletedProcess[str]:
    """The hook exactly as `skillpilot setup claude-code` writes it into settings.json."""
    command = hook_command("claude-code", home)
    return subprocess.run(command, shell=True, input=payload, capture_output=True, text=True, timeout=60)


def _pilot(home: Path, **overrides: Any) -> SkillPilot:
    return SkillPilot(home=home, enable_semantic=False, preconditions=False, **overrides)


@pytest.fixture
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "claude"
    (home / "skills").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose .claude/skills holds one skill, two symlink loops and a link to /."""
    project = tmp_path / "project"
    skills = project / ".claude" / "skills"
    write_skill(skills, "brew-coffee", "name: brew-coffee\ndescription: Brew coffee.\ntriggers: [brew the coffee]")
    (skills / "a").symlink_to(".")
    (skills / "b").symlink_to(".")
    (skills / "disk").symlink_to("/")
    return project


def _hook(url: str, home: Path, event: dict[str, Any], host: str = "claude-code", **headers: str) -> tuple[int, Any]:
    body = json.dumps(event).encode()
    return send(url, "POST", f"/hook/{host}", body, {**hook_headers(home), **headers})


def _prompt(project: Path, prompt: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(prompt_payload(prompt, project))
    return loaded


# -- walking, reading and indexing, bounded and off the routing lock -------------------------------


def _indexing_threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if "index" in t.name)


def test_symlink_loops_and_a_link_to_the_disk_are_never_walked(
    tmp_path: Path, claude_home: Path, project: Path
) -> None:
    pilot = _pilot(tmp_path / "home")
    # Services other tests of this process started keep their indexing thread.
    before = _indexing_threads()
    with advertised_service(pilot) as url:
        session = {"session_id": SESSION, "cwd": str(project), "hook_event_name": "SessionStart"}
        assert _hook(url, pilot.settings.home, session)[0] == 200
        for _ in range(5):
            routed = run_hook(pilot.settings.home, prompt_payload("brew the coffee", project))
            assert "invoke the skill `brew-coffee`" in routed.stdout, routed.stderr
        # One indexing thread, however many events came (one walking thread leaked per prompt).
        assert _indexing_threads() == sorted([*before, "skillpilot-hook-index"])
        assert send(url, "GET", "/healthz")[0] == 200
    assert [s.key for s in pilot.skills() if s.skill.root.startswith(str(project))] == ["brew-coffee"]


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "folder", "missing"])
def test_a_stop_event_reads_only_a_regular_transcript(tmp_path: Path, claude_home: Path, kind: str) -> None:
    transcript = {"/dev/zero": Path("/dev/zero"), "fifo": tmp_path / "t.fifo", "folder": tmp_path}.get(
        kind, tmp_path / "missing.jsonl"
    )
    if kind == "fifo":
        os.mkfifo(transcript)
    pilot = _pilot(tmp_path / "home")
    with advertised_service(pilot) as url:
        _hook(url, pilot.settings.home, _prompt(tmp_path, "commit my changes"))
        stop = {
            "session_id": SESSION,
            "cwd": str(tmp_path),
            "hook_event_name": "Stop",
            "transcript_path": str(transcript),
        }
        # A FIFO used to pin the worker thread for ever, /dev/zero to read until MemoryError.
        assert _hook(url, pilot.settings.home, stop) == (200, {"output": None, "signal": None})
        assert send(url, "GET", "/healthz")[0] == 200


def test_index_replace_behind_the_hook_s_back_does_not_end_project_routing(
    tmp_path: Path, claude_home: Path, project: Path
) -> None:
    other = tmp_path / "other"
    write_skill(other, "git-commit", "name: git-commit\ndescription: Use when committing changes.")
    pilot = _pilot(tmp_path / "home")
    pilot.index([other])
    with advertised_service(pilot):
        first = run_hook(pilot.settings.home, prompt_payload("brew the coffee", project))
        assert "invoke the skill `brew-coffee`" in first.stdout, first.stderr
        # Another process replaces the index's roots: the project's root is gone from it.
        _pilot(tmp_path / "home").index([other], replace=True)
        time.sleep(RECHECK_SECONDS + 0.1)
        again = run_hook(pilot.settings.home, prompt_payload("brew the coffee", project))
    assert "invoke the skill `brew-coffee`" in again.stdout, again.stderr


def test_indexing_a_project_never_holds_up_routes(
    tmp_path: Path, claude_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pilot = _pilot(tmp_path / "home")
    release = threading.Event()
    started = threading.Event()
    index = SkillPilot.index

    def slow_index(self: SkillPilot, paths: Any, *args: Any, **kwargs: Any) -> Any:
        if any(str(project) in str(p) for p in paths):
            started.set()
            release.wait(POLL_SECONDS)
        return index(self, paths, *args, **kwargs)

    monkeypatch.setattr(SkillPilot, "index", slow_index)
    with advertised_service(pilot) as url:
        session = {"session_id": SESSION, "cwd": str(project), "hook_event_name": "SessionStart"}
        assert _hook(url, pilot.settings.home, session)[0] == 200
        assert started.wait(POLL_SECONDS)
        try:
            # The project is being indexed (as a 2,000-skill one would be, for minutes): routes
            # and prompts are answered meanwhile, the prompt within the hook's 2 s.
            routed = send(url, "POST", "/route", json.dumps({"message": "commit my changes"}).encode())
            assert routed[0] == 200
            prompt = run_hook(pilot.settings.home, prompt_payload("brew the coffee", project))
            assert (prompt.returncode, prompt.stderr) == (0, "")
        finally:
            release.set()


# -- who may send events, and what an event may hold ----------------------------------------------------


@pytest.mark.parametrize("host", SERVED_HOSTS)
def test_hook_events_need_the_home_s_hook_key(tmp_path: Path, claude_home: Path, project: Path, host: str) -> None:
    pilot = _pilot(tmp_path / "home")
    session = {"session_id": SESSION, "cwd": str(project), "hook_event_name": "SessionStart"}
    with advertised_service(pilot) as url:
        body = json.dumps(session).encode()
        for headers in ({}, {HOOK_KEY_HEADER: "0" * 64}, {HOOK_KEY_HEADER: b"\xff\xfe"}):
            status, answer = send(url, "POST", f"/hook/{host}", body, headers)  # type: ignore[arg-type]
            assert (status, answer["error"]["type"]) == (403, "NotThisHomesHook")
        time.sleep(0.5)
    # No caller without the key made the service index anything.
    assert pilot.store.roots() == []


LONG = "x" * (MAX_MESSAGE_CHARS + 1)


@pytest.mark.parametrize(
    ("event", "problem"),
    [
        ({"hook_event_name": "UserPromptSubmit", "prompt": LONG}, "prompt is 32,001 characters"),
        ({"hook_event_name": "UserPromptSubmit", "prompt": 7}, "prompt must be text, not int"),
        ({"hook_event_name": "Stop", "session_id": "s" * 257}, "session_id is 257 characters"),
        ({"hook_event_name": "SessionStart", "cwd": "relative/path"}, "cwd must be an absolute path"),
        ({"hook_event_name": "SessionStart", "cwd": "/tmp/\x00x"}, "cwd must be an absolute path"),
        ({"hook_event_name": "Stop", "transcript_path": ["/etc/passwd"]}, "transcript_path must be text"),
        ({"hook_event_name": "x" * 65}, "hook_event_name is 65 characters"),
        (
            {"hook_event_name": "PostToolUse", "tool_name": "Skill", "tool_input": {"skill": "s" * 1000}},
            "tool_input.skill is 1,000 characters",
        ),
        ({"hook_event_name": "PostToolUse", "tool_response": json.loads("[" * 40 + "]" * 40)}, "nested deeper than 32"),
    ],
)
def test_events_past_the_hook_bounds_get_422_naming_the_field(
    tmp_path: Path, claude_home: Path, event: dict[str, Any], problem: str
) -> None:
    pilot = _pilot(tmp_path / "home")
    with advertised_service(pilot) as url:
        status, answer = _hook(url, pilot.settings.home, event)
    assert (status, answer["error"]["type"]) == (422, "InvalidRequest")
    assert problem in answer["error"]["message"]
    assert set(HOOK_FIELD_CHARS) >= {"prompt", "session_id", "cwd", "transcript_path", "tool_input.skill"}


@pytest.mark.parametrize(
    ("host", "event", "problem"),
    [
        ("gemini", {"hook_event_name": "BeforeAgent", "prompt": LONG}, "prompt is 32,001 characters"),
        ("gemini", {"hook_event_name": "BeforeAgent", "cwd": "relative"}, "cwd must be an absolute path"),
        (
            "gemini",
            {"hook_event_name": "AfterTool", "tool_name": "activate_skill", "tool_input": {"name": "s" * 1000}},
            "tool_input.name is 1,000 characters",
        ),
        ("codex", {"hook_event_name": "UserPromptSubmit", "prompt": 7}, "prompt must be text, not int"),
        (
            "codex",
            {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "c" * 5000}},
            "tool_input.command is 5,000 characters",
        ),
        ("codex", {"hook_event_name": "SessionStart", "session_id": ["s"]}, "session_id must be text, not list"),
    ],
)
def test_every_host_s_events_are_held_to_the_hook_bounds(
    tmp_path: Path, claude_home: Path, host: str, event: dict[str, Any], problem: str
) -> None:
    pilot = _pilot(tmp_path / "home")
    with advertised_service(pilot) as url:
        status, answer = _hook(url, pilot.settings.home, event, host)
        # A Codex shell command of an ordinary length is read (a SKILL.md read is its signal).
        command = {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "cat x" * 100}}
        assert _hook(url, pilot.settings.home, command, "codex")[0] == 200
    assert (status, answer["error"]["type"]) == (422, "InvalidRequest")
    assert problem in answer["error"]["message"]


# -- the hook process: whom it talks to -------------------------------------------------------------------


@contextmanager
def impostor(reply: bytes | None = None, drip_seconds: float | None = None) -> Iterator[tuple[int, list[bytes]]]:
    """A program on a loopback port that is not the service: it records what it receives and
    answers every read with ``reply`` (None: nothing), or drips a byte every ``drip_seconds``."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(0.2)
                while not stop.is_set():
                    try:
                        data = connection.recv(65536)
                    except TimeoutError:
                        data = b""
                    except OSError:
                        break
                    if data:
                        received.append(data)
                    try:
                        if drip_seconds is not None:
                            connection.sendall(b"H")
                            stop.wait(drip_seconds)
                        elif data and reply is not None:
                            connection.sendall(reply)
                    except OSError:
                        break

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], received
    finally:
        stop.set()
        thread.join(timeout=10)
        listener.close()


def _fake_hello() -> bytes:
    body = b'{"proof": "00", "pid": 1}'
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)


def test_a_peer_that_cannot_prove_it_is_the_service_gets_no_prompt_and_no_token(tmp_path: Path) -> None:
    home = tmp_path / "home"
    # This process holds the lock and is named in serve.json, but another program holds the port.
    lock = hold_service_lock(home)
    try:
        with impostor(_fake_hello()) as (port, received):
            write_serve_file(home, ServeInfo(url=f"http://127.0.0.1:{port}", pid=os.getpid(), token=TOKEN))
            from skillpilot.serve import home_key

            home_key(home)
            proc = run_hook(home, prompt_payload("my secret prompt", tmp_path))
    finally:
        os.close(lock)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "is not this home's service (it could not prove it): nothing was sent" in proc.stderr
    seen = b"".join(received)
    assert seen.startswith(b"GET /hook/hello HTTP/1.1")
    assert b"my secret prompt" not in seen and TOKEN.encode() not in seen and HOOK_KEY_HEADER.encode() not in seen


def test_a_dripping_peer_cannot_hold_the_hook_past_its_timeout(tmp_path: Path) -> None:
    home = tmp_path / "home"
    lock = hold_service_lock(home)
    try:
        with impostor(drip_seconds=1.5) as (port, _):
            write_serve_file(home, ServeInfo(url=f"http://127.0.0.1:{port}", pid=os.getpid()))
            from skillpilot.serve import home_key

            home_key(home)
            # Before, each recv had its own 2 s, and one byte every 1.5 s held the hook for ever.
            proc = run_hook(home, prompt_payload("commit my changes", tmp_path))
    finally:
        os.close(lock)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert f"skipped (TimeoutError: the service did not answer within {SERVICE_TIMEOUT:g} s)" in proc.stderr


def test_a_stale_serve_json_whose_port_another_program_took_starts_a_new_service(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("router:\n  enableSemantic: false\n", encoding="utf-8")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with impostor(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}") as (port, received):
        # A service killed with -9: its serve.json stays, its lock is free, its port is taken.
        write_serve_file(home, ServeInfo(url=f"http://127.0.0.1:{port}", pid=dead.pid, token=TOKEN))
        try:
            proc = run_hook(home, prompt_payload("my secret prompt", tmp_path))
            # It waited for the service it started (an empty index: nothing to route), never
            # for the program on the old port.
            assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
            assert lifecycle.lock_holder(home) not in (None, dead.pid)
        finally:
            lifecycle.stop(home)
    assert received == []
