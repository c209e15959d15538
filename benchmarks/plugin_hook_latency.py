"""What a prompt waits for the Claude Code plugin's hook, beside `skillpilot setup`'s and the old one.

Indexes ``examples/skills`` as Claude Code's skills folder in a fresh home, starts the service,
then runs a UserPromptSubmit JSON through ``/bin/sh -c`` (as Claude Code does), alternately:

    setup           the command ``skillpilot setup claude-code`` writes (hook_client.py, -S -P)
    plugin          the plugin's hooks.json command (hooks/hook.py finding the same client)
    plugin before   ``skillpilot hook claude-code`` (what hooks.json ran: the whole CLI)

and prints each median wall time in milliseconds. Every run must come back with the context.

    python benchmarks/plugin_hook_latency.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skillpilot import SkillPilot
from skillpilot.serve import service

REPO = Path(__file__).resolve().parents[1]
PAYLOAD = json.dumps(
    {"hook_event_name": "UserPromptSubmit", "prompt": "commit my changes", "session_id": "bench", "cwd": "/tmp"}
).encode()
PLUGIN_COMMAND = json.loads((REPO / "adapters" / "claude-code" / "hooks" / "hooks.json").read_text())["hooks"][
    "UserPromptSubmit"
][0]["hooks"][0]["command"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    client = REPO / "src" / "skillpilot" / "adapters" / "hook_client.py"
    commands = {
        "setup": f"{sys.executable} -S -P {client} claude-code",
        "plugin": PLUGIN_COMMAND.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO / "adapters" / "claude-code")),
        "plugin before": "skillpilot hook claude-code",
    }
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        # The service and the hooks see Claude Code's skills where this folder says.
        os.environ["CLAUDE_CONFIG_DIR"] = str(REPO / "examples")
        os.environ["SKILLPILOT_HOME"] = str(home)
        SkillPilot(home=home).index([REPO / "examples" / "skills"])
        service.start(home)
        try:
            times: dict[str, list[float]] = {name: [] for name in commands}
            for _ in range(args.runs):
                for name, command in commands.items():
                    started = time.perf_counter()
                    answer = subprocess.run(["/bin/sh", "-c", command], input=PAYLOAD, capture_output=True, check=True)
                    times[name].append((time.perf_counter() - started) * 1000)
                    assert b"git-commit" in answer.stdout, (name, answer.stdout, answer.stderr)
        finally:
            service.stop(home)
    print(json.dumps({name: round(statistics.median(values)) for name, values in times.items()}))


if __name__ == "__main__":
    main()
