"""The ``log`` command: the routing log's recent decisions (``$SKILLPILOT_HOME/log.sqlite``).

skillpilot log [--since 1h|ISO] [--limit N] [--json]
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from ..routelog import LogFilter, iso, parse_since
from . import HomeOption, JsonOption, _pilot, _print_json, _run, out


def log(
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only decisions from this age (30m, 1h, 2d) or ISO time (UTC) on."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Show at most this many, newest first.")] = 50,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show the routing log: what each message was routed to, how sure, how fast, from where."""
    try:
        start = parse_since(since) if since is not None else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--since") from exc
    pilot = _run(lambda: _pilot(home))
    try:
        entries, _ = _run(lambda: pilot.log_entries(LogFilter(since=start), limit=limit))
        path: Path = pilot.settings.log_path
    finally:
        pilot.close()
    if as_json:
        _print_json({"path": str(path), "entries": [asdict(e) | {"time": iso(e.at)} for e in entries]})
        return
    if not entries:
        out.print(f"no routing decisions logged in {path}", markup=False)
        return
    # One line per decision, not a table: a table squeezes the message into a narrow column.
    for e in entries:
        message = e.query if e.query is not None else (f"sha256:{e.query_hash[:12]}" if e.query_hash else "-")
        out.print(
            f"{iso(e.at)}  {e.surface:<8} {e.decision:<11} {e.skill_id or '-'}  {e.confidence:.2f}  "
            f"{e.latency_ms:.1f} ms  {e.method}  {message}",
            markup=False,
            soft_wrap=True,
        )


def register(app: typer.Typer) -> None:
    app.command("log")(log)
