"""Fit the fusion weights and the confidence calibration on the development queries.

    python benchmarks/calibrate.py [--write]

Runs the library's own retrievers over the shared development suites (real skills + their
dev queries, and the conflict suite), then:

1. fits the fusion weights (one per retriever) by listwise softmax regression: maximise the
   probability mass the weighted z-score fusion puts on an expected skill;
2. fits the confidence (Platt scaling: logistic regression of "top candidate is right" on
   ``decide.CONFIDENCE_FEATURES``) on *out-of-fold* rankings, out-of-scope queries counting as
   "wrong", so the confidence is calibrated for rankings it has not been fitted on;
3. reports 5-fold cross-validated hit@1, the share of in-scope queries that get a ``hard``
   decision and its precision, the share of out-of-scope queries that pass through, and the
   expected calibration error (ECE, 10 bins).

``--write`` ships the weights fitted on all queries in ``src/skillpilot/calibration.json`` and the
report in ``benchmarks/results/calibration.json``. Deterministic (fixed fold seed).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from skillpilot import SkillPilot
from skillpilot.decide import CONFIDENCE_FEATURES, Calibration, confidence_signals, decide
from skillpilot.fuse import fuse, normalised
from skillpilot.model import RetrieverId

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO.parent / "shared" / "bench"
SUITES = {
    "real": (BENCH / "skills", BENCH / "queries" / "real-dev.jsonl"),
    "conflicts": (BENCH / "conflicts", BENCH / "conflicts" / "queries.jsonl"),
}
FOLDS = 5
SEED = 20261130
L2 = 1e-2
OUT_OF_SCOPE_WEIGHT = 4.0


@dataclass
class Example:
    suite: str
    query: dict[str, object]
    keys: list[str]
    lists: Mapping[RetrieverId, np.ndarray]
    multipliers: np.ndarray
    labels: np.ndarray  # 1.0 where the skill is expected


def collect(home: Path) -> list[Example]:
    examples = []
    for suite, (skills, queries) in SUITES.items():
        pilot = SkillPilot(home=home / suite, preconditions=False)
        pilot.index([skills], replace=True)
        catalog = pilot._catalog()
        keys = [s.key for s in catalog.skills]
        for line in queries.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            query = json.loads(line)
            # The skills' redirects move multipliers as routing does (judged on the shipped fusion
            # weights' ranking, which only decides whether the redirecting skill was in the running).
            ranking = pilot._rank(catalog, str(query["query"]))
            redirected = ranking.redirected
            multipliers = catalog.multipliers
            if redirected is not None:
                multipliers = multipliers * np.exp(redirected.log_multipliers)
            expected = set(query["expected"])  # type: ignore[call-overload]
            labels = np.array([k in expected for k in keys], dtype=float)
            examples.append(Example(suite, query, keys, ranking.lists, multipliers, labels))
    return examples


def _design(example: Example, names: list[RetrieverId]) -> np.ndarray:
    size = len(example.keys)
    columns = [
        normalised(n, example.lists[n]) if n in example.lists else np.zeros(size) for n in names
    ]
    return np.stack(columns, axis=1)


def fit_fusion(examples: list[Example], names: list[RetrieverId]) -> dict[str, float]:
    """Listwise softmax regression (gradient descent, L2) over in-scope examples."""
    data = [(_design(e, names), e.labels / e.labels.sum()) for e in examples if e.labels.any()]
    weights = np.zeros(len(names))
    for _ in range(600):
        grad = np.zeros_like(weights)
        for x, target in data:
            s = x @ weights
            p = np.exp(s - s.max())
            p /= p.sum()
            grad += x.T @ (p - target)
        weights -= 0.5 * (grad / len(data) + L2 * weights)
    return {str(n): float(w) for n, w in zip(names, weights, strict=True)}


def fit_logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> tuple[float, np.ndarray]:
    """Weighted logistic regression by Newton's method (IRLS) with a small ridge."""
    design = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(design.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-design @ beta))
        hessian = design.T @ (design * (weight * p * (1 - p))[:, None]) + L2 * np.eye(len(beta))
        beta -= np.linalg.solve(hessian, design.T @ (weight * (p - y)) + L2 * beta)
    return float(beta[0]), beta[1:]


def sample_weights(examples: list[Example]) -> np.ndarray:
    """Out-of-scope messages count ``OUT_OF_SCOPE_WEIGHT`` times: they are a small share of the
    development set but the costliest mistake (a hard route on a message no skill serves)."""
    return np.array([1.0 if e.labels.any() else OUT_OF_SCOPE_WEIGHT for e in examples])


def top_signals(example: Example, weights: dict[str, float]) -> tuple[list[float], bool, str]:
    candidates = fuse(example.lists, weights, example.multipliers)
    if not candidates:
        return [0.0] * len(CONFIDENCE_FEATURES), False, ""
    signals = confidence_signals(candidates, 0)
    top = example.keys[candidates[0].index]
    return [signals[f] for f in CONFIDENCE_FEATURES], bool(example.labels[candidates[0].index]), top


def folds(examples: list[Example]) -> list[np.ndarray]:
    order = np.random.default_rng(SEED).permutation(len(examples))
    return np.array_split(order, FOLDS)


def cross_validate(examples: list[Example], names: list[RetrieverId]) -> dict[str, object]:
    parts = folds(examples)
    oof_x = np.zeros((len(examples), len(CONFIDENCE_FEATURES)))
    oof_right = np.zeros(len(examples), dtype=bool)
    for held in parts:
        train = [examples[i] for i in range(len(examples)) if i not in set(held)]
        weights = fit_fusion(train, names)
        for i in held:
            features, right, _ = top_signals(examples[i], weights)
            oof_x[i] = features
            oof_right[i] = right
    # Platt scaling, itself cross-validated over the same folds.
    oof_p = np.zeros(len(examples))
    weight = sample_weights(examples)
    for held in parts:
        mask = np.ones(len(examples), dtype=bool)
        mask[held] = False
        bias, coef = fit_logistic(oof_x[mask], oof_right[mask].astype(float), weight[mask])
        oof_p[held] = 1 / (1 + np.exp(-(bias + oof_x[held] @ coef)))
    return report(examples, oof_right, oof_p)


def report(examples: list[Example], right: np.ndarray, p: np.ndarray) -> dict[str, object]:
    in_scope = np.array([e.labels.any() for e in examples])
    decisions = np.array([decide(float(v), 0.80, 0.45) for v in p])
    hard = (decisions == "hard") & in_scope
    bins = np.minimum((p * 10).astype(int), 9)
    ece = sum(
        abs(p[bins == b].mean() - right[bins == b].mean()) * (bins == b).sum() / len(p)
        for b in range(10)
        if (bins == b).any()
    )
    per_suite: dict[str, dict[str, float]] = {}
    for suite in sorted({e.suite for e in examples}):
        mask = np.array([e.suite == suite for e in examples])
        m_in = mask & in_scope
        per_suite[suite] = {
            "hit@1": round(float(right[m_in].mean()), 4),
            "in_scope": int(m_in.sum()),
            "hard_coverage": round(float((hard & mask).sum() / max(1, m_in.sum())), 4),
            "hard_precision": round(float(right[hard & mask].mean()) if (hard & mask).any() else 0.0, 4),
            "out_of_scope_passthrough": round(
                float((decisions[mask & ~in_scope] == "passthrough").mean()) if (mask & ~in_scope).any() else 1.0,
                4,
            ),
        }
    return {
        "hit@1": round(float(right[in_scope].mean()), 4),
        "hard_coverage": round(float(hard.sum() / in_scope.sum()), 4),
        "hard_precision": round(float(right[hard].mean()) if hard.any() else 0.0, 4),
        "out_of_scope_passthrough": round(float((decisions[~in_scope] == "passthrough").mean()), 4),
        "ece": round(float(ece), 4),
        "per_suite": per_suite,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="ship the fitted calibration")
    parser.add_argument("--home", type=Path, help="keep the indexes here (reused when unchanged)")
    args = parser.parse_args()
    if args.home:
        examples = collect(args.home)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            examples = collect(Path(tmp))
    names = sorted({n for e in examples for n in e.lists}, key=str)
    cv = cross_validate(examples, names)
    print(json.dumps({"cross_validated": cv}, indent=2))
    weights = fit_fusion(examples, names)
    dense = [w for n, w in weights.items() if n.startswith("dense:")]
    weights["dense:*"] = float(np.mean(dense)) if dense else 0.0
    signals = [top_signals(e, weights) for e in examples]
    x = np.array([s[0] for s in signals])
    y = np.array([s[1] for s in signals], dtype=float)
    bias, coef = fit_logistic(x, y, sample_weights(examples))
    calibration = Calibration(
        fusion_weights={n: round(w, 4) for n, w in weights.items()},
        bias=round(bias, 4),
        weights={f: round(float(c), 4) for f, c in zip(CONFIDENCE_FEATURES, coef, strict=True)},
        fitted_on=f"{', '.join(str(q.relative_to(BENCH.parent)) for _, q in SUITES.values())} "
        f"({len(examples)} queries); benchmarks/calibrate.py",
    )
    print(json.dumps(calibration.to_dict(), indent=2))
    if args.write:
        (REPO / "src" / "skillpilot" / "calibration.json").write_text(
            json.dumps(calibration.to_dict(), indent=2) + "\n", encoding="utf-8"
        )
        results = REPO / "benchmarks" / "results"
        results.mkdir(parents=True, exist_ok=True)
        (results / "calibration.json").write_text(
            json.dumps({"cross_validated": cv, "shipped": calibration.to_dict()}, indent=2) + "\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
