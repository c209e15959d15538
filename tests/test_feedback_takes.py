"""An explicit correction takes: after ``feedback correct``, the same message (equal after the
route's normalisation) routes to the corrected skill, first and at least ``soft``, from the next
route on, through the CLI in a fresh process, the HTTP service and the MCP server while they run.
The conflict suite's report: corrected from slack to slack-advanced, the same message still went
``soft slack`` (x0.50, still first). Paraphrases and implicit signals keep their bounds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillpilot import SkillPilot

from .cli_util import run_cli
from .conftest import BENCH, REPO, require_corpus

MESSAGE = "send the weekly metrics digest to the team"
PINNED = "feedback: you corrected this very message to it"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The conflict suite indexed once; each test routes over it with a feedback file of its own."""
    require_corpus()
    path = tmp_path_factory.mktemp("conflicts") / "index.sqlite"
    SkillPilot(home=path.parent, store=str(path)).index([BENCH / "conflicts"])
    return path


@pytest.fixture
def conflicts(index: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> SkillPilot:
    monkeypatch.setenv("SKILLPILOT_STORE", str(index))
    pilot = SkillPilot(home=isolated_home)
    before = pilot.route(MESSAGE)
    assert before.skill is not None and before.skill.id == "slack"
    return pilot


def test_a_cli_correction_takes_in_a_fresh_process(conflicts: SkillPilot, isolated_home: Path) -> None:
    corrected = run_cli(
        "feedback", "correct", "--wrong", "slack", "--right", "slack-advanced", "--query", MESSAGE, home=isolated_home
    )
    assert corrected.returncode == 0, corrected.stderr
    env = {**os.environ, "SKILLPILOT_HOME": str(isolated_home), "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run(
        [sys.executable, "-m", "skillpilot", "route", MESSAGE, "--json"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["skill"]["id"] == "slack-advanced"
    assert result["decision"] in ("soft", "hard") and PINNED in result["reasons"]
    # The router that was running before the correction sees it on its next route too.
    again = conflicts.route(MESSAGE)
    assert again.skill is not None and again.skill.id == "slack-advanced" and again.decision != "passthrough"


def test_only_the_same_message_is_pinned_and_the_latest_explicit_word_counts(conflicts: SkillPilot) -> None:
    conflicts.feedback("correct", MESSAGE, wrong="slack", right="slack-advanced")
    # Another wording is a paraphrase: learned examples may move it, within their bounds, no pin.
    paraphrase = conflicts.route("send the weekly metrics digest to the whole team")
    assert PINNED not in paraphrase.reasons and paraphrase.confidence <= 0.79
    signal = conflicts.feedback("correct", MESSAGE, wrong="slack-advanced", right="slack-notifier")
    result = conflicts.route(MESSAGE)
    assert result.skill is not None and result.skill.id == "slack-notifier" and PINNED in result.reasons
    conflicts.undo_feedback(signal.id)
    result = conflicts.route(MESSAGE)
    assert result.skill is not None and result.skill.id == "slack-advanced"


def test_an_implicit_correction_does_not_pin(conflicts: SkillPilot) -> None:
    conflicts.feedback("correct", MESSAGE, wrong="slack", right="slack-advanced", implicit=True)
    result = conflicts.route(MESSAGE)
    assert PINNED not in result.reasons and result.decision != "hard"


def test_a_correction_over_http_takes_in_the_running_service(conflicts: SkillPilot) -> None:
    pytest.importorskip("fastapi")
    from skillpilot.serve.http import create_app

    from .surfaces_util import uvicorn_on_loopback
    from .test_surfaces_serve import post

    with uvicorn_on_loopback(create_app(conflicts)) as url:
        status, before = post(url, "/route", {"message": MESSAGE})
        assert (status, before["skill"]["id"]) == (200, "slack")
        status, _ = post(
            url, "/feedback", {"kind": "correct", "query": MESSAGE, "wrong": "slack", "right": "slack-advanced"}
        )
        assert status == 200
        status, after = post(url, "/route", {"message": MESSAGE})
    assert (status, after["skill"]["id"]) == (200, "slack-advanced")
    assert after["decision"] in ("soft", "hard") and PINNED in after["reasons"]


def test_a_correction_over_mcp_takes_in_the_running_server(conflicts: SkillPilot) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from skillpilot.serve.mcp import build_server

    async def session() -> tuple[Any, Any, Any]:
        async with Client(build_server(conflicts)) as client:
            before = await client.call_tool("route", {"message": MESSAGE})
            signal = await client.call_tool(
                "feedback", {"kind": "correct", "message": MESSAGE, "wrong": "slack", "right": "slack-advanced"}
            )
            after = await client.call_tool("route", {"message": MESSAGE})
            return before.structured_content, signal.structured_content, after.structured_content

    before, signal, after = anyio.run(session)
    assert before["skill"]["id"] == "slack"
    assert (signal["kind"], signal["skill"], signal["wrong"]) == ("corrected", "slack-advanced", "slack")
    assert after["skill"]["id"] == "slack-advanced" and after["decision"] in ("soft", "hard")
