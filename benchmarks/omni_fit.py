"""Fit the omni-retrieval intent classifier's parameters on its own example questions.

Leave-one-out over ``src/skillpilot/omni/intent_examples.jsonl``: each example is classified
against all the *other* examples (MIXED examples are never prototypes, so they are plain held-out
questions), for every parameter combination of a small grid; the most accurate combination is
printed (ties: the first in grid order, so the softest temperature, which gives the most
informative confidences). Copy it into ``ClassifierParams``'s defaults. The
labelled evaluation set (``omni_intents.jsonl``) is not read here.

    python benchmarks/omni_fit.py [--embed minilm+use-multilingual]
"""

from __future__ import annotations

import argparse
import itertools

from skillpilot.config import Settings
from skillpilot.encoders import get_encoder
from skillpilot.omni.classify import ClassifierParams, ExampleBank, decide, keyword_hits, load_examples

TEMPERATURES = (0.08, 0.05, 0.03, 0.02, 0.01, 0.005, 0.002, 0.001)
BONUSES = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)
CO_ACTIVE = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
TOP_N = (1, 3, 5)
KEYWORD_ACTIVE = (False, True)


def label(intent: str) -> str:
    return "UNKNOWN" if intent == "OTHER" else intent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embed", default=Settings().embed_provider, help="encoders joined by '+'")
    args = parser.parse_args()
    settings = Settings(embed_provider=args.embed)
    encoders = [get_encoder(spec, settings) for spec in settings.encoder_specs]
    examples = load_examples()
    bank = ExampleBank(encoders, examples)
    position = {id(e): i for i, e in enumerate(bank.examples)}
    vectors = bank.encode([e.query for e in examples])
    hits = [keyword_hits(e.query) for e in examples]
    sims = {
        n: [
            bank.similarities([v[i] for v in vectors], n, leave_out=position.get(id(e))) for i, e in enumerate(examples)
        ]
        for n in TOP_N
    }
    keyword_only = sum(decide(h, None).intent == label(e.intent) for h, e in zip(hits, examples, strict=True))
    print(f"{len(examples)} examples; keyword rules alone: {keyword_only / len(examples):.1%}")
    results = []
    for t, b, c, n, k in itertools.product(TEMPERATURES, BONUSES, CO_ACTIVE, TOP_N, KEYWORD_ACTIVE):
        params = ClassifierParams(temperature=t, keyword_bonus=b, co_active=c, top_n=n, keyword_active=k)
        correct = sum(
            decide(h, s, params).intent == label(e.intent) for h, s, e in zip(hits, sims[n], examples, strict=True)
        )
        results.append((correct, params))
    best = max(results, key=lambda r: r[0])
    print(f"leave-one-out accuracy {best[0] / len(examples):.1%} with {best[1]}")


if __name__ == "__main__":
    main()
