"""Multi-skill messages: MetaTool's two-tool queries, and false splits on the development set.

    python benchmarks/plan_eval.py [--work DIR] [--json results/plan.json]

- MetaTool (``metatool/dataset/data/multi_tool_query_golden.json``: 497 queries, 2 gold tools
  each) against all 199 tools of ``plugin_des.json``, indexed as a JSON catalog
  ``[{name, description}]``. A query's plan is ``RouteResult.plan``, or the route itself as one
  step when the message was not split. Reported: the share of queries split into two or more
  steps, and of queries whose plan names both gold tools as step skills (``both found``) or at
  least one. Beside it, the whole-message route: its skill is one of the two tools, and both
  tools are in its top 5 (skill + 4 runners-up) - what routing without a plan offers - and the
  ceiling of planning on clause routes: both tools are the top skill of the whole message or of
  one of its clauses (routed alone), whatever a plan then accepts. Then the
  paper's own setting, where ChatGPT reached 88.28 %: each query against only the 10 candidate
  tools of its prompt (``tmp_dataset/Task2-Subtask4.json``), one small index per query.
- Development set (``queries/real-dev.jsonl`` on the 294 skills of ``skills/``): every message
  there asks for one skill, so every plan is a false split (budget: 5 %). Route latency is
  reported apart for messages with and without a split marker: only the former pay for
  routing their clauses.

Both routers run with preconditions and feedback off, as the benchmark does. ``--work`` keeps
the two indexes between runs (re-indexing unchanged skills costs nothing).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
from pathlib import Path
from typing import Any

from corpus import BENCH

from skillpilot import SkillPilot
from skillpilot.plan import as_plan, split
from skillpilot.text import Query

HERE = Path(__file__).resolve().parent
METATOOL = BENCH / "metatool" / "dataset"
DEV = BENCH / "queries" / "real-dev.jsonl"
TOP = 5
_CANDIDATE = re.compile(r"^\d+\. tool name: (.+?), tool description:", re.MULTILINE)


def _pilot(home: Path, root: Path) -> SkillPilot:
    pilot = SkillPilot(home=home, preconditions=False, feedback_enabled=False)
    pilot.index([root], replace=True)
    return pilot


def metatool(work: Path) -> dict[str, Any]:
    tools: dict[str, str] = json.loads((METATOOL / "plugin_des.json").read_text(encoding="utf-8"))
    catalog = work / "metatool-tools.json"
    catalog.write_text(
        json.dumps([{"name": n, "description": d} for n, d in tools.items()], ensure_ascii=False),
        encoding="utf-8",
    )
    queries = json.loads((METATOOL / "data" / "multi_tool_query_golden.json").read_text(encoding="utf-8"))
    pilot = _pilot(work / "metatool-home", catalog)
    split_count = both = either = whole_top1 = whole_both = reachable = 0
    for item in queries:
        gold = set(item["tool"])
        result = pilot.plan(item["query"])
        steps = {s.skill.id for s in as_plan(result) if s.skill is not None}
        ranked = ([result.skill.id] if result.skill else []) + [a.id for a in result.alternatives]
        reachable += gold <= set(ranked[:1]) | _clause_skills(pilot, item["query"])
        split_count += len(result.plan) >= 2
        both += gold <= steps
        either += bool(gold & steps)
        whole_top1 += bool(ranked[:1] and ranked[0] in gold)
        whole_both += gold <= set(ranked[:TOP])
    pilot.close()
    total = len(queries)
    return {
        "queries": total,
        "tools": len(tools),
        "split": split_count / total,
        "both_found": both / total,
        "either_found": either / total,
        "whole_route_top1_is_gold": whole_top1 / total,
        f"whole_route_both_in_top{TOP}": whole_both / total,
        "clause_routes_both": reachable / total,
    }


def _clause_skills(pilot: SkillPilot, message: str) -> set[str]:
    """The skills the message's clauses route to on their own (none for a one-clause message):
    with the whole route's skill, the most any acceptance rule over clause routes can find."""
    clauses = split(Query.of(message))
    if len(clauses) < 2:
        return set()
    routes = [pilot.route(clause.query, plan=False, log=False) for clause in clauses]
    return {route.skill.id for route in routes if route.skill is not None}


def metatool_candidates(work: Path) -> dict[str, Any]:
    """The paper's own setting for ChatGPT's 88.28 %: each query against the 10 candidate tools
    its prompt lists (``tmp_dataset/Task2-Subtask4.json``, both gold tools among them)."""
    tools: dict[str, str] = json.loads((METATOOL / "plugin_des.json").read_text(encoding="utf-8"))
    items = json.loads((METATOOL / "tmp_dataset" / "Task2-Subtask4.json").read_text(encoding="utf-8"))
    split_count = both = 0
    for number, item in enumerate(items):
        names = _CANDIDATE.findall(item["action_prompt"])
        catalog = work / "candidates" / f"{number:03d}.json"
        catalog.parent.mkdir(parents=True, exist_ok=True)
        rows = [{"name": n, "description": tools[n]} for n in names]
        catalog.write_text(json.dumps(rows), encoding="utf-8")
        pilot = _pilot(work / "candidates" / f"{number:03d}-home", catalog)
        result = pilot.plan(item["query"])
        pilot.close()
        split_count += len(result.plan) >= 2
        both += set(item["tool"]) <= {s.skill.id for s in as_plan(result) if s.skill is not None}
    return {"queries": len(items), "split": split_count / len(items), "both_found": both / len(items)}


def development(work: Path) -> dict[str, Any]:
    queries = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]
    pilot = _pilot(work / "dev-home", BENCH / "skills")
    pilot.route("warm up the models")
    splits: list[dict[str, Any]] = []
    latency: dict[str, list[float]] = {"one clause": [], "several clauses": []}
    for item in queries:
        result = pilot.plan(item["query"])
        kind = "several clauses" if len(split(Query.of(result.query))) >= 2 else "one clause"
        latency[kind].append(result.latency_ms)
        if result.plan:
            splits.append(
                {
                    "id": item["id"],
                    "query": item["query"],
                    "steps": [[s.text, s.skill.id if s.skill else None, s.confidence] for s in result.plan],
                }
            )
    pilot.close()
    return {
        "queries": len(queries),
        "false_splits": len(splits),
        "false_split_rate": len(splits) / len(queries),
        "latency_ms_p50": {k: statistics.median(v) for k, v in latency.items() if v},
        "messages": {k: len(v) for k, v in latency.items()},
        "split": splits,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="keep the indexes here between runs")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillpilot-plan-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        results = {
            "metatool": metatool(work),
            "metatool_10_candidates": metatool_candidates(work),
            "development": development(work),
        }
    mt, dev, ten = results["metatool"], results["development"], results["metatool_10_candidates"]
    print(f"MetaTool multi-tool ({mt['queries']} queries, {mt['tools']} tools):")
    print(f"  split into >= 2 steps       {mt['split']:.1%}")
    print(f"  both tools found (plan)     {mt['both_found']:.1%}")
    print(f"  at least one found (plan)   {mt['either_found']:.1%}")
    print(f"  whole route: top-1 is gold  {mt['whole_route_top1_is_gold']:.1%}")
    print(f"  whole route: both in top-{TOP}  {mt[f'whole_route_both_in_top{TOP}']:.1%}")
    print(f"  ceiling: both are the whole's or a clause's top-1 route  {mt['clause_routes_both']:.1%}")
    print("MetaTool multi-tool, each query against its prompt's 10 candidate tools (the paper's setting):")
    print(f"  split into >= 2 steps       {ten['split']:.1%}")
    print(f"  both tools found (plan)     {ten['both_found']:.1%}   (ChatGPT, paper: 88.28 %, reported)")
    print(f"development set ({dev['queries']} single-skill messages):")
    print(f"  false splits                {dev['false_splits']} ({dev['false_split_rate']:.1%}, budget 5 %)")
    for step in dev["split"]:
        print(f"    {step['id']}: " + " | ".join(f"{s[1]} ({s[2]:.2f})" for s in step["steps"]))
    for kind, p50 in dev["latency_ms_p50"].items():
        print(f"  route p50, {kind:<16} {p50:.1f} ms ({dev['messages'][kind]} messages)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
