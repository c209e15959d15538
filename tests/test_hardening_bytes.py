"""Any bytes in, nothing lost: undecodable folder names, lone surrogates, NUL, control and bidi
characters and very long lines go through the loader, the index write, ``route``, ``route
--queries``, the HTTP service, a real MCP stdio client session and the Claude Code hook; one bad
item is skipped with a reason naming it and never fails the run, the batch or the session.

Generated texts come from hypothesis (property-based); routers are keyword-only (no model loads)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillpilot import SkillPilot
from skillpilot.skills import load_skills
from skillpilot.watch import IndexWatcher

from .conftest import write_skill
from .surfaces_util import cli

# Text that breaks naive code: lone surrogates, NUL, C0/C1 controls, bidi overrides, zero widths,
# CJK, emoji, and long runs.
AWKWARD = st.sampled_from(
    [
        "\ud800",
        "\udfff",
        "\udcff",
        "\x00",
        "\x07",
        "\x1b[31m",
        "\u202e",
        "\u2066",
        "\u200b",
        "\ufeff",
        "\x85",
        "\u2028",
        "提交",
        "🚀",
        "commit",
        " my changes",
        "\n",
        "\r\n",
        "\t",
        "x" * 5000,
    ]
)
TEXT = st.lists(AWKWARD | st.text(max_size=20), max_size=12).map("".join)
FEW = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
KEYWORD_ONLY = {"SKILLPILOT_ENABLE_SEMANTIC": "false", "SKILLPILOT_PRECONDITIONS": "off"}
MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def _encodable(value: Any) -> bool:
    json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    return True


@pytest.fixture()
def catalog(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "git-commit", "name: git-commit\ndescription: Use when the user wants to commit changes to git.")
    write_skill(
        root,
        "notes",
        # metadata as a JSON string: json.loads turns its \\ud800 escapes into lone surrogates.
        'name: notes\ndescription: "Use when the user takes notes about \\u202e meetings."\n'
        """metadata: '{"owner": "\\udfff team", "k\\ud800": ["\\ud83d"]}'\n"""
        "route:\n  triggers: [take a note]",
        "Body line with a lone byte written as an escape.\n",
    )
    # A folder whose name is not UTF-8: its path cannot be stored as it is.
    bad = os.path.join(os.fsencode(root), b"caf\xe9-\xff")
    os.makedirs(bad)
    with open(os.path.join(bad, b"SKILL.md"), "wb") as handle:
        handle.write(b"---\nname: cafe\ndescription: Use when the user orders coffee.\n---\n")
    # A file that is not UTF-8 and one with NUL bytes: skipped, with their reasons.
    (root / "latin1").mkdir()
    (root / "latin1" / "SKILL.md").write_bytes(b"---\nname: latin1\ndescription: caf\xe9 orders\n---\n")
    (root / "binary").mkdir()
    (root / "binary" / "SKILL.md").write_bytes(b"---\nname: bin\x00\ndescription: x\n---\n")
    return root


@pytest.fixture()
def pilot(catalog: Path, tmp_path: Path) -> SkillPilot:
    router = SkillPilot(home=tmp_path / "home", enable_semantic=False, preconditions=False)
    report = router.index([catalog])
    assert (report.added, len(report.skipped)) == (2, 3)
    return router


def test_one_bad_item_never_fails_the_index_run(pilot: SkillPilot, catalog: Path) -> None:
    skipped = {Path(s.path).parent.name: s.reason for s in pilot.stats().skipped}
    assert "caf\ufffd-\ufffd" in skipped and "not valid UTF-8" in skipped["caf\ufffd-\ufffd"]
    assert "rename the folder" in skipped["caf\ufffd-\ufffd"]
    assert "is not UTF-8 text" in skipped["latin1"] and "NUL" in skipped["binary"]
    notes = pilot.get("notes")
    assert notes.skill.description == "Use when the user takes notes about \u202e meetings."
    assert notes.skill.metadata == {"owner": "\ufffd team", "k\ufffd": ["\ufffd"]}
    assert _encodable([(s.skill, s.fingerprint) for s in pilot.skills()])
    # A re-index (what `serve` and `watch` run on every change) goes on the same way.
    write_skill(catalog, "new-skill", "name: new-skill\ndescription: Use when the user wants a brand new thing.")
    report = pilot.index([catalog])
    assert (report.added, report.unchanged, len(report.skipped)) == (1, 2, 3)
    assert "new-skill" in {s.id for s in pilot.skills()}


@FEW
@given(message=TEXT)
def test_route_and_search_answer_any_text(pilot: SkillPilot, message: str) -> None:
    routed = pilot.route(message, trace=True)
    assert routed.decision in ("hard", "soft", "passthrough")
    assert _encodable(routed.to_dict())
    assert _encodable([h.__dict__ for h in pilot.search(message)])


@pytest.mark.parametrize("message", [123, None, b"commit my changes", ["commit"]])
def test_a_message_that_is_not_text_is_named_as_such(pilot: SkillPilot, message: Any) -> None:
    for call in (pilot.route, pilot.search, pilot.plan):
        with pytest.raises(TypeError, match=f"a message is a str, not {type(message).__name__}"):
            call(message)


@FEW
@given(name=TEXT, description=TEXT, body=TEXT)
def test_the_loader_gives_utf8_safe_skills_whatever_the_file_says(
    tmp_path_factory: pytest.TempPathFactory, name: str, description: str, body: str
) -> None:
    root = tmp_path_factory.mktemp("gen")
    data = json.dumps({"name": name, "description": description})  # JSON is YAML; escapes stay escapes
    (root / "s").mkdir()
    (root / "s" / "SKILL.md").write_text(f"---\n{data}\n---\n{body}", encoding="utf-8", errors="surrogatepass")
    loaded = load_skills([root])
    assert len(loaded.skills) + len(loaded.skipped) == 1
    assert _encodable([loaded.skills, loaded.skipped, loaded.warnings])


def _cli(home: Path, *args: str | bytes, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "SKILLPILOT_HOME": str(home), **KEYWORD_ONLY}
    return subprocess.run(
        [sys.executable, "-m", "skillpilot", *args], input=stdin, capture_output=True, env=env, timeout=120
    )


def test_cli_route_and_batch_survive_any_bytes(pilot: SkillPilot, tmp_path: Path) -> None:
    home = pilot.settings.home
    single = _cli(home, "route", b"commit \xff my \xed\xa0\x80 changes", "--json")
    assert single.returncode == 0, single.stderr
    assert json.loads(single.stdout)["skill"]["id"] == "git-commit"
    queries = tmp_path / "queries.jsonl"
    queries.write_bytes(
        b'{"id": 1, "query": "commit my changes"}\n'
        b'{"id": 2, "query": "commit \xff\xfe bytes"}\n'
        b"not json at all\n"
        b'{"id": 4, "query": "lone \\ud800 surrogate commit changes"}\n'
        b'{"id": 5}\n'
        b'{"id": 6, "query": "take a note about meetings"}\n'
    )
    batch = _cli(home, "route", "--queries", str(queries))
    lines = [json.loads(line) for line in batch.stdout.decode("utf-8").splitlines()]
    assert [line["id"] for line in lines] == [1, 2, None, 4, 5, 6]
    assert [line.get("error", {}).get("type") for line in lines] == [
        None,
        None,
        "InvalidQuery",
        None,
        "InvalidQuery",
        None,
    ]
    assert (lines[2]["line"], lines[4]["line"]) == (3, 5)
    assert [line["skill"]["id"] for line in lines if "skill" in line and line["skill"]] == [
        "git-commit",
        "git-commit",
        "git-commit",
        "notes",
    ]
    assert batch.returncode == 1 and b"Traceback" not in batch.stderr
    assert b"line 3 of" in batch.stderr


def test_the_claude_code_hook_answers_any_prompt(pilot: SkillPilot, tmp_path: Path) -> None:
    home = pilot.settings.home
    try:
        for payload in (
            b'{"hook_event_name": "UserPromptSubmit", "prompt": "commit \\ud800 my changes", "cwd": "/tmp"}',
            b'{"hook_event_name": "UserPromptSubmit", "prompt": "commit \xff\xfe my changes", "cwd": "/tmp"}',
            b'{"hook_event_name": "UserPromptSubmit", "prompt": "\\u0000\\u202e'
            + b"x" * 100_000
            + b'", "cwd": "/tmp"}',
            b"\xff\xfe not json",
        ):
            result = _cli(home, "hook", "claude-code", stdin=payload)
            assert result.returncode == 0, result.stderr
            assert b"Traceback" not in result.stderr
            result.stdout.decode("utf-8")
    finally:
        # The first prompt found no service and started one in the background: stop it.
        _cli(home, "service", "stop")


def test_http_answers_any_text(pilot: SkillPilot) -> None:
    pytest.importorskip("fastapi")
    from skillpilot.serve.http import create_app

    from .surfaces_util import uvicorn_on_loopback
    from .test_hardening_serve import send

    with uvicorn_on_loopback(create_app(pilot)) as url:

        @FEW
        @given(message=TEXT)
        def check(message: str) -> None:
            body = json.dumps({"message": message}).encode()  # lone surrogates become \\ud800 escapes
            status, answer = send(url, "POST", "/route", body)
            assert status in (200, 422), answer
            assert set(answer) != {"error"} or answer["error"]["type"] == "InvalidRequest"
            status, answer = send(url, "POST", "/search", json.dumps({"query": message}).encode())
            assert status in (200, 422)

        check()


def test_a_real_mcp_stdio_session_answers_any_text(pilot: SkillPilot) -> None:
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters

    env = {**os.environ, "SKILLPILOT_HOME": str(pilot.settings.home), **KEYWORD_ONLY}
    server = StdioServerParameters(command=sys.executable, args=["-m", "skillpilot", "mcp"], env=env)
    messages = ["commit my changes", "\x00\u202e\x07 commit", "提交 🚀 " + "x" * 20_000, "\u2028\ufeff"]

    async def session() -> list[Any]:
        async with Client(server) as client:
            return [await client.call_tool("route", {"message": m}) for m in messages]

    answers = anyio.run(session)
    assert [a.is_error for a in answers] == [False] * len(messages)
    assert answers[0].structured_content["skill"]["id"] == "git-commit"


def _route_call(ident: int, message: bytes) -> bytes:
    """A tools/call of route, written by hand so that ``message`` can hold raw escapes."""
    params = b'{"name": "route", "arguments": {"message": "' + message + b'"}}'
    return b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": %s}' % (ident, params)


def test_mcp_stdio_answers_lone_surrogates_and_malformed_json_rpc(pilot: SkillPilot) -> None:
    """What a real client library cannot send (it would not encode), raw on the wire."""
    pytest.importorskip("mcp")
    env = {**os.environ, "SKILLPILOT_HOME": str(pilot.settings.home), **KEYWORD_ONLY}
    lines = [
        json.dumps(MCP_INITIALIZE).encode(),
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        _route_call(2, b"commit \\ud800 my changes"),
        b"{not json",
        b"\xff\xfe\x00",
        b'{"jsonrpc": "2.0", "id": 3}',
        # A 1 KB line nested 500 deep, and one deeper than the JSON parser goes.
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"route","arguments":{"message":'
        + b"[" * 500
        + b"]" * 500
        + b"}}}",
        b"[" * 100_000 + b"]" * 100_000,
        _route_call(4, b"commit my changes"),
    ]
    server = subprocess.Popen(
        [sys.executable, "-m", "skillpilot", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert server.stdin is not None and server.stdout is not None
    # An unanswered line would block readline for ever: the watchdog ends the wait (and the test).
    watchdog = threading.Timer(120, server.kill)
    watchdog.start()
    try:
        server.stdin.write(b"\n".join(lines) + b"\n")
        server.stdin.flush()
        # Eight answers: initialize, two routes, two parse errors, three invalid requests. Closing
        # stdin before they are all read would end the session with requests in flight.
        answers = [json.loads(server.stdout.readline().decode("utf-8")) for _ in range(8)]
    finally:
        watchdog.cancel()
        server.stdin.close()
        server.wait(timeout=60)
    by_id = {a.get("id"): a for a in answers if a.get("id") is not None}
    routed = json.loads(by_id[2]["result"]["content"][0]["text"])
    assert (routed["query"], routed["skill"]["id"]) == ("commit \ufffd my changes", "git-commit")
    errors = [a["error"]["code"] for a in answers if "error" in a]
    assert errors == [-32700, -32700, -32600, -32600, -32600]
    assert by_id[3]["error"]["code"] == -32600
    assert by_id[5]["error"] == {"code": -32600, "message": "Invalid Request: nested deeper than 32 levels"}
    assert json.loads(by_id[4]["result"]["content"][0]["text"])["skill"]["id"] == "git-commit"


def test_mcp_over_http_answers_what_stdio_answers(pilot: SkillPilot) -> None:
    """The same raw messages over streamable HTTP: a lone surrogate is U+FFFD, too deep a message
    gets the JSON-RPC error stdio sends (the SDK's parser refused the first with a parse error)."""
    pytest.importorskip("mcp")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "SKILLPILOT_HOME": str(pilot.settings.home), **KEYWORD_ONLY}
    server = subprocess.Popen(
        [sys.executable, "-m", "skillpilot", "mcp", "--http", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def post(body: bytes, session: str | None = None) -> tuple[int, str | None, bytes]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if session:
            headers["mcp-session-id"] = session
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            connection.request("POST", "/mcp", body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.getheader("mcp-session-id"), response.read()
        finally:
            connection.close()

    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None and time.monotonic() < deadline, "the server never listened"
            with socket.socket() as client:
                if client.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        status, session, _ = post(json.dumps(MCP_INITIALIZE).encode())
        assert status == 200 and session
        post(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', session)
        status, _, answer = post(_route_call(2, b"commit \\ud800 my changes"), session)
        data = json.loads(answer.decode("utf-8").partition("data: ")[2])
        routed = json.loads(data["result"]["content"][0]["text"])
        assert (status, routed["query"], routed["skill"]["id"]) == (200, "commit \ufffd my changes", "git-commit")
        nested = b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":' + b"[" * 500 + b"]" * 500 + b"}}"
        status, _, answer = post(nested, session)
        error = {"code": -32600, "message": "Invalid Request: nested deeper than 32 levels"}
        assert (status, json.loads(answer)) == (400, {"jsonrpc": "2.0", "id": 3, "error": error})
    finally:
        server.terminate()
        server.wait(timeout=60)


@pytest.mark.parametrize(("indent", "how"), [("\t", "a tab"), ("  ", "spaces")])
def test_an_indented_description_is_named_not_called_missing(tmp_path: Path, indent: str, how: str) -> None:
    root = tmp_path / "skills"
    (root / "deploy").mkdir(parents=True)
    text = f"---\nname: deploy\n{indent}description: Use when the user deploys to production.\n---\nSteps.\n"
    (root / "deploy" / "SKILL.md").write_text(text)
    (skipped,) = load_skills([root]).skipped
    assert skipped.reason == (
        f"line 3: `description:` is indented with {how}, so YAML reads it as part of the line before: "
        "start the line with `description:`"
    )


def test_a_live_refresh_goes_on_past_undecodable_folders_and_lone_surrogates(tmp_path: Path) -> None:
    """What `serve` and `watch` run: a real watchdog observer re-indexing as files appear."""

    root = tmp_path / "skills"
    write_skill(root, "git-commit", "name: git-commit\ndescription: Use when the user wants to commit changes.")
    pilot = SkillPilot(home=tmp_path / "home", enable_semantic=False, preconditions=False, refresh_interval=1440.0)
    reports: list[Any] = []
    with IndexWatcher(pilot.settings, [root], on_report=reports.append):
        _wait(lambda: bool(reports))
        bad = os.path.join(os.fsencode(root), b"\xff\xfe-bad")
        os.makedirs(bad)
        with open(os.path.join(bad, b"SKILL.md"), "wb") as handle:
            handle.write(b"---\nname: bad\ndescription: Use when a bad name is fine.\n---\n")
        write_skill(
            root,
            "notes",
            "name: notes\ndescription: Use when the user takes notes.\n"
            """metadata: '{"owner": "\\\\udfff"}'\nroute:\n  triggers: [take a note]""",
        )
        _wait(lambda: pilot.route("take a note").skill is not None)
        assert sorted(s.id for s in pilot.skills()) == ["git-commit", "notes"]
        assert any("not valid UTF-8" in s.reason for r in reports for s in r.skipped)
    pilot.close()


def _wait(condition: Any, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the refresh never caught up"
        time.sleep(0.05)


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_with_or_without_a_byte_order_mark_is_read(tmp_path: Path, codec: str) -> None:
    text = "---\nname: résumé-writer\ndescription: Use when writing a résumé 履歴書.\n---\nWrite it.\n"
    (tmp_path / "cv").mkdir()
    (tmp_path / "cv" / "SKILL.md").write_bytes(text.encode(codec))
    loaded = load_skills([tmp_path])
    assert loaded.skipped == ()
    (skill,) = loaded.skills
    assert (skill.name, skill.description, skill.body) == (
        "résumé-writer",
        "Use when writing a résumé 履歴書.",
        "Write it.",
    )


def test_damaged_utf16_says_so(tmp_path: Path) -> None:
    (tmp_path / "cv").mkdir()
    # A lone high surrogate in the middle of UTF-16 LE text.
    (tmp_path / "cv" / "SKILL.md").write_bytes(
        "---\nname: cv\n".encode("utf-16-le") + b"\x01\xd8" + "x\n".encode("utf-16-le")
    )
    (skipped,) = load_skills([tmp_path]).skipped
    assert skipped.reason == "is damaged UTF-16-LE text: save it as UTF-8"


def test_the_cli_never_prints_a_skill_s_terminal_escapes(tmp_path: Path) -> None:
    # Escape sequences in a folder name (the skill's id and path) and in its description: clear
    # the screen, retitle the window, a C1 control sequence introducer.
    root = tmp_path / "skills"
    folder = "evil\x1b]0;pwned\x07"
    write_skill(root, folder, "description: Use when the user wants to commit changes.\x1b[2J\x9b31m")
    home = tmp_path / "home"
    outputs = [
        cli("index", str(root), home=home),
        cli("route", "commit my changes", home=home, SKILLPILOT_ENABLE_SEMANTIC="false"),
        cli("search", "commit", home=home, SKILLPILOT_ENABLE_SEMANTIC="false"),
        cli("lint", str(root), home=home),
    ]
    for outcome in outputs:
        printed = outcome.stdout + outcome.stderr
        assert outcome.returncode == 0, printed
        assert not any(c in printed for c in "\x1b\x07\x9b"), printed
    assert "evil\\x1b]0;pwned\\x07" in outputs[1].stdout and "\\x1b[2J\\x9b31m" in outputs[1].stdout
