"""`skillpilot mcp` answers `initialize` and `tools/list` with the MCP SDK and its own server
module loaded, not the router: the router, its decision stage, the marketplace, OntoSkills,
OmniContext and the model runtime load with the first tool call (or the background warm-up).
A fresh interpreter, because what it has imported by then is the point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

PROBE = """
import json, sys
import anyio
from mcp import Client
from skillpilot.cli import surfaces  # the module of the `skillpilot mcp` command
from skillpilot.serve.mcp import build_server

asked = []

def pilot():
    asked.append("pilot")
    raise AssertionError("initialize and tools/list need no pilot")

async def handshake():
    async with Client(build_server(pilot)) as client:  # spawning the session is `initialize`
        return [tool.name for tool in (await client.list_tools()).tools]

tools = anyio.run(handshake)
later = ["skillpilot.router", "skillpilot.decide", "skillpilot.catalog", "skillpilot.market",
         "skillpilot.ontoskills", "skillpilot.omni", "onnxruntime", "tokenizers"]
print(json.dumps({"tools": tools, "asked": asked, "loaded": [m for m in later if m in sys.modules]}))
"""


def test_initialize_and_tools_list_load_no_router_or_model_runtime() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout.splitlines()[-1])
    assert answer == {
        "tools": ["route", "ontoskill", "find_skill", "omni_retrieve", "lint_skill", "feedback"],
        "asked": [],
        "loaded": [],
    }


def test_a_store_that_cannot_open_is_each_calls_error_and_one_log_line(tmp_path: Path) -> None:
    """The store opens after the handshake now: a session still starts, a tool call answers the
    store's error, and the log says it once per background task, without a traceback."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    unopenable = tmp_path / "index.sqlite"
    unopenable.mkdir()  # a folder where the SQLite file should be
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillpilot", "--store", str(unopenable), "mcp", "--home", str(tmp_path / "home")],
        env={**os.environ},
    )
    log = tmp_path / "stderr.txt"

    async def session() -> dict[str, object]:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                routed = await client.call_tool("route", {"message": "commit my changes"})
                assert routed.is_error and routed.structured_content is not None
                return routed.structured_content

    answer = anyio.run(session)
    assert answer["error"] == {
        "code": "StoreError",
        "message": f"{unopenable}: cannot open the index (unable to open database file)",
    }
    stderr = log.read_text()
    assert "Traceback" not in stderr, stderr
    assert f"not watching the skill folders: {unopenable}: cannot open the index" in stderr, stderr
