"""Pure functions from per-query predictions to the reported metrics; no I/O, no clock.

Input: :class:`Prediction` records (what a method answered for each labelled query). Output:
plain dicts of numbers, ``None`` where a metric has no denominator (e.g. pass-through precision
of a method that never passes through).

Definitions (``expected`` is the set of acceptable keys, ``keys`` the method's ranking):

- hit@k: over in-scope queries, the share whose first k keys hold an expected key. The ranking
  counts even when the method passes the message through.
- MRR: mean over in-scope queries of 1/rank of the first expected key (0 if none in the ranking;
  every ranking is cut at the same depth, so it is MRR@depth).
- pass-through precision / recall: "should pass through" is the positive class (expected = []);
  precision = right pass-throughs / all pass-throughs, recall = right pass-throughs /
  out-of-scope queries.
- conflict-resolution accuracy: over ``conflict`` queries, the share routed (not passed through)
  to an expected skill.
- decision accuracy: over all queries, routed to an expected skill, or passed through when out of
  scope.
- latency p50/p95/p99: nearest-rank percentiles of per-query wall-clock milliseconds.
- token saving: 1 - mean injected tokens / tokens of every description in one prompt.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .suites import KINDS


@dataclass(frozen=True)
class Prediction:
    """One method's answer to one query, with the query's label: the unit every metric reads."""

    id: str
    kind: str
    expected: tuple[str, ...]
    keys: tuple[str, ...]
    passthrough: bool
    injected: tuple[str, ...]
    injected_tokens: int
    latency_ms: float


def _ratio(num: int | float, den: int) -> float | None:
    return num / den if den else None


def _first_hit(p: Prediction) -> int | None:
    """1-based rank of the first expected key in the ranking."""
    for rank, key in enumerate(p.keys, start=1):
        if key in p.expected:
            return rank
    return None


def _routed_right(p: Prediction) -> bool:
    return not p.passthrough and bool(p.keys) and p.keys[0] in p.expected


def accuracy(predictions: Sequence[Prediction]) -> dict[str, Any]:
    """hit@1, hit@3, MRR over in-scope queries, plus the pass-through rate of all of them."""
    in_scope = [p for p in predictions if p.expected]
    ranks = [_first_hit(p) for p in in_scope]
    return {
        "queries": len(predictions),
        "in_scope": len(in_scope),
        "hit@1": _ratio(sum(1 for r in ranks if r is not None and r <= 1), len(in_scope)),
        "hit@3": _ratio(sum(1 for r in ranks if r is not None and r <= 3), len(in_scope)),
        "mrr": _ratio(sum(1.0 / r for r in ranks if r is not None), len(in_scope)),
        "passthrough_rate": _ratio(sum(1 for p in predictions if p.passthrough), len(predictions)),
        "decision_accuracy": _ratio(
            sum(1 for p in predictions if (p.passthrough if not p.expected else _routed_right(p))),
            len(predictions),
        ),
    }


def passthrough(predictions: Sequence[Prediction]) -> dict[str, Any]:
    """Precision and recall of pass-through, out-of-scope queries being the positives."""
    passed = [p for p in predictions if p.passthrough]
    out_of_scope = [p for p in predictions if not p.expected]
    right = sum(1 for p in passed if not p.expected)
    return {
        "out_of_scope": len(out_of_scope),
        "passed_through": len(passed),
        "precision": _ratio(right, len(passed)),
        "recall": _ratio(right, len(out_of_scope)),
    }


def conflict_accuracy(predictions: Sequence[Prediction]) -> float | None:
    conflicts = [p for p in predictions if p.kind == "conflict"]
    return _ratio(sum(1 for p in conflicts if _routed_right(p)), len(conflicts))


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Nearest-rank percentile: the smallest value with at least ``pct`` % of values at or below."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]


def latency(predictions: Sequence[Prediction]) -> dict[str, float | None]:
    values = [p.latency_ms for p in predictions]
    return {
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "p99": percentile(values, 99),
        "mean": _ratio(sum(values), len(values)),
    }


def tokens(predictions: Sequence[Prediction], full_prompt_tokens: int) -> dict[str, Any]:
    mean = _ratio(sum(p.injected_tokens for p in predictions), len(predictions))
    return {
        "full_prompt": full_prompt_tokens,
        "mean_injected": mean,
        "saving": None if mean is None or not full_prompt_tokens else 1 - mean / full_prompt_tokens,
    }


def summarize(predictions: Sequence[Prediction], full_prompt_tokens: int) -> dict[str, Any]:
    """Every per-query-derived metric of one method on one suite, overall and per query kind."""
    by_kind = {kind: accuracy(subset) for kind in KINDS if (subset := [p for p in predictions if p.kind == kind])}
    return {
        "accuracy": {"all": accuracy(predictions), **by_kind},
        "passthrough": passthrough(predictions),
        "conflict_accuracy": conflict_accuracy(predictions),
        "latency_ms": latency(predictions),
        "tokens": tokens(predictions, full_prompt_tokens),
    }
