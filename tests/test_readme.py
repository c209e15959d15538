"""The README stays true: every CLI command is documented, and the two set-up commands are the
ones CI runs."""

from __future__ import annotations

import re

import typer.main

from skillpilot.cli import app

from .conftest import REPO


def test_every_command_is_in_the_readme() -> None:
    commands = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`skillpilot ([a-z-]+)", readme))
    assert commands and set(commands) <= documented, sorted(set(commands) - documented)


def test_ci_runs_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    test_command = "pip install -e '.[all,dev]' && python -m pytest"
    assert test_command in readme
    assert test_command in (REPO / ".ci" / "run").read_text(encoding="utf-8")
