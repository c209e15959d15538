"""How long an MCP client waits for ``skillpilot mcp`` (stdio) to answer ``initialize``, and what
that time is made of.

Indexes ``examples/skills`` in a fresh home, then runs, alternately:

    initialize   ``python -m skillpilot mcp``, from spawn to the ``initialize`` answer
    sdk          ``python -c "import mcp.server.mcpserver"`` (the MCP SDK alone)
    server       ``python -c "import skillpilot.serve.mcp"`` (SkillPilot's server module, SDK included)

and prints each median in milliseconds. The models load in the background after the imports, so
they are not in ``initialize``: the difference between ``initialize`` and ``server`` is building
the server and the handshake.

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


def initialize_ms(home: Path) -> float:
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
    elapsed = (time.perf_counter() - started) * 1000
    assert answer["id"] == 1 and "result" in answer, answer
    server.stdin.close()
    server.terminate()
    server.wait()
    return elapsed


def import_ms(module: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        SkillPilot(home=home).index([EXAMPLES])
        times: dict[str, list[float]] = {"initialize": [], "sdk": [], "server": []}
        for _ in range(args.runs):
            times["initialize"].append(initialize_ms(home))
            times["sdk"].append(import_ms("mcp.server.mcpserver"))
            times["server"].append(import_ms("skillpilot.serve.mcp"))
    print(json.dumps({name: round(statistics.median(values)) for name, values in times.items()}))


if __name__ == "__main__":
    main()
