"""``skillpilot bench``: a reproducible benchmark of SkillPilot and its peers, side by side.

An edge of the library (it imports the facade, never the other way round):

    suites   query files + catalogs, the shared suites       -> Suite
    methods  routers under test behind one Protocol          -> Ranking per query
    runner   build, warm up, time, isolate per process       -> SuiteRun (Predictions)
    metrics  pure functions of the predictions               -> metric dicts
    report   results JSON, README markdown table, PNG chart  -> files

Optional dependencies (``pip install 'skillpilot[bench]'``) are imported only by the method or
output that needs them.
"""

from __future__ import annotations

from ..errors import BenchError
from .methods import METHODS, Method, MethodOptions, Ranking, make_method
from .metrics import Prediction, summarize
from .report import render_chart, render_markdown, results_document, write_json
from .runner import SuiteRun, run_method, run_suite
from .suites import (
    Catalog,
    CatalogEntry,
    Query,
    Suite,
    load_catalog,
    load_queries,
    make_suite,
    shared_suite,
)
from .tokens import TokenCounter

__all__ = [
    "BenchError",
    "Catalog",
    "CatalogEntry",
    "METHODS",
    "Method",
    "MethodOptions",
    "Prediction",
    "Query",
    "Ranking",
    "Suite",
    "SuiteRun",
    "TokenCounter",
    "load_catalog",
    "load_queries",
    "make_method",
    "make_suite",
    "render_chart",
    "render_markdown",
    "results_document",
    "run_method",
    "run_suite",
    "shared_suite",
    "summarize",
    "write_json",
]
