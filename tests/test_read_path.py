"""One consistent read: a router builds its catalog from one store snapshot and never writes the
index, whatever `index --replace` commits meanwhile (SQLite and PostgreSQL).

The encoder is the test suite's installed fake (``tests/fake_encoder.py``, an entry-point plugin):
what is tested is which skills and vectors a router holds, not meaning.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillpilot import SkillPilot
from skillpilot.cli import app
from skillpilot.index import IndexChanges, SkillStore, StoredSkill, open_store

from .conftest import write_skill
from .fake_encoder import SPEC, TrigramEncoder
from .pg_server import fresh_database, postgres_url  # noqa: F401  (a fixture)

SPACE = f"{TrigramEncoder.name}|parts-v2"
OLD = {"pdf-merge": "Merge several PDF files into one document.", "csv-clean": "Clean a CSV table of duplicates."}
NEW = {"video-trim": "Cut a video to a time range.", "audio-mix": "Mix two audio tracks into one file."}


@pytest.fixture(params=["sqlite", "postgres"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "index.sqlite")
    return fresh_database(request.getfixturevalue("postgres_url"), f"t_{uuid.uuid4().hex[:12]}")


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    old, new = tmp_path / "old", tmp_path / "new"
    for root, skills in ((old, OLD), (new, NEW)):
        for name, description in skills.items():
            write_skill(root, name, f"name: {name}\ndescription: {description} Use when asked to.")
    return old, new


@pytest.fixture
def pilots(store_target: str, isolated_home: Path) -> Iterator[Callable[[], SkillPilot]]:
    """Opens routers on one index, each with its own store connection (like two processes)."""
    opened: list[SkillPilot] = []

    def open_pilot() -> SkillPilot:
        store: SkillStore = open_store(store_target)
        opened.append(SkillPilot(home=isolated_home, store=store, embed_provider=SPEC, log_enabled=False))
        return opened[-1]

    yield open_pilot
    for pilot in opened:
        pilot.close()


def test_a_replace_committed_while_a_router_reads_is_wholly_outside_its_catalog(
    pilots: Callable[[], SkillPilot], roots: tuple[Path, Path]
) -> None:
    old, new = roots
    writer, reader = pilots(), pilots()
    writer.index([old])
    store = reader.store
    original_load = store.load
    replaced: list[int] = []

    def load_with_a_write_in_between() -> list[StoredSkill]:
        # The interleaving that used to go wrong: a whole `index --replace` commits after the
        # router read the generation and before it read the skills and vectors.
        if not replaced:
            writer.index([new], replace=True)
            replaced.append(writer.store.generation())
        return original_load()

    store.load = load_with_a_write_in_between  # type: ignore[method-assign]
    first = reader.route("merge these PDF files into one document")
    assert replaced, "the hook ran inside the router's read"
    # The catalog is the old one, whole: its skills with their own vectors.
    assert first.skill is not None and first.skill.id == "pdf-merge"
    assert first.method == "hybrid"
    # Labelled with the generation it read, so the next route sees the new one and reloads:
    # a router never keeps routing to skills the index no longer holds.
    second = reader.route("merge these PDF files into one document")
    assert second.skill is None or second.skill.id in NEW
    assert reader.route("cut a video to a time range").skill.id == "video-trim"  # type: ignore[union-attr]
    stats = reader.stats()
    assert (stats.skills, stats.orphan_vectors, stats.missing_vectors) == (2, 0, {})
    # Routing wrote nothing: the generation is the writer's last one.
    assert reader.store.generation() == replaced[0]


def test_routes_during_repeated_replaces_see_one_catalog_and_leave_no_orphans(
    pilots: Callable[[], SkillPilot], roots: tuple[Path, Path]
) -> None:
    old, new = roots
    writer, reader = pilots(), pilots()
    writer.index([old])
    generations: list[int] = []
    done = threading.Event()

    def replace_back_and_forth() -> None:
        try:
            for step in range(8):
                writer.index([new if step % 2 == 0 else old], replace=True)
                generations.append(writer.store.generation())
        finally:
            done.set()

    thread = threading.Thread(target=replace_back_and_forth)
    thread.start()
    routed = 0
    while not done.is_set() or routed < 5:
        result = reader.route("merge these PDF files, then cut a video to a time range")
        names = {result.skill.id} if result.skill else set()
        names |= {a.id for a in result.alternatives}
        # Every answer comes from one catalog: never a mix of the old and the new skills.
        assert names <= set(OLD) or names <= set(NEW), names
        routed += 1
    thread.join()
    stats = reader.stats()
    assert stats.orphan_vectors == 0
    assert len(reader.store.vectors(SPACE)) == stats.skills == 2
    assert reader.store.generation() == generations[-1]
    assert {s.id for s in reader.skills()} == set(OLD)


def test_stats_counts_orphans_and_reindex_removes_them(
    pilots: Callable[[], SkillPilot], roots: tuple[Path, Path], store_target: str, isolated_home: Path
) -> None:
    old, _ = roots
    pilot = pilots()
    pilot.index([old])
    # Vectors of a skill the index does not hold, as an older version's read path left them.
    (root, _key), array = next(iter(pilot.store.vectors(SPACE).items()))
    pilot.store.apply(IndexChanges(vectors={(root, "gone", SPACE): array}))
    assert pilot.stats().orphan_vectors == 1
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.yaml").write_text(f"embed:\n  provider: {SPEC}\nindex:\n  store: {store_target}\n")
    shown = CliRunner().invoke(app, ["stats", "--human", "--home", str(isolated_home)])
    assert "Orphan vectors: 1 of skills no longer indexed (run `skillpilot reindex`)" in shown.stdout
    pilot.reindex()
    assert pilot.stats().orphan_vectors == 0
    assert pilot.stats().skills == len(OLD)
