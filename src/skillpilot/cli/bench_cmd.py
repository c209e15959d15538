"""The ``skillpilot bench`` command: parse options, run :mod:`skillpilot.bench`, print or save.

Progress goes to stderr; stdout carries the result tables, the markdown table with
``--markdown``, or the whole results document with ``--json`` (and nothing else). With
``--output FILE.json`` the document is saved and a chart is drawn beside it (``FILE.png``).
Exit codes: 0 done, 1 an error (bad data, a method that failed), 2 a usage error.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..bench import (
    METHODS,
    MethodOptions,
    TokenCounter,
    load_catalog,
    make_suite,
    render_chart,
    render_markdown,
    results_document,
    run_suite,
    shared_suite,
    write_json,
)
from ..bench.report import fmt_num, fmt_pct
from ..bench.runner import ProgressFactory, SuiteRun, Tick
from ..bench.suites import DEFAULT_METATOOL_LIMIT, SUITES, default_data_dir
from ..config import Settings
from ..errors import SkillPilotError
from . import SafeConsole

EXIT_ERROR = 1

_out = SafeConsole(highlight=False)
_err = SafeConsole(stderr=True, highlight=False)


@contextmanager
def _progress(enabled: bool) -> Iterator[ProgressFactory | None]:
    if not enabled:
        yield None
        return
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_err,
        transient=False,
    )

    def task(label: str, total: int) -> Tick:
        task_id = bar.add_task(label, total=total)
        return lambda: bar.advance(task_id)

    with bar:
        yield task


def _methods(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in METHODS]
    if unknown or not names:
        raise typer.BadParameter(
            f"unknown method(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(METHODS)}"
        )
    return names


def _suites(value: str | None) -> list[str]:
    names = [n.strip() for n in (value or "all").split(",") if n.strip()]
    if names == ["all"]:
        return list(SUITES)
    unknown = [n for n in names if n not in SUITES]
    if unknown or not names:
        raise typer.BadParameter(
            f"unknown suite(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(SUITES)} or all"
        )
    return names


def _print_tables(document: dict[str, Any]) -> None:
    for suite in document["suites"]:
        table = Table(
            title=f"{suite['name']}: {suite['skills']} skills, {suite['queries']} queries",
            title_justify="left",
        )
        for column in (
            "method",
            "hit@1",
            "hit@3",
            "MRR",
            "pass P",
            "pass R",
            "conflicts",
            "p50 ms",
            "p99 ms",
            "build s",
            "RSS MB",
            "tokens saved",
        ):
            table.add_column(column, justify="left" if column == "method" else "right")
        for method in suite["methods"]:
            m = method["metrics"]
            acc, pt, lat = m["accuracy"]["all"], m["passthrough"], m["latency_ms"]
            table.add_row(
                method["name"],
                fmt_pct(acc["hit@1"]),
                fmt_pct(acc["hit@3"]),
                fmt_pct(acc["mrr"]),
                fmt_pct(pt["precision"] if pt["out_of_scope"] else None),
                fmt_pct(pt["recall"]),
                fmt_pct(m["conflict_accuracy"]),
                fmt_num(lat["p50"], 2),
                fmt_num(lat["p99"], 2),
                fmt_num(method["build_seconds"], 2),
                fmt_num(method["peak_rss_mb"], 0),
                fmt_pct(m["tokens"]["saving"]),
            )
        # Off a terminal Rich assumes 80 columns and would elide most of the 12 columns.
        wide = _out if _out.is_terminal else SafeConsole(highlight=False, width=150)
        wide.print(table)


def bench(
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite",
            help=f"Shared-data suites, comma-separated: {', '.join(SUITES)} or all (the default without --skills).",
        ),
    ] = None,
    skills: Annotated[
        Path | None,
        typer.Option("--skills", help="A skills folder or JSON tool catalog to benchmark instead of a suite."),
    ] = None,
    queries: Annotated[
        list[Path] | None, typer.Option("--queries", help="JSON Lines query file for --skills (repeatable).")
    ] = None,
    methods: Annotated[
        str, typer.Option("--methods", help=f"Comma-separated methods: {', '.join(METHODS)}.")
    ] = ",".join(METHODS),
    data: Annotated[
        Path | None,
        typer.Option(
            "--data", help="Shared bench data folder (default: $SKILLPILOT_BENCH_DATA, else ../shared/bench)."
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=0, help="MetaTool queries to sample (seeded); 0 = all 20,614.")
    ] = DEFAULT_METATOOL_LIMIT,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the MetaTool sample and the calibration folds.")] = 0,
    encoder: Annotated[
        str,
        typer.Option("--encoder", help="Encoders of SkillPilot, dense-only and semantic-router (embed_provider spec)."),
    ] = Settings.embed_provider,
    output: Annotated[
        Path | None,
        typer.Option("--output", help="Write the results JSON here, and its chart beside it (.png)."),
    ] = None,
    chart: Annotated[bool, typer.Option("--chart/--no-chart", help="Draw the PNG chart with --output.")] = True,
    isolate: Annotated[
        bool,
        typer.Option("--isolate/--in-process", help="One process per method (true peak RSS per method)."),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results document on stdout.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the README markdown table on stdout.")] = False,
) -> None:
    """Benchmark SkillPilot and its peers: hit@1/3, MRR, pass-through, conflicts, latency, memory, tokens."""
    names = _methods(methods)
    if skills is not None and suite is not None:
        raise typer.BadParameter("give either --suite or --skills with --queries, not both")
    if skills is not None and not queries:
        raise typer.BadParameter("--skills needs at least one --queries file")
    if queries and skills is None:
        raise typer.BadParameter("--queries needs --skills (the catalog its keys refer to)")
    suite_names = _suites(suite)
    options = MethodOptions(encoder=encoder, seed=seed)
    data_dir = (data or default_data_dir()).expanduser()
    try:
        counter = TokenCounter()
        runs: list[SuiteRun] = []
        with tempfile.TemporaryDirectory(prefix="skillpilot-bench-") as workdir, _progress(True) as progress:
            if skills is not None:
                loaded = [make_suite("custom", load_catalog(skills), queries or [])]
            else:
                loaded = [shared_suite(n, data_dir, Path(workdir), limit, seed) for n in suite_names]
            for one in loaded:
                runs.append(run_suite(one, names, options, counter, isolate=isolate, progress=progress))
        document = results_document(runs, options, counter, limit)
        if output is not None:
            write_json(document, output)
            if chart:
                render_chart(document, output.with_suffix(".png"))
    except SkillPilotError as exc:
        _err.print(f"[red]error:[/red] {exc}", soft_wrap=True)
        raise typer.Exit(EXIT_ERROR) from exc
    if as_json:
        sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
    elif markdown:
        sys.stdout.write(render_markdown(document))
    else:
        _print_tables(document)
    if output is not None:
        _err.print(f"wrote {output}" + (f" and {output.with_suffix('.png')}" if chart else ""))


def register(app: typer.Typer) -> None:
    """Add the ``bench`` command to the ``skillpilot`` app."""
    app.command("bench")(bench)
