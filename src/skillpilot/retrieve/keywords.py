"""Keyword search: what people type into a search box, one to three words ("pdf", "security scan").

Input: a query and a ``BM25Index`` over each skill's ``described_terms`` (its name and
description: what it says it is, the same text public and installed search both show). Output:
``keyword_floor``, a score per skill in [0, ``KEYWORD_FLOOR``] for skills that mention every
keyword, scaled by their BM25 score relative to the best one.

Why: the calibrated relevance (``SkillPilot.search``) answers "would this message route here?",
and a bare keyword is never a confident route, so it cut every keyword query to nothing. The
floor sits just under the calibrated cut-off: keyword matches are shown, below every confident
hit, and only skills that mention all the keywords (fewer rather than filler). Longer queries,
and an index without keyword matches, get no floor.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..text import Query, tokenize
from .bm25 import BM25Index

KEYWORD_TERMS_MAX = 3
# Just under SkillPilot.search's calibrated cut-off (0.4).
KEYWORD_FLOOR = 0.39


def keyword_terms(query: Query) -> list[str]:
    """The query's index terms when it is one to three words; [] for a longer query."""
    if not 1 <= len(query.words) <= KEYWORD_TERMS_MAX:
        return []
    terms = list(dict.fromkeys(query.terms))
    return terms if len(terms) <= KEYWORD_TERMS_MAX else []


def described_terms(name: str, description: str) -> list[str]:
    """The terms a skill's name (``docker-compose`` -> ``docker``, ``compos``) and description hold."""
    return tokenize(name.replace("-", " ").replace("_", " ")) + tokenize(description)


def keyword_floor(index: BM25Index, terms: list[str]) -> npt.NDArray[np.float64]:
    """Per document: ``KEYWORD_FLOOR`` times its BM25 score over the best one's, for documents
    that mention every term; 0 for the others (and for no terms)."""
    if not terms:
        return np.zeros(index.n_docs)
    scores = np.where(index.mentioning_all(terms), index.scores(terms), 0.0)
    best = float(scores.max()) if len(scores) else 0.0
    return KEYWORD_FLOOR * scores / best if best > 0 else np.zeros(index.n_docs)
