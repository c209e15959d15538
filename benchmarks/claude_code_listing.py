"""What the real Claude Code CLI sends the model with a large skill library, and what library mode saves.

    python benchmarks/claude_code_listing.py [--sizes 294 1000] [--json benchmarks/results/claude_code_listing.json]

For each library size, two runs of ``claude -p PROMPT`` (npm ``@anthropic-ai/claude-code``, offline
against the scripted Messages API of ``skillpilot.bench.hostcli.claude_code``) in a throwaway HOME:

- ``skills dir``: every skill in ``~/.claude/skills`` (Claude Code lists them itself, no SkillPilot);
- ``library``: the same skills in a folder Claude Code does not read, indexed by SkillPilot with
  ``platforms.claudeCode.libraryRoots`` set, the SkillPilot hook in settings.json and a service
  running; the hook hands the model the routed skill's description and SKILL.md path.

It reports the first model request's size, the skill listing's size, how many of the library's
skills Claude Code listed and how many of those kept their description, and the hook context.
294 skills are ``../shared/bench/skills``; 1,000 add the MetaTool tool descriptions as SKILL.md
folders and then forks of the bench skills (same text, new name) until the count is reached. All
of it is written under a temporary folder at run time, never into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from corpus import BENCH

from skillpilot import SkillPilot
from skillpilot.bench.hostcli.claude_code import (
    claude_env,
    find_claude_binary,
    hook_context,
    listing_chars,
    run_claude,
    scripted_api,
    skill_listing,
    text_reply,
)
from skillpilot.serve import read_serve_file
from skillpilot.serve.client import route_via_service

HERE = Path(__file__).resolve().parent
PROMPT = "fill in the fields of this PDF application form with my details"


def _write_skill(folder: Path, name: str, description: str, body: str) -> None:
    folder.mkdir(parents=True)
    head = yaml.safe_dump({"name": name, "description": description}, allow_unicode=True, width=10_000)
    (folder / "SKILL.md").write_text(f"---\n{head}---\n{body}", encoding="utf-8")


def build_library(target: Path, size: int) -> None:
    """``size`` skill folders directly under ``target`` (one level, as ``~/.claude/skills`` wants):
    the bench skills as they are, then MetaTool tools, then forks of the bench skills."""
    index = json.loads((BENCH / "skills" / "index.json").read_text(encoding="utf-8"))
    names: set[str] = set()
    bench: list[tuple[str, str, str]] = []
    for entry in index[:size]:
        folder = entry["dir"] if entry["dir"] not in names else f"{entry['dir']}-{entry['source']}"
        shutil.copytree(BENCH / "skills" / entry["source"] / entry["dir"], target / folder)
        names.update((folder, entry["name"]))
        body = (target / folder / "SKILL.md").read_text(encoding="utf-8").split("---", 2)[-1]
        bench.append((folder, entry["description"], body))
    tools: dict[str, str] = json.loads((BENCH / "metatool" / "dataset" / "plugin_des.json").read_text("utf-8"))
    extra = [(n.lower(), d, f"\n# {n}\n\nUse the {n} API: {d}\n") for n, d in tools.items() if n.lower() not in names]
    fork = 1
    while len(bench) + len(extra) < size:
        extra.extend((f"{name}-fork{fork}", description, body) for name, description, body in bench)
        fork += 1
    for name, description, body in extra[: max(0, size - len(bench))]:
        _write_skill(target / name, name, description, body)


def first_request(binary: Path, home: Path, cwd: Path, **env: str) -> Any:
    with scripted_api(lambda _request: text_reply("Done.")) as api:
        run_claude(binary, PROMPT, cwd, claude_env(home, api, **env))
        return api.model_requests()[0]


@contextmanager
def resident_service(env: dict[str, str]) -> Iterator[None]:
    """``skillpilot serve`` as a user runs it, until it has written serve.json."""
    home = Path(env["SKILLPILOT_HOME"])
    command = [sys.executable, "-m", "skillpilot", "serve", "--port", "0"]
    service = subprocess.Popen(command, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while read_serve_file(home) is None:
            if service.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(
                    f"skillpilot serve did not start: {service.stderr.read().decode() if service.stderr else ''}"
                )
            time.sleep(0.2)
        info = read_serve_file(home)
        assert info is not None
        # A service a user keeps running is warm; the hook gives up on one slower than 2 s.
        route_via_service(info, "warm up", timeout=120)
        yield
    finally:
        service.terminate()
        service.wait(timeout=30)


def measure(binary: Path, size: int, work: Path) -> dict[str, Any]:
    library = work / "library"
    build_library(library, size)
    count = sum(1 for _ in library.iterdir())

    skills_home = work / "skills-home"
    (skills_home / ".claude").mkdir(parents=True)
    shutil.copytree(library, skills_home / ".claude" / "skills")
    listed_request = first_request(binary, skills_home, work)

    library_home, skillpilot_home = work / "library-home", work / "skillpilot"
    (library_home / ".claude").mkdir(parents=True)
    skillpilot_home.mkdir()
    config = {"platforms": {"claudeCode": {"libraryRoots": [str(library)]}}}
    (skillpilot_home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    pilot = SkillPilot(home=skillpilot_home, preconditions=False)
    pilot.index([library])
    pilot.close()
    env = {
        "SKILLPILOT_HOME": str(skillpilot_home),
        "SKILLPILOT_PRECONDITIONS": "off",
        "CLAUDE_CONFIG_DIR": str(library_home / ".claude"),
    }
    setup = [sys.executable, "-m", "skillpilot", "setup", "claude-code", "--json", "--no-start"]
    subprocess.run(setup, env={**os.environ, **env}, check=True, capture_output=True, timeout=600)
    with resident_service(env):
        library_request = first_request(binary, library_home, work, SKILLPILOT_HOME=str(skillpilot_home))
        info = read_serve_file(Path(env["SKILLPILOT_HOME"]))
        assert info is not None
        # What the hook was told, to explain an empty context (a pass-through) in the table.
        decision = route_via_service(info, PROMPT, timeout=30)
    context = (hook_context(library_request) or "").split("\n\n")[0]
    # In library mode Claude Code reads no skill folder of ours: its listing is its built-ins.
    builtin = skill_listing(library_request)
    ours = {name: description for name, description in skill_listing(listed_request).items() if name not in builtin}
    request_chars = len(json.dumps(listed_request.body, ensure_ascii=False))
    library_chars = len(json.dumps(library_request.body, ensure_ascii=False))
    return {
        "skills": count,
        "builtin_skills": len(builtin),
        "skills_dir": {
            "request_chars": request_chars,
            "listing_chars": listing_chars(listed_request),
            "skills_listed": len(ours),
            "skills_with_description": sum(1 for d in ours.values() if d),
        },
        "library": {
            "request_chars": library_chars,
            "listing_chars": listing_chars(library_request),
            "skills_listed": 0,
            "hook_context_chars": len(context),
            "hook_context": context,
            "decision": decision.decision,
            "top_skill": decision.skill.name if decision.skill else None,
            "confidence": round(decision.confidence, 3),
        },
        "request_chars_saved": request_chars - library_chars,
    }


def installed_claude() -> tuple[Path, str]:
    """The real Claude Code binary and its version; exits when it is not installed."""
    binary = find_claude_binary()
    if binary is None:
        raise SystemExit(
            "the Claude Code CLI is not installed: npm install --prefix /opt/claude-code @anthropic-ai/claude-code"
        )
    return binary, subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()


def arguments(doc: str, results: str) -> tuple[argparse.Namespace, Path, str]:
    """``--sizes`` and ``--json`` (default ``benchmarks/results/RESULTS``), the Claude Code binary
    and its version; exits when the CLI is not installed."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[294, 1000])
    parser.add_argument("--json", type=Path, default=HERE / "results" / results)
    args = parser.parse_args()
    return (args, *installed_claude())


def main() -> None:
    args, binary, version = arguments(__doc__, "claude_code_listing.json")
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="claude-code-listing-") as work:
            rows.append(measure(binary, size, Path(work)))
    header = (
        f"{'skills':>7} {'mode':<10} {'request chars':>14} {'listing chars':>14} {'listed':>7} {'w/ desc':>8}"
        f" {'hook ctx':>9} {'saved':>8}"
    )
    print(f"Claude Code {version}, prompt {PROMPT!r}; {rows[0]['builtin_skills']} built-in skills listed in both modes")
    print(header)
    for row in rows:
        d, lib = row["skills_dir"], row["library"]
        print(
            f"{row['skills']:>7} {'skills dir':<10} {d['request_chars']:>14,} {d['listing_chars']:>14,} "
            f"{d['skills_listed']:>7} {d['skills_with_description']:>8} {'-':>9} {'-':>8}"
        )
        print(
            f"{row['skills']:>7} {'library':<10} {lib['request_chars']:>14,} {lib['listing_chars']:>14,} "
            f"{lib['skills_listed']:>7} {'-':>8} {lib['hook_context_chars']:>9,} {row['request_chars_saved']:>8,}"
            f"  {lib['decision']} {lib['top_skill']} ({lib['confidence']:.2f})"
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"claude_code": version, "prompt": PROMPT, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
