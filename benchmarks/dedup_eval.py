"""Near-duplicate detection against the development corpus's OVERLAPS.md, with two baselines.

    python benchmarks/dedup_eval.py [--json benchmarks/results/dedup.json]

Indexes ``../shared/bench/skills`` (294 skills, keyword only: dedup needs no model) and runs
``Market.dedup()``. The reference, from ``skills/OVERLAPS.md``:

- drifted copies (the positives): "version drift of one skill (composio copies of Anthropic
  mcp-builder / skill-creator / slack-gif-creator / web-artifacts-builder)";
- different skills that share a name (must stay apart): "two different skills both named" ...
  and the three brand-guidelines ("same name, three different brands/purposes");
- parallel near-duplicates it names (connect vs connect-apps, ...): not copies of one skill,
  but not wrong to fold either, so lenient precision counts them as acceptable.

A pair is "found" when both skills are in one cluster. Reported: recall and precision (strict:
only drifted copies count; lenient: the named near-duplicates count too), same-name skills
wrongly joined, and every found pair the file does not list, with its evidence. The five
composio files byte-identical to Anthropic's are not in the corpus (OVERLAPS.md: "Not included
on purpose"); exact copies are covered by ``tests/test_market.py``.

Baselines, on the same instructions: "same name" (every pair of equal names) and classic
near-duplicate detection, 8-word-shingle Jaccard resemblance >= 0.5 (Broder 1997).
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from corpus import BENCH as CORPUS

from skillpilot import SkillPilot
from skillpilot.market import Market
from skillpilot.market.dedup import shingles

HERE = Path(__file__).resolve().parent
BENCH = CORPUS / "skills"

Pair = tuple[str, str]
ANTHROPIC, COMPOSIO = "anthropics-skills/", "composiohq-awesome-claude-skills/"
COPILOT = "github-awesome-copilot/"
SENTRY, ALIREZA, CLAWDIS = "getsentry-skills/", "alirezarezvani-claude-skills/", "steipete-clawdis/"
DRIFTED: list[Pair] = [
    (ANTHROPIC + "mcp-builder", COMPOSIO + "mcp-builder"),
    (ANTHROPIC + "skill-creator", COMPOSIO + "skill-creator"),
    (ANTHROPIC + "slack-gif-creator", COMPOSIO + "slack-gif-creator"),
    (ANTHROPIC + "web-artifacts-builder", COMPOSIO + "artifacts-builder"),
]
SAME_NAME_DIFFERENT: list[list[str]] = [
    [ANTHROPIC + "brand-guidelines", SENTRY + "brand-guidelines", ALIREZA + "brand-guidelines"],
    [ANTHROPIC + "webapp-testing", COPILOT + "webapp-testing"],
    [SENTRY + "security-review", COPILOT + "security-review"],
    [COPILOT + "codeql", "trailofbits-skills/codeql"],
    [SENTRY + "prompt-optimizer", COPILOT + "prompt-optimizer"],
    [COMPOSIO + "changelog-generator", ALIREZA + "changelog-generator"],
    [COPILOT + "generate-image", "k-dense-scientific-skills/generate-image"],
]
NAMED_NEAR_DUPLICATES: list[Pair] = [
    (CLAWDIS + "openai-whisper", CLAWDIS + "openai-whisper-api"),
    (CLAWDIS + "food-order", CLAWDIS + "ordercli"),
    (COPILOT + "drawio", COPILOT + "draw-io-diagram-generator"),
    (COMPOSIO + "connect", COMPOSIO + "connect-apps"),
    (ALIREZA + "database-designer", ALIREZA + "database-schema-designer"),
    (COPILOT + "aws-cost-optimize", COPILOT + "az-cost-optimize"),
    (COMPOSIO + "quickbooks-automation", COMPOSIO + "xero-automation"),
    (COMPOSIO + "toggl-automation", COMPOSIO + "clockify-automation"),
    (COMPOSIO + "ahrefs-automation", COMPOSIO + "semrush-automation"),
    ("vercel-labs-agent-skills/deploy-to-vercel", "vercel-labs-agent-skills/vercel-cli-with-tokens"),
    (CLAWDIS + "nano-banana-pro", COPILOT + "nano-banana-pro-openrouter"),
]
JACCARD = 0.5


def _pair(a: str, b: str) -> Pair:
    return (a, b) if a <= b else (b, a)


def _pairs_of(groups: Iterable[Iterable[str]]) -> set[Pair]:
    return {_pair(a, b) for group in groups for a, b in itertools.combinations(sorted(set(group)), 2)}


def score(found: set[Pair]) -> dict[str, Any]:
    drifted = {_pair(*p) for p in DRIFTED}
    acceptable = drifted | {_pair(*p) for p in NAMED_NEAR_DUPLICATES}
    hit = found & drifted
    return {
        "pairs_found": len(found),
        "recall": round(len(hit) / len(drifted), 3),
        "precision_strict": round(len(hit) / len(found), 3) if found else None,
        "precision_lenient": round(len(found & acceptable) / len(found), 3) if found else None,
        "same_name_wrongly_joined": sorted(found & _pairs_of(SAME_NAME_DIFFERENT)),
        "missed": sorted(drifted - found),
        "unlisted": sorted(found - acceptable),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        pilot = SkillPilot(home=Path(home), enable_semantic=False)
        pilot.index([BENCH])
        key_of = {s.id: s.key for s in pilot.skills()}
        clusters = Market(pilot).dedup()
        skills = pilot.skills()
    ours = _pairs_of([[key_of[i] for i in c.ids] for c in clusters])
    evidence = {_pair(key_of[p.a], key_of[p.b]): f"{p.kind}: {p.evidence}" for c in clusters for p in c.pairs}
    by_name: dict[str, list[str]] = defaultdict(list)
    for skill in skills:
        by_name[skill.name].append(skill.key)
    same_name = _pairs_of(by_name.values())
    sets = {s.key: shingles(s.skill.body) for s in skills}
    jaccard = {
        _pair(a, b)
        for a, b in itertools.combinations(sets, 2)
        if sets[a] and sets[b] and len(sets[a] & sets[b]) / len(sets[a] | sets[b]) >= JACCARD
    }
    methods = {
        "skillpilot dedup": score(ours),
        "same name": score(same_name),
        f"shingle Jaccard >= {JACCARD}": score(jaccard),
    }
    unlisted = {
        f"{a} ~ {b}": evidence.get((a, b), "joined through its cluster")
        for a, b in methods["skillpilot dedup"]["unlisted"]
    }
    print(f"{'method':<28} {'pairs':>5} {'recall':>7} {'P strict':>9} {'P lenient':>10} {'namesakes joined':>17}")
    for name, row in methods.items():
        print(
            f"{name:<28} {row['pairs_found']:>5} {row['recall']:>7} {row['precision_strict']!s:>9} "
            f"{row['precision_lenient']!s:>10} {len(row['same_name_wrongly_joined']):>17}"
        )
    for pair, why in unlisted.items():
        print(f"  not in OVERLAPS.md: {pair}: {why}")
    results = {
        "corpus": str(BENCH),
        "skills": len(skills),
        "methods": methods,
        "clusters": [{"ids": [key_of[i] for i in c.ids], "kind": c.kind, "similarity": c.similarity} for c in clusters],
        "unlisted_evidence": unlisted,
    }
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
