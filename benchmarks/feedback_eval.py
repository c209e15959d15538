"""Does feedback generalise? Corrections on half the misrouted development queries, measured on
paraphrases of them, on paraphrases of the other half, and on everything else.

    python benchmarks/feedback_eval.py [--seed 0] [--json results/feedback.json]

Protocol (two folds, seeded): index the 294-skill development corpus in a fresh home, route the
in-scope development queries, split the misrouted ones in two halves, record a correction
(wrong = routed skill, right = first expected skill) for every query of one half, then route
again. Reported per fold and summed:

- ``corrected``: the corrected messages themselves (the exact sentence);
- ``paraphrases, corrected half``: ``feedback_paraphrases.jsonl`` (our own rewordings, never
  used to fit anything) of the corrected messages: does the lesson generalise?
- ``paraphrases, other half``: rewordings of misrouted messages nobody corrected: a control;
- ``everything else``: every other development query (in scope and out of scope): hit@1 and
  correct pass-through, before and after, and how many decisions changed at all; the subset
  whose expected skill shares a conflict group with a corrected skill is counted separately.

Per set: top-1 (the routed skill is right; out of scope: pass-through), top-3 (the right skill
is among the three a soft route offers), hard routes, before > after, and how many outcomes
changed. One correction per message may not make a hard route (``skillpilot.feedback``'s bounds).

It also prints the calibration of ``feedback.MATCH_FROM``: the highest similarity between two
development queries with disjoint expected skills.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus import BENCH

from skillpilot import SkillPilot
from skillpilot.feedback import MATCH_FROM

HERE = Path(__file__).resolve().parent
DEV = BENCH / "queries" / "real-dev.jsonl"
PARAPHRASES = HERE / "feedback_paraphrases.jsonl"
COLUMNS = (
    "top1_before",
    "top3_before",
    "hard_before",
    "top1_after",
    "top3_after",
    "hard_after",
    "n",
    "changed",
)


@dataclass(frozen=True)
class Outcome:
    key: str | None
    decision: str
    shortlist: tuple[str, ...] = ()

    def right(self, expected: Sequence[str]) -> bool:
        if not expected:
            return self.decision == "passthrough"
        return self.key in expected

    def offered(self, expected: Sequence[str]) -> bool:
        """The right skill among the three a soft route offers (or the pass-through, when none fits)."""
        if not expected:
            return self.decision == "passthrough"
        return bool(set(self.shortlist) & set(expected))


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _route(pilot: SkillPilot, queries: Sequence[dict[str, Any]]) -> dict[str, Outcome]:
    outcomes = {}
    for query in queries:
        result = pilot.route(query["query"])
        keys = ((result.skill.key,) if result.skill else ()) + tuple(a.key for a in result.alternatives[:2])
        outcomes[query["id"]] = Outcome(result.skill.key if result.skill else None, result.decision, keys)
    return outcomes


def _counts(queries: Sequence[dict[str, Any]], outcomes: dict[str, Outcome]) -> tuple[int, int, int]:
    """(right at top-1, right among the top 3, hard routes)."""
    return (
        sum(outcomes[q["id"]].right(q["expected"]) for q in queries),
        sum(outcomes[q["id"]].offered(q["expected"]) for q in queries),
        sum(outcomes[q["id"]].decision == "hard" for q in queries),
    )


def unrelated_similarity(pilot: SkillPilot, dev: Sequence[dict[str, Any]]) -> float:
    """The highest mean cosine between two development queries with disjoint expected skills."""
    in_scope = [q for q in dev if q["expected"]]
    encoders = pilot.encoders
    matrices = [e.encode_batch([q["query"] for q in in_scope]) for e in encoders]
    similarity = sum(m @ m.T for m in matrices) / len(matrices)
    best = -1.0
    for i, a in enumerate(in_scope):
        for j in range(i + 1, len(in_scope)):
            if not set(a["expected"]) & set(in_scope[j]["expected"]):
                best = max(best, float(similarity[i, j]))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()

    dev = _read(DEV)
    paraphrases = _read(PARAPHRASES)
    with tempfile.TemporaryDirectory(prefix="skillpilot-feedback-") as home:
        pilot = SkillPilot(home=Path(home), preconditions=False, feedback_enabled=True)
        pilot.index([BENCH / "skills"], replace=True)
        before = _route(pilot, dev)
        before_para = _route(pilot, paraphrases)
        misrouted = [q for q in dev if q["expected"] and not before[q["id"]].right(q["expected"])]
        random.Random(args.seed).shuffle(misrouted)
        halves = [misrouted[: len(misrouted) // 2], misrouted[len(misrouted) // 2 :]]
        group_of = {m: g.id for g in pilot.conflict_groups() for m in g.members}

        rows: dict[str, list[int]] = {}

        def add(
            name: str, queries: Sequence[dict[str, Any]], then: dict[str, Outcome], now: dict[str, Outcome]
        ) -> None:
            changed = sum(then[q["id"]] != now[q["id"]] for q in queries)
            row = rows.setdefault(name, [0] * len(COLUMNS))
            for n, v in enumerate((*_counts(queries, then), *_counts(queries, now), len(queries), changed)):
                row[n] += v

        for taught, untaught in (halves, halves[::-1]):
            pilot.reset_feedback()
            for query in taught:
                routed = before[query["id"]].key
                assert routed is not None
                pilot.feedback(
                    "corrected",
                    query["query"],
                    wrong=pilot.get(routed).id,
                    right=pilot.get(query["expected"][0]).id,
                )
            taught_ids = {q["id"] for q in taught}
            touched = {pilot.get(k).id for q in taught for k in (*q["expected"][:1], before[q["id"]].key)}
            touched_groups = {group_of[s] for s in touched if s in group_of}
            after = _route(pilot, dev)
            after_para = _route(pilot, paraphrases)
            rest = [q for q in dev if q["id"] not in taught_ids]
            same_group = [
                q for q in rest if any(group_of.get(pilot.get(k).id) in touched_groups for k in q["expected"])
            ]
            add("corrected messages", taught, before, after)
            add(
                "paraphrases, corrected half",
                [p for p in paraphrases if p["source"] in taught_ids],
                before_para,
                after_para,
            )
            add(
                "paraphrases, other half",
                [p for p in paraphrases if p["source"] in {q["id"] for q in untaught}],
                before_para,
                after_para,
            )
            add("everything else", rest, before, after)
            add("  of which in a corrected skill's conflict group", same_group, before, after)
        pilot.reset_feedback()
        threshold = unrelated_similarity(pilot, dev)
        pilot.close()

    covered = sum(1 for q in misrouted if any(p["source"] == q["id"] for p in paraphrases))
    print(
        f"misrouted in-scope development queries: {len(misrouted)} ({covered} with paraphrases); "
        "two folds, corrections for one half each"
    )
    print(f"{'set':<50} {'top-1':>13} {'top-3':>13} {'hard':>9} {'n':>5} {'changed':>8}")
    for name, row in rows.items():
        cell = dict(zip(COLUMNS, row, strict=True))
        total = max(1, cell["n"])
        print(
            f"{name:<50} {cell['top1_before'] / total:>6.3f}>{cell['top1_after'] / total:.3f}"
            f" {cell['top3_before'] / total:>6.3f}>{cell['top3_after'] / total:.3f}"
            f" {cell['hard_before']:>4}>{cell['hard_after']:<4} {cell['n']:>5} {cell['changed']:>8}"
        )
    print(
        f"highest similarity of two unrelated development queries: {threshold:.3f} (feedback.MATCH_FROM = {MATCH_FROM})"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "seed": args.seed,
                    "misrouted": len(misrouted),
                    "rows": {k: dict(zip(COLUMNS, v, strict=True)) for k, v in rows.items()},
                    "unrelated_similarity": threshold,
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
