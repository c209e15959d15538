"""A ``SkillStore`` on PostgreSQL + pgvector, so many stateless router and search replicas share
one catalog (``skillpilot index --store postgresql://user@host/db``; extra ``[postgres]``).

Input: ``IndexChanges`` from the builder, as for the SQLite store. Output: the same reads.
Guarantees, the SQLite store's contract (``tests/test_store_contract.py`` runs both):

- every ``apply`` is one transaction, serialised across writers by an advisory lock, and bumps
  the ``generation`` counter in it when what routers read changed, so a replica polling
  ``generation()`` reloads exactly when such a write has committed, and a crash mid-write
  leaves the previous index whole;
- ``snapshot`` reads in one ``REPEATABLE READ`` transaction: one committed state, its generation
  included;
- ``load`` / ``fetch`` / ``vectors`` return what was written, in the same order (byte order,
  ``COLLATE "C"``, as SQLite compares text) with float32 vectors bit for bit, so a router over
  this store decides exactly as one over SQLite.

For catalogs too large to search in every replica's memory, the store also searches in SQL:

- ``text_search``: a ``tsvector`` of each skill's public terms (``skillpilot.text.tokenize`` of
  its name and description, stored as lexemes, so stemming and CJK bigrams match the router's)
  under a GIN index, ranked by ``ts_rank``;
- ``vector_search``: the skills with the nearest part vector by cosine (a skill is as near as
  its nearest part, the dense retriever's max-sim), exact (a sequential scan) or approximate
  through an HNSW index over every part (``vector_parts``; Malkov & Yashunin 2018; one partial
  expression index per vector space, since one column holds vectors of several models and
  dimensions). An index written before the parts table gets them when first opened.

Fusing the two (RRF) is left to the caller, as with the in-memory retrievers: above
``index.annAbove`` skills a router takes its dense candidates from ``vector_search`` and reads only
their vectors (``vectors_of``; ``skillpilot.retrieve.ann``).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..errors import MissingExtraError, StoreError
from ..model import Skill, SkippedFile
from ..text import tokenize
from . import ConflictGraph, IndexChanges, Snapshot, StoredSkill
from .codec import (
    fingerprint_to_json,
    graph_from_row,
    graph_to_row,
    skill_to_json,
    stored_from_json,
    stored_from_rows,
)

try:
    import psycopg
    from psycopg import sql
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise MissingExtraError("postgres", "the PostgreSQL store", exc.name or "psycopg") from exc

SCHEMA_VERSION = "1"
DEFAULT_SCHEMA = "skillpilot"
# HNSW parameters: pgvector's m, twice its ef_construction, and ef_search 200, which on the
# 100k-skill benchmark (benchmarks/pg_scale.py) recalls far more than 100 at the same latency.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128
HNSW_EF_SEARCH = 200
# A search visits at least this many candidates per result: with ef_search = k the list's last
# places are the ones the graph walk found least surely (on the 21,000-skill fork catalog, k = 200:
# recall 0.87-0.90 at ef_search 200, 0.97-0.98 at 500, at about the same latency).
HNSW_EF_PER_RESULT = 2.5
HNSW_EF_SEARCH_MAX = 1000  # pgvector's limit
# Parts read per skill asked for: a skill is as near as its nearest part, and its other parts
# are usually near too.
PARTS_PER_RESULT = 2
_ORPHAN = "NOT EXISTS (SELECT 1 FROM skills s WHERE s.root = vectors.root AND s.key = vectors.key)"
# Any constant will do: it only has to be the same for every writer of one database.
_WRITE_LOCK = 0x5D11_9170

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS roots (path text PRIMARY KEY, added_at double precision NOT NULL);
CREATE TABLE IF NOT EXISTS skills (
    root text NOT NULL,
    key text NOT NULL,
    skill text NOT NULL,
    fingerprint text NOT NULL,
    content_hash text NOT NULL,
    indexed_at double precision NOT NULL,
    terms tsvector NOT NULL,
    PRIMARY KEY (root, key)
);
CREATE INDEX IF NOT EXISTS skills_terms ON skills USING gin (terms);
CREATE TABLE IF NOT EXISTS vectors (
    root text NOT NULL,
    key text NOT NULL,
    encoder text NOT NULL,
    dim integer NOT NULL,
    data bytea NOT NULL,
    head vector NOT NULL,
    PRIMARY KEY (root, key, encoder)
);
-- Every part vector of every skill, for the HNSW search (a skill is as near as its nearest part).
CREATE TABLE IF NOT EXISTS vector_parts (
    root text NOT NULL,
    key text NOT NULL,
    encoder text NOT NULL,
    part integer NOT NULL,
    v vector NOT NULL,
    PRIMARY KEY (root, key, encoder, part),
    FOREIGN KEY (root, key, encoder) REFERENCES vectors ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS file_stats (
    root text NOT NULL,
    key text NOT NULL,
    size bigint NOT NULL,
    mtime_ns bigint NOT NULL,
    PRIMARY KEY (root, key)
);
CREATE TABLE IF NOT EXISTS skipped (root text NOT NULL, path text NOT NULL, reason text NOT NULL);
CREATE TABLE IF NOT EXISTS conflict_graph (
    id integer PRIMARY KEY CHECK (id = 1),
    config text NOT NULL,
    skills text NOT NULL,
    groups text NOT NULL,
    pairs bytea NOT NULL,
    similarity bytea NOT NULL
);
"""


def public_terms(skill: Skill) -> list[str]:
    """The lexemes ``text_search`` matches: the name's and description's index terms."""
    return sorted(set(tokenize(f"{skill.name.replace('-', ' ').replace('_', ' ')} {skill.description}")))


def _tsquery(terms: Sequence[str]) -> str:
    """An OR query of literal lexemes (quoted, so Postgres does not re-parse our stems)."""
    return " | ".join("'" + t.replace("'", "''").replace("\\", "\\\\") + "'" for t in dict.fromkeys(terms))


def _vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


class PostgresStore:
    """A ``SkillStore`` in one PostgreSQL schema (``skillpilot`` by default)."""

    def __init__(self, url: str, schema: str = DEFAULT_SCHEMA) -> None:
        self.url = url
        self.schema = schema
        self.path = _redacted(url)
        try:
            self._db = psycopg.connect(url, autocommit=True)
            self._db.execute(sql.SQL("CREATE EXTENSION IF NOT EXISTS vector"))
            self._db.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
            self._db.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(schema)))
            with self._db.transaction():
                self._db.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
                self._db.execute(_SCHEMA)
                self._db.execute(
                    "INSERT INTO meta VALUES ('schema', %s), ('generation', '0') ON CONFLICT DO NOTHING",
                    (SCHEMA_VERSION,),
                )
                _fill_parts(self._db)
        except psycopg.Error as exc:
            raise StoreError(
                self.path,
                f"cannot open the PostgreSQL index ({str(exc).strip()}); check the URL, that the server is "
                "running and that pgvector is installed (CREATE EXTENSION vector needs a superuser once)",
            ) from exc

    def reopen(self) -> PostgresStore:
        return PostgresStore(self.url, self.schema)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._db.transaction():
                self._db.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
                yield self._db
        except psycopg.Error as exc:
            raise StoreError(self.path, f"cannot write the index: {str(exc).strip()}") from exc

    def _rows(self, query: str, params: Sequence[Any] = (), binary: bool = False) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(query, params, binary=binary).fetchall()
        except psycopg.Error as exc:
            raise StoreError(self.path, f"cannot read the index: {str(exc).strip()}") from exc

    # -- the SkillStore Protocol ------------------------------------------------------------
    def generation(self) -> int:
        return int(self._rows("SELECT value FROM meta WHERE key='generation'")[0][0])

    def meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key=%s", (key,))
        return None if not rows else str(rows[0][0])

    def roots(self) -> list[str]:
        return [r[0] for r in self._rows('SELECT path FROM roots ORDER BY added_at, path COLLATE "C"')]

    def hashes(self, root: str) -> dict[str, str]:
        rows = self._rows("SELECT key, content_hash FROM skills WHERE root=%s", (root,))
        return {key: content_hash for key, content_hash in rows}

    def file_stats(self, root: str) -> dict[str, tuple[int, int]]:
        rows = self._rows("SELECT key, size, mtime_ns FROM file_stats WHERE root=%s", (root,))
        return {key: (size, mtime_ns) for key, size, mtime_ns in rows}

    def vector_keys(self, encoder: str) -> set[tuple[str, str]]:
        return {(r, k) for r, k in self._rows("SELECT root, key FROM vectors WHERE encoder=%s", (encoder,))}

    def apply(self, changes: IndexChanges) -> None:
        """Write one index run's changes atomically (all or nothing)."""
        now = time.time()
        spaces: dict[str, int] = {}
        with self._transaction() as db:
            for root in changes.dropped_roots:
                for table, column in (
                    ("skills", "root"),
                    ("vectors", "root"),
                    ("skipped", "root"),
                    ("file_stats", "root"),
                    ("roots", "path"),
                ):
                    db.execute(
                        sql.SQL("DELETE FROM {} WHERE {} = %s").format(sql.Identifier(table), sql.Identifier(column)),
                        (root,),
                    )
            for root in changes.roots:
                db.execute("INSERT INTO roots VALUES (%s, %s) ON CONFLICT DO NOTHING", (root, now))
                db.execute("DELETE FROM skipped WHERE root=%s", (root,))
            for root, key in changes.removed:
                db.execute("DELETE FROM skills WHERE root=%s AND key=%s", (root, key))
                db.execute("DELETE FROM vectors WHERE root=%s AND key=%s", (root, key))
            with db.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO skills VALUES (%s, %s, %s, %s, %s, %s, array_to_tsvector(%s::text[])) "
                    "ON CONFLICT (root, key) DO UPDATE SET skill=EXCLUDED.skill, "
                    "fingerprint=EXCLUDED.fingerprint, content_hash=EXCLUDED.content_hash, "
                    "indexed_at=EXCLUDED.indexed_at, terms=EXCLUDED.terms",
                    [
                        (
                            s.skill.root,
                            s.skill.key,
                            skill_to_json(s.skill),
                            fingerprint_to_json(s.fingerprint),
                            s.skill.content_hash,
                            s.indexed_at,
                            public_terms(s.skill),
                        )
                        for s in changes.upserts
                    ],
                )
                rows = []
                for (root, key, encoder), vector in changes.vectors.items():
                    array = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1, vector.shape[-1])
                    spaces[encoder] = array.shape[1]
                    head = _vector_literal(array[0])
                    rows.append((root, key, encoder, array.shape[1], array.tobytes(), head))
                cursor.executemany(
                    "INSERT INTO vectors VALUES (%s, %s, %s, %s, %s, %s::vector) "
                    "ON CONFLICT (root, key, encoder) "
                    "DO UPDATE SET dim=EXCLUDED.dim, data=EXCLUDED.data, head=EXCLUDED.head",
                    rows,
                )
                _write_parts(cursor, rows)
                cursor.executemany(
                    "INSERT INTO skipped VALUES (%s, %s, %s)",
                    [(root, s.path, s.reason) for root, s in changes.skipped],
                )
                for root in changes.file_stats:
                    db.execute("DELETE FROM file_stats WHERE root=%s", (root,))
                cursor.executemany(
                    "INSERT INTO file_stats VALUES (%s, %s, %s, %s)",
                    [
                        (root, key, size, mtime_ns)
                        for root, stats in changes.file_stats.items()
                        for key, (size, mtime_ns) in stats.items()
                    ],
                )
            for key, value in {**changes.meta, "last_updated": repr(now)}.items():
                db.execute(
                    "INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value=EXCLUDED.value",
                    (key, value),
                )
            if changes.prune_orphans:
                db.execute(f"DELETE FROM vectors WHERE {_ORPHAN}")
            if changes.conflicts is not None:
                db.execute(
                    "INSERT INTO conflict_graph VALUES (1, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
                    "config=EXCLUDED.config, skills=EXCLUDED.skills, groups=EXCLUDED.groups, "
                    "pairs=EXCLUDED.pairs, similarity=EXCLUDED.similarity",
                    graph_to_row(changes.conflicts),
                )
            if changes.catalog_changed:
                db.execute("UPDATE meta SET value = (value::bigint + 1)::text WHERE key='generation'")
            for encoder, dim in spaces.items():
                _ensure_hnsw(db, encoder, dim)

    def snapshot(self, spaces: Sequence[str]) -> Snapshot:
        try:
            with self._db.transaction():
                self._db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                return Snapshot(
                    self.generation(),
                    tuple(self.load()),
                    {space: self.vectors(space) for space in spaces},
                    self.conflict_graph(pairs=False),
                )
        except psycopg.Error as exc:
            raise StoreError(self.path, f"cannot read the index: {str(exc).strip()}") from exc

    def orphan_vectors(self) -> int:
        return int(self._rows(f"SELECT COUNT(*) FROM vectors WHERE {_ORPHAN}")[0][0])

    def load(self) -> list[StoredSkill]:
        rows = self._rows(
            'SELECT skill, fingerprint, indexed_at FROM skills ORDER BY root COLLATE "C", key COLLATE "C"'
        )
        return stored_from_rows(rows)

    def fetch(self, keys: Sequence[tuple[str, str]]) -> list[StoredSkill]:
        if not keys:
            return []
        rows = self._rows(
            "SELECT root, key, skill, fingerprint, indexed_at FROM skills "
            "WHERE (root, key) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            ([r for r, _ in keys], [k for _, k in keys]),
        )
        found = {(root, key): stored_from_json(skill, fp, at) for root, key, skill, fp, at in rows}
        return [found[k] for k in keys if k in found]

    def vectors(self, encoder: str) -> dict[tuple[str, str], np.ndarray]:
        """Stored vectors of one encoder; each value has shape (parts, dim)."""
        rows = self._rows("SELECT root, key, dim, data FROM vectors WHERE encoder=%s", (encoder,), binary=True)
        return _arrays(rows)

    def skipped(self) -> list[SkippedFile]:
        rows = self._rows('SELECT path, reason FROM skipped ORDER BY path COLLATE "C"')
        return [SkippedFile(path, reason) for path, reason in rows]

    def count(self) -> int:
        return int(self._rows("SELECT COUNT(*) FROM skills")[0][0])

    def conflict_graph(self, pairs: bool = True) -> ConflictGraph | None:
        """The stored conflict graph; ``pairs=False`` skips the pairs (all a router needs)."""
        columns = "pairs, similarity" if pairs else "''::bytea, ''::bytea"
        rows = self._rows(f"SELECT config, skills, groups, {columns} FROM conflict_graph")
        return graph_from_row(*rows[0]) if rows else None

    # -- search in SQL ----------------------------------------------------------------------
    def text_search(self, terms: Sequence[str], k: int) -> list[tuple[str, str, float]]:
        """Up to ``k`` skills holding any of ``terms`` (index terms), best ``ts_rank`` first, as
        (root, key, rank)."""
        if not terms or k <= 0:
            return []
        rows = self._rows(
            "SELECT root, key, ts_rank(terms, q) AS rank FROM skills, CAST(%s AS tsquery) q WHERE terms @@ q "
            'ORDER BY rank DESC, root COLLATE "C", key COLLATE "C" LIMIT %s',
            (_tsquery(terms), k),
        )
        return [(r, key, float(rank)) for r, key, rank in rows]

    def vector_search(
        self,
        encoder: str,
        vector: np.ndarray,
        k: int,
        exact: bool = False,
        ef_search: int | None = None,
        *,
        roots: Sequence[str] | None = None,
    ) -> list[tuple[str, str, float]]:
        """Up to ``k`` skills whose nearest part vector in space ``encoder`` is nearest ``vector`` by
        cosine, as (root, key, cosine similarity of that part); with ``roots``, only skills under
        those roots. ``exact`` scans every part; otherwise the HNSW index answers, visiting
        ``ef_search`` candidates (by default ``HNSW_EF_PER_RESULT`` per result, at least
        ``HNSW_EF_SEARCH``; approximate: it may miss a true neighbour; more candidates, better
        recall, slower), and keeps scanning (pgvector's iterative scan) until the parts it found
        name ``k`` skills, so a few allowed skills among many are still found."""
        dims = self._rows("SELECT dim FROM vectors WHERE encoder=%s LIMIT 1", (encoder,))
        if not dims or k <= 0:
            return []
        dim = int(dims[0][0])
        # The nearest parts, then each skill's nearest one (``read``: how many parts that took).
        # The literals (dimension, space) let the planner match the partial expression index.
        query = sql.SQL(
            "SELECT root, key, max(similarity) AS best, sum(count(*)) OVER () AS read FROM ("
            "SELECT root, key, 1 - ((v::vector({dim})) <=> %(q)s::vector({dim})) AS similarity FROM vector_parts "
            "WHERE encoder = {space}{within} ORDER BY (v::vector({dim})) <=> %(q)s::vector({dim}), "
            'root COLLATE "C", key COLLATE "C", part LIMIT %(parts)s'
            ') nearest GROUP BY root, key ORDER BY best DESC, root COLLATE "C", key COLLATE "C" LIMIT %(k)s'
        ).format(
            dim=sql.Literal(dim),
            space=sql.Literal(encoder),
            within=sql.SQL(" AND root = ANY(%(roots)s)" if roots is not None else ""),
        )
        # Exact: every part (LIMIT NULL). Approximate: twice as many parts while they name fewer
        # than k skills and more are left (pgvector's iterative scan goes past ef_search).
        parts = None if exact else k * PARTS_PER_RESULT
        if ef_search is None:
            ef_search = min(HNSW_EF_SEARCH_MAX, max(HNSW_EF_SEARCH, math.ceil(HNSW_EF_PER_RESULT * k)))
        while True:
            try:
                with self._db.transaction():
                    self._db.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(ef_search)))
                    self._db.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                    # The planner prices an HNSW scan by its ef_search: from ~600 on 21,000 skills
                    # it picks a sequential scan, ten times slower; approximate means the index.
                    self._db.execute("SET LOCAL enable_indexscan = off" if exact else "SET LOCAL enable_seqscan = off")
                    rows = self._db.execute(
                        query, {"q": _vector_literal(vector), "k": k, "parts": parts, "roots": list(roots or ())}
                    ).fetchall()
            except psycopg.Error as exc:
                raise StoreError(self.path, f"cannot search the index: {str(exc).strip()}") from exc
            if parts is None or len(rows) >= k or not rows or int(rows[0][3]) < parts:
                return [(r, key, float(s)) for r, key, s, _ in rows]
            parts *= 2

    def vectors_of(self, encoder: str, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], np.ndarray]:
        """The stored vectors of space ``encoder`` of the skills ``keys`` (missing ones left out)."""
        if not keys:
            return {}
        rows = self._rows(
            "SELECT root, key, dim, data FROM vectors WHERE encoder=%s "
            "AND (root, key) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            (encoder, [r for r, _ in keys], [k for _, k in keys]),
            binary=True,
        )
        return _arrays(rows)


def _write_parts(cursor: psycopg.Cursor[Any], rows: Sequence[tuple[Any, ...]]) -> None:
    """Each (root, key, encoder, dim, data, head) vectors row's part vectors, in place of its old ones."""
    cursor.executemany("DELETE FROM vector_parts WHERE root=%s AND key=%s AND encoder=%s", [row[:3] for row in rows])
    cursor.executemany(
        "INSERT INTO vector_parts VALUES (%s, %s, %s, %s, %s::vector)",
        [
            (root, key, encoder, n, _vector_literal(part))
            for root, key, encoder, dim, data, _ in rows
            for n, part in enumerate(np.frombuffer(data, dtype=np.float32).reshape(-1, dim))
        ],
    )


def _fill_parts(db: psycopg.Connection[Any]) -> None:
    """Once, on an index written before the parts table: every stored vector's parts, and their
    HNSW indexes (the search reads only the parts)."""
    if db.execute("SELECT 1 FROM meta WHERE key='vector_parts'").fetchone():
        return
    with db.cursor(name="vectors_without_parts") as rows:
        rows.execute("SELECT root, key, encoder, dim, data, head FROM vectors")
        with db.cursor() as cursor:
            while batch := rows.fetchmany(1000):
                _write_parts(cursor, batch)
    for encoder, dim in db.execute("SELECT DISTINCT encoder, dim FROM vectors").fetchall():
        _ensure_hnsw(db, encoder, dim)
    # The head vectors' indexes such an index had: nothing searches them any more.
    old = db.execute(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'vectors\\_hnsw\\_%'"
    ).fetchall()
    for (name,) in old:
        db.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
    db.execute("INSERT INTO meta VALUES ('vector_parts', '1')")


def _ensure_hnsw(db: psycopg.Connection[Any], encoder: str, dim: int) -> None:
    name = "vector_parts_hnsw_" + hashlib.sha256(f"{encoder}|{dim}".encode()).hexdigest()[:16]
    db.execute(
        sql.SQL(
            "CREATE INDEX IF NOT EXISTS {name} ON vector_parts "
            "USING hnsw ((v::vector({dim})) vector_cosine_ops) "
            "WITH (m = {m}, ef_construction = {ef}) WHERE encoder = {space}"
        ).format(
            name=sql.Identifier(name),
            dim=sql.Literal(dim),
            m=sql.Literal(HNSW_M),
            ef=sql.Literal(HNSW_EF_CONSTRUCTION),
            space=sql.Literal(encoder),
        )
    )


def _arrays(rows: list[tuple[Any, ...]]) -> dict[tuple[str, str], np.ndarray]:
    """(root, key, dim, data) rows as each skill's vectors, shape (parts, dim). The rows are read
    in binary: the vectors' bytes as stored, not hex text twice their size (a third of a
    nearest-neighbour route's time at 21,000 skills)."""
    return {(root, key): np.frombuffer(data, dtype=np.float32).reshape(-1, dim) for root, key, dim, data in rows}


def _redacted(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        return "postgresql://..."
    host = info.get("host", "localhost")
    port = f":{info['port']}" if info.get("port") else ""
    user = f"{info['user']}@" if info.get("user") else ""
    return f"postgresql://{user}{host}{port}/{info.get('dbname', '')}"
