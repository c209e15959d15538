"""Does the lint score find the skills the router gets wrong?

    python benchmarks/lint_eval.py [--work DIR] [--json results/lint.json]

Indexes ``../shared/bench/skills`` (294 skills) with preconditions and feedback off, as the
benchmark runs, and routes the development queries (``queries/real-dev.jsonl``). A skill is
misrouted by a query that expects it when the route's top skill is none of the query's
expected skills. The 20 most misrouted skills are ranked by misroutes, then by how far down the
route's top 5 the skill was (not in it counts as 6: missed worse), then by key. The claim under
test (issue 10): at least half of them are in the worst quarter of lint scores (the 73 lowest,
ties broken by key). The lint never sees a query.

Also printed: how many of *all* misrouted skills are in the worst quarter, the probability that
a misrouted skill scores lower than one that is not (Mann-Whitney AUC), how often each finding
code occurs in the worst quarter, and the 20 skills with their scores.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from corpus import BENCH

from skillpilot import SkillPilot
from skillpilot.lint import lint

HERE = Path(__file__).resolve().parent
DEV = BENCH / "queries" / "real-dev.jsonl"
TOP_MISROUTED = 20
NOT_IN_TOP = 6


def misrouted(pilot: SkillPilot) -> list[tuple[str, int, int]]:
    """(key, misroutes, summed depth) of every skill a development query missed, worst first."""
    misses: Counter[str] = Counter()
    depth: Counter[str] = Counter()
    for line in DEV.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if not item["expected"]:
            continue
        result = pilot.route(item["query"])
        ranked = ([result.skill.key] if result.skill else []) + [a.key for a in result.alternatives]
        if ranked and ranked[0] in item["expected"]:
            continue
        for key in item["expected"]:
            misses[key] += 1
            depth[key] += ranked.index(key) + 1 if key in ranked else NOT_IN_TOP
    return sorted(((k, misses[k], depth[k]) for k in misses), key=lambda m: (-m[1], -m[2], m[0]))


def _auc(misrouted: Sequence[float], others: Sequence[float]) -> float:
    """P(a misrouted skill scores lower than another skill); ties count half (Mann-Whitney U)."""
    pairs = [(a < b) + 0.5 * (a == b) for a in misrouted for b in others]
    return sum(pairs) / len(pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="keep the index here between runs")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillpilot-lint-") as scratch:
        home = args.work or Path(scratch)
        pilot = SkillPilot(home=home, preconditions=False, feedback_enabled=False)
        pilot.index([BENCH / "skills"], replace=True)
        missed = misrouted(pilot)
        reports = lint(pilot)
        pilot.close()

    by_key = {r.key: r for r in reports}
    order = sorted(reports, key=lambda r: (r.score, r.key))
    worst = {r.key for r in order[: len(order) // 4]}
    top = missed[:TOP_MISROUTED]
    hits = [key for key, _, _ in top if key in worst]
    missed_keys = {key for key, _, _ in missed}
    per_code = Counter(f.code for r in reports if r.key in worst for f in r.findings)
    results: dict[str, Any] = {
        "skills": len(reports),
        "worst_quarter": len(worst),
        "worst_quarter_max_score": order[len(order) // 4 - 1].score,
        "misrouted_skills": len(missed),
        "top_misrouted": [
            {
                "key": k,
                "misroutes": n,
                "depth": d,
                "score": by_key[k].score,
                "worst_quarter": k in worst,
                "findings": [f.code for f in by_key[k].findings],
            }
            for k, n, d in top
        ],
        "top_in_worst_quarter": len(hits),
        "all_misrouted_in_worst_quarter": sum(1 for k, _, _ in missed if k in worst),
        "findings_in_worst_quarter": dict(per_code.most_common()),
        "score_mean": sum(r.score for r in reports) / len(reports),
        "auc": _auc([by_key[k].score for k in missed_keys], [r.score for r in reports if r.key not in missed_keys]),
    }
    print(
        f"{len(reports)} skills; worst quarter: {len(worst)} skills, lint score <= {results['worst_quarter_max_score']}"
    )
    print(
        f"{TOP_MISROUTED} most misrouted in the worst quarter: {len(hits)}/{len(top)} "
        f"(claim: >= {TOP_MISROUTED // 2}; chance: {len(top) / 4:.0f})"
    )
    print(
        f"all {len(missed)} misrouted skills in the worst quarter: "
        f"{results['all_misrouted_in_worst_quarter']}; "
        f"P(a misrouted skill scores lower than another) = {results['auc']:.2f} (chance 0.50)"
    )
    for row in results["top_misrouted"]:
        mark = "*" if row["worst_quarter"] else " "
        print(f" {mark} {row['score']:5.1f}  {row['key']:<60} {', '.join(row['findings'])}")
    print("findings in the worst quarter:", ", ".join(f"{c} {n}" for c, n in per_code.most_common()))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
