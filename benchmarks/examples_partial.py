"""Which shipped model routes a partly enriched catalog better (``decide.WITH_EXAMPLES_SHARE``).

    python benchmarks/examples_partial.py [--shares 0.5 0.75 0.9] [--output results/examples_partial.json]

Indexes the 294 bench skills into a scratch home per share, imports the recorded examples
(``../shared/bench/intents/skills-llm.json``) for that share of them (a seeded random choice of
keys) and routes every real-dev and real-dev2 message twice: with the with-examples model and
with the plain one (``examples_shipped.measure``'s figures). The with-examples model was fitted on
these sets with every skill enriched, so it is not cross-validated here; the comparison is what the
choice between the two models rests on.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path

from examples_shipped import BENCH, SETS, measure

from skillpilot import SkillPilot
from skillpilot.decide import Calibrations, shipped_calibration

SEED = 7


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shares", type=float, nargs="+", default=[0.5, 0.75, 0.9])
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "results" / "examples_partial.json")
    args = parser.parse_args()
    fixture = json.loads((BENCH / "intents" / "skills-llm.json").read_text(encoding="utf-8"))
    keys = sorted(fixture)
    random.Random(SEED).shuffle(keys)
    shipped = shipped_calibration()
    assert shipped.with_examples is not None
    # Each model alone, whatever the share (``Calibrations.for_share`` would pick by it).
    models = {"with_examples": Calibrations(plain=shipped.with_examples), "plain": Calibrations(plain=shipped.plain)}
    report: dict[str, dict[str, dict[str, object]]] = {}
    for share in args.shares:
        with tempfile.TemporaryDirectory(prefix="skillpilot-partial-") as scratch:
            chosen = {key: fixture[key] for key in keys[: round(share * len(keys))]}
            source = Path(scratch) / "examples.json"
            source.write_text(json.dumps(chosen), encoding="utf-8")
            pilot = SkillPilot(home=Path(scratch) / "home", store="", preconditions=False, log_enabled=False)
            pilot.index([BENCH / "skills"], replace=True)
            pilot.import_examples(source)
            for label, calibration in models.items():
                pilot.calibration = calibration
                report.setdefault(str(share), {})[label] = {
                    name: measure(pilot, BENCH / "queries" / f"{name}.jsonl") for name in SETS
                }
            pilot.close()
        print(json.dumps({str(share): report[str(share)]}, indent=2), flush=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
