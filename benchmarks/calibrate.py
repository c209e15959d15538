"""Fit the fusion weights and the confidence calibration on the development queries.

    python benchmarks/calibrate.py [--write]

Runs the library's own retrievers over the shared development suites (real skills + their
dev queries, and the conflict suite), then:

1. fits the fusion weights (one per retriever) by listwise softmax regression: maximise the
   probability mass the weighted z-score fusion puts on an expected skill;
2. fits the confidence (Platt scaling: logistic regression of "top candidate is right" on
   ``decide.CONFIDENCE_FEATURES``) on *out-of-fold* rankings, out-of-scope queries counting as
   "wrong", so the confidence is calibrated for rankings it has not been fitted on;
3. reports, 5-fold cross-validated, per suite and over both at the default thresholds: hit@1
   (and on paraphrases), top-5, the share of in-scope queries that get a ``hard`` decision and
   its precision, in-scope and out-of-scope pass-through, how often a soft decision's shortlist
   (the top skill and runners-up scoring >= ``decide.SHORTLIST_SCORE``, three at most) holds
   the right skill, and the expected calibration error (ECE, 10 bins).

``--write`` ships the weights fitted on all queries in ``src/skillpilot/calibration.json``, the
report in ``benchmarks/results/calibration.json`` and the reliability diagram (out-of-fold
confidence against the share right) in ``benchmarks/results/reliability.png``. Deterministic (fixed fold seed).
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
from skillpilot.config import Settings
from skillpilot.decide import CONFIDENCE_FEATURES, SHORTLIST_SCORE, Calibration, confidence_signals, decide
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
HARD, SOFT = Settings.hard_threshold, Settings.soft_threshold
# A soft context names at most three skills (adapters.MAX_SOFT_CANDIDATES).
SHORTLIST_SIZE = 3
BINS = 10


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
        keys = [s.key for s in pilot.skills()]
        for line in queries.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            query = json.loads(line)
            # The skills' redirects move multipliers as routing does (judged on the shipped fusion
            # weights' ranking, which only decides whether the redirecting skill was in the running).
            ranking = pilot.ranking(str(query["query"]))
            multipliers = ranking.multipliers
            expected = set(query["expected"])  # type: ignore[call-overload]
            labels = np.array([k in expected for k in keys], dtype=float)
            examples.append(Example(suite, query, keys, ranking.lists, multipliers, labels))
    return examples


def _design(example: Example, names: list[RetrieverId]) -> np.ndarray:
    size = len(example.keys)
    columns = [normalised(n, example.lists[n]) if n in example.lists else np.zeros(size) for n in names]
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


@dataclass
class Ranked:
    """One example ranked with some fusion weights: the calibration features of its top
    candidate and of the runners-up a shortlist could name, whether the top is right, and the
    0-based position of the first expected skill among the candidates (None: not among them)."""

    features: list[float]
    runner_up_features: list[list[float]]
    right: bool
    found_at: int | None


def ranked(example: Example, weights: Mapping[str, float]) -> Ranked:
    candidates = fuse(example.lists, weights, example.multipliers)
    if not candidates:
        return Ranked([0.0] * len(CONFIDENCE_FEATURES), [], False, None)

    def features(position: int) -> list[float]:
        signals = confidence_signals(candidates, position)
        return [signals[f] for f in CONFIDENCE_FEATURES]

    found = [n for n, c in enumerate(candidates) if example.labels[c.index]]
    return Ranked(
        features(0),
        [features(n) for n in range(1, min(len(candidates), SHORTLIST_SIZE))],
        bool(example.labels[candidates[0].index]),
        found[0] if found else None,
    )


def folds(examples: list[Example]) -> list[np.ndarray]:
    order = np.random.default_rng(SEED).permutation(len(examples))
    return np.array_split(order, FOLDS)


def _probability(bias: float, coef: np.ndarray, x: np.ndarray) -> np.ndarray:
    result: np.ndarray = 1 / (1 + np.exp(-(bias + x @ coef)))
    return result


def cross_validate(examples: list[Example], names: list[RetrieverId]) -> tuple[dict[str, object], Outcomes]:
    """The 5-fold report and the out-of-fold outcomes it was computed from."""
    parts = folds(examples)
    out_of_fold: list[Ranked | None] = [None] * len(examples)
    for held in parts:
        train = [examples[i] for i in range(len(examples)) if i not in set(held)]
        weights = fit_fusion(train, names)
        for i in held:
            out_of_fold[i] = ranked(examples[i], weights)
    ranks = [r for r in out_of_fold if r is not None]
    x = np.array([r.features for r in ranks])
    right = np.array([r.right for r in ranks])
    # Platt scaling, itself cross-validated over the same folds.
    p = np.zeros(len(examples))
    runner_up_p: list[np.ndarray] = [np.zeros(0)] * len(examples)
    weight = sample_weights(examples)
    for held in parts:
        mask = np.ones(len(examples), dtype=bool)
        mask[held] = False
        bias, coef = fit_logistic(x[mask], right[mask].astype(float), weight[mask])
        p[held] = _probability(bias, coef, x[held])
        for i in held:
            runners = ranks[i].runner_up_features
            runner_up_p[i] = _probability(bias, coef, np.array(runners)) if runners else np.zeros(0)
    outcomes = Outcomes(right, p, [r.found_at for r in ranks], runner_up_p)
    return report(examples, outcomes), outcomes


@dataclass
class Outcomes:
    """Out-of-fold results per example: top right?, its confidence, where the expected skill
    was found, and the runners-up's confidences (as if each were the pick)."""

    right: np.ndarray
    p: np.ndarray
    found_at: list[int | None]
    runner_up_p: list[np.ndarray]

    def shortlist(self, i: int) -> int:
        """How many skills a soft decision on example ``i`` names (adapters: ``SHORTLIST_SCORE``)."""
        return 1 + int((self.runner_up_p[i][: SHORTLIST_SIZE - 1] >= SHORTLIST_SCORE).sum())

    def within(self, i: int, count: int) -> bool:
        found = self.found_at[i]
        return found is not None and found < count


def expected_calibration_error(p: np.ndarray, right: np.ndarray) -> float:
    bins = np.minimum((p * BINS).astype(int), BINS - 1)
    return float(
        sum(
            abs(p[bins == b].mean() - right[bins == b].mean()) * (bins == b).sum() / len(p)
            for b in range(BINS)
            if (bins == b).any()
        )
    )


def _share(mask: np.ndarray, of: np.ndarray) -> float:
    return round(float((mask & of).sum() / of.sum()) if of.any() else 0.0, 4)


def quality(examples: list[Example], outcomes: Outcomes, mask: np.ndarray) -> dict[str, object]:
    """The decision's quality on the examples in ``mask`` (default thresholds)."""
    right, p = outcomes.right, outcomes.p
    in_scope = np.array([e.labels.any() for e in examples]) & mask
    out_of_scope = mask & ~in_scope
    paraphrase = in_scope & np.array([e.query.get("kind") == "paraphrase" for e in examples])
    decisions = np.array([decide(float(v), HARD, SOFT) for v in p])
    hard = (decisions == "hard") & in_scope
    soft = np.flatnonzero((decisions == "soft") & in_scope)
    top5 = np.array([outcomes.within(i, 5) for i in range(len(examples))])
    return {
        "hit@1": _share(right, in_scope),
        "hit@1_paraphrase": _share(right, paraphrase) if paraphrase.any() else None,
        "top5": _share(top5, in_scope),
        "in_scope": int(in_scope.sum()),
        "hard_coverage": _share(hard, in_scope),
        "hard_precision": round(float(right[hard].mean()) if hard.any() else 0.0, 4),
        "in_scope_passthrough": _share(decisions == "passthrough", in_scope),
        "out_of_scope_passthrough": _share(decisions == "passthrough", out_of_scope) if out_of_scope.any() else 1.0,
        "soft": len(soft),
        "soft_shortlist_holds_right": round(
            float(np.mean([outcomes.within(i, outcomes.shortlist(i)) for i in soft])) if len(soft) else 0.0, 4
        ),
        "soft_shortlist_size": round(float(np.mean([outcomes.shortlist(i) for i in soft])) if len(soft) else 0.0, 2),
    }


def report(examples: list[Example], outcomes: Outcomes) -> dict[str, object]:
    everything = np.ones(len(examples), dtype=bool)
    return {
        **quality(examples, outcomes, everything),
        "thresholds": {"hard": HARD, "soft": SOFT, "shortlist": SHORTLIST_SCORE},
        "ece": round(expected_calibration_error(outcomes.p, outcomes.right), 4),
        "per_suite": {
            suite: quality(examples, outcomes, np.array([e.suite == suite for e in examples]))
            for suite in sorted({e.suite for e in examples})
        },
    }


def reliability_diagram(outcomes: Outcomes, path: Path) -> None:
    """Confidence bins against how often the top candidate was right, out of fold (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p, right = outcomes.p, outcomes.right
    bins = np.minimum((p * BINS).astype(int), BINS - 1)
    used = [b for b in range(BINS) if (bins == b).any()]
    figure, axis = plt.subplots(figsize=(5, 5))
    axis.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfectly calibrated")
    axis.bar(
        [(b + 0.5) / BINS for b in used],
        [right[bins == b].mean() for b in used],
        width=0.9 / BINS,
        alpha=0.7,
        label="share right (out of fold)",
    )
    for b in used:
        share = right[bins == b].mean()
        axis.annotate(str(int((bins == b).sum())), ((b + 0.5) / BINS, share), ha="center", va="bottom")
    axis.set_xlabel("calibrated confidence")
    axis.set_ylabel("top candidate right")
    axis.set_title(f"Reliability, 5-fold CV (ECE {expected_calibration_error(p, right):.3f}; n per bar)")
    axis.set_xlim(0, 1)
    axis.set_ylim(0, 1.05)
    axis.legend(loc="upper left")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


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
    cv, outcomes = cross_validate(examples, names)
    print(json.dumps({"cross_validated": cv}, indent=2))
    weights = fit_fusion(examples, names)
    dense = [w for n, w in weights.items() if n.startswith("dense:")]
    weights["dense:*"] = float(np.mean(dense)) if dense else 0.0
    fitted = [ranked(e, weights) for e in examples]
    x = np.array([r.features for r in fitted])
    y = np.array([r.right for r in fitted], dtype=float)
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
        reliability_diagram(outcomes, results / "reliability.png")


if __name__ == "__main__":
    main()
