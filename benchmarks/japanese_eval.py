"""Japanese development set: the router on ``benchmarks/japanese-dev.jsonl`` with default settings.

    python benchmarks/japanese_eval.py [--json results/japanese.json]

The 294 skills of ``../shared/bench/skills`` are indexed into a temporary home with the
router's defaults, then every message is routed once. Reported: top-1 (the route's skill is an
expected key) and top-3 (the skill or one of the first two alternatives is) on in-scope
messages, top-1 with a hard or soft decision, the decision counts, the share of out-of-scope
messages that pass through, and one line per message. The set was committed before any
Japanese-specific change and is never fitted on: it measures, it does not tune.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from corpus import BENCH as CORPUS

from skillpilot import SkillPilot
from skillpilot.bench.suites import load_catalog, make_suite

HERE = Path(__file__).resolve().parent
SKILLS = CORPUS / "skills"
QUERIES = HERE / "japanese-dev.jsonl"
TOP = 3


def evaluate(home: Path) -> dict[str, Any]:
    suite = make_suite("japanese-dev", load_catalog(SKILLS), [QUERIES])
    # A scratch index: never the configured store (index.store / SKILLPILOT_STORE).
    pilot = SkillPilot(home=home, store="")
    pilot.index([SKILLS], replace=True)
    rows: list[dict[str, Any]] = []
    for q in suite.queries:
        result = pilot.route(q.query, log=False)
        ranked = ([result.skill.key] if result.skill else []) + [a.key for a in result.alternatives]
        rows.append(
            {
                "id": q.id,
                "expected": list(q.expected),
                "got": ranked[0] if ranked else None,
                "top3": ranked[:TOP],
                "decision": result.decision,
                "top1_hit": bool(ranked) and ranked[0] in q.expected,
                "top3_hit": bool(set(ranked[:TOP]) & set(q.expected)),
            }
        )
    pilot.close()
    in_scope = [r for r in rows if r["expected"]]
    out_of_scope = [r for r in rows if not r["expected"]]
    return {
        "queries": len(rows),
        "in_scope": len(in_scope),
        "out_of_scope": len(out_of_scope),
        "top1": sum(r["top1_hit"] for r in in_scope) / len(in_scope),
        f"top{TOP}": sum(r["top3_hit"] for r in in_scope) / len(in_scope),
        # A right skill behind a pass-through reaches the agent only as a hint, so count it apart.
        "top1_and_acted": sum(r["top1_hit"] and r["decision"] != "passthrough" for r in in_scope) / len(in_scope),
        "decisions": dict(Counter(r["decision"] for r in rows)),
        "out_of_scope_passthrough": sum(r["decision"] == "passthrough" for r in out_of_scope) / len(out_of_scope),
        "per_query": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=HERE / "results" / "japanese.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = evaluate(Path(tmp))
    print(
        f"top-1 {report['top1']:.1%}  top-{TOP} {report[f'top{TOP}']:.1%}  "
        f"({report['in_scope']} in scope; right and hard/soft {report['top1_and_acted']:.1%})  "
        f"out-of-scope pass-through {report['out_of_scope_passthrough']:.0%}  "
        f"decisions {report['decisions']}"
    )
    for r in report["per_query"]:
        mark = "ok  " if r["top1_hit"] or (not r["expected"] and r["decision"] == "passthrough") else "MISS"
        print(f"{mark} {r['id']} {r['decision']:<11} got={r['got']} expected={r['expected']}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
