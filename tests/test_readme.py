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


def _shown(name: str, value: int | float) -> str:
    """How the security model's table writes a bound: bytes in MiB, seconds with "s", counts with commas."""
    if name.endswith("_BYTES"):
        return f"`{name}` {int(value) >> 20} MiB"
    if isinstance(value, float):
        return f"`{name}` {value:g} s"
    return f"`{name}` {value:,}"


def test_the_security_model_shows_every_bound_with_its_value() -> None:
    from skillpilot import limits

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    model = readme[readme.index("## Security model") : readme.index("**Beyond loopback.**")]
    bounds = {
        name: value
        for name, value in vars(limits).items()
        if name.isupper() and not name.startswith("DEFAULT_") and isinstance(value, (int, float))
    }
    assert "MAX_LIST_ITEMS" in bounds and "PACKAGE_SECONDS" in bounds
    missing = [
        _shown(name, value)
        for name, value in bounds.items()
        if name not in ("MIN_TOP_K", "MAX_TOP_K") and _shown(name, value) not in model
    ]
    missing += [f"`{f}` {n:,}" for f, n in limits.HOOK_FIELD_CHARS.items() if f"`{f}` {n:,}" not in model]
    if f"`MIN_TOP_K`-`MAX_TOP_K` {limits.MIN_TOP_K}-{limits.MAX_TOP_K}" not in model:
        missing.append("MIN_TOP_K-MAX_TOP_K")
    assert missing == []
