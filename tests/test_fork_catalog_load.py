"""A catalog of forks (many skills, few distinct texts) loads into the same catalog as reading
every skill on its own, and its skills share one decoded fingerprint per text."""

from __future__ import annotations

import json
from pathlib import Path

from skillpilot import SkillPilot
from skillpilot.index.codec import stored_from_json
from skillpilot.index.sqlite import SQLiteStore
from skillpilot.retrieve.bm25 import BM25Index, BM25Retriever, skill_terms
from skillpilot.retrieve.fast import FastMatcher
from skillpilot.text import Query, tokenize

TEXTS = [
    ("pdf-tables", "Extract tables from PDF files into CSV or Excel spreadsheets. Use when a PDF holds tables."),
    ("git-commit", "Write a conventional commit message for the staged changes and commit them."),
    ("docker-compose", "Start, stop and inspect docker compose services; use when docker compose is mentioned."),
    ("rss-reader", "Read RSS feeds and summarise new posts; mentions git-commit messages too."),
]


def _catalog(path: Path) -> Path:
    tools = [
        {"name": name if copy == 0 else f"{name}-fork{copy}", "description": text}
        for copy in range(6)
        for name, text in TEXTS
    ]
    path.write_text(json.dumps(tools), encoding="utf-8")
    return path


def test_forks_share_fingerprints_and_load_as_if_read_one_by_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    pilot = SkillPilot(home=home, embed_provider="trigram-test", log_enabled=False)
    pilot.index([_catalog(tmp_path / "tools.json")])
    store = SQLiteStore(home / "index.sqlite")
    loaded = store.load()
    rows = store._db.execute("SELECT skill, fingerprint, indexed_at FROM skills ORDER BY root, key").fetchall()
    assert loaded == [stored_from_json(*row) for row in rows]
    by_text: dict[str, set[int]] = {}
    for stored in loaded:
        by_text.setdefault(stored.skill.description, set()).add(id(stored.fingerprint))
    assert len(loaded) == 24
    assert all(len(objects) == 1 for objects in by_text.values())

    skills = pilot.skills()
    # The catalog's keyword parts read each shared description once and find what reading
    # every skill alone finds: names mentioned in other skills' descriptions stay generic.
    bm25 = BM25Retriever(skills)
    alone = BM25Index([skill_terms(skill) for skill in skills])
    for query in ("extract the tables of this pdf", "docker compose services", "commit message"):
        assert bm25.scores(Query.of(query)).tolist() == alone.scores(tokenize(query)).tolist()
    matcher = FastMatcher(skills)
    generic = matcher.match(Query.of("make a git-commit for this"))
    assert [(skills[h.index].name, h.score) for h in generic][:1] == [("git-commit", 4.0)]
    named = matcher.match(Query.of("use pdf-tables here"))
    assert [(skills[h.index].name, h.score) for h in named][:1] == [("pdf-tables", 6.0)]
    assert pilot.route("extract the tables of this pdf into a spreadsheet").skill is not None
