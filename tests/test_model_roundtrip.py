"""``RouteResult.from_dict`` reads back every field ``to_dict`` writes, through JSON, plan and trace
included, so a RouteResult that crossed HTTP (``serve.client``) is the one the service made."""

from __future__ import annotations

import dataclasses
import json

import pytest

from skillpilot.model import Alternative, PlanStep, RouteResult, SkillRef, StageTrace

COMMIT = SkillRef("git-commit", "git-commit", "/skills/git-commit", "Commit staged changes.", "git-commit")
PUSH = SkillRef("git-push", "git-push", "/skills/git-push", "Push commits to the remote.", "git-push")

EVERY_FIELD_SET = RouteResult(
    query="commit my changes and push them",
    skill=COMMIT,
    confidence=0.91,
    decision="hard",
    method="hybrid",
    alternatives=(Alternative("git-push", "/skills/git-push", 0.41, "git-push"),),
    conflict_resolved=True,
    conflict_alternatives=("git-amend",),
    reasons=("trigger 'commit' matched",),
    unmet_preconditions=("binary git not on PATH",),
    trace=(
        StageTrace("bm25", (("git-commit", 7.25), ("git-push", 3.5)), ("k1=1.2 b=0.75",)),
        StageTrace("threshold", (), ("hard >= 0.8",)),
    ),
    latency_ms=4.5,
    load_ms=812.0,
    plan=(PlanStep("commit my changes", COMMIT, 0.91, "hard"), PlanStep("push them", None, 0.2, "passthrough")),
)


def test_every_field_survives_json_and_back() -> None:
    # A field left at its default here could be dropped by from_dict unnoticed.
    for spec in dataclasses.fields(RouteResult):
        default = spec.default_factory() if spec.default_factory is not dataclasses.MISSING else spec.default
        assert getattr(EVERY_FIELD_SET, spec.name) != default, f"set {spec.name} in EVERY_FIELD_SET"
    wire = json.loads(json.dumps(EVERY_FIELD_SET.to_dict()))
    assert RouteResult.from_dict(wire) == EVERY_FIELD_SET


def test_a_result_without_trace_reads_back_without_trace() -> None:
    untraced = dataclasses.replace(EVERY_FIELD_SET, trace=None, plan=(), skill=None)
    assert "trace" not in untraced.to_dict()
    assert RouteResult.from_dict(json.loads(json.dumps(untraced.to_dict()))) == untraced


@pytest.mark.parametrize(
    "junk",
    [
        {},
        [],
        {**EVERY_FIELD_SET.to_dict(), "decision": "maybe"},
        {**EVERY_FIELD_SET.to_dict(), "method": "guess"},
        {**EVERY_FIELD_SET.to_dict(), "skill": {"id": 1}},
        {**EVERY_FIELD_SET.to_dict(), "plan": [{"text": "x"}]},
        {**EVERY_FIELD_SET.to_dict(), "trace": [{"stage": "bm25", "candidates": [1], "notes": []}]},
    ],
)
def test_anything_else_is_a_value_error(junk: object) -> None:
    with pytest.raises(ValueError, match="not a RouteResult"):
        RouteResult.from_dict(junk)  # type: ignore[arg-type]
