"""Two `skillpilot serve` replicas on one PostgreSQL store: a CLI re-index reaches both, and they
answer the development queries exactly as a router over SQLite does. Slow: a real PostgreSQL
server, two service processes and 2 x 160 HTTP routes (keyword retrieval only, so no model loads;
the stores' vectors are compared bit for bit by tests/test_store_contract.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.serve import read_serve_file  # noqa: E402

from .conftest import BENCH, require_corpus, write_skill  # noqa: E402
from .pg_server import fresh_database, postgres_url  # noqa: E402, F401  (the fixture)
from .test_surfaces_serve import post, request  # noqa: E402

# Generous: a busy 2-core machine takes a while to start two services; reaching it is a failure.
POLL_SECONDS = 240.0
SETTINGS = {"SKILLPILOT_ENABLE_SEMANTIC": "false", "SKILLPILOT_PRECONDITIONS": "off", "SKILLPILOT_LOG_ENABLED": "false"}


def _environment(home: Path, url: str) -> dict[str, str]:
    return {**os.environ, **SETTINGS, "SKILLPILOT_HOME": str(home), "SKILLPILOT_STORE": url}


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    """The answer as JSON carries it (tuples become lists), latency and load time dropped."""
    data: dict[str, Any] = json.loads(json.dumps(result))
    data.pop("latency_ms")
    data.pop("load_ms")
    return data


@pytest.fixture
def replicas(tmp_path: Path, postgres_url: str) -> Iterator[tuple[str, list[str]]]:  # noqa: F811
    require_corpus()
    url = fresh_database(postgres_url, "replicas")
    indexed = subprocess.run(
        [sys.executable, "-m", "skillpilot", "index", str(BENCH / "skills"), "--json"],
        env=_environment(tmp_path / "indexer", url),
        capture_output=True,
        text=True,
        check=False,
    )
    assert indexed.returncode == 0, indexed.stderr
    services = []
    for n in range(2):
        home = tmp_path / f"replica-{n}"
        services.append(
            (
                home,
                subprocess.Popen(
                    [sys.executable, "-m", "skillpilot", "serve", "--port", "0"],
                    env=_environment(home, url),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
        )
    try:
        urls = []
        for home, service in services:
            deadline = time.monotonic() + POLL_SECONDS
            while (info := read_serve_file(home)) is None:
                assert service.poll() is None, service.stderr.read() if service.stderr else ""
                assert time.monotonic() < deadline, "serve.json never appeared"
                time.sleep(0.1)
            urls.append(info.url)
        yield url, urls
    finally:
        for _, service in services:
            service.send_signal(signal.SIGTERM)
            service.communicate(timeout=POLL_SECONDS)


@pytest.mark.slow
def test_replicas_answer_like_sqlite_and_follow_a_cli_reindex(
    tmp_path: Path, replicas: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, urls = replicas
    for name, value in SETTINGS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SKILLPILOT_STORE", raising=False)
    local = SkillPilot(home=tmp_path / "sqlite")
    local.index([BENCH / "skills"])
    queries = [json.loads(line)["query"] for line in (BENCH / "queries" / "real-dev.jsonl").read_text().splitlines()]
    expected = [_comparable(local.route(q).to_dict()) for q in queries]
    local.close()
    for replica in urls:
        answers = []
        for query in queries:
            status, answer = post(replica, "/route", {"message": query})
            assert status == 200, answer
            answers.append(_comparable(answer))
        assert answers == expected

    extra = tmp_path / "extra"
    write_skill(extra, "zebra-census", "name: zebra-census\ndescription: Count the zebras in a savanna photo survey.")
    started = time.monotonic()
    reindexed = subprocess.run(
        [sys.executable, "-m", "skillpilot", "index", str(extra), "--json"],
        env=_environment(tmp_path / "indexer", url),
        capture_output=True,
        text=True,
        check=False,
    )
    assert reindexed.returncode == 0, reindexed.stderr
    waiting = set(urls)
    while waiting:
        assert time.monotonic() - started < POLL_SECONDS, f"{waiting} never saw the re-index"
        for replica in list(waiting):
            status, answer = post(replica, "/route", {"message": "count the zebras in my savanna survey photos"})
            assert status == 200, answer
            if answer["skill"] and answer["skill"]["id"] == "zebra-census":
                assert request(replica, "GET", "/stats")[1]["skills"] == 295
                waiting.discard(replica)
        time.sleep(0.05)
