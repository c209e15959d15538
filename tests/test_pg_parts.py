"""The PostgreSQL store's nearest-neighbour search over every part vector (``vector_parts``): a
skill is as near as its nearest part, as the dense retriever scores it (max-sim), so a skill whose
body answers the message is found even when its description does not; parts follow re-index
(an edited body's old parts go, a removed skill's parts go); the search returns ``k`` skills even
when many parts belong to few skills; and an index written before the parts table gets its parts
(and loses the old head-vector indexes) the first time a store opens it.

A real PostgreSQL 18 + pgvector server (``tests/pg_server.py``); the suite's trigram encoder
(``tests/fake_encoder.py``): texts sharing spelling are near, which is all these tests need.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from skillpilot import SkillPilot
from skillpilot.index.builder import vector_space
from skillpilot.retrieve.dense import EMBEDDING

from .fake_encoder import SPEC, TrigramEncoder
from .pg_server import fresh_database, postgres_url  # noqa: F401  (a fixture)

pytest.importorskip("psycopg")
from skillpilot.index.postgres import PostgresStore  # noqa: E402  (needs the [postgres] extra)

MESSAGE = "survey reports on volcanic basalt geology in the northern highlands"
SETTINGS = {"embed_provider": SPEC, "log_enabled": False, "feedback_enabled": False}
SPACE = vector_space(TrigramEncoder(), EMBEDDING)


def _skill(folder: Path, name: str, description: str, body: str) -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n", encoding="utf-8"
    )


def _catalog(folder: Path) -> None:
    # The answer says it in its body only; a decoy's description is closer than the answer's.
    _skill(folder, "sheet-formatter", "Formats spreadsheets with banded rows.", f"It also writes {MESSAGE}. " * 3)
    _skill(folder, "geology-notes", "Survey notes on geology of the highlands.", "Keeps a field notebook. " * 3)
    for n in range(12):
        _skill(folder, f"filler-{n}", f"Helper number {n} for ordinary chores.", f"Does chore {n} quietly. " * 3)


def _nearest(store: PostgresStore, k: int = 3, exact: bool = False) -> list[str]:
    vector = TrigramEncoder().encode_batch([MESSAGE])[0]
    return [key for _, key, _ in store.vector_search(SPACE, vector, k, exact=exact)]


@pytest.fixture
def indexed(tmp_path: Path, postgres_url: str) -> tuple[SkillPilot, Path, str]:  # noqa: F811
    url = fresh_database(postgres_url, f"parts_{uuid.uuid4().hex[:8]}")
    folder = tmp_path / "skills"
    _catalog(folder)
    pilot = SkillPilot(home=tmp_path / "home", store=url, **SETTINGS)
    pilot.index([folder])
    return pilot, folder, url


def test_a_skill_is_found_by_its_nearest_part_exactly_and_through_hnsw(
    indexed: tuple[SkillPilot, Path, str],
) -> None:
    pilot, _, _ = indexed
    store = pilot.store
    assert isinstance(store, PostgresStore)
    assert _nearest(store)[0] == _nearest(store, exact=True)[0] == "sheet-formatter"
    # By description alone (the head vectors) the decoy would come first.
    heads = {key: vectors[0] for (_, key), vectors in store.vectors(SPACE).items()}
    vector = TrigramEncoder().encode_batch([MESSAGE])[0]
    assert max(heads, key=lambda key: float(heads[key] @ vector)) == "geology-notes"
    pilot.close()


def test_parts_follow_an_edited_body_and_a_removed_skill(indexed: tuple[SkillPilot, Path, str]) -> None:
    pilot, folder, url = indexed
    vector = TrigramEncoder().encode_batch([MESSAGE])[0]
    before = dict((key, s) for _, key, s in pilot.store.vector_search(SPACE, vector, 14, exact=True))  # type: ignore[attr-defined]
    _skill(folder, "sheet-formatter", "Formats spreadsheets with banded rows.", "Colours every other row. " * 3)
    (folder / "geology-notes" / "SKILL.md").unlink()
    (folder / "geology-notes").rmdir()
    pilot.index([folder])
    store = pilot.store
    assert isinstance(store, PostgresStore)
    after = {key: s for _, key, s in store.vector_search(SPACE, vector, 14, exact=True)}
    assert "geology-notes" in before and "geology-notes" not in after
    # Its similarity is its new parts' best: the old body's part is gone.
    edited = store.vectors(SPACE)[(str(folder), "sheet-formatter")]
    assert after["sheet-formatter"] == pytest.approx(float((edited @ vector).max()), abs=1e-5)
    assert after["sheet-formatter"] < before["sheet-formatter"] - 0.1
    raw = PostgresStore(url)
    parts = raw._rows("SELECT key, count(*) FROM vector_parts GROUP BY key")
    stored = store.vectors(SPACE)
    assert dict(parts) == {key: len(vectors) for (_, key), vectors in stored.items()}
    raw.close()
    pilot.close()


def test_k_skills_come_back_when_their_parts_crowd_the_first_batch(tmp_path: Path, postgres_url: str) -> None:  # noqa: F811
    url = fresh_database(postgres_url, f"crowd_{uuid.uuid4().hex[:8]}")
    folder = tmp_path / "skills"
    # Every skill has three parts close to the message (description and two body chunks).
    for n in range(20):
        text = f"{MESSAGE} number {n}"
        _skill(folder, f"survey-{n:02d}", text, (f"{text}. " * 6)[:790])
    pilot = SkillPilot(home=tmp_path / "home", store=url, **SETTINGS)
    pilot.index([folder])
    store = pilot.store
    assert isinstance(store, PostgresStore)
    assert min(len(v) for v in store.vectors(SPACE).values()) >= 3
    found = _nearest(store, k=15)
    assert len(found) == len(set(found)) == 15
    assert found == _nearest(store, k=15, exact=True)
    pilot.close()


def test_an_index_without_parts_gets_them_when_first_opened(indexed: tuple[SkillPilot, Path, str]) -> None:
    pilot, _, url = indexed
    pilot.close()
    old = PostgresStore(url)
    # What an index written before the parts table looks like: no parts, a head-vector index.
    old._db.execute("DELETE FROM vector_parts")
    old._db.execute("DELETE FROM meta WHERE key = 'vector_parts'")
    old._db.execute("CREATE INDEX vectors_hnsw_old ON vectors USING hnsw ((head::vector(512)) vector_cosine_ops)")
    old.close()
    store = PostgresStore(url)
    assert _nearest(store)[0] == "sheet-formatter"
    total = sum(len(v) for v in store.vectors(SPACE).values())
    assert store._rows("SELECT count(*) FROM vector_parts")[0][0] == total
    indexes = {name for (name,) in store._rows("SELECT indexname FROM pg_indexes WHERE schemaname = 'skillpilot'")}
    assert "vectors_hnsw_old" not in indexes
    assert any(name.startswith("vector_parts_hnsw_") for name in indexes)
    vector = TrigramEncoder().encode_batch([MESSAGE])[0]
    assert store.vector_search(SPACE, vector, 1) == store.vector_search(SPACE, vector, 1, exact=True)
    store.close()
