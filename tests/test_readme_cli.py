"""The README's CLI reference is checked against the commands themselves (what ``--help`` prints):
every command has a row, every option a row names exists, every option a command takes is named
in its row (or in the README's sentences on --home, --json and --store)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer.main

from skillpilot.cli import app

from .conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
CLI_SECTION = README.split("\n## CLI\n", 1)[1].split("\n## ", 1)[0]
OPTION = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)")
COMMON = ("--home", "--json")


def _commands(command: Any = None, path: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every runnable command by its path ("feedback confirm"), with its Click object."""
    command = command or typer.main.get_command(app)
    children = getattr(command, "commands", None)
    if not children:
        return {" ".join(path): command}
    found: dict[str, Any] = {}
    for name in list(children):
        found.update(_commands(children[name], (*path, name)))
    return found


COMMANDS = _commands()


def _options(command: Any) -> list[tuple[str, ...]]:
    """Each option of ``command`` as the spellings it accepts (``--top-k``, ``-k``)."""
    return [(*p.opts, *p.secondary_opts) for p in command.params if p.param_type_name == "option"]


def _rows() -> dict[str, str]:
    """README table row of each command path it documents (a row may document several)."""
    rows: dict[str, str] = {}
    for line in CLI_SECTION.splitlines():
        if not line.startswith("| `skillpilot "):
            continue
        first_cell = line.split(" | ")[0]
        for usage in re.findall(r"`skillpilot ([^`]+)`", first_cell):
            words: list[str] = []
            for word in usage.split():
                if not re.fullmatch(r"[a-z][a-z-]*(\\\|[a-z][a-z-]*)*", word):
                    break
                words.append(word)
            *parents, last = words
            for name in last.split("\\|"):
                rows[" ".join([*parents, name])] = line
    return rows


ROWS = _rows()


def _sentence_commands(marker: str) -> set[str]:
    """The commands named in the README sentence containing ``marker``."""
    sentence = next((s for s in re.split(r"(?<=\.)\s", CLI_SECTION) if marker in s), "")
    return set(re.findall(r"`([a-z][a-z -]*?)`", sentence)) & set(COMMANDS)


def test_every_command_has_a_row_and_every_row_a_command() -> None:
    assert sorted(set(COMMANDS) - set(ROWS)) == []
    assert sorted(set(ROWS) - set(COMMANDS)) == []


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_a_row_names_exactly_the_options_of_its_command(path: str) -> None:
    row = ROWS.get(path, "")
    named = set(OPTION.findall(row))
    # A row may document several commands ("feedback confirm|correct|..."): any of theirs counts.
    sharing = [COMMANDS[p] for p, r in ROWS.items() if r == row and p in COMMANDS]
    accepted = {spelling for command in sharing for spellings in _options(command) for spelling in spellings}
    assert sorted(named - accepted - {"--help"}) == [], f"the README row of `{path}` names options it lacks"
    shared = set(COMMON) | ({"--store"} if path in _sentence_commands("also take it after") else set())
    undocumented = [s[0] for s in _options(COMMANDS[path]) if not (set(s) & (named | shared))]
    assert undocumented == [], f"the README row of `{path}` does not name these options"


@pytest.mark.parametrize("option", COMMON)
def test_the_commands_said_to_lack_home_or_json_are_exactly_those(option: str) -> None:
    without = {p for p, c in COMMANDS.items() if not any(option in s for s in _options(c))}
    assert without == _sentence_commands(f"no `{option}`")


def test_the_commands_said_to_take_store_are_exactly_those() -> None:
    with_store = {p for p, c in COMMANDS.items() if any("--store" in s for s in _options(c))}
    assert with_store == _sentence_commands("also take it after")
