"""What a prompt waits for the Claude Code plugin's hook, beside `skillpilot setup`'s and the old one.

Without options: indexes ``examples/skills`` as Claude Code's skills folder in a fresh home,
starts the service, then runs a UserPromptSubmit JSON through ``/bin/sh -c`` (as Claude Code
does), alternately:

    setup           the command ``skillpilot setup claude-code`` writes (hook_client.py, -S -P)
    plugin          the plugin's hooks.json command (hooks/hook.py finding the same client)
    plugin before   ``skillpilot hook claude-code`` (what hooks.json ran: the whole CLI)

and prints each median wall time in milliseconds. Every run must come back with the context.

With ``--claude``: the real ``claude -p`` (offline, against the scripted Messages API of
``skillpilot.bench.hostcli.claude_code``) in a throwaway HOME whose ``~/.claude/skills`` is the
library ``claude_code_listing.py`` builds (294: the bench skills; 1,000: MetaTool tools and forks
added), indexed, service up and warm. Per size, each of ``--turns`` prompts (real-dev messages)
runs with the hooks ``skillpilot setup claude-code`` installs, then with the plugin installed from
this repository's marketplace instead (alternately, so both see the same machine load; one is
disabled while the other runs). The scripted model invokes the skill the
hook named (so PostToolUse fires too), then answers. Per hook event it reports the wall time
Claude Code itself logs (``--debug-file``: "Hooks: EVENT [command] finished ... (N ms)"), and
the whole turn's wall time. Both runs pass ``--strict-mcp-config``: the plugin's MCP server
(it loads the models) is measured by ``mcp_startup.py``, not here.

    python benchmarks/plugin_hook_latency.py [--runs 15]
    python benchmarks/plugin_hook_latency.py --claude [--sizes 294 1000] [--turns 15]
                                             [--output results/plugin_hook_latency.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from claude_code_listing import BENCH, build_library, installed_claude

from skillpilot import SkillPilot
from skillpilot.adapters.hosts import get_host
from skillpilot.bench.hostcli import Recorded
from skillpilot.bench.hostcli.claude_code import (
    claude_env,
    hook_context,
    run_claude,
    scripted_api,
    text_reply,
    tool_use,
)
from skillpilot.serve import read_serve_file, service
from skillpilot.serve.client import route_via_service

REPO = Path(__file__).resolve().parents[1]
PAYLOAD = json.dumps(
    {"hook_event_name": "UserPromptSubmit", "prompt": "commit my changes", "session_id": "bench", "cwd": "/tmp"}
).encode()
PLUGIN_COMMAND = json.loads((REPO / "adapters" / "claude-code" / "hooks" / "hooks.json").read_text())["hooks"][
    "UserPromptSubmit"
][0]["hooks"][0]["command"]
# Claude Code's debug line for a finished command hook: event (":source" for SessionStart), its
# command in brackets, the plugin it came from, and the wall time it measured.
HOOK_FINISHED = re.compile(
    r"Hooks: (\w+)(?::\w+)? \[(.*)\](?: \(plugin [^)]*\))? finished with status (-?\d+) \((\d+)ms\)"
)


def hook_processes(runs: int) -> None:
    """The hook commands alone on the example skills (the mode without ``--claude``)."""
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
            for _ in range(runs):
                for name, command in commands.items():
                    started = time.perf_counter()
                    answer = subprocess.run(["/bin/sh", "-c", command], input=PAYLOAD, capture_output=True, check=True)
                    times[name].append((time.perf_counter() - started) * 1000)
                    assert b"git-commit" in answer.stdout, (name, answer.stdout, answer.stderr)
        finally:
            service.stop(home)
    print(json.dumps({name: round(statistics.median(values)) for name, values in times.items()}))


def invoke_named_skill(request: Recorded) -> list[dict[str, Any]]:
    """The model's first answer calls the Skill tool on the skill the hook named; then it is done."""
    named = (hook_context(request) or "").split("`")
    if all(m.get("role") != "assistant" for m in request.body["messages"]) and len(named) > 2:
        return tool_use("Skill", {"skill": named[1]}, "toolu_bench")
    return text_reply("Done.")


def claude_turn(binary: Path, prompt: str, debug: Path, env: dict[str, str]) -> dict[str, Any]:
    """One ``claude -p`` turn: its wall time, whether the hook's context reached the model, and
    each hook event's wall time as Claude Code logged it."""
    with scripted_api(invoke_named_skill) as api:
        started = time.perf_counter()
        run_claude(
            binary,
            prompt,
            debug.parent,
            {**env, **claude_env(Path(env["HOME"]), api)},
            "--strict-mcp-config",
            "--debug-file",
            str(debug),
        )
        turn = (time.perf_counter() - started) * 1000
        routed = hook_context(api.model_requests()[0]) is not None
    hooks: dict[str, int] = {}
    for event, command, status, millis in HOOK_FINISHED.findall(debug.read_text(encoding="utf-8")):
        if "hook" not in command or status != "0":
            raise RuntimeError(f"{event} ran {command!r} with status {status}; see {debug}")
        hooks[event] = int(millis)
    return {"turn": turn, "routed": routed, "hooks": hooks}


def medians(turns: list[dict[str, Any]]) -> dict[str, Any]:
    events = sorted({event for turn in turns for event in turn["hooks"]})
    return {
        "turns": len(turns),
        "routed": sum(turn["routed"] for turn in turns),
        "turn_wall_ms": round(statistics.median(turn["turn"] for turn in turns)),
        "hook_wall_ms": {e: round(statistics.median(t["hooks"][e] for t in turns if e in t["hooks"])) for e in events},
        "hook_runs": {e: sum(e in t["hooks"] for t in turns) for e in events},
    }


def claude_size(binary: Path, size: int, turns: int) -> dict[str, Any]:
    """One library size: each prompt with setup's hooks, then with the plugin's (alternately, so
    both see the same machine load), one service for both."""
    work = Path(tempfile.mkdtemp(prefix=f"skillpilot-plugin-bench-{size}-"))
    library, home, skillpilot_home = work / "library", work / "home", work / "skillpilot"
    library.mkdir()
    build_library(library, size)
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "skills").symlink_to(library, target_is_directory=True)
    # This process, the service it starts and the CLI see the throwaway HOME as the user's.
    os.environ["HOME"] = str(home)
    os.environ.pop("CLAUDE_CONFIG_DIR", None)
    pilot = SkillPilot(home=skillpilot_home, preconditions=False)
    indexed = pilot.index([home / ".claude" / "skills"]).total
    pilot.close()
    queries = [json.loads(line) for line in (BENCH / "queries" / "real-dev.jsonl").read_text("utf-8").splitlines()]
    prompts = [q["query"] for q in queries if q["kind"] != "out_of_scope"][:turns]
    # The hooks' commands find this checkout's SkillPilot (the plugin asks `skillpilot`'s interpreter).
    env = {"HOME": str(home), "SKILLPILOT_HOME": str(skillpilot_home), "PYTHONPATH": str(REPO / "src")}

    def plugin(*command: str) -> None:
        subprocess.run(
            [str(binary), "plugin", *command], env={**os.environ, **env}, cwd=work, check=True, capture_output=True
        )

    setup = get_host("claude-code").setup
    assert setup is not None
    plugin("marketplace", "add", str(REPO))
    plugin("install", "skillpilot@skillpilot")
    runs: dict[str, list[dict[str, Any]]] = {"setup": [], "plugin": []}
    service.start(skillpilot_home)
    try:
        info = read_serve_file(skillpilot_home)
        assert info is not None
        route_via_service(info, "warm up", timeout=120)  # a service a user keeps running is warm
        for number, prompt in enumerate(prompts):
            plugin("disable", "skillpilot@skillpilot")
            setup.install(skillpilot_home, None)
            runs["setup"].append(claude_turn(binary, prompt, work / f"setup-{number}.log", env))
            setup.uninstall(None)
            plugin("enable", "skillpilot@skillpilot")
            runs["plugin"].append(claude_turn(binary, prompt, work / f"plugin-{number}.log", env))
    finally:
        service.stop(skillpilot_home)
    return {"skills": indexed, "load_average": round(os.getloadavg()[0], 2), **{k: medians(v) for k, v in runs.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="hook runs per command (without --claude)")
    parser.add_argument("--claude", action="store_true", help="measure inside the real claude -p")
    parser.add_argument("--sizes", type=int, nargs="+", default=[294, 1000])
    parser.add_argument("--turns", type=int, default=15, help="claude -p turns per size and install")
    parser.add_argument("--output", type=Path, help="write the --claude results here")
    args = parser.parse_args()
    if not args.claude:
        hook_processes(args.runs)
        return
    binary, version = installed_claude()
    rows = []
    for size in args.sizes:
        rows.append(claude_size(binary, size, args.turns))
        row = rows[-1]
        for install in ("setup", "plugin"):
            numbers = row[install]
            print(
                f"{row['skills']} skills, {install}: turn {numbers['turn_wall_ms']} ms, hooks "
                + ", ".join(f"{event} {ms} ms" for event, ms in numbers["hook_wall_ms"].items())
                + f" (medians of {numbers['turns']} turns, {numbers['routed']} routed, load {row['load_average']})",
                flush=True,
            )
    if args.output:
        args.output.write_text(json.dumps({"claude_code": version, "sizes": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
