"""What a Claude Code prompt waits for SkillPilot: the hook process as settings.json runs it.

Indexes ``../shared/bench/skills`` (294 skills) as a Claude Code user's ``~/.claude/skills`` in a
fresh home (or reuses ``--home``), starts the resident service (``skillpilot service start``),
then runs, alternately and through ``/bin/sh -c`` as Claude Code does:

    hook         the command ``skillpilot setup claude-code`` writes, on a UserPromptSubmit JSON
                 (development queries in turn: hard routes, shortlists and pass-throughs)
    python       ``python -c pass`` with the same interpreter, for reference

and prints both medians: wall time and CPU time (user + system of the finished processes).
Targets (issue 22.2): hook wall <= 120 ms and CPU <= 80 ms at 294 skills, service warm, on a
quiet machine.

    python benchmarks/hook_latency.py [--runs 41] [--home DIR] [--output results/hook_latency.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from skillpilot import SkillPilot
from skillpilot.adapters.claude_code_setup import hook_command
from skillpilot.serve import service

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"


def timed(command: str, stdin: bytes) -> tuple[float, float]:
    """Wall and CPU milliseconds of one run of ``command`` under ``/bin/sh -c``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(command, shell=True, input=stdin, capture_output=True)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or proc.stderr:
        raise RuntimeError(f"{command} failed: {proc.stderr.decode()}")
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--home", type=Path, help="a SkillPilot home to reuse (its index is refreshed)")
    parser.add_argument("--data", type=Path, default=BENCH)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="skillpilot-hook-bench-"))
    claude = scratch / "claude"
    claude.mkdir()
    (claude / "skills").symlink_to(args.data / "skills", target_is_directory=True)
    os.environ["CLAUDE_CONFIG_DIR"] = str(claude)
    home = (args.home or scratch / "home").absolute()
    pilot = SkillPilot(home=home, preconditions=False)
    report = pilot.index([claude / "skills"], replace=True)
    pilot.close()
    queries = [
        json.loads(line)["query"]
        for line in (args.data / "queries" / "real-dev.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    command = hook_command(home)
    python = f"{sys.executable} -c pass"
    try:
        state, _ = service.start(home)
        payloads = [
            json.dumps(
                {
                    "session_id": "bench",
                    "cwd": str(scratch),
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": query,
                }
            ).encode()
            for query in queries
        ]
        for payload in payloads[:5]:  # warm: the service's first routes load what is still cold
            timed(command, payload)
        hook: list[tuple[float, float]] = []
        reference: list[tuple[float, float]] = []
        for n in range(args.runs):
            hook.append(timed(command, payloads[n % len(payloads)]))
            reference.append(timed(python, b""))
        final = service.status(home)
    finally:
        service.stop(home)
    result: dict[str, Any] = {
        "skills": report.total,
        "runs": args.runs,
        "command": command,
        "hook_wall_ms": round(statistics.median(w for w, _ in hook), 1),
        "hook_cpu_ms": round(statistics.median(c for _, c in hook), 1),
        "python_wall_ms": round(statistics.median(w for w, _ in reference), 1),
        "python_cpu_ms": round(statistics.median(c for _, c in reference), 1),
        "service_route_p50_ms": final.route_p50_ms,
        "load_average": os.getloadavg()[0],
        "service_pid": state.pid,
    }
    print(
        f"{report.total} skills, {args.runs} runs each, load average {result['load_average']:.1f}\n"
        f"hook (as configured): median wall {result['hook_wall_ms']} ms, CPU {result['hook_cpu_ms']} ms\n"
        f"python -c pass:       median wall {result['python_wall_ms']} ms, CPU {result['python_cpu_ms']} ms\n"
        f"the service's own route p50: {result['service_route_p50_ms']} ms"
    )
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
