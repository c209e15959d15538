"""``skillpilot eval host HOST --skills DIR --queries FILE``: the proof in the host.

Drives the real host CLI (Claude Code, Gemini CLI, Codex CLI) offline against a scripted model
endpoint, each message without SkillPilot and with it, and reports per message whether the
model's request carried the right skill with its description, and the characters of the host's
listing and of SkillPilot's context (:mod:`skillpilot.bench.hostcli.evaluate`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from . import JsonOption, _print_json, _run, err, out

eval_app = typer.Typer(help="Measure what SkillPilot changes inside a real agent host.", no_args_is_help=True)
CLI_NAMES = {"claude-code": "claude", "gemini": "gemini", "codex": "codex"}


@eval_app.command("host")
def host(
    name: Annotated[str, typer.Argument(metavar="HOST", help="claude-code, gemini or codex.")],
    skills: Annotated[Path, typer.Option("--skills", help="A folder of skill folders (the host's user skills).")],
    queries: Annotated[Path, typer.Option("--queries", help='JSONL: {"query", "expected": [skill names]}.')],
    cli: Annotated[
        Path | None, typer.Option("--cli", help="The host's CLI (default: claude, gemini or codex on PATH).")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N messages.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Each message through the real host CLI without and with SkillPilot: is the right skill in the request?"""
    from ..bench.hostcli.evaluate import Row, evaluate, load_messages, row_dict, summary

    binary = cli or (Path(found) if (found := shutil.which(CLI_NAMES.get(name, name))) else None)
    if binary is None:
        raise typer.BadParameter(f"{CLI_NAMES.get(name, name)} is not on PATH; give --cli", param_hint="--cli")
    messages = _run(lambda: load_messages(queries))[:limit]
    path = f"{binary.parent}{os.pathsep}{os.environ.get('PATH', '')}"

    def progress(row: Row) -> None:
        mark = "ok " if row.carries else "-- "
        err.print(f"{'with   ' if row.skillpilot else 'without'} {mark}{row.query[:70]}", soft_wrap=True, markup=False)

    with tempfile.TemporaryDirectory(prefix="skillpilot-eval-host-") as work:
        rows = _run(lambda: evaluate(name, binary, skills, messages, Path(work), path, progress))
    totals = summary(rows)
    if as_json:
        _print_json({"host": name, "skills": str(skills), "summary": totals, "rows": [row_dict(r) for r in rows]})
        return
    for run, numbers in totals.items():
        out.print(
            f"{run} SkillPilot: right skill in {numbers['in_scope_carried']}/{numbers['in_scope']} requests "
            f"(named {numbers['named_by_skillpilot']}, listed {numbers['listed_by_host']}), "
            f"out of scope quiet {numbers['out_of_scope_quiet']}/{numbers['out_of_scope']}, "
            f"listing {numbers['listing_chars']:,} chars, context {numbers['context_chars']:,} chars",
            soft_wrap=True,
        )


def register(app: typer.Typer) -> None:
    """Add ``eval`` to the ``skillpilot`` app."""
    app.add_typer(eval_app, name="eval")
