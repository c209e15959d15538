"""The routing log on a real index, a real log.sqlite and the real `skillpilot log` command."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from skillpilot import SkillPilot
from skillpilot.errors import ConfigError
from skillpilot.routelog import parse_since, query_hash

from .conftest import EXAMPLES
from .surfaces_util import indexed
from .test_cli import run

GIT_COMMIT = str(EXAMPLES / "skills" / "git-commit")


def rows(home: Path) -> list[tuple[object, ...]]:
    """What another process sees in the file: the log is committed when route() returns."""
    with sqlite3.connect(home / "log.sqlite") as db:
        columns = "surface, query, query_hash, decision, skill_id, skill_path, method"
        return db.execute(f"SELECT {columns} FROM decisions ORDER BY id").fetchall()


def test_every_decision_is_logged_with_its_surface(isolated_home: Path) -> None:
    pilot = indexed(isolated_home)
    hard = pilot.route("commit my changes")
    egg = pilot.route("how long do I boil an egg", surface="hook")
    pilot.surface = "cli"
    pilot.route("commit my changes")
    commit = (
        "commit my changes",
        query_hash("commit my changes"),
        "hard",
        "git-commit",
        GIT_COMMIT,
        hard.method,
    )
    assert egg.decision == "passthrough"
    assert rows(isolated_home) == [
        ("library", *commit),
        (
            "hook",
            egg.query,
            query_hash(egg.query),
            "passthrough",
            egg.skill and egg.skill.id,
            egg.skill and egg.skill.path,
            egg.method,
        ),
        ("cli", *commit),
    ]
    entries, _ = pilot.log_entries()
    assert [e.surface for e in entries] == ["cli", "hook", "library"]
    assert entries[-1].confidence == hard.confidence and entries[-1].latency_ms == hard.latency_ms
    pilot.close()


def test_clauses_of_a_planned_message_are_one_decision(isolated_home: Path) -> None:
    pilot = indexed(isolated_home)
    result = pilot.plan("commit my changes and then send an email to Bob about it")
    assert len(result.plan) >= 2
    assert [r[1] for r in rows(isolated_home)] == ["commit my changes and then send an email to Bob about it"]
    pilot.close()


@pytest.mark.parametrize(("privacy", "kept"), [("hash", (None, True)), ("off", (None, False))])
def test_privacy_keeps_a_hash_or_nothing(isolated_home: Path, privacy: str, kept: tuple[None, bool]) -> None:
    pilot = indexed(isolated_home, log_queries=privacy)
    pilot.route("commit my changes")
    ((_, query, digest, *_),) = rows(isolated_home)
    assert (query, digest == query_hash("commit my changes")) == kept
    pilot.close()


def test_logging_can_be_turned_off(isolated_home: Path) -> None:
    pilot = indexed(isolated_home, log_enabled=False)
    pilot.route("commit my changes")
    assert not (isolated_home / "log.sqlite").exists()
    pilot.close()


def test_settings_are_validated(isolated_home: Path) -> None:
    with pytest.raises(ConfigError, match="log_queries"):
        SkillPilot(home=isolated_home, log_queries="maybe")
    with pytest.raises(ConfigError, match="log_max_rows"):
        SkillPilot(home=isolated_home, log_max_rows=0)
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.yaml").write_text("log:\n  queries: hash\n  maxAgeDays: 7\n", encoding="utf-8")
    settings = SkillPilot(home=isolated_home).settings
    assert (settings.log_queries, settings.log_max_age_days) == ("hash", 7.0)


def test_retention_keeps_the_newest_rows_and_drops_old_ones(isolated_home: Path) -> None:
    pilot = indexed(isolated_home, log_max_rows=3)
    for n in range(5):
        pilot.route(f"commit my changes {n}")
    pilot.close()
    reopened = SkillPilot(home=isolated_home, log_max_rows=3)  # opening the log applies the limits
    entries, total = reopened.log_entries()
    assert ([e.query for e in entries], total) == ([f"commit my changes {n}" for n in (4, 3, 2)], 3)
    reopened.close()
    with sqlite3.connect(isolated_home / "log.sqlite") as db:
        db.execute("UPDATE decisions SET at = at - 3 * 86400 WHERE query LIKE '%2'")
    aged = SkillPilot(home=isolated_home, log_max_age_days=2)
    assert [e.query for e in aged.log_entries()[0]] == ["commit my changes 4", "commit my changes 3"]
    aged.close()


def test_since_takes_an_age_or_an_iso_time() -> None:
    assert parse_since("90m", now=10_000.0) == 10_000.0 - 5400
    assert parse_since("2d", now=200_000.0) == 200_000.0 - 172_800
    assert parse_since("1970-01-02T00:00") == 86_400.0
    assert parse_since("1970-01-02T01:00+01:00") == 86_400.0
    with pytest.raises(ValueError, match="30m, 1h, 2d"):
        parse_since("yesterday")


def test_log_command(isolated_home: Path) -> None:
    assert run("index", str(EXAMPLES / "skills"), home=isolated_home).returncode == 0
    assert run("route", "commit my changes", home=isolated_home).returncode == 0
    proc = run("log", "--json", "--since", "1h", "--limit", "5", home=isolated_home)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["path"] == str(isolated_home / "log.sqlite")
    (entry,) = data["entries"]
    assert (entry["surface"], entry["skill_id"], entry["skill_path"], entry["decision"]) == (
        "cli",
        "git-commit",
        GIT_COMMIT,
        "hard",
    )
    assert entry["query"] == "commit my changes" and entry["time"].endswith("+00:00")
    assert json.loads(run("log", "--json", "--since", "2999-01-01", home=isolated_home).stdout)["entries"] == []
    human = run("log", home=isolated_home)
    assert "git-commit" in human.stdout and "commit my changes" in human.stdout
    bad = run("log", "--since", "yesterday", home=isolated_home)
    assert bad.returncode == 2 and "30m, 1h, 2d" in bad.stderr
