"""Redirects skill authors write, measured on the fixture corpus ``tests/fixtures/redirects``.

    python benchmarks/redirect_eval.py [--json results/redirects.json]

The bench corpus's redirects name skills it does not hold (and no development query is about the
cases of those it does), so this measures on eight skills written after real ones: a browser
automation skill "NOT for testing — use playwright-pro", an image generator sending "flowcharts,
circuits, pathways, and technical diagrams" to scientific-schematics, and their neighbours. The
corpus is indexed as written and as a copy with those sentences removed (``REDIRECT_SENTENCES``),
and every message of ``redirect-messages.jsonl`` is routed in both: eight about a redirected case
(the named skill is right), eight about a redirecting skill's own case (it stays right). Reported
per kind: top-1 and hard decisions, with and without the redirects, and one line per message.
The messages were written with the corpus and are not fitted on.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from skillpilot import SkillPilot

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "fixtures" / "redirects"
MESSAGES = HERE / "redirect-messages.jsonl"
REDIRECT_SENTENCES = {
    "browser-automation": " NOT for testing — use playwright-pro for that.",
    "generate-image": " For flowcharts, circuits, pathways, and technical diagrams, use the scientific-schematics skill"
    " instead.",
}


def _without_redirects(work: Path) -> Path:
    plain = work / "without"
    shutil.copytree(FIXTURES, plain)
    for folder, sentence in REDIRECT_SENTENCES.items():
        path = plain / folder / "SKILL.md"
        text = path.read_text(encoding="utf-8")
        if sentence not in text:
            raise SystemExit(f"{path}: the redirect sentence {sentence!r} is gone; update REDIRECT_SENTENCES")
        path.write_text(text.replace(sentence, ""), encoding="utf-8")
    return plain


def evaluate(work: Path) -> dict[str, Any]:
    messages = [json.loads(line) for line in MESSAGES.read_text(encoding="utf-8").splitlines() if line.strip()]
    routes: dict[str, list[tuple[str | None, str]]] = {}
    for variant, root in (("with", FIXTURES), ("without", _without_redirects(work))):
        # A scratch index: never the configured store.
        pilot = SkillPilot(home=work / f"home-{variant}", store="", log_enabled=False)
        pilot.index([root], replace=True)
        routes[variant] = []
        for message in messages:
            result = pilot.route(message["query"])
            routes[variant].append((result.skill.id if result.skill else None, result.decision))
    summary: dict[str, Any] = {}
    for kind in ("redirected", "own"):
        chosen = [i for i, m in enumerate(messages) if m["kind"] == kind]
        summary[kind] = {
            variant: {
                "top1": sum(routes[variant][i][0] == messages[i]["expected"] for i in chosen),
                "hard_right": sum(routes[variant][i] == (messages[i]["expected"], "hard") for i in chosen),
                "hard_wrong": sum(
                    routes[variant][i][1] == "hard" and routes[variant][i][0] != messages[i]["expected"] for i in chosen
                ),
                "of": len(chosen),
            }
            for variant in routes
        }
    rows = [
        {**m, "with": list(routes["with"][i]), "without": list(routes["without"][i])} for i, m in enumerate(messages)
    ]
    return {"summary": summary, "messages": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = evaluate(Path(tmp))
    for kind, variants in report["summary"].items():
        for variant, counts in variants.items():
            print(
                f"{kind:10s} {variant:7s} top-1 {counts['top1']}/{counts['of']}, "
                f"hard and right {counts['hard_right']}, hard and wrong {counts['hard_wrong']}"
            )
    for row in report["messages"]:
        print(f"{row['id']} {row['expected']:22s} with {row['with']}  without {row['without']}  {row['query']!r}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
