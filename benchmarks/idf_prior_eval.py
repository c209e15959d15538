"""Background-language priors on BM25's IDF, measured on dev CV and MetaTool (issue 20).

    python benchmarks/idf_prior_eval.py --home DIR --fe-cache DIR [--variants cap:sp:3,pseudo:sp:1000]

A small catalog's IDF is unreliable: a generic word that 3 of 199 tool texts happen to hold
looks as rare as "terraform". Each variant blends the catalog's IDF with a general-language
frequency (``bm25.IdfPrior``), then (1) runs ``calibrate.py``'s 5-fold cross-validation on the
dev suites (fusion weights and confidence refitted per fold) and (2) scores MetaTool's 20,614
queries over ``fusion_eval.py``'s stored lists with only the BM25 list recomputed, fused with
weights fitted on all dev queries (never on MetaTool). The first row is the shipped router.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from skillpilot import SkillPilot
from skillpilot.bench.suites import default_data_dir, shared_suite
from skillpilot.decide import shipped_calibration
from skillpilot.retrieve import bm25
from skillpilot.text import cap_query

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibrate  # noqa: E402
import fusion_eval  # noqa: E402

TABLES = Path("/tmp/quality-idf")


def metatool_keyword_lists(home: Path, prior: bm25.IdfPrior | None) -> np.ndarray:
    """BM25 scores of every MetaTool query over the 199 tools (rows: queries, in suite order)."""
    with tempfile.TemporaryDirectory() as tmp:
        suite = shared_suite("metatool", default_data_dir(), Path(tmp), 0, fusion_eval.SEED)
        pilot = SkillPilot(home=home, store="", preconditions=False, feedback_enabled=False)
        pilot.index([suite.catalog.root], replace=True)
        skills = pilot._catalog().skills
        retriever = bm25.BM25Retriever(skills, prior=prior)
        return np.stack([retriever.scores(cap_query(q.query)) for q in suite.queries]).astype(np.float32)


def metatool_hit(data: dict[str, np.ndarray], keyword: np.ndarray, weights: dict[str, float]) -> float:
    return fusion_eval.fused_hit_at_1({**data, "list:bm25": keyword}, weights)  # type: ignore[arg-type]


def measure(label: str, prior: bm25.IdfPrior | None, home: Path, data: dict[str, np.ndarray]) -> dict[str, object]:
    bm25.EXPERIMENT_PRIOR = prior
    examples = calibrate.collect(home)
    names = sorted({n for e in examples for n in e.lists}, key=str)
    cv, _ = calibrate.cross_validate(examples, names)
    weights = calibrate.fit_fusion(examples, names)
    dense = [w for n, w in weights.items() if n.startswith("dense:")]
    weights["dense:*"] = float(np.mean(dense)) if dense else 0.0
    keyword = metatool_keyword_lists(home / "metatool", prior)
    row: dict[str, object] = {"variant": label}
    for suite in ("real", "conflicts"):
        q = cv["per_suite"][suite]  # type: ignore[index]
        row[suite] = {
            k: q[k]
            for k in (
                "hit@1",
                "hit@1_paraphrase",
                "top5",
                "hard_coverage",
                "hard_precision",
                "in_scope_passthrough",
                "out_of_scope_passthrough",
                "soft_shortlist_holds_right",
            )
        }
    row["ece"] = cv["ece"]  # type: ignore[index]
    row["metatool"] = round(metatool_hit(data, keyword, weights), 4)
    row["weights"] = {k: round(v, 4) for k, v in weights.items()}
    print(json.dumps(row), flush=True)
    return row


def load_prior(spec: str) -> tuple[str, bm25.IdfPrior | None]:
    if spec == "none":
        return spec, None
    mode, table, strength = spec.split(":")
    frequencies = json.loads((TABLES / f"{table}.json").read_text(encoding="utf-8"))
    return spec, bm25.IdfPrior(frequencies, mode, float(strength))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--fe-cache", type=Path, required=True, help="fusion_eval.py's --cache")
    parser.add_argument("--variants", default="none")
    args = parser.parse_args()
    stored = np.load(fusion_eval.build(args.fe_cache, 0))
    data = {k: stored[k] for k in stored.files}
    keyword = metatool_keyword_lists(args.home / "metatool", None)
    assert np.allclose(keyword, data["list:bm25"], atol=1e-5), "stored BM25 lists are not this code's"
    shipped = dict(shipped_calibration().fusion_weights)
    sr = float((data["semantic_router"].argmax(axis=1) == data["expected"]).mean())
    print(json.dumps({"shipped on stored lists": metatool_hit(data, keyword, shipped), "semantic-router": sr}))
    for spec in args.variants.split(","):
        label, prior = load_prior(spec)
        measure(label, prior, args.home, data)


if __name__ == "__main__":
    main()
