"""Confidence signals the calibration reads: agreement on rank (RRF, unanimity) next to scores."""

from __future__ import annotations

import numpy as np
import pytest

from skillpilot.adapters import action_for
from skillpilot.conflicts import CONTEST_MARGIN
from skillpilot.decide import (
    SHORTLIST_SCORE,
    Calibration,
    calibration_from_dict,
    confidence_signals,
    shipped_calibration,
)
from skillpilot.fuse import fuse
from skillpilot.model import BM25, Alternative, RouteResult, SkillRef, dense_id

DENSE = dense_id("toy-encoder")


def _candidates(bm25: list[float], dense: list[float]) -> list:
    lists = {BM25: np.array(bm25), DENSE: np.array(dense)}
    return fuse(lists, {"bm25": 0.6, str(DENSE): 0.8}, np.ones(len(bm25)))


def test_a_skill_every_retriever_ranks_first_is_unanimous_and_earns_a_full_rrf_vote_each() -> None:
    agreed = _candidates([5.0, 1.0, 0.0, 0.0], [0.8, 0.3, 0.2, 0.1])
    split = _candidates([5.0, 1.0, 0.0, 0.0], [0.3, 0.8, 0.2, 0.1])
    together, apart = confidence_signals(agreed, 0), confidence_signals(split, 0)
    assert together["unanimous"] == 1.0 and apart["unanimous"] == 0.0
    assert together["rrf"] == 2.0 and 1.0 < apart["rrf"] < 2.0


def test_agreeing_retrievers_make_the_shipped_calibration_surer() -> None:
    calibration = shipped_calibration().plain
    agreed = _candidates([5.0, 1.0, 0.0, 0.0], [0.8, 0.3, 0.2, 0.1])
    split = _candidates([5.0, 1.0, 0.0, 0.0], [0.3, 0.8, 0.2, 0.1])
    assert calibration.probability(confidence_signals(agreed, 0)) > calibration.probability(
        confidence_signals(split, 0)
    )


def test_a_model_with_an_isotonic_map_split_fusion_weights_and_a_contest_margin_keeps_them_when_saved() -> None:
    mapped = Calibration(
        {"bm25": 0.4},
        bias=0.0,
        weights={"score": 1.0},
        isotonic=((-2.0, 0.0), (0.0, 0.2), (2.0, 1.0)),
        partial_fusion_weights={"bm25": 0.3},
        contest_margin=0.2,
    )
    assert [mapped.probability({"score": z}) for z in (-5.0, -1.0, 1.0, 5.0)] == pytest.approx([0.0, 0.1, 0.6, 1.0])
    assert calibration_from_dict(mapped.to_dict()) == mapped
    assert mapped.fusion_weights_for(True) == {"bm25": 0.4} and mapped.fusion_weights_for(False) == {"bm25": 0.3}
    # The shipped with-examples model has one, rising; the plain one reads the logistic function.
    shipped = shipped_calibration()
    assert shipped.with_examples is not None and not shipped.plain.isotonic
    assert shipped.plain.contest_margin == CONTEST_MARGIN > shipped.with_examples.contest_margin
    knots = shipped.with_examples.isotonic
    assert len(knots) > 2 and all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(knots, knots[1:], strict=False))


def test_a_soft_shortlist_names_runners_up_down_to_the_shortlist_score_and_three_skills_at_most() -> None:
    def alternative(name: str, score: float) -> Alternative:
        return Alternative(id=name, path=f"/skills/{name}", score=score, key=name)

    result = RouteResult(
        query="turn this table into a chart",
        skill=SkillRef(id="charts", name="charts", path="/skills/charts", description="Draw charts.", key="charts"),
        confidence=0.6,
        decision="soft",
        method="hybrid",
        alternatives=(
            alternative("plots", SHORTLIST_SCORE),
            alternative("tables", SHORTLIST_SCORE / 2),
            alternative("graphs", 0.3),
            alternative("slides", 0.2),
        ),
    )
    # The first two to qualify in the router's order, shown (and listed) the most confident first.
    assert action_for(result).candidates == ("charts", "graphs", "plots")
