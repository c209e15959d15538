"""``skillpilot ARGS`` run in this process (typer's CliRunner): the exit code, stdout and stderr a
user sees, without a new interpreter loading numpy and the models for every call. Tests where the
process itself is the point (stdout hygiene of a server, a hook's start-up, signals) keep
``subprocess``."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from typer.testing import CliRunner

from skillpilot.cli import LOG_FORMAT, app


@dataclass(frozen=True)
class CliOutcome:
    """What one command did, named as ``subprocess.CompletedProcess`` names it."""

    returncode: int
    stdout: str
    stderr: str


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Logs to whatever ``sys.stderr`` is when a record is written (the runner swaps it)."""

    @property  # type: ignore[override]
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _: TextIO) -> None:
        pass


def run_cli(*args: str, home: Path | None = None, stdin: str | None = None, **env: str | None) -> CliOutcome:
    """Run ``skillpilot ARGS`` as ``main()`` does, with ``home`` as SKILLPILOT_HOME and ``env`` set
    (a None value unsets the variable).

    An exception the CLI does not turn into an exit code is re-raised: in a real process it would
    be a traceback, which no test expects."""
    environment = {**env, **({"SKILLPILOT_HOME": str(home)} if home is not None else {})}
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    try:
        result = CliRunner().invoke(app, list(args), input=stdin, env=environment, prog_name="skillpilot")
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return CliOutcome(result.exit_code, result.stdout, result.stderr)
