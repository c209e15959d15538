"""The ``SkillStore`` contract, run on every store: SQLite and a real PostgreSQL 18 + pgvector
server. The same writes give the same reads, and a router or market over either store answers
the development corpus's queries identically; PostgreSQL's exact vector search equals a brute-
force numpy search."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from skillpilot import SkillPilot
from skillpilot.index import IndexChanges, SkillStore, StoredSkill, open_store
from skillpilot.index.builder import vector_space
from skillpilot.market import Market
from skillpilot.model import SkippedFile
from skillpilot.retrieve.dense import EMBEDDING
from skillpilot.text import tokenize

from .cli_util import CliOutcome, run_cli
from .conftest import BENCH, EXAMPLES, require_corpus
from .pg_server import fresh_database, postgres_url  # noqa: F401  (a fixture)

StoreFactory = Callable[[], SkillStore]


@pytest.fixture(params=["sqlite", "postgres"])
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens fresh stores of one kind (each call: the same empty index, a new connection)."""
    if request.param == "sqlite":
        target = str(tmp_path / "index.sqlite")
    else:
        target = fresh_database(request.getfixturevalue("postgres_url"), f"t_{uuid.uuid4().hex[:12]}")
    opened: list[SkillStore] = []

    def factory() -> SkillStore:
        opened.append(open_store(target))
        return opened[-1]

    yield factory
    for store in opened:
        store.close()


def _stored(pilot_home: Path) -> list[StoredSkill]:
    pilot = SkillPilot(home=pilot_home, enable_semantic=False)
    pilot.index([EXAMPLES / "skills"])
    return pilot.store.load()


def test_apply_then_read_back(new_store: StoreFactory, tmp_path: Path) -> None:
    stored = _stored(tmp_path / "source")
    root = stored[0].skill.root
    store = new_store()
    assert (store.generation(), store.count(), store.roots()) == (0, 0, [])
    vectors = {
        (s.skill.root, s.skill.key, "m|v1"): np.random.default_rng(n).random((2, 4), dtype=np.float32)
        for n, s in enumerate(stored)
    }
    store.apply(
        IndexChanges(
            roots=(root,),
            upserts=tuple(stored),
            vectors=vectors,
            skipped=((root, SkippedFile(f"{root}/bad/SKILL.md", "no frontmatter")),),
            meta={"encoders": "m"},
        )
    )
    again = new_store()  # another replica sees the committed write
    assert again.generation() == 1
    assert again.load() == sorted(stored, key=lambda s: (s.skill.root.encode(), s.skill.key.encode()))
    assert again.roots() == [root] and again.meta("encoders") == "m" and again.count() == len(stored)
    assert again.hashes(root) == {s.skill.key: s.skill.content_hash for s in stored}
    assert again.skipped() == [SkippedFile(f"{root}/bad/SKILL.md", "no frontmatter")]
    read = again.vectors("m|v1")
    assert read.keys() == {(r, k) for r, k, _ in vectors} == again.vector_keys("m|v1")
    assert all(np.array_equal(read[(r, k)], v) for (r, k, _), v in vectors.items())
    keys = [(root, stored[2].skill.key), (root, "no/such"), (root, stored[0].skill.key)]
    assert again.fetch(keys) == [stored[2], stored[0]]
    gone = stored[1].skill.key
    again.apply(IndexChanges(removed=((root, gone),)))
    assert gone not in new_store().hashes(root) and (root, gone) not in again.vectors("m|v1")
    again.apply(IndexChanges(dropped_roots=(root,)))
    assert (again.count(), again.roots(), again.skipped(), again.generation()) == (0, [], [], 3)
    reopened = again.reopen()  # a second connection (a thread of its own) to the same index
    try:
        assert reopened is not again and (reopened.generation(), reopened.path) == (3, again.path)
    finally:
        reopened.close()


def test_an_interrupted_write_changes_nothing(
    new_store: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = _stored(tmp_path / "source")
    store = new_store()
    store.apply(IndexChanges(roots=(stored[0].skill.root,), upserts=tuple(stored[:3])))
    module = sys.modules[type(store).__module__]
    real = module.skill_to_json
    calls = {"n": 0}

    def interrupted(skill):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(skill)

    monkeypatch.setattr(module, "skill_to_json", interrupted)
    changed = replace(stored[0], skill=replace(stored[0].skill, description="changed"))
    with pytest.raises(KeyboardInterrupt):
        store.apply(IndexChanges(upserts=(changed, *stored[3:])))
    monkeypatch.undo()
    fresh = new_store()
    assert (fresh.generation(), fresh.count()) == (1, 3)
    assert fresh.load() == stored[:3]


@pytest.fixture(scope="module")
def bench_pilots(
    tmp_path_factory: pytest.TempPathFactory,
    postgres_url: str,  # noqa: F811
) -> tuple[SkillPilot, SkillPilot]:
    """The development corpus indexed once (USE encoder) into SQLite, and the very same changes
    applied to PostgreSQL (what ``index --store`` writes)."""
    require_corpus()
    home = tmp_path_factory.mktemp("contract-home")
    sqlite_pilot = SkillPilot(home=home, embed_provider="use-multilingual", preconditions=False)
    sqlite_pilot.index([BENCH / "skills"])
    source = sqlite_pilot.store
    spaces = [vector_space(e, EMBEDDING) for e in sqlite_pilot.encoders]
    pg = open_store(fresh_database(postgres_url, f"bench_{uuid.uuid4().hex[:8]}"))
    pg.apply(
        IndexChanges(
            roots=tuple(source.roots()),
            upserts=tuple(source.load()),
            vectors={(r, k, space): v for space in spaces for (r, k), v in source.vectors(space).items()},
            skipped=tuple((source.roots()[0], s) for s in source.skipped()),
            meta={"encoders": source.meta("encoders") or ""},
        )
    )
    pg_pilot = SkillPilot(home=home, store=pg, embed_provider="use-multilingual", preconditions=False)
    return sqlite_pilot, pg_pilot


def _dev_queries() -> list[dict[str, str]]:
    lines = (BENCH / "queries" / "real-dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines][:60]


@pytest.mark.slow
def test_same_route_and_search_results_on_the_development_corpus(
    bench_pilots: tuple[SkillPilot, SkillPilot],
) -> None:
    sqlite_pilot, pg_pilot = bench_pilots
    assert pg_pilot.store.load() == sqlite_pilot.store.load()
    assert [s.id for s in pg_pilot.skills()] == [s.id for s in sqlite_pilot.skills()]
    sqlite_market, pg_market = Market(sqlite_pilot), Market(pg_pilot)
    for item in _dev_queries():
        a, b = sqlite_pilot.route(item["query"]), pg_pilot.route(item["query"])
        assert (a.skill, a.decision, a.confidence, a.alternatives) == (
            b.skill,
            b.decision,
            b.confidence,
            b.alternatives,
        ), item["id"]
        assert sqlite_pilot.search(item["query"]) == pg_pilot.search(item["query"])
        assert [h.to_dict() for h in sqlite_market.search(item["query"])] == [
            h.to_dict() for h in pg_market.search(item["query"])
        ], item["id"]


@pytest.mark.slow
def test_exact_vector_search_equals_brute_force(bench_pilots: tuple[SkillPilot, SkillPilot]) -> None:
    sqlite_pilot, pg_pilot = bench_pilots
    encoder = sqlite_pilot.encoders[0]
    space = vector_space(encoder, EMBEDDING)
    stored = sqlite_pilot.store.vectors(space)
    keys = sorted(stored, key=lambda k: (k[0].encode(), k[1].encode()))
    # A skill is as near as its nearest part (max-sim, as the dense retriever scores it).
    parts = [stored[k].astype(np.float64) / np.linalg.norm(stored[k], axis=1, keepdims=True) for k in keys]
    queries = encoder.encode_batch([q["query"] for q in _dev_queries()[:30]]).astype(np.float64)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    from skillpilot.index.postgres import PostgresStore  # here: the module needs the [postgres] extra

    store = pg_pilot.store
    assert isinstance(store, PostgresStore)
    found = recalled = 0
    for vector in queries:
        cosines = np.array([float((vectors @ vector).max()) for vectors in parts])
        expected = [keys[i] for i in np.lexsort((np.arange(len(keys)), -cosines))[:10]]
        exact = store.vector_search(space, vector, 10, exact=True)
        # The same skills, in order, but for near-ties the server's float32 arithmetic may flip.
        cosine_of = dict(zip(keys, cosines.tolist(), strict=True))
        assert [cosine_of[(r, k)] for r, k, _ in exact] == pytest.approx([cosine_of[key] for key in expected], abs=1e-6)
        assert [s for _, _, s in exact] == pytest.approx(sorted(cosines, reverse=True)[:10], abs=1e-5)
        approximate = store.vector_search(space, vector, 10)
        found += 10
        recalled += len({(r, k) for r, k, _ in approximate} & set(expected))
    assert recalled / found >= 0.95
    hits = store.text_search(tokenize("make a gif for slack"), 3)
    assert {k for _, k, _ in hits[:2]} == {
        "anthropics-skills/slack-gif-creator",
        "composiohq-awesome-claude-skills/slack-gif-creator",
    }


def test_cli_index_and_route_with_a_postgres_store(postgres_url: str, tmp_path: Path) -> None:  # noqa: F811
    url = fresh_database(postgres_url, f"cli_{uuid.uuid4().hex[:8]}")

    def cli(*args: str) -> CliOutcome:
        return run_cli(*args, home=tmp_path / "home", SKILLPILOT_ENABLE_SEMANTIC="false")

    indexed = cli("index", str(EXAMPLES / "skills"), "--store", url, "--json")
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["total"] == 16
    routed = cli("route", "commit my changes", "--store", url, "--json")
    assert routed.returncode == 0, routed.stderr
    assert json.loads(routed.stdout)["skill"]["id"] == "git-commit"
    assert not (tmp_path / "home" / "index.sqlite").exists()
    refused = cli("route", "commit my changes", "--store", "postgresql://nobody@127.0.0.1:1/none")
    assert refused.returncode == 1 and refused.stdout == ""
    assert "cannot open the PostgreSQL index" in refused.stderr and "Traceback" not in refused.stderr


def test_file_stats_are_replaced_per_root_and_dropped_with_it(new_store: StoreFactory) -> None:
    store = new_store()
    store.apply(IndexChanges(roots=("/a", "/b"), file_stats={"/a": {"x": (10, 2**62)}, "/b": {"y": (1, 2)}}))
    store.apply(IndexChanges(roots=("/a",), file_stats={"/a": {"z": (3, 4)}}))
    reopened = new_store()
    assert reopened.file_stats("/a") == {"z": (3, 4)}
    assert reopened.file_stats("/b") == {"y": (1, 2)}
    reopened.apply(IndexChanges(dropped_roots=("/b",)))
    assert new_store().file_stats("/b") == {}
