"""Conflict groups against the hand-made overlap clusters of the development corpus.

    python benchmarks/conflict_eval.py [--thresholds 0.45 0.5 0.55 0.6 0.65] [--json FILE]

Indexes ``../shared/bench/skills`` (294 skills) in a fresh home and, for each similarity
threshold, compares ``SkillPilot.conflict_groups()`` with ``skills/overlaps.json`` (71 clusters
meaning "one message could trigger several members"; a reference, not the truth):

- pair precision / recall: the member pairs our groups imply vs the pairs inside a cluster;
- supported groups: our groups holding at least one reference pair;
- clusters found: reference clusters with at least one pair inside one of our groups.

It also lists the groups found on ``../shared/bench/conflicts`` (5 deliberate conflict sets).
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
from pathlib import Path

from corpus import BENCH

from skillpilot import SkillPilot

HERE = Path(__file__).resolve().parent

Pair = tuple[str, str]


def _pairs(members: list[str]) -> set[Pair]:
    return {(a, b) for a, b in itertools.combinations(sorted(members), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.45, 0.5, 0.55, 0.6, 0.65, 0.85])
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()

    clusters = json.loads((BENCH / "skills" / "overlaps.json").read_text(encoding="utf-8"))
    reference = set().union(*(_pairs(c["members"]) for c in clusters))
    results = []
    with tempfile.TemporaryDirectory(prefix="skillpilot-conflicts-") as home:
        SkillPilot(home=Path(home)).index([BENCH / "skills"], replace=True)
        for threshold in args.thresholds:
            pilot = SkillPilot(home=Path(home), conflict_threshold=threshold)
            skills = pilot.skills()
            groups = [[skills[i].key for i in g.indices] for g in pilot.conflict_groups()]
            found = set().union(*(_pairs(g) for g in groups)) if groups else set()
            hits = found & reference
            results.append(
                {
                    "threshold": threshold,
                    "groups": len(groups),
                    "largest": max(map(len, groups), default=0),
                    "pair_precision": len(hits) / max(1, len(found)),
                    "pair_recall": len(hits) / len(reference),
                    "supported_groups": sum(1 for g in groups if _pairs(g) & reference),
                    "clusters_found": sum(1 for c in clusters if _pairs(c["members"]) & found),
                }
            )
            pilot.close()
    with tempfile.TemporaryDirectory(prefix="skillpilot-conflicts-") as home:
        pilot = SkillPilot(home=Path(home))
        pilot.index([BENCH / "conflicts"], replace=True)
        suite_groups = [list(g.members) for g in pilot.conflict_groups()]
        pilot.close()

    print(f"reference: {len(clusters)} clusters, {len(reference)} pairs")
    print(
        f"{'threshold':>9} {'groups':>6} {'largest':>7} {'pair P':>7} {'pair R':>7} "
        f"{'supported':>9} {'clusters found':>14}"
    )
    for r in results:
        print(
            f"{r['threshold']:>9.2f} {r['groups']:>6} {r['largest']:>7} {r['pair_precision']:>7.2f} "
            f"{r['pair_recall']:>7.2f} {r['supported_groups']:>9} {r['clusters_found']:>11}/{len(clusters)}"
        )
    print("conflicts suite groups (default threshold):", "; ".join(" · ".join(g) for g in suite_groups))
    if args.json:
        args.json.write_text(json.dumps({"results": results, "conflicts_suite": suite_groups}, indent=2) + "\n")


if __name__ == "__main__":
    main()
