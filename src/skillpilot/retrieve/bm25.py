"""Keyword retrieval: Okapi BM25 over one term list per skill, Lucene variant.

Input: the catalog (``IndexedSkill`` in catalog order), turned into term lists by
:func:`skill_terms`; a query's terms per search. Output: every skill's raw BM25 score, in
catalog order (> 0 exactly for the skills holding a query term).

Formula (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and Beyond",
in the form Lucene >= 8 ``BM25Similarity`` uses; "Lucene (accurate)" in Kamphuis et al.,
ECIR 2020, "Which BM25 Do You Mean?"):

    score(q, d) = sum over query terms t of  IDF(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    IDF(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

with k1 = 0.6, b = 0.75 (k1 chosen on the development queries: skill documents are short, so
term-frequency saturation should come early), |d| the document's term count and avgdl the
catalog mean. Lucene
drops Robertson's constant ``(k1 + 1)`` numerator factor (it cannot change a ranking). This
IDF is always positive, so a document scores > 0 exactly when it holds a query term.

Repeated query terms: every occurrence contributes, as in Lucene (a BooleanQuery sums its
SHOULD clauses, one per query token) and bm25s; "pdf to pdf" weighs ``pdf`` twice.

Guarantees:
- scores equal ``bm25s.BM25(method="lucene")`` on the same term lists (tested to 1e-6).
  ``rank_bm25.BM25Okapi`` is a different variant (IDF ln((N - df + 0.5) / (df + 0.5)) floored
  by an epsilon, ``(k1 + 1)`` numerator), so its scores are not comparable;
- building costs O(total terms); a query costs one numpy fancy-add per query term that occurs
  in the catalog (postings hold doc ids and precomputed per-posting weights) plus O(N) for
  the score vector.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from skillpilot.model import BM25, IndexedSkill, RetrieverId
from skillpilot.retrieve import RetrieverSources
from skillpilot.text import Query, tokenize

logger = logging.getLogger(__name__)

DEFAULT_K1 = 0.6
DEFAULT_B = 0.75
DEFAULT_TRIGGER_WEIGHT = 3
DEFAULT_BODY_CHARS = 300

# The same word class as the kernel's tokenizer: underscores separate words.
_TRAILING_WORD = re.compile(r"[^\W_]+$")


class BM25Index:
    """BM25 scores of term-list documents; see the module docstring for the formula.

    ``documents[i]`` is document ``i``'s terms (repeats count as term frequency).
    """

    def __init__(self, documents: Sequence[Sequence[str]], *, k1: float = DEFAULT_K1, b: float = DEFAULT_B) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1 = k1
        self.b = b
        self.n_docs = len(documents)
        lengths = np.fromiter((len(doc) for doc in documents), dtype=np.float64, count=self.n_docs)
        avgdl = float(lengths.mean()) if self.n_docs else 0.0
        # When every document is empty there are no postings, so the length norm is never read.
        norm = k1 * (1.0 - b + b * lengths / avgdl) if avgdl > 0 else np.full(self.n_docs, k1)

        raw: dict[str, tuple[list[int], list[int]]] = {}
        for position, doc in enumerate(documents):
            for term, tf in Counter(doc).items():
                ids, tfs = raw.setdefault(term, ([], []))
                ids.append(position)
                tfs.append(tf)

        self._postings: dict[str, tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]] = {}
        self._idf: dict[str, float] = {}
        for term, (ids, tfs) in raw.items():
            # Ids are ascending and unique within a posting, so ``scores[ids] += w`` in
            # ``scores`` is exact without the slower np.add.at.
            id_array = np.asarray(ids, dtype=np.intp)
            tf_array = np.asarray(tfs, dtype=np.float64)
            df = len(ids)
            idf = math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))
            self._idf[term] = idf
            self._postings[term] = (id_array, idf * tf_array / (tf_array + norm[id_array]))
        logger.debug("BM25 index: %d documents, %d terms", self.n_docs, len(self._postings))

    def mentioning_all(self, terms: Sequence[str]) -> npt.NDArray[np.bool_]:
        """Which documents hold every one of ``terms`` (all False for no terms)."""
        found = np.zeros(self.n_docs, dtype=np.intp)
        distinct = set(terms)
        for term in distinct:
            posting = self._postings.get(term)
            if posting is None:
                return np.zeros(self.n_docs, dtype=bool)
            found[posting[0]] += 1
        return np.asarray((found == len(distinct)) & bool(distinct), dtype=bool)

    def scores(self, terms: Sequence[str]) -> npt.NDArray[np.float64]:
        """The BM25 score of every document for the query ``terms`` (length ``n_docs``)."""
        scores = np.zeros(self.n_docs, dtype=np.float64)
        for term in terms:
            posting = self._postings.get(term)
            if posting is not None:
                ids, weights = posting
                scores[ids] += weights
        return scores

    def ceiling(self, terms: Sequence[str]) -> float:
        """The least upper bound of any document's score for ``terms``: the sum of IDF(t) over the
        query terms that occur in the corpus (``tf / (tf + norm)`` tends to 1 as tf grows). Dividing
        by it gives a score in [0, 1] that does not depend on how well the *other* documents match."""
        return sum(self._idf.get(term, 0.0) for term in terms)


def _lead(body: str, chars: int) -> str:
    """The first ``chars`` characters of ``body``, without a word cut in half at the end."""
    if len(body) <= chars:
        return body
    lead = body[:chars]
    # Half a word would index a stem that no query produces.
    if body[chars].isalnum():
        lead = _TRAILING_WORD.sub("", lead)
    return lead


def skill_terms(
    skill: IndexedSkill,
    trigger_weight: int = DEFAULT_TRIGGER_WEIGHT,
    body_chars: int = DEFAULT_BODY_CHARS,
    *,
    read: dict[str, list[str]] | None = None,
) -> list[str]:
    """The BM25 document of one skill, in this order of fields.

    Terms (:func:`skillpilot.text.tokenize`) of the name (its ``-`` / ``_`` parts are separate
    words: ``docker-compose`` -> ``docker``, ``compos``), the description, the fingerprint's
    intent patterns and keywords, each ``route.triggers`` phrase ``trigger_weight`` times (an
    author's trigger phrase should weigh about three plain mentions), and the first
    ``body_chars`` characters of the body, cut back to a word boundary. ``read`` (text -> its
    terms) lets the skills of one catalog share the work: forks repeat descriptions.
    """
    if trigger_weight < 0 or body_chars < 0:
        raise ValueError(f"trigger_weight and body_chars must be >= 0, got {trigger_weight} and {body_chars}")
    source = skill.skill
    fields = [
        source.name,
        source.description,
        *skill.fingerprint.intent_patterns,
        *skill.fingerprint.keywords,
        *(source.route.triggers * trigger_weight),
        _lead(source.body, body_chars),
    ]
    if read is None:
        return [term for text in fields for term in tokenize(text)]
    terms: list[str] = []
    for text in fields:
        known = read.get(text)
        if known is None:
            known = read[text] = tokenize(text)
        terms.extend(known)
    return terms


class BM25Retriever:
    """BM25 over :func:`skill_terms` of each skill, for a query's terms (a ``Retriever``)."""

    id: RetrieverId = BM25

    def __init__(
        self,
        skills: Sequence[IndexedSkill],
        *,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        trigger_weight: int = DEFAULT_TRIGGER_WEIGHT,
        body_chars: int = DEFAULT_BODY_CHARS,
    ) -> None:
        read: dict[str, list[str]] = {}
        self.index = BM25Index(
            [skill_terms(skill, trigger_weight, body_chars, read=read) for skill in skills], k1=k1, b=b
        )

    def scores(self, query: Query) -> npt.NDArray[np.float64]:
        """The BM25 score of every skill, in catalog order."""
        return self.index.scores(query.terms)


def bm25_retrievers(sources: RetrieverSources) -> list[BM25Retriever]:
    """The built-in ``bm25``: one keyword retriever, unless ``router.enableKeyword`` is off."""
    return [BM25Retriever(sources.skills)] if sources.settings.enable_keyword else []
