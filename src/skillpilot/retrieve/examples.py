"""Example retrieval: how close a message is to the requests users would type for each skill.

Input: per skill, the vectors of its example requests (:mod:`skillpilot.examples`; none for a
skill without examples), for one encoder; per message, that encoder's vector of it and the
author-text scores of the dense retriever of the same encoder. Output: one score per skill, in
catalog order: the cosine of its closest example, and for a skill without examples its
author-text score, so that lacking examples neither lifts nor sinks a skill in this list.

Examples count twice: as parts of the skill's meaning (``as_parts``: the dense retriever's score
becomes the best of the author's parts and the examples, an example weighted like any secondary
part, so a message only an example describes ranks its skill first by meaning), and as their own
list (``examples:dense:<model>``, with its own fusion weight), so that the decision can weigh a
match on what a user says apart from a match on what the skill does. The whole catalog is scored
in one matrix product; a skill's best example is one ``maximum.reduceat``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..encoders import Encoder
from ..model import RetrieverId, examples_id
from ..text import mostly_cjk
from .dense import SECONDARY_PART_WEIGHT


class ExampleRetriever:
    """Max cosine over each skill's example requests, for one encoder (see the module docstring)."""

    def __init__(self, encoder: Encoder, vectors: Sequence[np.ndarray]) -> None:
        self.encoder = encoder
        self.id: RetrieverId = examples_id(encoder.name)
        self.name = str(self.id)
        counts = np.array([len(v) for v in vectors], dtype=np.int64)
        self._having = np.flatnonzero(counts)
        self._counts = counts
        self._starts = np.concatenate([[0], np.cumsum(counts[self._having])[:-1]]).astype(np.int64)
        having = [vectors[n] for n in self._having.tolist()]
        self._matrix = (
            np.concatenate(having).astype(np.float32, copy=False)
            if having
            else np.zeros((0, encoder.dim), dtype=np.float32)
        )

    @property
    def skills(self) -> int:
        """How many skills have example vectors here."""
        return len(self._having)

    def reads(self, query: str) -> bool:
        """Whether this encoder's vector of ``query`` means anything (see ``Encoder``'s ``reads_cjk``)."""
        return bool(getattr(self.encoder, "reads_cjk", True)) or not mostly_cjk(query)

    def scores_for(self, query_vector: np.ndarray, author: np.ndarray) -> np.ndarray:
        """Each skill's closest example's cosine; ``author`` (the dense retriever's scores) where
        a skill has no examples."""
        scores = np.array(author, dtype=np.float32, copy=True)
        if len(self._matrix):
            scores[self._having] = np.maximum.reduceat(self._matrix @ query_vector, self._starts)
        return scores

    def as_parts(self, author: np.ndarray, closest: np.ndarray) -> np.ndarray:
        """The dense retriever's scores with each skill's examples among its parts (a skill
        without examples keeps its score)."""
        merged = np.array(author, dtype=np.float32, copy=True)
        having = self._having
        merged[having] = np.maximum(merged[having], closest[having] * np.float32(SECONDARY_PART_WEIGHT))
        return merged

    def closest(self, query_vector: np.ndarray, skill: int) -> tuple[int, float] | None:
        """Which of ``skill``'s examples is closest to the message (its position among them) and
        its cosine; None when the skill has none here."""
        where = np.searchsorted(self._having, skill)
        if where >= len(self._having) or self._having[where] != skill:
            return None
        start = int(self._starts[where])
        cosines = self._matrix[start : start + int(self._counts[skill])] @ query_vector
        best = int(np.argmax(cosines))
        return best, float(cosines[best])
