"""The document chunk store behind the attachment and knowledge-base sources: one SQLite file.

Input: documents (:mod:`.documents`) filed under a kind (``attachment`` or ``knowledge``) and a
collection (a session id, or a knowledge base's name), and queries. Output: an
:class:`IngestReport` per ingest and :class:`ChunkHit` lists per search.

Search is SkillPilot's own hybrid engine on chunks: BM25 (:class:`~skillpilot.retrieve.bm25.BM25Index`,
over :func:`~skillpilot.text.tokenize` terms stored at ingest) and one dense retriever per
configured encoder (:class:`~skillpilot.retrieve.dense.DenseRetriever`, one vector per chunk).
A chunk's relevance is the convex combination ``0.5 * bm25 / ceiling + 0.5 * mean cosine``
(Bruch, Gai & Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", TOIS 2023), where
``ceiling`` is :meth:`~skillpilot.retrieve.bm25.BM25Index.ceiling`, the best BM25 score any
chunk could reach for the query, scaled up by ``query terms / query terms some chunk holds``
(a term no chunk holds counts as an average one): so the score is in [0, 1] and says how much
of the question a chunk covers, not just that it beat the others (with semantic matching off it
is the BM25 part alone). Chunks
under ``MIN_RELEVANCE`` are dropped; as in the router's fusion, Reciprocal Rank Fusion
(:func:`~skillpilot.fuse.rrf_scores`, Cormack et al. 2009) picks the ``k`` that make the cut and
the relevance orders them.

Guarantees: an ingest is one transaction (a failure leaves the previous content whole); a
document whose text is unchanged keeps its chunks and vectors; chunks that lack a vector for a
configured encoder (the encoders changed) are embedded at the next search and stored.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from ...encoders import Encoder
from ...fuse import rrf_scores
from ...model import BM25, RetrieverId
from ...retrieve.bm25 import BM25Index
from ...retrieve.dense import DenseRetriever
from ...sqlitefile import connection_per_call
from ...text import Query, tokenize
from ..model import OmniItem, SourceName
from .documents import Document, chunk_text

ChunkKind = Literal["attachment", "knowledge"]
KEYWORD_SHARE = 0.5
# Below this a chunk is noise: e.g. it shares only a common CJK character with the question, or
# (without any keyword) its cosine is under 0.3, where unrelated texts sit for our encoders.
MIN_RELEVANCE = 0.15

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    kind TEXT NOT NULL,
    collection TEXT NOT NULL,
    name TEXT NOT NULL,
    title TEXT NOT NULL,
    path TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    added_at REAL NOT NULL,
    PRIMARY KEY (kind, collection, name)
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    collection TEXT NOT NULL,
    name TEXT NOT NULL,
    position INTEGER NOT NULL,
    text TEXT NOT NULL,
    terms TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_scope ON chunks (kind, collection, name);
CREATE TABLE IF NOT EXISTS vectors (
    chunk_id TEXT NOT NULL,
    encoder TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (chunk_id, encoder)
);
"""


@dataclass(frozen=True)
class ChunkHit:
    """One chunk found by a search; ``score`` in [0, 1] (module docstring)."""

    chunk_id: str
    collection: str
    name: str
    title: str
    text: str
    score: float

    def item(self, source: SourceName, title: str) -> OmniItem:
        """This chunk as a fused-context item of ``source``."""
        return OmniItem(
            source=source,
            key=self.chunk_id,
            score=self.score,
            snippet=self.text,
            title=title,
            chunk_id=self.chunk_id,
        )


@dataclass
class IngestReport:
    """What an ingest did to one collection."""

    kind: str
    collection: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    chunks: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Prepared:
    name: str
    document: Document
    content_hash: str
    chunks: list[str]


def chunk_id(collection: str, name: str, position: int) -> str:
    return f"{collection}:{name}:chunk-{position}"


def _indexed_text(title: str, text: str) -> str:
    # The title gives every chunk its document's context, for BM25 and the encoders alike.
    return f"{title}\n{text}"


class ChunkStore:
    """Documents, chunks and chunk vectors in one SQLite file; a connection per operation, so
    one store may serve several threads."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        return connection_per_call(self.path, "document store", _SCHEMA)

    def collections(self, kind: ChunkKind) -> list[str]:
        """The collections of ``kind`` that hold at least one document, sorted."""
        if not self.path.exists():  # asking must not create an empty store
            return []
        with self._connect() as db:
            rows = db.execute("SELECT DISTINCT collection FROM documents WHERE kind = ? ORDER BY 1", (kind,))
            return [r[0] for r in rows]

    def document_names(self, kind: ChunkKind, collection: str) -> list[str]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT name FROM documents WHERE kind = ? AND collection = ? ORDER BY name",
                (kind, collection),
            )
            return [r[0] for r in rows]

    def ingest(
        self,
        kind: ChunkKind,
        collection: str,
        documents: Sequence[tuple[str, Document]],
        encoders: Sequence[Encoder],
        *,
        prune: bool = False,
        report: IngestReport | None = None,
    ) -> IngestReport:
        """File ``(name, document)`` pairs under ``collection``; a name already there is replaced
        when its text changed. ``prune`` removes the collection's documents not named here."""
        report = report or IngestReport(kind=kind, collection=collection)
        with self._connect() as db:
            known = dict(
                db.execute(
                    "SELECT name, content_hash FROM documents WHERE kind = ? AND collection = ?",
                    (kind, collection),
                ).fetchall()
            )
        changed: list[_Prepared] = []
        for name, document in documents:
            digest = hashlib.sha256(f"{document.title}\0{document.text}".encode()).hexdigest()
            if known.get(name) == digest:
                report.unchanged.append(name)
                continue
            (report.updated if name in known else report.added).append(name)
            changed.append(_Prepared(name, document, digest, chunk_text(document.text)))
        texts = [_indexed_text(p.document.title, c) for p in changed for c in p.chunks]
        # Embed before the transaction: a model error must not leave half a collection written.
        vectors = {encoder.name: encoder.encode_batch(texts) for encoder in encoders} if texts else {}
        removed = sorted(set(known) - {name for name, _ in documents}) if prune else []
        row = 0
        with self._connect() as db:
            for name in removed + [p.name for p in changed]:
                self._delete(db, kind, collection, name)
            now = time.time()
            for prepared in changed:
                db.execute(
                    "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        kind,
                        collection,
                        prepared.name,
                        prepared.document.title,
                        str(prepared.document.path),
                        prepared.content_hash,
                        now,
                    ),
                )
                for position, text in enumerate(prepared.chunks):
                    cid = chunk_id(collection, prepared.name, position)
                    terms = " ".join(tokenize(_indexed_text(prepared.document.title, text)))
                    db.execute(
                        "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (cid, kind, collection, prepared.name, position, text, terms),
                    )
                    for encoder_name, matrix in vectors.items():
                        db.execute(
                            "INSERT INTO vectors VALUES (?, ?, ?)",
                            (cid, encoder_name, np.asarray(matrix[row], dtype=np.float32).tobytes()),
                        )
                    row += 1
        report.removed.extend(removed)
        report.chunks = row
        return report

    @staticmethod
    def _delete(db: sqlite3.Connection, kind: str, collection: str, name: str) -> None:
        db.execute(
            "DELETE FROM vectors WHERE chunk_id IN "
            "(SELECT chunk_id FROM chunks WHERE kind = ? AND collection = ? AND name = ?)",
            (kind, collection, name),
        )
        db.execute("DELETE FROM chunks WHERE kind = ? AND collection = ? AND name = ?", (kind, collection, name))
        db.execute("DELETE FROM documents WHERE kind = ? AND collection = ? AND name = ?", (kind, collection, name))

    def search(
        self,
        kind: ChunkKind,
        collections: Sequence[str] | None,
        query: str,
        k: int,
        encoders: Sequence[Encoder],
    ) -> list[ChunkHit]:
        """The best ``k`` chunks of ``kind`` in ``collections`` (None: all), best first."""
        scope = "c.kind = ?"
        params: list[str] = [kind]
        if collections is not None:
            scope += f" AND c.collection IN ({', '.join('?' * len(collections))})"
            params.extend(collections)
        with self._connect() as db:
            rows = db.execute(
                "SELECT c.chunk_id, c.collection, c.name, d.title, c.text, c.terms FROM chunks c "
                "JOIN documents d ON d.kind = c.kind AND d.collection = c.collection AND d.name = c.name "
                f"WHERE {scope} ORDER BY c.collection, c.name, c.position",
                params,
            ).fetchall()
            if not rows or k <= 0:
                return []
            read = Query.of(query)
            terms = list(read.terms)
            index = BM25Index([r[5].split() for r in rows])
            bm25 = index.scores(terms)
            # A question term no chunk holds counts as much as the average term some chunk holds,
            # so matching one common character of a long question is not a perfect match.
            held = [t for t in terms if index.ceiling([t]) > 0]
            ceiling = index.ceiling(held) * len(terms) / len(held) if held else 0.0
            lists: dict[RetrieverId, np.ndarray] = {BM25: bm25}
            cosines = []
            for encoder in encoders:
                matrix = self._vectors(db, encoder, rows, scope, params)
                dense = DenseRetriever(encoder, [matrix[i : i + 1] for i in range(len(rows))])
                cosine = dense.scores(read).astype(np.float64)
                lists[dense.id] = cosine
                cosines.append(cosine)
        keyword = bm25 / ceiling if ceiling > 0 else np.zeros_like(bm25)
        if cosines:
            mean_cosine = np.clip(np.mean(cosines, axis=0), 0.0, 1.0)
            score = KEYWORD_SHARE * keyword + (1 - KEYWORD_SHARE) * mean_cosine
        else:
            score = keyword
        candidates = np.flatnonzero(score >= MIN_RELEVANCE)
        rrf = rrf_scores(lists)
        pool = candidates[np.lexsort((candidates, -rrf[candidates]))][:k]
        ranked = sorted(pool, key=lambda i: (-score[i], -rrf[i], i))
        return [
            ChunkHit(
                chunk_id=rows[i][0],
                collection=rows[i][1],
                name=rows[i][2],
                title=rows[i][3],
                text=rows[i][4],
                score=float(score[i]),
            )
            for i in ranked
        ]

    @staticmethod
    def _vectors(
        db: sqlite3.Connection,
        encoder: Encoder,
        rows: Sequence[tuple[str, ...]],
        scope: str,
        params: list[str],
    ) -> np.ndarray:
        """One unit vector per row for ``encoder``, embedding (and storing) any that are missing."""
        stored = dict(
            db.execute(
                f"SELECT v.chunk_id, v.data FROM vectors v JOIN chunks c ON c.chunk_id = v.chunk_id "
                f"WHERE v.encoder = ? AND {scope}",
                [encoder.name, *params],
            ).fetchall()
        )
        missing = [r for r in rows if r[0] not in stored]
        if missing:
            fresh = encoder.encode_batch([_indexed_text(r[3], r[4]) for r in missing])
            for row, vector in zip(missing, fresh, strict=True):
                data = np.asarray(vector, dtype=np.float32).tobytes()
                db.execute("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", (row[0], encoder.name, data))
                stored[row[0]] = data
        return np.stack([np.frombuffer(stored[r[0]], dtype=np.float32) for r in rows])
