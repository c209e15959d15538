"""Dense retrieval: cosine similarity between the query vector and each skill's stored vectors.

A skill is embedded as a few parts (``embedding_texts``): its name + description, its intent
patterns and triggers, and the opening of its body. A skill's score is the best part's cosine
(max-sim), with the description part favoured so a long body cannot outvote what the author
said the skill is for. Input: vectors of shape (parts, dim) per skill in catalog order.

Bounded work: every text sent to an encoder is at most ``MAX_PART_CHARS`` characters (a query at
most ``limits.MAX_QUERY_CHARS``): a 1 MB description costs what a 2,000-character one does (MiniLM
reads 256 tokens anyway; USE would read it all). The whole text is still indexed for keywords.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from ..encoders import Encoder
from ..limits import MAX_PART_CHARS
from ..model import Fingerprint, RetrieverId, Skill, dense_id
from ..text import Query

BODY_CHARS = 800
BODY_PART_CHARS = 400
# Non-description parts count slightly less: they are noisier (headings, examples, setup steps).
SECONDARY_PART_WEIGHT = 0.95

_MARKDOWN_NOISE = re.compile(r"```.*?```|`|#+ |\*\*|__|\[(.*?)\]\(.*?\)", re.DOTALL)


_blas_lock = threading.Lock()
_blas_users = 0
_blas_restore: list[tuple[Any, int]] = []


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """BLAS limited to one thread inside the block, as before it outside. Routing multiplies one
    query vector by the skill matrix: with several BLAS threads that small product spends more
    time synchronising than computing (10 ms instead of 0.1 ms on a busy 2-core machine). Scoped,
    so a host process's own BLAS work keeps its threads; with several threads routing at once
    the first one in sets the limit and the last one out restores it."""
    global _blas_users
    with _blas_lock:
        if _blas_users == 0:
            for library in _blas_libraries():
                _blas_restore.append((library, library.num_threads))
                library.set_num_threads(1)
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                while _blas_restore:
                    library, threads = _blas_restore.pop()
                    library.set_num_threads(threads)


_blas_found: tuple[int, tuple[Any, ...]] = (-1, ())


def _blas_libraries() -> tuple[Any, ...]:
    # Inspecting the loaded libraries takes milliseconds: again only once a module was imported
    # since (scipy, imported when an index update needs it, brings a BLAS of its own).
    global _blas_found
    loaded = len(sys.modules)
    if _blas_found[0] != loaded:
        _blas_found = (loaded, tuple(ThreadpoolController().select(user_api="blas").lib_controllers))
    return _blas_found[1]


def _readable_name(name: str) -> str:
    return re.sub(r"[-_]+", " ", name)


class EmbeddingRecipe:
    """The texts embedded for one skill; the first is always name + description.

    ``version`` is stored with the vectors: change it whenever the recipe changes, and every
    index re-embeds on its next load instead of mixing old and new vectors.
    """

    version = "parts-v2"

    def __call__(self, skill: Skill, fingerprint: Fingerprint) -> list[str]:
        return embedding_texts(skill, fingerprint)


def embedding_texts(skill: Skill, fp: Fingerprint) -> list[str]:
    """The texts embedded for one skill; the first is always name + description."""
    parts = [f"{_readable_name(skill.name)}: {skill.description}"]
    signals = list(fp.intent_patterns) + list(skill.route.triggers)
    if signals:
        parts.append(f"{_readable_name(skill.name)}: " + "; ".join(signals))
    body = _MARKDOWN_NOISE.sub(lambda m: m.group(1) or " ", skill.body)
    body = " ".join(body.split())[:BODY_CHARS]
    for start in range(0, len(body), BODY_PART_CHARS):
        chunk = body[start : start + BODY_PART_CHARS].strip()
        if len(chunk) > 40:
            parts.append(chunk)
    return [part[:MAX_PART_CHARS] for part in parts]


class DenseRetriever:
    """Max-sim cosine search over every stored part vector of every skill, for one encoder. A
    skill given no vectors scores -1 (it cannot be found by meaning). A ``Retriever`` that
    ``uses_model``; routing asks it through ``read``, which also hands on the message's vector."""

    uses_model = True

    def __init__(self, encoder: Encoder, vectors: Sequence[np.ndarray]) -> None:
        self.encoder = encoder
        self.id: RetrieverId = dense_id(encoder.name)
        self.name = str(self.id)
        self._empty = np.array([len(v) == 0 for v in vectors], dtype=bool)
        # A placeholder row keeps every skill's segment non-empty for reduceat.
        vectors = [v if len(v) else np.zeros((1, encoder.dim), dtype=np.float32) for v in vectors]
        counts = np.array([len(v) for v in vectors], dtype=np.int64)
        self._starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if len(counts) else counts
        self._matrix = (
            np.concatenate(list(vectors)).astype(np.float32, copy=False)
            if len(vectors)
            else np.zeros((0, encoder.dim), dtype=np.float32)
        )
        # Each skill's best part, found level by level: part 0 of every skill, then part 1 of the
        # skills that have one, and so on (a few levels; reduceat over 50,000 segments costs 10x).
        self._levels = [
            (np.flatnonzero(counts > level), self._starts[counts > level] + level)
            for level in range(1, int(counts.max(initial=1)))
        ]
        self._lacking = np.flatnonzero(self._empty)

    def reads(self, query: Query) -> bool:
        """Whether this encoder's vector of ``query`` means anything (see ``Encoder``'s ``reads_cjk``)."""
        return bool(getattr(self.encoder, "reads_cjk", True)) or not query.mostly_cjk

    def encode(self, text: str) -> np.ndarray:
        """The vector of ``text`` (a query's text: capped and clean)."""
        vector: np.ndarray = self.encoder.encode_batch([text])[0]
        return vector

    def read(self, query: Query) -> tuple[np.ndarray, np.ndarray | None]:
        """The message's vector and its score for every skill (None where this retriever does not
        score the whole catalog at once)."""
        vector = self.encode(query.text)
        return vector, self.scores_for(vector)

    def scores_for(self, query_vector: np.ndarray) -> np.ndarray:
        """One score per skill: the best weighted part cosine."""
        if not len(self._matrix):
            return np.zeros(len(self._starts), dtype=np.float32)
        part_scores = self._matrix @ query_vector
        scores: np.ndarray = part_scores[self._starts]
        weight = np.float32(SECONDARY_PART_WEIGHT)
        for skills, rows in self._levels:
            scores[skills] = np.maximum(scores[skills], part_scores[rows] * weight)
        scores[self._lacking] = -1.0
        return scores

    def scores(self, query: Query) -> np.ndarray:
        return self.scores_for(self.encode(query.text))


EMBEDDING = EmbeddingRecipe()
