"""Library mode with the real Claude Code CLI at 294 and 1,000 skills: what a user set up with
``skillpilot setup claude-code`` gets for three requests and 20 chit-chat prompts.

    python benchmarks/claude_code_library.py [--sizes 294 1000] [--json benchmarks/results/claude_code_library.json]

For each size, a library outside the working folder (294: ``../shared/bench/skills`` by path; 1,000:
``benchmarks/claude_code_listing.py``'s library, the bench skills plus MetaTool tools and forks, so
near-copies), ``platforms.claudeCode.libraryRoots`` set, ``skillpilot index`` of the library, then
``skillpilot setup claude-code`` (it grants the library in ``permissions.additionalDirectories``
and starts the service) and ``claude -p`` per prompt (npm ``@anthropic-ai/claude-code``, offline
against the scripted Messages API of ``skillpilot.bench.hostcli.claude_code``). The scripted
model reads the first SKILL.md the hook's context names. Per request: the skill named, whether it
is the right one (or a copy), whether Claude Code let the model read it; per size: how many
chit-chat prompts got a context, and the median ``claude -p`` wall time. Setup is undone after.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from skillpilot.bench.hostcli.claude_code import (
    CHIT_CHAT,
    LIBRARY_REQUESTS,
    READ_REFUSED,
    SKILL_MD_PATH,
    claude_env,
    hook_context,
    read_result,
    reads_named_skill,
    run_claude,
    scripted_api,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from claude_code_listing import BENCH, arguments, build_library  # noqa: E402

HERE = Path(__file__).resolve().parent


def skillpilot(*args: str, env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "skillpilot", *args, "--json"], env={**os.environ, **env}, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"skillpilot {' '.join(args)} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def ask(binary: Path, prompt: str, home: Path, cwd: Path, skillpilot_home: Path) -> tuple[dict[str, Any], float]:
    with scripted_api(reads_named_skill) as api:
        started = time.perf_counter()
        run_claude(binary, prompt, cwd, claude_env(home, api, SKILLPILOT_HOME=str(skillpilot_home)))
        seconds = time.perf_counter() - started
        requests = api.model_requests()
    context = hook_context(requests[0])
    named = SKILL_MD_PATH.search(context or "")
    result = read_result(requests)
    read = result is not None and result.get("is_error") is not True
    read = read and READ_REFUSED not in json.dumps(result["content"] if result else "")
    decision = None if context is None else "hard" if "routed this prompt" in context else "soft"
    return {"decision": decision, "named": named.group(1) if named else None, "read": read}, seconds


def measure(binary: Path, size: int, work: Path) -> dict[str, Any]:
    if size == 294:
        library = BENCH / "skills"
    else:
        library = work / "library"
        build_library(library, size)
    home, skillpilot_home, project = work / "home", work / "skillpilot", work / "project"
    for folder in (home / ".claude", skillpilot_home, project):
        folder.mkdir(parents=True)
    config = {"platforms": {"claudeCode": {"libraryRoots": [str(library)]}}}
    (skillpilot_home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {"SKILLPILOT_HOME": str(skillpilot_home), "HOME": str(home)}
    indexed = skillpilot("index", str(library), env=env)
    setup = skillpilot("setup", "claude-code", env=env)
    requests, seconds = [], []
    try:
        for prompt, right in LIBRARY_REQUESTS.items():
            row, took = ask(binary, prompt, home, project, skillpilot_home)
            folder = Path(row["named"]).parent.name if row["named"] else None
            # A fork of the right skill ("semgrep-fork2", "pdftk-server-github-...") counts as a copy.
            row["right"] = folder is not None and any(folder == r or folder.startswith(f"{r}-") for r in right)
            requests.append({"prompt": prompt, **row})
            seconds.append(took)
        chatty = []
        for prompt in CHIT_CHAT:
            row, took = ask(binary, prompt, home, project, skillpilot_home)
            seconds.append(took)
            if row["decision"]:
                chatty.append(prompt)
    finally:
        removed = skillpilot("setup", "claude-code", "--uninstall", env=env)
    return {
        "skills": indexed["total"],
        "granted": setup["granted"],
        "service_started_by_setup": setup["service"]["started"],
        "requests": requests,
        "chit_chat": len(CHIT_CHAT),
        "chit_chat_with_context": chatty,
        "claude_p_median_s": round(statistics.median(seconds), 2),
        "service_stopped_by_uninstall": removed["service"]["stopped"],
    }


def main() -> None:
    args, binary, version = arguments(__doc__, "claude_code_library.json")
    load = os.getloadavg()
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="claude-code-library-") as work:
            rows.append(measure(binary, size, Path(work)))
        row = rows[-1]
        print(
            f"{row['skills']} skills: claude -p median {row['claude_p_median_s']} s; "
            f"chit-chat with a context {len(row['chit_chat_with_context'])}/{row['chit_chat']}"
        )
        for request in row["requests"]:
            named, right, read = request["named"], request["right"], request["read"]
            print(f"  {request['prompt']!r}: {request['decision']} {named} right={right} read={read}")
    result = {"claude_code": version, "load_before": [round(x, 2) for x in load], "rows": rows}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
