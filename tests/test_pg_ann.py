"""Nearest-neighbour candidates on PostgreSQL (``index.annAbove``): a router over a catalog above
the threshold reads no store-wide vectors, takes each message's dense candidates from the HNSW
index, says so in ``stats`` and ``explain``, and, on a catalog small enough for HNSW to find every
skill, routes the development queries exactly as a SQLite router does (with and without roots).

A real PostgreSQL 18 + pgvector server (``tests/pg_server.py``); the encoder is the suite's
installed fake (``tests/fake_encoder.py``), so no model loads: what is tested is where the
candidates come from and that fusion over them is the exact one, not what a model understands.
How often HNSW changes the candidate pool on a large catalog is ``benchmarks/pg_scale.py``'s.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillpilot import SkillPilot
from skillpilot.index import open_store
from skillpilot.retrieve.ann import DEPTH

from .conftest import BENCH, require_corpus
from .fake_encoder import SPEC
from .pg_server import fresh_database, postgres_url  # noqa: F401  (a fixture)

# 118 skills in five roots: fewer than DEPTH, so HNSW returns every skill and the race is exact.
FOLDERS = (
    "anthropics-skills",
    "composiohq-awesome-claude-skills",
    "alirezarezvani-claude-skills",
    "getsentry-skills",
    "obra-superpowers",
)
SETTINGS: dict[str, Any] = {"embed_provider": SPEC, "log_enabled": False, "feedback_enabled": False}


def _answer(pilot: SkillPilot, query: str, roots: list[str] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(pilot.route(query, roots=roots).to_dict()))
    del data["latency_ms"], data["load_ms"]
    return data


@pytest.fixture(scope="module")
def routers(
    tmp_path_factory: pytest.TempPathFactory,
    postgres_url: str,  # noqa: F811
) -> Iterator[tuple[SkillPilot, SkillPilot, list[Path]]]:
    """The same folders indexed into SQLite and PostgreSQL; a nearest-neighbour router on the latter."""
    require_corpus()
    folders = [BENCH / "skills" / name for name in FOLDERS]
    url = fresh_database(postgres_url, f"ann_{uuid.uuid4().hex[:8]}")
    sqlite = SkillPilot(home=tmp_path_factory.mktemp("sqlite-home"), **SETTINGS)
    sqlite.index(folders)
    indexer = SkillPilot(home=tmp_path_factory.mktemp("pg-indexer"), store=url, **SETTINGS)
    indexer.index(folders)
    indexer.close()
    store = open_store(url)

    def every_vector(encoder: str) -> None:
        raise AssertionError(f"a nearest-neighbour router read every {encoder} vector")

    store.vectors = every_vector  # type: ignore[method-assign,assignment]
    nearest = SkillPilot(home=tmp_path_factory.mktemp("pg-replica"), store=store, ann_above=10, **SETTINGS)
    yield sqlite, nearest, folders
    sqlite.close()
    nearest.close()


def _queries() -> list[str]:
    lines = (BENCH / "queries" / "real-dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query"] for line in lines if line.strip()]


def test_above_the_threshold_routes_from_hnsw_candidates_and_says_so(
    routers: tuple[SkillPilot, SkillPilot, list[Path]],
) -> None:
    sqlite, nearest, _ = routers
    assert sqlite.stats().skills == nearest.stats().skills == 118 < DEPTH
    assert nearest.stats().nearest_neighbours
    assert not sqlite.stats().nearest_neighbours
    trace = nearest.route("turn this pdf into a word document", trace=True).trace
    assert trace is not None and trace[0].stage == "catalog: candidates from the HNSW index"
    exact_trace = sqlite.route("turn this pdf into a word document", trace=True).trace
    assert exact_trace is not None and all("HNSW" not in stage.stage for stage in exact_trace)


def test_nearest_neighbour_routes_equal_sqlite_on_the_development_queries(
    routers: tuple[SkillPilot, SkillPilot, list[Path]],
) -> None:
    sqlite, nearest, folders = routers
    queries = _queries()
    mismatches = [q for q in queries if _answer(nearest, q) != _answer(sqlite, q)]
    assert mismatches == []
    # Limited to two of the roots: the store's search keeps to them (and finds them all).
    roots = [str(folders[1]), str(folders[3])]
    limited = [_answer(nearest, q, roots) for q in queries]
    assert limited == [_answer(sqlite, q, roots) for q in queries]
    chosen = [Path(answer["skill"]["path"]) for answer in limited if answer["skill"]]
    assert chosen and all(folders[1] in path.parents or folders[3] in path.parents for path in chosen)
