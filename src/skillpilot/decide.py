"""Decide: the fused ranking in, a calibrated confidence and a decision out.

The confidence is a logistic model (Platt scaling) over signals of a candidate: its fused score,
its margin over the best other candidate, its raw dense cosine and BM25 score (absolute evidence:
z-scores alone cannot tell "best of a bad lot" from "clearly this one"), how many retrievers rank
it first, and its fast-path score. The weights, and the fusion weights ``fuse`` uses, are fitted
on the development queries by ``benchmarks/calibrate.py`` (cross-validated; the report is in
``benchmarks/results/calibration.json``) and shipped in ``calibration.json``, so 0.9 means "routes
this confident were right about nine times in ten" there. Thresholds then turn the confidence into
``hard`` / ``soft`` / ``passthrough``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from .fuse import Candidate
from .model import Decision

CONFIDENCE_FEATURES = (
    "score", "margin", "dense_max", "dense_min", "dense_margin", "bm25", "agreement", "fast",
)
BM25_HALF_SCORE = 5.0


def confidence_signals(candidates: Sequence[Candidate], position: int) -> dict[str, float]:
    """The calibration features of ``candidates[position]`` against the best other candidate."""
    me = candidates[position]
    rival = max((c.score for i, c in enumerate(candidates) if i != position), default=me.score - 1.0)
    dense_names = [name for name in me.raw if name.startswith("dense:")]
    others = [c for i, c in enumerate(candidates) if i != position]
    dense_margins = [
        me.raw[n] - max((c.raw[n] for c in others), default=me.raw[n]) for n in dense_names
    ]
    bm25 = max(me.raw.get("bm25", 0.0), 0.0)
    voters = [name for name in me.raw if name != "fast"]
    return {
        "score": me.score,
        "margin": me.score - rival,
        "dense_max": max((me.raw[n] for n in dense_names), default=0.0),
        "dense_min": min((me.raw[n] for n in dense_names), default=0.0),
        "dense_margin": float(np.mean(dense_margins)) if dense_margins else 0.0,
        "bm25": bm25 / (bm25 + BM25_HALF_SCORE),
        "agreement": sum(1 for n in voters if me.ranks.get(n) == 1) / max(1, len(voters)),
        "fast": me.raw.get("fast", 0.0) / 10.0,
    }


@dataclass(frozen=True)
class Calibration:
    """Fitted fusion weights plus a logistic map from ``CONFIDENCE_FEATURES`` to P(right)."""

    fusion_weights: Mapping[str, float]
    bias: float
    weights: Mapping[str, float]
    fitted_on: str = ""

    def probability(self, signals: Mapping[str, float]) -> float:
        z = self.bias + sum(w * signals.get(name, 0.0) for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def to_dict(self) -> dict[str, object]:
        return {
            "fitted_on": self.fitted_on,
            "fusion_weights": dict(self.fusion_weights),
            "bias": self.bias,
            "weights": dict(self.weights),
        }


def calibration_from_dict(data: Mapping[str, object]) -> Calibration:
    return Calibration(
        fusion_weights=dict(data["fusion_weights"]),  # type: ignore[call-overload]
        bias=float(data["bias"]),  # type: ignore[arg-type]
        weights=dict(data["weights"]),  # type: ignore[call-overload]
        fitted_on=str(data.get("fitted_on", "")),
    )


@cache
def shipped_calibration() -> Calibration:
    """The calibration fitted on the development set and shipped with the package."""
    text = resources.files("skillpilot").joinpath("calibration.json").read_text("utf-8")
    return calibration_from_dict(json.loads(text))


def decide(confidence: float, hard_threshold: float, soft_threshold: float) -> Decision:
    if confidence >= hard_threshold:
        return "hard"
    if confidence >= soft_threshold:
        return "soft"
    return "passthrough"
