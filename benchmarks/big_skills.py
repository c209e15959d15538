"""Memory and time to index skills with very long descriptions (the audit's 8 x 0.9 MB case).

    python benchmarks/big_skills.py [--files 8] [--mb 0.9] [--provider minilm+use-multilingual] [--json FILE]

Writes ``--files`` SKILL.md files whose description is ``--mb`` MB of varied English words (a
real-looking text, so tokenizers and regexes do real work), then runs ``skillpilot index`` on
them in a fresh process and a fresh ``SKILLPILOT_HOME`` and reports its wall time and peak
resident memory (``ru_maxrss`` of the child). The texts sent to the encoders are capped
(``retrieve.dense.MAX_PART_CHARS``), so the number should stay far below 500 MB; a route for a
word found only at the end of one description (keywords only) shows the rest is still indexed for
keywords. Times are wall clock on whatever else the machine runs: compare runs on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "deploy build review commit branch merge image resize crop render chart table schema query index "
    "cluster node service token secret vault policy audit report metric alert trace span log event"
).split()
NEEDLE = "zanzibarquux"


def write_skills(root: Path, files: int, megabytes: float, seed: int = 17) -> None:
    rng = random.Random(seed)
    size = int(megabytes * 1_000_000)
    for n in range(files):
        words: list[str] = []
        length = 0
        while length < size:
            word = rng.choice(WORDS)
            words.append(word)
            length += len(word) + 1
        if n == 0:
            words.append(NEEDLE)
        folder = root / f"big-{n}"
        folder.mkdir(parents=True)
        description = "Use when " + " ".join(words)
        (folder / "SKILL.md").write_text(f"---\nname: big-{n}\ndescription: {description}\n---\nDo it.\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--mb", type=float, default=0.9)
    parser.add_argument("--provider", default="minilm+use-multilingual")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillpilot-big-") as scratch:
        root, home = Path(scratch) / "skills", Path(scratch) / "home"
        write_skills(root, args.files, args.mb)
        env = {**os.environ, "SKILLPILOT_HOME": str(home), "SKILLPILOT_EMBED_PROVIDER": args.provider}
        started = time.perf_counter()
        index = subprocess.run(
            [sys.executable, "-m", "skillpilot", "index", str(root), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if index.returncode != 0:
            raise SystemExit(f"index failed: {index.stderr}")
        # Keywords alone: the needle is one word in 900,000 characters, which only BM25 can see.
        keyword_only = {**env, "SKILLPILOT_ENABLE_SEMANTIC": "false"}
        started = time.perf_counter()
        routed = subprocess.run(
            [sys.executable, "-m", "skillpilot", "route", NEEDLE, "--json"],
            env=keyword_only,
            capture_output=True,
            text=True,
            check=True,
        )
        route_seconds = time.perf_counter() - started
        skill = (json.loads(routed.stdout).get("skill") or {}).get("id")
    result = {
        "files": args.files,
        "mb_each": args.mb,
        "provider": args.provider,
        "index_seconds": round(seconds, 1),
        "peak_rss_mib": round(peak_mib),
        "first_route_seconds": round(route_seconds, 1),
        "needle_routes_to": skill,
    }
    print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
