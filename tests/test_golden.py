"""Golden routing snapshot: today's RouteResults (latency aside), traces and plans included, on the
development corpus, the conflict suite and a fixed 500-query MetaTool sample.

A refactor must keep every answer identical; a change meant to alter routing re-baselines the
snapshot with ``UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py`` and says in its commit
which answers changed and why. The snapshot files are JSON Lines, one query per line, so a
re-baseline's diff shows exactly which messages moved.

The snapshot holds on every CPU kind (AVX-512, AVX2 only): the encoders' vectors agree across
instruction sets to ~2e-7 per component (``tests/test_cpu_agreement.py``), so numbers are compared
to ``TOLERANCE`` = 1e-6, and nothing looser. A number the library rounds (a confidence to 4
decimals, a fused score to 3, a score printed inside a reason) stands for the interval it was
rounded from: a value on a rounding boundary may round either way on another CPU, so two rounded
values agree when the values they stand for can lie within ``TOLERANCE`` of each other, that is
when they differ by at most one rounding step plus ``TOLERANCE``.
"""

from __future__ import annotations

import json
import math
import os
import re
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
TOLERANCE = 1e-6
# The rounding step of each number the library rounds (router, decide, explain), by field.
ROUNDED = {"confidence": 1e-4, "score": 1e-4}
TRACE_ROUNDED = {"fusion": 1e-3, "redirects": 1e-2, "bm25": 1e-4, "dense:": 1e-4}
NUMBER = re.compile(r"-?\d+\.(\d+)")
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


def _close(expected: float, actual: float, step: float) -> bool:
    return math.isclose(expected, actual, rel_tol=0, abs_tol=step + TOLERANCE)


def _same_text(expected: str, actual: str) -> bool:
    """Equal words, and each number printed in them equal within its printed precision."""
    if NUMBER.sub("#", expected) != NUMBER.sub("#", actual):
        return False
    pairs = zip(NUMBER.finditer(expected), NUMBER.finditer(actual), strict=True)
    return all(
        len(e.group(1)) == len(a.group(1)) and _close(float(e.group()), float(a.group()), 10.0 ** -len(e.group(1)))
        for e, a in pairs
    )


def _same(expected: Any, actual: Any, where: str, step: float = 0.0) -> str | None:
    """The first difference between two JSON values, or None: numbers within ``step`` (their
    rounding step) plus TOLERANCE, texts by ``_same_text``."""
    if isinstance(expected, float) or isinstance(actual, float):
        if isinstance(expected, int | float) and isinstance(actual, int | float):
            return None if _close(expected, actual, step) else where
        return where
    if isinstance(expected, str) and isinstance(actual, str):
        return None if _same_text(expected, actual) else where
    if isinstance(expected, dict) and isinstance(actual, dict):
        if expected.keys() != actual.keys():
            return f"{where} keys {sorted(expected)} != {sorted(actual)}"
        if "stage" in expected and "candidates" in expected:
            stage = str(expected["stage"])
            step = next((s for prefix, s in TRACE_ROUNDED.items() if stage.startswith(prefix)), 0.0)
        for key in expected:
            found = _same(expected[key], actual[key], f"{where}.{key}", ROUNDED.get(key, step))
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{where} length {len(expected)} != {len(actual)}"
        for n, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found = _same(e, a, f"{where}[{n}]", step)
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
