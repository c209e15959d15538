"""The store is a setting: ``--store`` / ``SKILLPILOT_STORE`` / ``index.store`` reach every command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillpilot import SkillPilot
from skillpilot.cli import app
from skillpilot.errors import ConfigError

from .conftest import write_skill
from .pg_server import fresh_database, postgres_url  # noqa: F401  (the fixture)


def _skills(root: Path) -> Path:
    write_skill(root, "weather", "name: weather\ndescription: Current weather and the forecast for any city.")
    write_skill(root, "git-commit", "name: git-commit\ndescription: Stage changes and write a commit message.")
    write_skill(root, "translate", "name: translate\ndescription: Translate text between languages.")
    return root


def _cli(args: list[str], env: dict[str, str]) -> dict[str, object]:
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.stdout)
    return data


@pytest.fixture
def keyword_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("SKILLPILOT_ENABLE_SEMANTIC", "false")
    # Set (empty: the default) so the teardown undoes what `skillpilot --store` writes into the
    # environment of this process.
    monkeypatch.setenv("SKILLPILOT_STORE", "")
    return {"SKILLPILOT_HOME": str(tmp_path / "home"), "SKILLPILOT_ENABLE_SEMANTIC": "false"}


def test_every_way_of_naming_the_store_reaches_commands_that_had_no_flag(
    tmp_path: Path, keyword_only: dict[str, str]
) -> None:
    skills = _skills(tmp_path / "skills")
    shared = tmp_path / "shared.sqlite"
    assert _cli(["--store", str(shared), "index", str(skills), "--json"], keyword_only)["total"] == 3
    home = Path(keyword_only["SKILLPILOT_HOME"])
    assert not (home / "index.sqlite").exists()
    # stats and search have always read the home's index; now the setting wins, three ways.
    by_env = _cli(["stats", "--json"], {**keyword_only, "SKILLPILOT_STORE": str(shared)})
    assert by_env["skills"] == 3 and by_env["index_path"] == str(shared)
    assert _cli(["--store", str(shared), "stats", "--json"], keyword_only)["skills"] == 3
    home.mkdir(exist_ok=True)
    (home / "config.yaml").write_text(f"index:\n  store: {shared}\n", encoding="utf-8")
    assert _cli(["stats", "--json"], keyword_only)["skills"] == 3
    found = CliRunner().invoke(app, ["route", "forecast for Paris", "--json"], env=keyword_only)
    assert json.loads(found.stdout)["skill"]["id"] == "weather"
    # The library honours the same setting.
    pilot = SkillPilot(home=home)
    assert len(pilot.skills()) == 3
    pilot.close()


def test_a_postgresql_store_from_the_environment_serves_stats_and_routes(
    tmp_path: Path,
    keyword_only: dict[str, str],
    postgres_url: str,  # noqa: F811
) -> None:
    url = fresh_database(postgres_url, "store_setting")
    env = {**keyword_only, "SKILLPILOT_STORE": url}
    skills = _skills(tmp_path / "skills")
    assert _cli(["index", str(skills), "--json"], env)["total"] == 3
    assert _cli(["stats", "--json"], env)["skills"] == 3
    assert "postgresql" in str(_cli(["stats", "--json"], env)["index_path"])
    assert not (Path(keyword_only["SKILLPILOT_HOME"]) / "index.sqlite").exists()


def test_a_store_url_of_another_database_is_refused_not_made_a_file(tmp_path: Path) -> None:
    pilot = SkillPilot(home=tmp_path / "home", store="mysql://db.internal/skills", enable_semantic=False)
    with pytest.raises(ConfigError, match="postgresql://"):
        pilot.stats()
    assert not list(tmp_path.rglob("*skills*")), "no SQLite file named after the URL"
