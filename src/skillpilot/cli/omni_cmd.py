"""The omni-retrieval commands: fused context for a question, and the sources it draws on.

    skillpilot context "question" [--session S] [--kb NAME] [--space SPACE] [--source attachment ...]
                                  [--max-tokens 2000] [--top-k 5] [--json]
    skillpilot attach SESSION FILE...                  register files to a session
    skillpilot kb build NAME FOLDER | kb list          index a folder as a knowledge base
    skillpilot graph load FILE [--space S] [--replace] load CSV/JSON triples into a graph space

Same conventions as the rest of the CLI: results on stdout (``--json``: the library's JSON and
nothing else), warnings and progress on stderr, exit 1 on a SkillPilot error, 2 on a usage error.
A ``context`` call whose sources are all missing or failing still exits 0: an empty context with
its reasons in ``warnings`` is a result.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from ..config import Settings, load_settings
from ..omni import OmniRequest, attach_files, build_knowledge_base, load_triples, omni_retrieve
from ..omni.model import DEFAULT_GRAPH_SPACE, DEFAULT_MAX_TOKENS, DEFAULT_TOP_K, SOURCE_NAMES, SourceName
from ..omni.pipeline import document_store
from ..omni.sources.chunkstore import IngestReport
from . import HomeOption, JsonOption, _print_json, _run, err, out

kb_app = typer.Typer(help="Build and list knowledge bases for `skillpilot context`.", no_args_is_help=True)
graph_app = typer.Typer(help="Load entity/relation triples for `skillpilot context`.", no_args_is_help=True)

SpaceOption = Annotated[str, typer.Option("--space", help="Graph space.")]


def _settings(home: Path | None) -> Settings:
    return _run(lambda: load_settings(home))


def _source_names(values: list[str] | None) -> tuple[SourceName, ...] | None:
    if not values:
        return None
    chosen = tuple(s for s in SOURCE_NAMES if s in values)
    unknown = sorted(set(values) - set(SOURCE_NAMES))
    if unknown:
        raise typer.BadParameter(f"{', '.join(unknown)}: use {', '.join(SOURCE_NAMES)}", param_hint="--source")
    return chosen


def context(
    query: Annotated[str, typer.Argument(help="The question to find context for.")],
    session: Annotated[
        str | None, typer.Option("--session", help="Session whose attachments to search (sessionId).")
    ] = None,
    kb: Annotated[
        str | None, typer.Option("--kb", help="Knowledge base to search [default: all] (knowledgeBase).")
    ] = None,
    space: SpaceOption = DEFAULT_GRAPH_SPACE,
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source",
            help=f"Ask this source whatever the question looks like (repeatable): {', '.join(SOURCE_NAMES)}.",
        ),
    ] = None,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Token budget of the context.")] = (
        DEFAULT_MAX_TOKENS
    ),
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, help="At most this many items per source.")] = (
        DEFAULT_TOP_K
    ),
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Route a question to attachments / knowledge base / graph and print one fused context."""
    settings = _settings(home)
    try:
        request = OmniRequest(
            query=query,
            session_id=session,
            graph_space=space,
            knowledge_base=kb,
            sources=_source_names(source),
            max_tokens=max_tokens,
            top_k=top_k,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    result = _run(lambda: omni_retrieve(request, settings))
    for warning in result.warnings:
        err.print(f"warning: {warning}", markup=False, soft_wrap=True)
    if as_json:
        _print_json(result.to_json())
        return
    err.print(
        f"intent {result.intent}; asked {', '.join(result.sources)}; {len(result.items)} items"
        + (" (truncated to --max-tokens)" if result.truncated else ""),
        markup=False,
    )
    if result.context_text:
        out.print(result.context_text, markup=False, highlight=False, soft_wrap=True)


def _print_ingest(report: IngestReport, as_json: bool) -> None:
    if as_json:
        _print_json(asdict(report))
        return
    err.print(
        f"{report.kind} {report.collection!r}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.unchanged)} unchanged, {len(report.removed)} removed ({report.chunks} new chunks)",
        markup=False,
    )
    for skipped in report.skipped:
        err.print(f"  skipped {skipped['path']}: {skipped['reason']}", markup=False, soft_wrap=True)


def attach(
    session: Annotated[str, typer.Argument(help="Session id the files belong to.")],
    files: Annotated[list[Path], typer.Argument(help="txt, md, html, pdf or docx files.")],
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Register files to a session, for `skillpilot context --session SESSION`."""
    settings = _settings(home)
    _print_ingest(_run(lambda: attach_files(settings, session, files)), as_json)


@kb_app.command("build")
def kb_build(
    name: Annotated[str, typer.Argument(help="Knowledge base name (knowledgeBase).")],
    folder: Annotated[Path, typer.Argument(help="Folder of txt, md, html, pdf and docx files.")],
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Index a folder as a knowledge base (again: only changed files are re-read)."""
    settings = _settings(home)
    _print_ingest(_run(lambda: build_knowledge_base(settings, name, folder)), as_json)


@kb_app.command("list")
def kb_list(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """List the knowledge bases and their documents."""
    store = document_store(_settings(home))
    bases = _run(lambda: {name: store.document_names("knowledge", name) for name in store.collections("knowledge")})
    if as_json:
        _print_json(bases)
        return
    if not bases:
        err.print("no knowledge base yet; build one with `skillpilot kb build NAME FOLDER`", markup=False)
    for name, documents in bases.items():
        out.print(f"{name}: {len(documents)} documents", markup=False)


@graph_app.command("load")
def graph_load(
    file: Annotated[
        Path,
        typer.Argument(help="CSV (subject,predicate,object[,subject_type,object_type]) or JSON array of such objects."),
    ],
    space: SpaceOption = DEFAULT_GRAPH_SPACE,
    replace: Annotated[bool, typer.Option("--replace", help="Empty the space first.")] = False,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Load triples into a graph space."""
    settings = _settings(home)
    report = _run(lambda: load_triples(settings, file, space, replace=replace))
    if as_json:
        _print_json(asdict(report))
        return
    err.print(
        f"graph space {report.space!r}: {report.added} of {report.read} triples added; now "
        f"{report.triples} triples between {report.entities} entities",
        markup=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``context``, ``attach``, ``kb`` and ``graph`` to the ``skillpilot`` app."""
    app.command("context")(context)
    app.command("attach")(attach)
    app.add_typer(kb_app, name="kb")
    app.add_typer(graph_app, name="graph")
