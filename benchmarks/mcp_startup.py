"""How long an MCP client waits for ``skillpilot mcp`` (stdio) to answer ``initialize`` and
``tools/list``, and what that time is made of.

Indexes ``examples/skills`` in a fresh home, then runs, alternately:

    initialize   ``python -m skillpilot mcp``, from spawn to the ``initialize`` answer
    tools/list   the same session, from spawn to the ``tools/list`` answer that follows
    python       ``python -c pass`` (the interpreter alone)
    sdk          ``python -c "import mcp.server.mcpserver"`` (the MCP SDK alone)
    server       ``python -c "import skillpilot.serve.mcp"`` (SkillPilot's server module, SDK included)

and prints each median in milliseconds. Only the CLI, the SDK and the server module are imported
before ``initialize`` is answered: the router is imported, and its models loaded, on a
background thread, so neither is in ``initialize``.

    python benchmarks/mcp_startup.py [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skillpilot import SkillPilot

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "skills"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def handshake_ms(home: Path) -> tuple[float, float]:
    """Milliseconds from spawn to the ``initialize`` answer and to the ``tools/list`` answer."""
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "skillpilot", "mcp", "--home", str(home)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    server.stdin.flush()
    answer = json.loads(server.stdout.readline())
    initialized = (time.perf_counter() - started) * 1000
    assert answer["id"] == 1 and "result" in answer, answer
    server.stdin.write((json.dumps(INITIALIZED) + "\n" + json.dumps(TOOLS_LIST) + "\n").encode())
    server.stdin.flush()
    answer = json.loads(server.stdout.readline())
    listed = (time.perf_counter() - started) * 1000
    assert answer["id"] == 2 and answer["result"]["tools"], answer
    server.stdin.close()
    server.terminate()
    server.wait()
    return initialized, listed


def run_ms(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        SkillPilot(home=home).index([EXAMPLES])
        times: dict[str, list[float]] = {"initialize": [], "tools/list": [], "python": [], "sdk": [], "server": []}
        for _ in range(args.runs):
            initialized, listed = handshake_ms(home)
            times["initialize"].append(initialized)
            times["tools/list"].append(listed)
            times["python"].append(run_ms("pass"))
            times["sdk"].append(run_ms("import mcp.server.mcpserver"))
            times["server"].append(run_ms("import skillpilot.serve.mcp"))
    print(json.dumps({name: round(statistics.median(values)) for name, values in times.items()}))


if __name__ == "__main__":
    main()
