"""The ``enrich`` command: example requests for the indexed skills, written by an LLM you have.

    skillpilot enrich --with claude|gemini|codex|openai|anthropic [--dry-run] [--include-private]
    skillpilot enrich --import FILE      {key: [requests]} or an OntoSkills intents.json
    skillpilot enrich --export FILE      every skill's requests as {key: [requests]}
    skillpilot enrich --list             what each skill has, and what made it

Results on stdout (JSON with ``--json``), the progress bar and messages on stderr. Exit 0 when
the run did its job (a skill whose answer was turned down is reported, with the reason), 1 when a
request failed for good or the run was interrupted (what was done is kept: run it again to go on).
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from ..enrich import EnrichReport
from ..errors import SkillPilotError
from ..router import SkillPilot
from . import EXIT_ERROR, HomeOption, JsonOption, _pilot, _print_json, _progress, _run, err, out


def enrich_command(
    writer: Annotated[
        str | None,
        typer.Option("--with", help="The LLM to write with: claude, gemini, codex, openai, anthropic (enrich.with)."),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="The model to ask (enrich.model).")] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="openai / anthropic: the API base URL (enrich.baseUrl).")
    ] = None,
    languages: Annotated[
        str | None,
        typer.Option("--languages", help="Language codes, comma-separated, e.g. en,zh,ja (enrich.languages)."),
    ] = None,
    per_skill: Annotated[
        int | None, typer.Option("--per-skill", min=2, max=20, help="Requests per skill (enrich.perSkill, 6).")
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option("--budget", min=0, help="Tokens this run may spend, 0: no limit (enrich.tokenBudget, 300000)."),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="List the skills and print the exact text that would be sent; send nothing."),
    ] = False,
    include_private: Annotated[
        bool, typer.Option("--include-private", help="Also send private skills (name and description only).")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Write again for skills that have examples.")] = False,
    import_file: Annotated[
        Path | None,
        typer.Option(
            "--import",
            help="Store the requests of a JSON file (skill key -> list of requests) or an OntoSkills intents.json.",
        ),
    ] = None,
    export_file: Annotated[Path | None, typer.Option("--export", help="Write every skill's requests to FILE.")] = None,
    show: Annotated[bool, typer.Option("--list", help="Show each skill's requests and what made them.")] = False,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write example requests for every indexed skill that has none (or whose text changed)."""
    if sum(map(bool, (import_file, export_file, show))) > 1 or (
        (import_file or export_file or show) and (dry_run or writer)
    ):
        raise typer.BadParameter("give one of --with (or --dry-run), --import, --export, --list")
    overrides: dict[str, Any] = {
        "enrich_model": model,
        "enrich_base_url": base_url,
        "enrich_languages": tuple(c.strip() for c in languages.split(",") if c.strip()) if languages else None,
        "enrich_per_skill": per_skill,
        "enrich_token_budget": budget,
    }
    pilot = _run(lambda: _pilot(home, **overrides))
    if import_file is not None:
        with _progress(not as_json) as progress:
            imported = _run(lambda: pilot.import_examples(import_file, progress=progress))
        if as_json:
            _print_json(imported.to_dict())
            return
        out.print(f"imported requests for {len(imported.skills)} skills from {import_file}", markup=False)
        for reference, reason in imported.unmatched:
            err.print(f"  not imported {reference}: {reason}", markup=False, soft_wrap=True)
        for reference, reason in imported.rejected:
            err.print(f"  {reference}: {reason}", markup=False, soft_wrap=True)
        return
    if export_file is not None:
        count = _run(lambda: pilot.export_examples(export_file))
        if as_json:
            _print_json({"path": str(export_file), "skills": count})
        else:
            out.print(f"wrote the requests of {count} skills to {export_file}", markup=False)
        return
    if show:
        sets = _run(pilot.example_sets)
        if as_json:
            _print_json({skill: example.to_dict() for skill, example in sets.items()})
            return
        for skill, example in sets.items():
            when = datetime.datetime.fromtimestamp(example.made_at).date().isoformat()
            out.print(f"{skill}  ({example.model}, {example.prompt_version or '-'}, {when})", markup=False)
            for request in example.requests:
                out.print(f"  - {request}", markup=False, soft_wrap=True)
        return
    with _progress(not as_json and not dry_run) as progress:
        report = _run(
            lambda: pilot.enrich(
                writer, include_private=include_private, force=force, dry_run=dry_run, progress=progress
            )
        )
    if as_json:
        _print_json(report.to_dict(prompts=dry_run))
    else:
        _print_report(report)
    if report.failed or report.stopped == "interrupted":
        raise typer.Exit(EXIT_ERROR)


def _print_report(report: EnrichReport) -> None:
    languages = ", ".join(f"{count} {code}" for code, count in report.plan.counts)
    skills = sum(len(b.skills) for b in report.batches)
    if report.dry_run:
        out.print(
            f"would ask {report.writer} for {languages} requests for each of {skills} skills in "
            f"{len(report.batches)} LLM requests, about {report.estimated_tokens} tokens in all",
            markup=False,
            soft_wrap=True,
        )
        out.print(f"\n--- system prompt ---\n{report.system}", markup=False, soft_wrap=True)
        for n, batch in enumerate(report.batches, 1):
            out.print(
                f"\n--- request {n} of {len(report.batches)}: {', '.join(batch.skills)} "
                f"(~{batch.estimated_tokens} tokens) ---\n{batch.prompt}",
                markup=False,
                soft_wrap=True,
            )
    else:
        out.print(
            f"{report.writer}: examples for {len(report.written)} skills ({languages} each), "
            f"{len(report.rejected)} turned down, {len(report.failed)} failed, {report.tokens} tokens",
            markup=False,
            soft_wrap=True,
        )
    for skill, reason in report.rejected:
        err.print(f"  turned down {skill}: {reason}", markup=False, soft_wrap=True)
    for skill, reason in report.failed:
        err.print(f"  failed {skill}: {reason}", markup=False, soft_wrap=True)
    if report.private:
        err.print(f"  left out {len(report.private)} private skills (--include-private sends them)", markup=False)
    if report.had_examples:
        err.print(f"  {report.had_examples} skills have examples already (--force writes them again)", markup=False)
    if report.stopped:
        err.print(f"  stopped: {report.stopped}; {len(report.left)} skills left, run again to go on", markup=False)


def enrich_after_index(pilot: SkillPilot, quiet: bool) -> None:
    """``index`` with ``enrich.onIndex``: examples for the skills that have none, as configured;
    a failure is reported and the index stays as it is."""
    if not pilot.settings.enrich_with:
        err.print("warning: enrich.onIndex is on but enrich.with names no LLM; no examples written", markup=False)
        return
    with _progress(not quiet) as progress:
        try:
            report = pilot.enrich(progress=progress)
        except SkillPilotError as exc:
            err.print(f"warning: no examples written: {exc}", markup=False, soft_wrap=True)
            return
    if not quiet:
        _print_report(report)


def register(app: typer.Typer) -> None:
    app.command("enrich")(enrich_command)
