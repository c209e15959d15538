"""Start-up to first route on an OntoSkills tree, with and without precomputed intents.json vectors.

    python benchmarks/ontoskills_startup.py [--runs 3] [--provider minilm] [--json FILE]

Compiles ``../shared/bench/skills`` (294 SKILL.md skills) with ``compile_skills`` into a temporary
OntoSkills tree (skills without intents are skipped, as ``skillpilot compile`` does), then, in a
fresh Python process per run and a fresh ``SKILLPILOT_HOME``, times (wall clock, medians; and the
process's CPU time, which a busy machine inflates less): import, ``SkillPilot.index`` of the
tree, and the first ``route``, for

- ``precomputed``: the tree as compiled (every skill ships its MiniLM ``intents.json``);
- ``embedded``: the same tree without any ``intents.json`` (every skill is embedded at index time).

Also reports hit@1 on the in-scope queries of ``queries/real-dev.jsonl`` for both trees and for
the original SKILL.md tree (same encoder), since precomputed vectors embed intents only.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import BENCH

from skillpilot import SkillPilot
from skillpilot.config import load_settings
from skillpilot.encoders import get_encoder
from skillpilot.ontoskills.compile import compile_skills

HERE = Path(__file__).resolve().parent
QUERY = "review my pull request for bugs"

_RUN = """
import json, sys, time
started = time.perf_counter()
from skillpilot import SkillPilot
imported = time.perf_counter()
pilot = SkillPilot(home=sys.argv[1], embed_provider=sys.argv[3], preconditions=False)
report = pilot.index([sys.argv[2]])
indexed = time.perf_counter()
result = pilot.route(sys.argv[4])
routed = time.perf_counter()
print(json.dumps({"import_s": imported - started, "index_s": indexed - imported,
                  "first_route_s": routed - indexed, "total_s": routed - started,
                  "cpu_s": time.process_time(),
                  "skills": report.total, "routed_to": result.skill.key if result.skill else None}))
"""


def _timed_run(tree: Path, provider: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        proc = subprocess.run(
            [sys.executable, "-c", _RUN, home, str(tree), provider, QUERY],
            capture_output=True,
            text=True,
            check=True,
        )
    data: dict[str, float] = json.loads(proc.stdout)
    return data


def _hit_at_1(tree: Path, provider: str) -> float:
    lines = (BENCH / "queries" / "real-dev.jsonl").read_text("utf-8").splitlines()
    queries = [json.loads(line) for line in lines if line.strip()]
    in_scope = [q for q in queries if q["expected"]]
    with tempfile.TemporaryDirectory() as home:
        pilot = SkillPilot(home=home, embed_provider=provider, preconditions=False)
        pilot.index([tree])
        hits = 0
        for query in in_scope:
            result = pilot.route(query["query"])
            hits += bool(result.skill and result.skill.key in query["expected"])
        pilot.close()
    return round(100 * hits / len(in_scope), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--provider", default="minilm", help="embed.provider for routing")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        compiled = Path(work) / "precomputed"
        started = time.perf_counter()
        encoder = get_encoder("minilm", load_settings(Path(work) / "home"))
        report = compile_skills([BENCH / "skills"], compiled, encoder=encoder)
        compile_s = time.perf_counter() - started
        embedded = Path(work) / "embedded"
        shutil.copytree(compiled, embedded)
        for file in embedded.rglob("intents.json"):
            file.unlink()
        results: dict[str, object] = {
            "corpus": "shared/bench/skills",
            "compiled_skills": len(report.compiled),
            "skipped_without_intents": sum("has no intents" in w for w in report.warnings),
            "compile_s": round(compile_s, 2),
            "provider": args.provider,
            "query": QUERY,
        }
        for name, tree in (("precomputed", compiled), ("embedded", embedded)):
            runs = [_timed_run(tree, args.provider) for _ in range(args.runs)]
            results[name] = {
                key: round(statistics.median(r[key] for r in runs), 3)
                for key in ("import_s", "index_s", "first_route_s", "total_s", "cpu_s")
            } | {"skills": runs[0]["skills"], "routed_to": runs[0]["routed_to"]}
        results["hit_at_1"] = {
            "skill_md_original": _hit_at_1(BENCH / "skills", args.provider),
            "compiled_embedded": _hit_at_1(embedded, args.provider),
            "compiled_precomputed": _hit_at_1(compiled, args.provider),
        }
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
