"""Marketplace search and related lists on the development corpus, beside simple baselines.

    python benchmarks/market_eval.py [--json benchmarks/results/market.json]

Indexes ``../shared/bench/skills`` (294 skills, default encoders) in a fresh home, with a
catalog file giving each skill its ``domain`` from ``index.json`` as its category, then:

- search (``Market.search``, top 5) on the 160 queries of ``queries/real-dev.jsonl``: hit@1 and
  hit@5 over the 139 in-scope queries, and how many of the 21 out-of-scope ones get no result;
- related (``Market.related``, top 3) for every skill, judged against ``skills/overlaps.json``
  (a card is good when it shares a hand-made overlap cluster with the page's skill, or the two
  are expected together for one development query: the same task): precision, cards per page,
  and pages with at least one good card. The clusters are not exhaustive, so
  precision is a lower bound. Baselines: the seed's category recommender (same first category,
  first three others) and plain cosine top 3 of the public vectors.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from corpus import BENCH

from skillpilot import SkillPilot
from skillpilot.index.builder import vector_space
from skillpilot.market import Market
from skillpilot.retrieve.dense import EMBEDDING

HERE = Path(__file__).resolve().parent


def _judge(cards: dict[str, list[str]], mates: dict[str, set[str]]) -> dict[str, Any]:
    pages = [k for k in cards if k in mates]
    shown = sum(len(cards[k]) for k in pages)
    good = sum(c in mates[k] for k in pages for c in cards[k])
    return {
        "precision": round(good / shown, 3) if shown else None,
        "cards_per_page": round(shown / len(pages), 2),
        "pages_with_a_good_card": round(sum(any(c in mates[k] for c in cards[k]) for k in pages) / len(pages), 3),
        "cards_per_page_outside_clusters": round(
            sum(len(v) for k, v in cards.items() if k not in mates) / max(1, len(cards) - len(pages)), 2
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    index = json.loads((BENCH / "skills" / "index.json").read_text(encoding="utf-8"))
    domain = {entry["id"]: entry["domain"] for entry in index}
    mates: dict[str, set[str]] = {}
    for cluster in json.loads((BENCH / "skills" / "overlaps.json").read_text(encoding="utf-8")):
        for member in cluster["members"]:
            mates.setdefault(member, set()).update(set(cluster["members"]) - {member})
    lines = (BENCH / "queries" / "real-dev.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [json.loads(line) for line in lines if line.strip()]
    for query in (q for q in queries if len(q["expected"]) > 1):
        for member in query["expected"]:
            mates.setdefault(member, set()).update(set(query["expected"]) - {member})
    with tempfile.TemporaryDirectory() as home:
        catalog = Path(home) / "market.yaml"
        catalog.write_text(yaml.safe_dump({"skills": {k: {"categories": [v]} for k, v in domain.items()}}))
        pilot = SkillPilot(home=Path(home), preconditions=False)
        pilot.index([BENCH / "skills"])
        market = Market(pilot)
        skills = pilot.skills()
        key = {s.id: s.key for s in skills}
        in_scope = [q for q in queries if q["expected"]]
        results = {q["id"]: [key[h.skill.id] for h in market.search(q["query"], top_k=5)] for q in queries}
        search = {
            "hit@1": round(
                sum(bool(results[q["id"]]) and results[q["id"]][0] in q["expected"] for q in in_scope) / len(in_scope),
                3,
            ),
            "hit@5": round(sum(any(r in q["expected"] for r in results[q["id"]]) for q in in_scope) / len(in_scope), 3),
            "out_of_scope_without_results": sum(not results[q["id"]] for q in queries if not q["expected"]),
            "out_of_scope_queries": len(queries) - len(in_scope),
        }
        ours = {s.key: [key[h.skill.id] for h in market.related(s.id)] for s in skills}
        by_category = {
            s.key: [o.key for o in skills if o.key != s.key and domain[o.key] == domain[s.key]][:3] for s in skills
        }
        spaces = [pilot.store.vectors(vector_space(e, EMBEDDING)) for e in pilot.encoders]
        cosine = np.mean(
            [heads @ heads.T for heads in (np.stack([v[(s.skill.root, s.key)][0] for s in skills]) for v in spaces)],
            axis=0,
        )
        np.fill_diagonal(cosine, -np.inf)
        by_cosine = {s.key: [skills[j].key for j in np.argsort(-cosine[i])[:3]] for i, s in enumerate(skills)}
    report = {
        "search": search,
        "related": {
            "skillpilot related": _judge(ours, mates),
            "same category (first 3)": _judge(by_category, mates),
            "cosine top 3": _judge(by_cosine, mates),
        },
    }
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
