"""Golden routing snapshot: today's RouteResults (latency aside), traces and plans included, on the
development corpus, the conflict suite and a fixed 500-query MetaTool sample.

A refactor must keep every answer identical (floats to 1e-9); a change meant to alter routing
re-baselines the snapshot with ``UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py``
and says in its commit which answers changed and why. The snapshot files are JSON Lines, one
query per line, so a re-baseline's diff shows exactly which messages moved.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillpilot import SkillPilot
from skillpilot.bench.suites import shared_suite

from .conftest import BENCH, require_corpus

GOLDEN = Path(__file__).parent / "golden"
METATOOL_SAMPLE = 500
METATOOL_SEED = 22
TOLERANCE = 1e-9
SUITES = ("real", "conflicts", "metatool")
GoldenRoutes = dict[str, list[tuple[str, dict[str, Any]]]]


def _snapshot(result: Any, root: Path) -> dict[str, Any]:
    """The result as JSON, latency and load time dropped and the catalog's folder written as ``<root>`` (it
    differs between checkouts)."""
    data: dict[str, Any] = result.to_dict()
    data.pop("latency_ms")
    data.pop("load_ms")
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    located: dict[str, Any] = json.loads(text.replace(json.dumps(str(root))[1:-1], "<root>"))
    return located


def _same(expected: Any, actual: Any, where: str) -> str | None:
    """The first difference between two JSON values (floats within TOLERANCE), or None."""
    if isinstance(expected, float) or isinstance(actual, float):
        if isinstance(expected, int | float) and isinstance(actual, int | float):
            return None if math.isclose(expected, actual, rel_tol=0, abs_tol=TOLERANCE) else where
        return where
    if isinstance(expected, dict) and isinstance(actual, dict):
        if expected.keys() != actual.keys():
            return f"{where} keys {sorted(expected)} != {sorted(actual)}"
        for key in expected:
            found = _same(expected[key], actual[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{where} length {len(expected)} != {len(actual)}"
        for n, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found = _same(e, a, f"{where}[{n}]")
            if found:
                return found
        return None
    return None if expected == actual else where


@pytest.fixture(scope="module")
def golden_routes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GoldenRoutes]:
    require_corpus()
    work = tmp_path_factory.mktemp("golden")
    routes: GoldenRoutes = {}
    for name in SUITES:
        suite = shared_suite(name, BENCH, work, limit=METATOOL_SAMPLE, seed=METATOOL_SEED)
        pilot = SkillPilot(home=work / name, log_enabled=False)
        pilot.index([suite.catalog.root])
        root = suite.catalog.root.resolve()
        routes[name] = [(q.id, _snapshot(pilot.route(q.query, trace=True), root)) for q in suite.queries]
        pilot.close()
    yield routes


@pytest.mark.slow
@pytest.mark.parametrize("suite", SUITES)
def test_routes_equal_the_golden_snapshot(suite: str, golden_routes: GoldenRoutes) -> None:
    path = GOLDEN / f"{suite}.jsonl"
    actual = golden_routes[suite]
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        lines = (json.dumps({"id": q, "result": r}, ensure_ascii=False, sort_keys=True) for q, r in actual)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [e["id"] for e in expected] == [qid for qid, _ in actual]
    differences = [
        f"{qid}: {diff}"
        for e, (qid, result) in zip(expected, actual, strict=True)
        if (diff := _same(e["result"], result, "result"))
    ]
    assert not differences, f"{len(differences)} of {len(actual)} routes changed:\n" + "\n".join(differences[:20])
