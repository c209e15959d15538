"""The ``skillpilot`` command: parse arguments, call the library, format the answer.

JSON goes to stdout only; logs, warnings and progress bars go to stderr. Exit codes: 0 the
command did its job (a pass-through is a result), 1 an error, 2 a usage error, 3 a
pass-through with ``--fail-on-passthrough``.

Commands load lazily, so ``skillpilot route`` imports neither the benchmark, the marketplace,
OmniContext, OntoSkills nor the servers. The core commands live in this module; every other
command lives in a module of this package with a ``register(app)`` function that adds its
commands (or sub-apps) to ``app`` as usual. To add one, write that module and name its
commands in ``LAZY_COMMANDS`` below (command name -> module, in the order ``--help`` lists
them); the module is imported only when one of its commands runs or ``--help`` lists them.
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
import typer.core
import typer.main
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..config import load_settings
from ..errors import SkillPilotError, StoreError
from ..index.sqlite import set_aside
from ..model import IndexReport, RouteResult
from ..text import clean_text, terminal_safe

if TYPE_CHECKING:
    from typer._click import Command  # Typer vendors its own Click

    from ..router import SkillPilot

EXIT_ERROR = 1
EXIT_PASSTHROUGH = 3
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"

# Command name -> the module of this package whose register(app) adds it; --help lists them in
# this order after the core commands (Typer's own order: commands, then groups of commands).
LAZY_COMMANDS: dict[str, str] = {
    "bench": "bench_cmd",
    "eval": "eval_cmd",
    "market-search": "market_cmd",
    "related": "market_cmd",
    "dedup": "market_cmd",
    "conflicts": "manage",
    "mcp": "surfaces",
    "serve": "surfaces",
    "docs": "docs_cmd",
    "doctor": "host_cmd",
    "enrich": "enrich_cmd",
    "lint": "authoring",
    "plan": "authoring",
    "log": "log_cmd",
    "watch": "watch_cmd",
    "context": "omni_cmd",
    "attach": "omni_cmd",
    "compile": "onto_cmd",
    "export-embeddings": "onto_cmd",
    "install": "onto_cmd",
    "uninstall": "onto_cmd",
    "list": "onto_cmd",
    "feedback": "manage",
    "config": "manage",
    "hook": "surfaces",
    "service": "host_cmd",
    "setup": "host_cmd",
    "kb": "omni_cmd",
    "graph": "omni_cmd",
}


def _load_commands(module_name: str) -> dict[str, Command]:
    """The Click commands that ``module_name``'s ``register(app)`` adds to an app."""
    module = importlib.import_module(f".{module_name}", __name__)
    staging = typer.Typer()
    module.register(staging)
    return dict(typer.main.get_group(staging).commands)


class _LazyCommands(MutableMapping[str, "Command"]):
    """A group's commands: the eager ones, then ``lazy`` ones built on first lookup."""

    def __init__(self, eager: Mapping[str, Command], lazy: Mapping[str, str]) -> None:
        self._eager = dict(eager)
        self._lazy = lazy
        self._loaded: dict[str, Command] = {}

    def __getitem__(self, name: str) -> Command:
        if name in self._eager:
            return self._eager[name]
        if name not in self._lazy:
            raise KeyError(name)
        if name not in self._loaded:
            self._loaded.update(_load_commands(self._lazy[name]))
        return self._loaded[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._eager[name] = command

    def __delitem__(self, name: str) -> None:
        del self._eager[name]

    def __iter__(self) -> Iterator[str]:
        yield from self._eager
        yield from (name for name in self._lazy if name not in self._eager)

    def __len__(self) -> int:
        return len(set(self._eager) | set(self._lazy))


class _LazyGroup(typer.core.TyperGroup):
    """The top-level group: Typer's, with the ``LAZY_COMMANDS`` resolved on demand."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _LazyCommands(self.commands, LAZY_COMMANDS)


app = typer.Typer(
    cls=_LazyGroup,
    name="skillpilot",
    help="Route a message to the right agent skill before the LLM runs: offline, in milliseconds, with the reasons.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class SafeConsole(Console):
    """A Rich console that prints control characters in text as ``\\xNN`` (its own styling
    still works): skill names, descriptions and paths are untrusted, and an escape sequence in
    one must not clear the screen, retitle the window or hide text."""

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Any:
        return super().render_str(terminal_safe(text), *args, **kwargs)


out = SafeConsole(highlight=False)
err = SafeConsole(stderr=True, highlight=False)

T = TypeVar("T")

HomeOption = Annotated[
    Path | None,
    typer.Option("--home", envvar="SKILLPILOT_HOME", help="Index and config folder [default: ~/.skillpilot]."),
]


def _output_format(ctx: typer.Context, param: typer.CallbackParam, value: bool) -> bool:
    """``--json`` / ``--human`` when given, else ``platforms.cli.outputFormat`` from the config."""
    source = ctx.get_parameter_source(param.name) if param.name else None
    # By name: the enum class depends on which click typer runs on.
    if source is None or source.name != "DEFAULT":
        return value
    try:
        return load_settings(ctx.params.get("home")).output_format == "json"
    except SkillPilotError:
        # A broken config is the command's own error to report, in the default format.
        return value


JsonOption = Annotated[
    bool,
    typer.Option(
        "--json/--human",
        callback=_output_format,
        help="Print JSON on stdout, or text [default: platforms.cli.outputFormat, human].",
    ),
]
PreconditionsOption = Annotated[
    str | None,
    typer.Option(
        "--preconditions",
        help="on|off: lower the score of skills whose env vars / binaries are missing "
        "[default: on; env SKILLPILOT_PRECONDITIONS].",
    ),
]
StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        envvar="SKILLPILOT_STORE",
        help="Index store: postgresql://user@host/db (needs the postgres extra) or a SQLite "
        "file; default: $SKILLPILOT_HOME/index.sqlite.",
    ),
]


@app.callback()
def _everywhere(
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Index store for every command (and the services they start): a postgresql:// URL or "
            "a SQLite file [default: index.store in config.yaml, env SKILLPILOT_STORE, else "
            "$SKILLPILOT_HOME/index.sqlite].",
        ),
    ] = None,
) -> None:
    # Through the environment, so every SkillPilot this process builds (serve, mcp, the watcher,
    # the dashboard) and every process it starts reads it like SKILLPILOT_STORE.
    if store:
        os.environ["SKILLPILOT_STORE"] = store


def _pilot(home: Path | None, store: str | None = None, surface: str = "cli", **overrides: Any) -> SkillPilot:
    # Imported by the commands that route, not with the CLI: `skillpilot mcp` answers its
    # client's `initialize` without it.
    from ..router import SkillPilot

    return SkillPilot(home=home, store=store or None, surface=surface, **overrides)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _fail(message: str) -> typer.Exit:
    # escape: messages hold brackets that are not markup, like `pip install 'skillpilot[mcp]'`.
    err.print(f"[red]error:[/red] {escape(message)}", markup=True, soft_wrap=True)
    return typer.Exit(EXIT_ERROR)


def _run(action: Callable[[], T]) -> T:
    """Run a library call; map SkillPilot errors to a one-line message and exit code 1."""
    try:
        return action()
    except SkillPilotError as exc:
        raise _fail(str(exc)) from exc


def _preconditions(value: str | None) -> bool | None:
    if value is None:
        return None
    if value not in ("on", "off"):
        raise typer.BadParameter("use on or off", param_hint="--preconditions")
    return value == "on"


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A Rich progress bar on stderr when it is a terminal; nothing otherwise."""
    if not (enabled and err.is_terminal):
        yield None
        return
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    tasks: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = bar.add_task(stage, total=total)
        bar.update(tasks[stage], completed=done, total=total)

    with bar:
        yield update


def _print_index_report(report: IndexReport, as_json: bool) -> None:
    if as_json:
        _print_json(asdict(report))
        return
    # The roots' own count first: the index may hold other roots' skills too.
    found = report.added + report.updated + report.unchanged
    whole = f" (the index holds {report.total})" if report.total != found else ""
    err.print(
        f"indexed [bold]{found}[/bold] skills from {len(report.roots)} root(s){whole} in "
        f"{report.seconds:.2f}s: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.removed} removed, {len(report.skipped)} skipped",
        markup=True,
    )
    for skipped in report.skipped:
        # Escaped: a reason may hold brackets (`pip install 'skillpilot[ontoskills]'`).
        line = f"  [yellow]skipped[/yellow] {escape(skipped.path)}: {escape(skipped.reason)}"
        err.print(line, markup=True, soft_wrap=True)
    for warning in report.warnings:
        err.print(f"  [yellow]warning[/yellow] {escape(warning)}", markup=True, soft_wrap=True)


@app.command()
def index(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Skill folders (scanned for SKILL.md) or JSON tool catalogs. Default: the configured skill folders."
        ),
    ] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Drop known roots not named here.")] = False,
    home: HomeOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add or refresh skill roots in the index (incremental and atomic)."""
    pilot = _run(lambda: _pilot(home, store))
    roots = paths or [Path(d).expanduser() for d in pilot.settings.skill_dirs]
    with _progress(not as_json) as progress:
        report = _run(lambda: pilot.index(roots, replace=replace, progress=progress))
    _print_index_report(report, as_json)
    if pilot.settings.enrich_on_index:
        # Example requests for new and changed skills (enrich.onIndex); the watcher never does this.
        # Loaded as the command modules are (``_load_commands``): enrich_cmd builds on this module.
        importlib.import_module(".enrich_cmd", __name__).enrich_after_index(pilot, quiet=as_json)


@app.command()
def reindex(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """Refresh every root the index knows (a damaged index is moved aside and rebuilt)."""
    pilot = _run(lambda: _pilot(home))
    with _progress(not as_json) as progress:
        try:
            report = pilot.reindex(progress=progress)
        except StoreError as exc:
            if exc.problem != "damaged" or pilot.settings.store:
                raise _fail(str(exc)) from exc
            pilot.close()
            moved = set_aside(pilot.settings.index_path)
            err.print(f"the index was damaged ({exc}); kept it as {moved} and rebuilt it", markup=False)
            pilot = _run(lambda: _pilot(home))
            report = _run(lambda: pilot.reindex(progress=progress))
    _print_index_report(report, as_json)


def _timing(result: RouteResult) -> str:
    """Routing time, and apart from it the loading a cold call paid (index, models)."""
    routing = f"{result.latency_ms:.1f} ms"
    return f"{routing} + {result.load_ms:.1f} ms loading" if result.load_ms > 0 else routing


def _print_route(result: RouteResult) -> None:
    colour = {"hard": "green", "soft": "yellow", "passthrough": "dim"}[result.decision]
    if result.skill is None:
        out.print(f"[dim]pass-through[/dim]: no skill matched ({_timing(result)})", markup=True)
        return
    label = "pass-through, best guess" if result.decision == "passthrough" else result.decision
    out.print(
        f"[{colour}]{label}[/{colour}] [bold]{result.skill.id}[/bold]  confidence {result.confidence:.2f}, "
        f"{result.method}, {_timing(result)}",
        markup=True,
    )
    out.print(f"  {result.skill.description}", markup=False, soft_wrap=True)
    out.print(f"  path: {result.skill.path}", markup=False, soft_wrap=True)
    for reason in result.reasons:
        out.print(f"  - {reason}", markup=False, soft_wrap=True)
    if result.unmet_preconditions:
        out.print(f"  unmet: {'; '.join(result.unmet_preconditions)}", markup=False)
    if result.alternatives:
        out.print(
            "  runners-up: " + ", ".join(f"{a.id} ({a.score:.2f})" for a in result.alternatives),
            markup=False,
            soft_wrap=True,
        )


@app.command()
def route(
    ctx: typer.Context,
    message: Annotated[str | None, typer.Argument(help="The user message to route.")] = None,
    queries: Annotated[
        Path | None,
        typer.Option(
            "--queries",
            help='Batch mode: a JSON Lines file of {"id", "query"}; '
            "writes one JSON RouteResult per line with its id (text per query with --human).",
        ),
    ] = None,
    trace: Annotated[bool, typer.Option("--trace", help="Include every stage of the decision.")] = False,
    fail_on_passthrough: Annotated[
        bool, typer.Option("--fail-on-passthrough", help="Exit 3 when the decision is pass-through.")
    ] = False,
    preconditions: PreconditionsOption = None,
    home: HomeOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Route one message (or a batch) and print the decision, confidence and runners-up."""
    if (message is None) == (queries is None):
        raise typer.BadParameter("give a MESSAGE or --queries FILE, not both or neither")
    pilot = _run(lambda: _pilot(home, store, preconditions=_preconditions(preconditions)))
    if queries is not None:
        # Batch output is JSON Lines unless text is asked for by name (not by the config default).
        source = ctx.get_parameter_source("as_json")
        human = not as_json and source is not None and source.name == "COMMANDLINE"
        passed_through = _route_batch(pilot, queries, trace, human)
        if fail_on_passthrough and passed_through:
            raise typer.Exit(EXIT_PASSTHROUGH)
        return
    assert message is not None
    result = _run(lambda: pilot.route(message, trace=trace))
    if as_json:
        _print_json(result.to_dict())
    else:
        _print_route_text(result, trace)
    if fail_on_passthrough and result.decision == "passthrough":
        raise typer.Exit(EXIT_PASSTHROUGH)


def _print_route_text(result: RouteResult, trace: bool) -> None:
    _print_route(result)
    if trace and result.trace:
        _print_trace(result)


def _route_batch(pilot: SkillPilot, path: Path, trace: bool, human: bool = False) -> bool:
    """One JSON line per query line (``human``: the one-message text, headed by the id); a line
    that is not a query gets an error line (and exit 1 at the end), and every other line is still
    routed. Undecodable bytes read as U+FFFD. True when any query passed through."""
    passed_through = False
    try:
        lines = path.read_bytes().decode("utf-8", "replace").splitlines()
    except OSError as exc:
        raise _fail(f"{path}: cannot read the queries file ({exc.strerror})") from exc
    bad = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        item: Any = None
        try:
            item = json.loads(line)
            query = item["query"]
            if not isinstance(query, str):
                raise TypeError(query)
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            bad += 1
            message = f'line {number} of {path}: expected {{"id": ..., "query": "..."}} ({type(exc).__name__})'
            err.print(message, markup=False)
            ident = item.get("id") if isinstance(item, dict) else None
            error = {"type": "InvalidQuery", "message": message}
            if not human:
                sys.stdout.write(json.dumps({"id": ident, "line": number, "error": error}) + "\n")
            continue
        result = _run(functools.partial(pilot.route, query, trace=trace))
        passed_through = passed_through or result.decision == "passthrough"
        ident = item.get("id")
        ident = clean_text(ident) if isinstance(ident, str) else ident
        if human:
            out.print(f"{ident}: {result.query}", markup=False)
            _print_route_text(result, trace)
            continue
        sys.stdout.write(json.dumps({"id": ident, **result.to_dict()}, ensure_ascii=False) + "\n")
    if bad:
        raise typer.Exit(1)
    return passed_through


def _bar(value: float, width: int = 20) -> str:
    filled = max(0, min(width, round(value * width)))
    return "█" * filled + "░" * (width - filled)


def _print_trace(result: RouteResult) -> None:
    out.print(f'\nQuery: "{result.query}"', markup=False)
    for stage in result.trace or ():
        out.print(f"[bold]{stage.stage}[/bold]", markup=True)
        top = max((abs(s) for _, s in stage.candidates), default=1.0) or 1.0
        for skill_id, score in stage.candidates:
            out.print(f"  {skill_id:<40} {score:8.3f} {_bar(score / top)}", markup=False)
        for note in stage.notes:
            out.print(f"  {note}", markup=False, soft_wrap=True)


@app.command()
def explain(
    message: Annotated[str, typer.Argument(help="The user message to explain.")],
    preconditions: PreconditionsOption = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show every stage of a routing decision: fast path, BM25, dense, fusion, threshold."""
    pilot = _run(lambda: _pilot(home, preconditions=_preconditions(preconditions)))
    result = _run(lambda: pilot.route(message, trace=True))
    if as_json:
        _print_json(result.to_dict())
        return
    _print_trace(result)
    out.print()
    _print_route(result)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, help="At most this many results.")] = 5,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the best-matching skills (fewer rather than filler: adaptive cut-off)."""
    pilot = _run(lambda: _pilot(home))
    hits = _run(lambda: pilot.search(query, top_k=top_k))
    if as_json:
        _print_json([h.to_dict() for h in hits])
        return
    if not hits:
        out.print("no skill is relevant enough", markup=False)
    table = Table("score", "id", "description", box=None)
    for hit in hits:
        table.add_row(f"{hit.score:.2f}", hit.id, hit.description[:90])
    out.print(table)


@app.command()
def stats(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """Index statistics: skills, skipped files, conflict groups, low-quality fingerprints."""
    pilot = _run(lambda: _pilot(home))
    data = _run(pilot.stats)
    if as_json:
        _print_json(data.to_dict())
        return
    out.print(
        f"Indexed: {data.skills} skills ({data.conflict_groups} conflict groups, "
        f"{len(data.low_quality)} low-quality fingerprints, {len(data.skipped)} skipped files)",
        markup=False,
    )
    out.print(f"Roots: {', '.join(data.roots) or '(none)'}", markup=False, soft_wrap=True)
    out.print(f"Embed provider: {data.embed_provider}", markup=False)
    out.print(
        f"Example requests: {data.examples} of {data.skills} skills"
        + ("" if data.examples == data.skills else " (`skillpilot enrich` writes the rest)"),
        markup=False,
    )
    out.print(f"Index: {data.index_path}", markup=False, soft_wrap=True)
    out.print(f"Model cache: {data.model_cache}", markup=False, soft_wrap=True)
    for encoder, count in data.missing_vectors.items():
        out.print(
            f"Missing vectors: {count} skills have none from {encoder} (run `skillpilot reindex`)",
            markup=False,
            soft_wrap=True,
        )
    if data.nearest_neighbours:
        out.print("Candidates: from the HNSW index (more skills than index.annAbove)", markup=False)
    if data.orphan_vectors:
        out.print(
            f"Orphan vectors: {data.orphan_vectors} of skills no longer indexed (run `skillpilot reindex`)",
            markup=False,
            soft_wrap=True,
        )
    if data.last_updated:
        import datetime

        stamp = datetime.datetime.fromtimestamp(data.last_updated).isoformat(timespec="seconds")
        out.print(f"Last updated: {stamp}", markup=False)


@app.command()
def demo(
    examples: Annotated[Path, typer.Argument(help="The examples folder of the repository.")] = Path("examples"),
    home: Annotated[
        Path | None, typer.Option("--home", help="Where the demo index goes [default: ~/.skillpilot/demo].")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Index the bundled example skills and route the sample messages."""
    skills_dir = examples / "skills"
    messages_file = examples / "demo_messages.txt"
    if not skills_dir.is_dir() or not messages_file.is_file():
        raise _fail(f"{examples}: expected skills/ and demo_messages.txt there; run from the repository root")
    pilot = _run(lambda: _pilot(home or Path("~/.skillpilot/demo").expanduser(), preconditions=False))
    with _progress(not as_json) as progress:
        report = _run(lambda: pilot.index([skills_dir], replace=True, progress=progress))
    messages = [m for m in messages_file.read_text(encoding="utf-8").splitlines() if m.strip()]
    results = [_run(functools.partial(pilot.route, m)) for m in messages]
    if as_json:
        _print_json({"index": asdict(report), "routes": [r.to_dict() for r in results]})
        return
    _print_index_report(report, as_json=False)
    for result in results:
        out.print(f"\n[bold]» {result.query}[/bold]", markup=True)
        _print_route(result)


def main() -> None:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format=LOG_FORMAT)
    app()
