"""What example requests give with the calibration SkillPilot ships (not a cross-validated refit).

    python benchmarks/examples_shipped.py [--home DIR] [--output results/examples_shipped.json]

Indexes the 294 bench skills into a scratch home, routes every real-dev and real-dev2 message
with ``src/skillpilot/calibration.json`` as shipped, then imports
``../shared/bench/intents/skills-llm.json`` (an LLM's recorded ``enrich`` output) and routes them
again. The catalog without examples routes with the shipped plain model (fitted on real-dev and the
conflict suite: real-dev2 is unseen by it), the one with them with the shipped with-examples model
(fitted on both sets with the examples imported: these figures are in-sample, the cross-validated
ones are ``benchmarks/calibrate.py``'s). Per set and run: top-1 (the pick, or the first runner-up
of a pass-through), the share of in-scope messages routed ``hard`` and right, hard precision,
out-of-scope pass-through, and the median route latency (the routes' own ``latency_ms``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from corpus import BENCH

from skillpilot import SkillPilot

REPO = Path(__file__).resolve().parents[1]
SETS = ("real-dev", "real-dev2")


def measure(pilot: SkillPilot, queries: Path) -> dict[str, float | int]:
    rows = [json.loads(line) for line in queries.read_text().splitlines() if line]
    in_scope = [r for r in rows if r["expected"]]
    out_of_scope = [r for r in rows if not r["expected"]]
    right = hard = hard_right = passed = 0
    latencies = []
    for row in rows:
        result = pilot.route(row["query"])
        latencies.append(result.latency_ms)
        keys = ([result.skill.key] if result.skill is not None else []) + [a.key for a in result.alternatives]
        if not row["expected"]:
            passed += result.decision == "passthrough"
            continue
        is_right = bool(keys) and keys[0] in row["expected"]
        right += is_right
        if result.decision == "hard":
            hard += 1
            hard_right += is_right
    return {
        "in_scope": len(in_scope),
        "out_of_scope": len(out_of_scope),
        "top1": round(100 * right / len(in_scope), 1),
        "hard_and_right": round(100 * hard_right / len(in_scope), 1),
        "hard_precision": round(100 * hard_right / max(hard, 1), 1),
        "out_of_scope_passthrough": round(100 * passed / max(len(out_of_scope), 1), 1),
        "route_p50_ms": round(statistics.median(latencies), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, help="scratch home (default: a temporary folder)")
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "results" / "examples_shipped.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillpilot-examples-") as scratch:
        home = args.home or Path(scratch)
        pilot = SkillPilot(home=home, store="", preconditions=False, log_enabled=False)
        pilot.index([BENCH / "skills"], replace=True)
        report: dict[str, dict[str, object]] = {name: {} for name in SETS}
        for name in SETS:
            report[name]["without"] = measure(pilot, BENCH / "queries" / f"{name}.jsonl")
        pilot.import_examples(BENCH / "intents" / "skills-llm.json")
        for name in SETS:
            report[name]["with"] = measure(pilot, BENCH / "queries" / f"{name}.jsonl")
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
