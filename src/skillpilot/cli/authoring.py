"""The ``lint`` and ``plan`` commands: help skill authors, and show multi-skill plans.

    skillpilot lint [PATH...] [--strict] [--json]   routability score and fixes per skill
    skillpilot plan MESSAGE [--json]                the ordered steps of a multi-skill message

``lint`` with PATHs indexes them in a temporary home (the user's settings, so the same
encoders) and checks them against each other; without, it checks the index at ``--home``.
Either way it routes with preconditions and feedback off: the score is about the skill's text,
not this machine or this user (unmet preconditions are still reported, as info). Same
conventions as the rest of the CLI: results on stdout (JSON with ``--json``), progress and
messages on stderr; exit 0 done, 1 an error, 2 a usage error, and with ``--strict``
``EXIT_LINT_FAILED`` when a skill has a warning or an error, or a SKILL.md could not be read.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer

from ..config import load_settings
from ..lint import SkillLint, indexed_under, lint
from ..model import IndexReport
from ..plan import as_plan
from ..router import SkillPilot
from . import (
    HomeOption,
    JsonOption,
    PreconditionsOption,
    _pilot,
    _preconditions,
    _print_index_report,
    _print_json,
    _progress,
    _run,
    err,
    out,
)

EXIT_LINT_FAILED = 4
_SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "dim"}


def lint_command(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Skill folders or SKILL.md files to check. Default: the skills in the index."),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option("--strict", help=f"Exit {EXIT_LINT_FAILED} when any skill has a warning or an error."),
    ] = False,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Score how easily each skill gets routed to, and say what to fix in its SKILL.md."""
    settings = _run(lambda: load_settings(home)).with_overrides(preconditions=False, feedback_enabled=False)
    report: IndexReport | None = None
    pilot = SkillPilot(settings=settings)
    # Skills the index holds as they are on disk are linted against the whole index, as by id.
    indexed = _run(lambda: indexed_under(pilot, paths)) if paths else None
    if paths and indexed is None:
        pilot.close()
        with tempfile.TemporaryDirectory(prefix="skillpilot-lint-") as scratch:
            pilot = SkillPilot(settings=settings.with_overrides(home=Path(scratch), store=""))
            with _progress(not as_json) as progress:
                report = _run(lambda: pilot.index(paths, replace=True, progress=progress))
            results = _run(lambda: lint(pilot))
            pilot.close()
    else:
        results = _run(lambda: lint(pilot, only=set(indexed) if indexed is not None else None))
        pilot.close()
    unreadable = len(report.skipped) if report else 0
    failing = sum(r.failing for r in results)
    if as_json:
        _print_json(
            {
                "skills": [_lint_dict(r) for r in results],
                "failing": failing,
                "skipped": [asdict(s) for s in report.skipped] if report else [],
            }
        )
    else:
        if report is not None and report.skipped:
            _print_index_report(report, as_json=False)
        _print_lint(results, failing, indexed=paths is not None and bool(paths))
    if strict and (failing or unreadable):
        raise typer.Exit(EXIT_LINT_FAILED)


def _lint_dict(result: SkillLint) -> dict[str, Any]:
    return {**asdict(result), "failing": result.failing}


def _print_lint(results: list[SkillLint], failing: int, indexed: bool) -> None:
    if not results:
        hint = "" if indexed else ": run `skillpilot index` first, or pass skill folders"
        out.print(f"no skills to lint{hint}", markup=False)
        return
    for result in results:
        out.print(
            f"[bold]{result.score:5.1f}[/bold]  {result.id}  [dim]{result.path}[/dim]", markup=True, soft_wrap=True
        )
        for finding in result.findings:
            style = _SEVERITY_STYLE[finding.severity]
            label = f"       [{style}]{finding.severity:<7}[/{style}] {finding.code}: "
            out.print(label, markup=True, end="")
            out.print(finding.message, markup=False, soft_wrap=True)
            for item in finding.evidence:
                out.print(f"                 - {item}", markup=False, soft_wrap=True)
            out.print(f"                 fix: {finding.fix}", markup=False, soft_wrap=True)
    err.print(
        f"{len(results)} skills, {failing} with warnings or errors (score 0-100, higher routes better)", markup=False
    )


def plan_command(
    message: Annotated[str, typer.Argument(help="The user message to plan.")],
    preconditions: PreconditionsOption = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Split a message that asks for several things into ordered steps, each routed to a skill."""
    pilot = _run(lambda: _pilot(home, preconditions=_preconditions(preconditions)))
    result = _run(lambda: pilot.plan(message))
    steps = as_plan(result)
    if as_json:
        _print_json({"query": result.query, "split": bool(result.plan), "steps": [asdict(s) for s in steps]})
        return
    if not result.plan:
        err.print("one step: the message asks for one thing (or nothing a skill does)", markup=False)
    for number, step in enumerate(steps, start=1):
        target = step.skill.id if step.skill else "no skill"
        out.print(f"{number}. {step.decision:<11} [bold]{target}[/bold]  confidence {step.confidence:.2f}", markup=True)
        out.print(f"   {step.text}", markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``lint`` and ``plan`` to the ``skillpilot`` app."""
    app.command("lint")(lint_command)
    app.command("plan")(plan_command)
