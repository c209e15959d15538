"""Accuracy of the omni-retrieval intent classifier on a labelled question set it was not fitted on.

Input: ``benchmarks/omni_intents.jsonl`` (one ``{"id", "lang", "intent", "query"}`` per line;
80 questions, Chinese and English, 16 per intent). Output on stdout: accuracy overall, per
language and per intent, for the keyword rules alone and for keywords + embeddings, a confusion
matrix, and each miss. The classifier's examples and parameters come from
``src/skillpilot/omni/intent_examples.jsonl`` and ``benchmarks/omni_fit.py``, never from this set.

    python benchmarks/omni_eval.py [--data FILE] [--embed minilm+use-multilingual] [--json]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from skillpilot.config import Settings
from skillpilot.encoders import get_encoder
from skillpilot.omni.classify import IntentClassifier
from skillpilot.omni.model import INTENTS

DATA = Path(__file__).resolve().parent / "omni_intents.jsonl"


def evaluate(rows: list[dict[str, Any]], classifier: IntentClassifier) -> dict[str, Any]:
    predictions = [classifier.classify(row["query"]).intent for row in rows]
    correct = [p == row["intent"] for p, row in zip(predictions, rows, strict=True)]

    def accuracy(key: str, value: str) -> float:
        picked = [c for c, row in zip(correct, rows, strict=True) if row[key] == value]
        return float(sum(picked) / len(picked))

    return {
        "accuracy": sum(correct) / len(rows),
        "by_lang": {lang: accuracy("lang", lang) for lang in sorted({r["lang"] for r in rows})},
        "by_intent": {intent: accuracy("intent", intent) for intent in INTENTS},
        "confusion": Counter(f"{row['intent']}->{p}" for p, row in zip(predictions, rows, strict=True)),
        "misses": [
            {"id": row["id"], "query": row["query"], "expected": row["intent"], "got": p}
            for p, c, row in zip(predictions, correct, rows, strict=True)
            if not c
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--embed", default=Settings().embed_provider, help="encoders joined by '+'")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    settings = Settings(embed_provider=args.embed)
    encoders = [get_encoder(spec, settings) for spec in settings.encoder_specs]
    runs: dict[str, dict[str, Any]] = {
        "keywords": evaluate(rows, IntentClassifier()),
        f"keywords+embeddings ({args.embed})": evaluate(rows, IntentClassifier(encoders)),
    }
    if args.json:
        print(json.dumps({"questions": len(rows), **runs}, ensure_ascii=False, indent=2))
        return
    print(f"{len(rows)} labelled questions ({args.data.name})")
    for name, result in runs.items():
        langs = ", ".join(f"{k} {v:.1%}" for k, v in result["by_lang"].items())
        intents = ", ".join(f"{k} {v:.0%}" for k, v in result["by_intent"].items())
        print(f"\n{name}: accuracy {result['accuracy']:.1%} ({langs})\n  per intent: {intents}")
        for miss in result["misses"]:
            print(f"  miss {miss['id']}: expected {miss['expected']}, got {miss['got']}: {miss['query']}")


if __name__ == "__main__":
    main()
