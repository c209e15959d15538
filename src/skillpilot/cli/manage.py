"""The ``conflicts``, ``feedback`` and ``config`` commands: look after an installed router.

    skillpilot conflicts [--json]                     overlapping skills, with a tip for each group
    skillpilot feedback correct --wrong A --right B --query "..."
    skillpilot feedback confirm|ignore --skill A --query "..."
    skillpilot feedback list [--json] | undo ID [--json] | stats [--json] | reset --yes
    skillpilot config show [--json] | path | init [--force]

Same conventions as the rest of the CLI: results on stdout (JSON with ``--json``), messages on
stderr, exit 1 on a SkillPilot error, 2 on a usage error. ``config path`` and ``config init``
work even when the config file is invalid, since that is when they are needed.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ..config import OPTIONS, Settings, config_template, default_home, resolve_settings
from ..errors import FeedbackError, SkillPilotError
from ..feedback import Signal
from ..sqlitefile import FOLDER_MODE
from . import HomeOption, JsonOption, _fail, _pilot, _print_json, _run, err, out

feedback_app = typer.Typer(
    help="Tell the router which routes were right or wrong; it learns from them.", no_args_is_help=True
)
config_app = typer.Typer(help="Show, locate or create $SKILLPILOT_HOME/config.yaml.", no_args_is_help=True)

QueryOption = Annotated[str, typer.Option("--query", "-q", help="The message that was routed.")]
SkillOption = Annotated[str, typer.Option("--skill", "-s", help="The skill it was routed to (id, key or name).")]


def conflicts(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """List groups of overlapping skills, how similar they are, and how to tell them apart."""
    pilot = _run(lambda: _pilot(home))
    groups = _run(pilot.conflict_groups)
    threshold = pilot.settings.conflict_threshold
    if as_json:
        _print_json({"threshold": threshold, "groups": [g.to_dict() for g in groups]})
        return
    if not pilot.settings.enable_semantic:
        err.print("conflict detection compares skills by meaning: router.enableSemantic is off", markup=False)
    if not groups:
        out.print(f"no conflict groups (similarity threshold {threshold}, index.conflictThreshold)", markup=False)
    for group in groups:
        out.print(f"[bold]Conflict group {group.id}[/bold] (similarity {group.similarity:.2f}):", markup=True)
        out.print("  " + " · ".join(group.members), markup=False, soft_wrap=True)
        out.print(f"  Tip: {group.tip}", markup=False, soft_wrap=True)


def _described(signal: Signal) -> str:
    about = f"{signal.wrong} -> {signal.skill}" if signal.wrong else signal.skill
    message = repr(signal.query) if signal.query else "a message not kept (log.queries)"
    source = " (implicit)" if signal.implicit else ""
    return f"#{signal.id} {signal.kind}{source}: {about} for {message}"


def _record(
    home: Path | None,
    as_json: bool,
    kind: str,
    query: str,
    skill: str | None = None,
    wrong: str | None = None,
    right: str | None = None,
) -> None:
    pilot = _run(lambda: _pilot(home))
    try:
        signal = pilot.feedback(kind, query, skill=skill, wrong=wrong, right=right)
    except FeedbackError as exc:
        # Missing or contradictory arguments: a usage error (exit 2), not a failure.
        raise typer.BadParameter(str(exc)) from exc
    except SkillPilotError as exc:
        raise _fail(str(exc)) from exc
    if not pilot.settings.feedback_enabled:
        err.print("warning: recorded, but feedback.enabled is false, so routing ignores it", markup=False)
    if as_json:
        _print_json(asdict(signal))
        return
    out.print(f"recorded {_described(signal)}", markup=False, soft_wrap=True)
    batch = pilot.settings.feedback_batch
    if batch > 1:
        pending = pilot.feedback_stats().pending
        note = (
            f"{pending} of {batch} signals of the next batch are in; they count once it is full"
            if pending
            else "batch complete: counts from the next route"
        )
        out.print(f"{note} (feedback.batchSize)", markup=False)


@feedback_app.command()
def correct(
    wrong: Annotated[str, typer.Option("--wrong", help="The skill the message was routed to.")],
    right: Annotated[str, typer.Option("--right", help="The skill that was meant.")],
    query: QueryOption,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """The route was wrong: messages like this one should go to --right, not --wrong."""
    _record(home, as_json, "corrected", query, wrong=wrong, right=right)


@feedback_app.command()
def confirm(skill: SkillOption, query: QueryOption, home: HomeOption = None, as_json: JsonOption = False) -> None:
    """The route was right."""
    _record(home, as_json, "confirmed", query, skill=skill)


@feedback_app.command()
def ignore(skill: SkillOption, query: QueryOption, home: HomeOption = None, as_json: JsonOption = False) -> None:
    """The message was routed to --skill but the user did not use it."""
    _record(home, as_json, "ignored", query, skill=skill)


@feedback_app.command("list")
def feedback_list(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """Every recorded signal with its id (for `feedback undo ID`), oldest first."""
    pilot = _run(lambda: _pilot(home))
    signals = _run(pilot.feedback_signals)
    if as_json:
        _print_json({"signals": [asdict(s) for s in signals]})
        return
    for signal in signals:
        out.print(_described(signal), markup=False, soft_wrap=True)
    if not signals:
        out.print("no feedback signals", markup=False)


@feedback_app.command()
def undo(
    signal_id: Annotated[int, typer.Argument(help="The signal's id (`feedback list`).", metavar="ID")],
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Forget one signal; routing stops using it from the next route on."""
    pilot = _run(lambda: _pilot(home))
    signal = _run(lambda: pilot.undo_feedback(signal_id))
    if as_json:
        _print_json(asdict(signal))
        return
    out.print(f"undid {_described(signal)}", markup=False, soft_wrap=True)


@feedback_app.command("stats")
def feedback_stats(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """Signals recorded, how many the model uses, and the learned per-skill weights."""
    pilot = _run(lambda: _pilot(home))
    stats = _run(pilot.feedback_stats)
    if as_json:
        _print_json({"enabled": pilot.settings.feedback_enabled, **asdict(stats)})
        return
    kinds = ", ".join(f"{n} {k}" for k, n in stats.by_kind.items())
    state = "" if pilot.settings.feedback_enabled else " (feedback.enabled is false: not applied)"
    out.print(f"Signals: {stats.signals} ({kinds}){state}", markup=False)
    out.print(
        f"Learned examples: {stats.examples}; in the model: {stats.fitted}, pending: {stats.pending}",
        markup=False,
    )
    if stats.weights:
        table = Table("skill", "weight", box=None)
        for skill, weight in stats.weights.items():
            table.add_row(skill, f"{weight:.3f}")
        out.print(table)
    out.print(f"Store: {stats.path}", markup=False, soft_wrap=True)


@feedback_app.command()
def reset(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Forget every feedback signal (the router goes back to its shipped behaviour)."""
    pilot = _run(lambda: _pilot(home))
    if not yes and not typer.confirm(f"Delete every signal in {pilot.settings.feedback_path}?", err=True):
        raise typer.Exit(1)
    removed = _run(pilot.reset_feedback)
    if as_json:
        _print_json({"removed": removed})
    else:
        out.print(f"removed {removed} feedback signals", markup=False)


def _display(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return str(value) if isinstance(value, Path) else value


@config_app.command()
def show(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """Every setting's value and where it came from (default, config.yaml, env, override)."""
    settings, sources = _run(lambda: resolve_settings(home))
    rows = [
        (option.key, _display(getattr(settings, option.field)), sources.get(option.field, "default"))
        for option in OPTIONS
    ]
    if as_json:
        _print_json(
            {
                "path": str(settings.config_path),
                "home": str(settings.home),
                "settings": {key: {"value": value, "source": source} for key, value, source in rows},
            }
        )
        return
    width = max(len(key) for key, _, _ in rows)
    for key, value, source in rows:
        out.print(
            f"{key:<{width}}  {json.dumps(value, ensure_ascii=False)}  ({source})",
            markup=False,
            soft_wrap=True,
        )
    err.print(f"home: {settings.home}", markup=False, soft_wrap=True)


def _config_file(home: Path | None) -> Path:
    return Settings(home=(home or default_home()).expanduser()).config_path


@config_app.command()
def path(home: HomeOption = None) -> None:
    """Print where config.yaml is (whether or not it exists)."""
    out.print(str(_config_file(home)), markup=False, soft_wrap=True)


# Others may read the configuration (it holds no secret), never change it.
CONFIG_FILE_MODE = 0o644


@config_app.command()
def init(
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing config.yaml.")] = False,
    home: HomeOption = None,
) -> None:
    """Write config.yaml with every option at its default, each explained in a comment."""
    target = _config_file(home)
    if target.exists() and not force:
        raise _fail(f"{target} exists; use --force to overwrite it")
    try:
        if not target.parent.exists():
            target.parent.mkdir(mode=FOLDER_MODE, parents=True)
        # The mode is what the file may be at most: open applies the umask, so 000 still gives 0644.
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, CONFIG_FILE_MODE)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(config_template())
    except OSError as exc:
        raise _fail(f"{target}: cannot write ({exc.strerror})") from exc
    out.print(str(target), markup=False, soft_wrap=True)
    err.print("wrote the default configuration; edit it, then check it with `skillpilot config show`", markup=False)


def register(app: typer.Typer) -> None:
    """Add ``conflicts``, ``feedback`` and ``config`` to the ``skillpilot`` app."""
    app.command("conflicts")(conflicts)
    app.add_typer(feedback_app, name="feedback")
    app.add_typer(config_app, name="config")
