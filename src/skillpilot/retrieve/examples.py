"""Example retrieval: how close a message is to the requests users would type for each skill.

Input: per skill, the vectors of its example requests (:mod:`skillpilot.examples`; none for a
skill without examples), for one encoder; per message, that encoder's vector of it and the
author-text scores of the dense retriever of the same encoder. Output: one score per skill, in
catalog order: the cosine to the centre of its examples (the normalised mean of their vectors),
and for a skill without examples its author-text score, so that lacking examples neither lifts
nor sinks a skill in this list.

Examples count twice: as parts of the skill's meaning (the dense retriever's score
becomes the best of the author's parts and the closest single example, an example weighted like
any secondary part, so a message only one example describes ranks its skill first by meaning),
and as their own list (``examples:dense:<model>``, with its own fusion weight), so that the
decision can weigh a match on what users say apart from a match on what the skill does. That
list reads the examples together: one casual example close to a casual message is weak evidence,
the direction most of a skill's examples share is strong. Measured against the closest example as
the list, fusion weights refitted each way (``benchmarks/calibrate.py``, 5-fold): top-1 on
real-dev2 92.7 -> 94.0 %, its hard decisions 68.5 -> 73.4 % of in-scope messages at the same
precision; MetaTool's 20,614 queries 61.1 -> 64.7 % (a prototype per class, as in nearest-centroid
classification). The whole catalog is scored in two matrix products; a skill's best example is
one ``maximum.reduceat``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..encoders import Encoder
from ..model import RetrieverId, examples_id
from ..text import mostly_cjk
from .dense import SECONDARY_PART_WEIGHT


class ExampleRetriever:
    """Each skill's example requests for one encoder: their centre's cosine as a list, the closest
    one's as a part of the skill's meaning (see the module docstring)."""

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
        centres = np.add.reduceat(self._matrix, self._starts) if having else self._matrix
        lengths = np.linalg.norm(centres, axis=1, keepdims=True)
        self._centres = (centres / np.maximum(lengths, np.float32(1e-12))).astype(np.float32, copy=False)

    @property
    def skills(self) -> int:
        """How many skills have example vectors here."""
        return len(self._having)

    def reads(self, query: str) -> bool:
        """Whether this encoder's vector of ``query`` means anything (see ``Encoder``'s ``reads_cjk``)."""
        return bool(getattr(self.encoder, "reads_cjk", True)) or not mostly_cjk(query)

    def scores_for(self, query_vector: np.ndarray, author: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """This retriever's list (each skill's cosine to the centre of its examples) and the dense
        retriever's scores with each skill's closest example among its parts; a skill without
        examples keeps ``author`` (the dense retriever's scores) in both."""
        listed = np.array(author, dtype=np.float32, copy=True)
        merged = np.array(author, dtype=np.float32, copy=True)
        if len(self._matrix):
            having = self._having
            listed[having] = self._centres @ query_vector
            closest = np.maximum.reduceat(self._matrix @ query_vector, self._starts)
            merged[having] = np.maximum(merged[having], closest * np.float32(SECONDARY_PART_WEIGHT))
        return listed, merged

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
