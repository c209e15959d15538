"""The hook path of every registered host against hostile input: each event the host declares,
every field a host sends replaced by values of the wrong type, huge, nested or unencodable, sent
to a real service on 127.0.0.1 as the hook process sends them (with the home's hook key), and
through the standard-library hook process itself.

What must hold for every host: the hook process's answer is nothing or one JSON object in the
host's own output shape (it never blocks or breaks the host), the service answers 200 or a 4xx
(never a 500), and it still routes afterwards."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.adapters import hook_client  # noqa: E402
from skillpilot.adapters.hosts import available_hosts, get_host  # noqa: E402

from .fake_encoder import SPEC  # noqa: E402
from .surfaces_util import SKILLS, advertised_service, hook_headers  # noqa: E402
from .test_hardening_serve import send  # noqa: E402

FIELDS = ("hook_event_name", "session_id", "cwd", "prompt", "tool_name", "tool_input", "transcript_path")
HOSTILE: tuple[Any, ...] = (
    None,
    7,
    -1.5e308,
    True,
    [],
    ["commit", "my", "changes"],
    {"a": {"b": {"c": [1, 2, {"d": None}]}}},
    "",
    "\ud800 lone surrogate \udfff",
    "\u0000\u202e right-to-left and NUL",
    "/",
    "../../../../etc",
    "x" * 40_000,
)
# Served hosts only: OpenClaw's plugin sends no hook JSON.
HOSTS = [name for name in available_hosts() if get_host(name).hooks]


def nested(depth: int) -> Any:
    value: Any = "deep"
    for _ in range(depth):
        value = {"skill": [value]}
    return value


@pytest.fixture
def host() -> str:
    """The host a test without its own ``host`` parameter serves."""
    return "claude-code"


@pytest.fixture
def service(host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[SkillPilot, str]]:
    """A real service whose index holds the example skills in the host's own user skill folder
    (linked where the host keeps them), so that nothing is indexed during the test."""
    folders = {"claude-code": ("CLAUDE_CONFIG_DIR", "skills"), "gemini": ("GEMINI_CLI_HOME", ".gemini/skills")}
    variable, folder = folders.get(host, ("CODEX_HOME", "skills"))
    link = tmp_path / "host" / folder
    link.parent.mkdir(parents=True)
    link.symlink_to(SKILLS, target_is_directory=True)
    monkeypatch.setenv(variable, str(tmp_path / "host"))
    # The suite's fake encoder: what is asserted is the hook path, not what a model understands.
    pilot = SkillPilot(home=tmp_path / "home", preconditions=False, embed_provider=SPEC)
    pilot.index([link])
    with advertised_service(pilot) as url:
        yield pilot, url
    pilot.close()


def base_event(event: str, matcher: str | None, cwd: Path) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": "hostile-session",
        "transcript_path": str(cwd / "transcript.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": event,
        "prompt": "commit my changes",
    }
    if matcher is not None:
        payload |= {"tool_name": matcher, "tool_input": {"skill": "git-commit", "name": "git-commit", "command": "ls"}}
    return payload


def hook(home: Path, host: str, payload: bytes) -> str:
    """The hook process's stdout for ``payload`` (it must exit 0 whatever it is sent)."""
    out = io.StringIO()
    assert hook_client.main([host, "--home", str(home)], io.BytesIO(payload), out) == 0
    return out.getvalue()


@pytest.mark.parametrize("host", HOSTS)
def test_every_event_and_field_of_every_host_fails_open(
    host: str, service: tuple[SkillPilot, str], tmp_path: Path
) -> None:
    pilot, url = service
    home = pilot.settings.home
    statuses = set()
    for spec in get_host(host).hooks:
        base = base_event(spec.event, spec.matcher, tmp_path)
        variants = [{**base, field: value} for field in FIELDS for value in HOSTILE]
        variants += [{**base, "tool_input": nested(60)}, {k: v for k, v in base.items() if k != "cwd"}]
        for payload in variants:
            status, answer = send(url, "POST", f"/hook/{host}", json.dumps(payload).encode(), hook_headers(home))
            assert status == 200 or 400 <= status < 500, (spec.event, payload, status, answer)
            statuses.add(status)
        # The hook process on the same events: one variant of each field (it only forwards them).
        for payload in variants[:: len(HOSTILE) - 1]:
            printed = hook(home, host, json.dumps(payload).encode())
            assert printed == "" or (printed.count("\n") == 1 and isinstance(json.loads(printed), dict)), printed
        for raw in (b"\xff\xfe not json", b"[]", b"{", b'{"hook_event_name": 3}', json.dumps(nested(400)).encode()):
            assert hook(home, host, raw) == ""
    assert 200 in statuses
    # Still serving: a real prompt of this host's gets its context (waiting out any indexing the
    # hostile session starts began, which the hook process's 2 s would not).
    prompt = next(s for s in get_host(host).hooks if s.matcher is None and s.event != "SessionStart")
    event = json.dumps(base_event(prompt.event, None, tmp_path)).encode()
    status, answer = send(url, "POST", f"/hook/{host}", event, hook_headers(home))
    assert status == 200 and "git-commit" in json.dumps(answer["output"]), answer


def test_an_unknown_host_is_a_404_naming_the_known_ones(service: tuple[SkillPilot, str]) -> None:
    pilot, url = service
    body = json.dumps({"hook_event_name": "UserPromptSubmit"}).encode()
    status, answer = send(url, "POST", "/hook/no-such-host", body, hook_headers(pilot.settings.home))
    assert status == 404 and "use one of claude-code, codex, gemini" in answer["error"]["message"], answer
    assert hook(service[0].settings.home, "no-such-host", b'{"hook_event_name": "UserPromptSubmit"}') == ""
