"""What a host's prompt waits for SkillPilot: the hook process as the host runs it, per host.

For each size and host (Claude Code, Gemini CLI, Codex CLI), indexes the library
``claude_code_listing.py`` builds (294: the bench skills of ``../shared/bench/skills``; 1,000:
MetaTool tools and forks of the bench skills added) as that host's user skill folder
(``$CLAUDE_CONFIG_DIR/skills``, ``$GEMINI_CLI_HOME/.gemini/skills``, ``$CODEX_HOME/skills``) in a
fresh home, starts the resident service (``skillpilot service start``), then runs, alternately
and through ``/bin/sh -c`` as the hosts do:

    hook         the command ``skillpilot setup HOST`` writes, on the host's prompt-event JSON
                 (development queries in turn: hard routes, shortlists and pass-throughs)
    python       ``python -c pass`` with the same interpreter, for reference

and prints both medians: wall time and CPU time (user + system of the finished processes).
Targets (issues 22.2, 31.4 and 32.2): hook wall <= 120 ms and CPU <= 80 ms at 294 skills, wall
<= 150 ms at 1,000, service warm, on a quiet machine, for every host.

    python benchmarks/hook_latency.py [--runs 41] [--host gemini ...] [--sizes 294 1000]
                                      [--output results/hook_latency.json]
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

from claude_code_listing import BENCH, build_library

from skillpilot import SkillPilot
from skillpilot.adapters.hosts.files import hook_command
from skillpilot.serve import service


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


# Host -> (the environment variable naming its folder, the user skill folder inside it, the
# prompt event's JSON as the host sends it, minus the prompt).
HOSTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "claude-code": ("CLAUDE_CONFIG_DIR", "skills", {"hook_event_name": "UserPromptSubmit"}),
    "gemini": (
        "GEMINI_CLI_HOME",
        ".gemini/skills",
        {"hook_event_name": "BeforeAgent", "timestamp": "2026-12-02T00:00:00Z"},
    ),
    "codex": ("CODEX_HOME", "skills", {"hook_event_name": "UserPromptSubmit", "turn_id": "t", "model": "gpt-5.1"}),
}


def measure(host: str, scratch: Path, library: Path, queries: list[str], runs: int) -> dict[str, Any]:
    """One host: its own home and index of the library, a fresh service, ``runs`` hooks."""
    variable, folder, event = HOSTS[host]
    host_home = scratch / host
    skills = host_home / folder
    skills.parent.mkdir(parents=True)
    skills.symlink_to(library, target_is_directory=True)
    os.environ[variable] = str(host_home)
    home = scratch / f"home-{host}"
    pilot = SkillPilot(home=home, preconditions=False)
    report = pilot.index([skills], replace=True)
    pilot.close()
    command = hook_command(host, home)
    python = f"{sys.executable} -c pass"
    payloads = [
        json.dumps({"session_id": "bench", "cwd": str(scratch), **event, "prompt": query}).encode() for query in queries
    ]
    try:
        state, _ = service.start(home)
        for payload in payloads[:5]:  # warm: the service's first routes load what is still cold
            timed(command, payload)
        hook: list[tuple[float, float]] = []
        reference: list[tuple[float, float]] = []
        for n in range(runs):
            hook.append(timed(command, payloads[n % len(payloads)]))
            reference.append(timed(python, b""))
        final = service.status(home)
    finally:
        service.stop(home)
    return {
        "host": host,
        "skills": report.total,
        "runs": runs,
        "command": command,
        "hook_wall_ms": round(statistics.median(w for w, _ in hook), 1),
        "hook_cpu_ms": round(statistics.median(c for _, c in hook), 1),
        "python_wall_ms": round(statistics.median(w for w, _ in reference), 1),
        "python_cpu_ms": round(statistics.median(c for _, c in reference), 1),
        "service_route_p50_ms": final.route_p50_ms,
        "load_average": os.getloadavg()[0],
        "service_pid": state.pid,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--host", action="append", choices=sorted(HOSTS), help="default: every host")
    parser.add_argument("--sizes", type=int, nargs="+", default=[294])
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()

    queries = [
        json.loads(line)["query"]
        for line in (BENCH / "queries" / "real-dev.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    rows = []
    for size in args.sizes:
        scratch = Path(tempfile.mkdtemp(prefix=f"skillpilot-hook-bench-{size}-"))
        library = scratch / "library"
        library.mkdir()
        build_library(library, size)
        rows += [measure(host, scratch, library, queries, args.runs) for host in args.host or HOSTS]
    for row in rows:
        print(
            f"{row['host']}: {row['skills']} skills, {row['runs']} runs each, load average {row['load_average']:.1f}\n"
            f"  hook (as configured): median wall {row['hook_wall_ms']} ms, CPU {row['hook_cpu_ms']} ms\n"
            f"  python -c pass:       median wall {row['python_wall_ms']} ms, CPU {row['python_cpu_ms']} ms\n"
            f"  the service's own route p50: {row['service_route_p50_ms']} ms"
        )
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps({"hosts": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
