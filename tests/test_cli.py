"""The `skillpilot` command as a user runs it (in this process, see ``cli_util``): exit codes,
stdout vs stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .cli_util import CliOutcome, run_cli
from .conftest import BENCH, EXAMPLES, require_corpus, write_skill


def run(*args: str, home: Path) -> CliOutcome:
    return run_cli(*args, home=home, SKILLPILOT_PRECONDITIONS="off", SKILLPILOT_ENABLE_SEMANTIC="false")


@pytest.fixture()
def indexed(isolated_home: Path) -> Path:
    proc = run("index", str(EXAMPLES / "skills"), home=isolated_home)
    assert proc.returncode == 0, proc.stderr
    return isolated_home


def test_index_reports_on_stderr_and_json_on_stdout(isolated_home: Path, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "ok", "name: ok\ndescription: A perfectly fine skill for testing the CLI.")
    bad = root / "bad" / "SKILL.md"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"---\nname: bad\ndescription: \xff\xfe broken\n---\n")
    human = run("index", str(root), home=isolated_home)
    assert human.returncode == 0
    assert human.stdout == ""
    assert "indexed 1 skills" in human.stderr
    assert f"skipped {bad}" in human.stderr
    machine = run("index", str(root), "--json", home=isolated_home)
    report = json.loads(machine.stdout)
    assert (report["total"], report["unchanged"]) == (1, 1)
    assert report["skipped"][0]["path"] == str(bad)
    other = tmp_path / "other"
    write_skill(other, "lunch", "name: lunch\ndescription: Order lunch for the whole team.")
    second = run("index", str(other), home=isolated_home)
    assert "indexed 1 skills from 1 root(s) (the index holds 2) in " in second.stderr


def test_route_json_and_exit_codes(indexed: Path) -> None:
    proc = run("route", "commit my changes", "--json", home=indexed)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["skill"]["id"] == "git-commit"
    assert result["decision"] == "hard"
    assert result["skill"]["path"] == str(EXAMPLES / "skills" / "git-commit")
    passthrough = run("route", "how long do I boil an egg", "--fail-on-passthrough", home=indexed)
    assert passthrough.returncode == 3
    assert run("route", "how long do I boil an egg", home=indexed).returncode == 0


def test_route_batch_writes_one_result_per_line(indexed: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "query": "commit my changes"}\n{"id": "b", "query": "jira ticket"}\n')
    proc = run("route", "--queries", str(queries), home=indexed)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(r["id"], r["skill"]["id"]) for r in lines] == [("a", "git-commit"), ("b", "jira-ticket")]


def test_usage_and_errors(indexed: Path, tmp_path: Path) -> None:
    assert run("route", home=indexed).returncode == 2
    assert run("route", "x", "--preconditions", "maybe", home=indexed).returncode == 2
    missing = run("route", "--queries", str(tmp_path / "nope.jsonl"), home=indexed)
    assert missing.returncode == 1
    assert "nope.jsonl: cannot read the queries file" in missing.stderr
    bad_config = indexed / "config.yaml"
    bad_config.write_text("router:\n  hardRouteThreshold: 2\n")
    proc = run("stats", home=indexed)
    assert proc.returncode == 1
    assert "router.hardRouteThreshold" in proc.stderr and "between 0 and 1" in proc.stderr


def test_stats_json(indexed: Path) -> None:
    stats = json.loads(run("stats", "--json", home=indexed).stdout)
    assert stats["skills"] == 16
    assert stats["roots"] == [str(EXAMPLES / "skills")]
    assert stats["embed_provider"] == "off"


def test_stats_names_the_model_cache(indexed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLPILOT_MODEL_CACHE", str(tmp_path / "models"))
    assert json.loads(run("stats", "--json", home=indexed).stdout)["model_cache"] == str(tmp_path / "models")
    assert f"Model cache: {tmp_path / 'models'}" in run("stats", home=indexed).stdout


def test_search_and_explain(indexed: Path) -> None:
    hits = json.loads(run("search", "trim a video", "--json", home=indexed).stdout)
    assert hits[0]["id"] == "video-trim"
    explained = run("explain", "commit my changes", home=indexed)
    assert explained.returncode == 0
    assert "fast path" in explained.stdout and "trigger 'commit my changes'" in explained.stdout
    assert "confidence" in explained.stdout
    as_json = json.loads(run("explain", "commit my changes", "--json", home=indexed).stdout)
    assert as_json["trace"][0]["stage"].startswith("fast path")


def test_reindex_picks_up_new_skills(indexed: Path, tmp_path: Path) -> None:
    root = tmp_path / "more"
    write_skill(root, "weather", "name: weather\ndescription: Look up the weather forecast for a city.")
    run("index", str(root), home=indexed)
    write_skill(root, "tides", "name: tides\ndescription: Look up tide times for a harbour.")
    report = json.loads(run("reindex", "--json", home=indexed).stdout)
    assert (report["added"], report["total"]) == (1, 18)


def test_index_real_corpus(isolated_home: Path) -> None:
    require_corpus()
    proc = run("index", str(BENCH / "skills"), "--json", home=isolated_home)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["total"] + len(report["skipped"]) >= 294
    assert report["total"] >= 290


def test_demo_runs_from_the_repository(tmp_path: Path) -> None:
    proc = run_cli("demo", str(EXAMPLES), "--home", str(tmp_path / "demo"), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["index"]["total"] == 16
    decisions = {r["query"]: (r["skill"]["id"], r["decision"]) for r in data["routes"]}
    assert decisions["commit my changes"] == ("git-commit", "hard")
    assert decisions["Tell me a joke about penguins"][1] == "passthrough"
