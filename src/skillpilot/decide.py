"""Decide: raw ranking signals in, a calibrated confidence and a decision out.

The confidence is a logistic model (Platt scaling) over signals of the top candidate: its fused
score, its margin over the runner-up, how many retrievers agree it is best, its dense cosine and
cosine margin, its BM25 score and its fast-path score. The weights are fitted on the development
queries by ``benchmarks/calibrate.py`` and shipped in ``calibration.json``, so the number means
"how often a route this confident was right" there. Thresholds then turn it into
``hard`` / ``soft`` / ``passthrough``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from .model import Decision

FEATURES = (
    "fused",
    "margin",
    "agreement",
    "dense",
    "dense_margin",
    "bm25",
    "fast",
)


@dataclass(frozen=True)
class Calibration:
    """A fitted logistic mapping from ``FEATURES`` to P(top candidate is right)."""

    bias: float
    weights: Mapping[str, float]
    fitted_on: str = ""

    def probability(self, signals: Mapping[str, float]) -> float:
        z = self.bias + sum(w * signals.get(name, 0.0) for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@cache
def shipped_calibration() -> Calibration:
    """The calibration fitted on the development set and shipped with the package."""
    data = json.loads(resources.files("skillpilot").joinpath("calibration.json").read_text("utf-8"))
    return Calibration(bias=data["bias"], weights=data["weights"], fitted_on=data.get("fitted_on", ""))


def decide(confidence: float, hard_threshold: float, soft_threshold: float) -> Decision:
    if confidence >= hard_threshold:
        return "hard"
    if confidence >= soft_threshold:
        return "soft"
    return "passthrough"
