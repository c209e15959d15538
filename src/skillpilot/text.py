"""Text normalisation shared by the keyword path and the fingerprint.

Input: any string. Output: a list of index terms. Guarantees:
- lower-cased, NFKC-normalised (full-width letters become ASCII);
- Latin words are split on non-word characters (``pull-request`` -> ``pull``, ``request``),
  English stop words dropped, the rest Snowball-stemmed (``opening`` -> ``open``);
- CJK runs (Chinese, Japanese kana/kanji, Korean) become overlapping character bigrams plus
  unigrams, the Lucene CJKAnalyzer approach: it needs no dictionary, costs microseconds and
  matches Chinese words without segmenting them;
- queries are capped at ``MAX_QUERY_CHARS`` before anything else (OntoSkills' 512-char cap);
- :func:`clean_text` makes any string encodable as UTF-8 (lone surrogates become U+FFFD), so
  text from undecodable file names, ``\\ud800`` escapes or stray bytes can be stored and printed;
- a message becomes one :class:`Query` per route (:meth:`Query.of`): capped, cleaned, split into
  words and stemmed once, and every stage (fast path, BM25, the encoders, redirects, conflict
  contests, planning) reads that value instead of the string.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import Stemmer

from .limits import MAX_QUERY_CHARS

# Lone surrogates: what ``surrogateescape`` makes of undecodable bytes (argv, file names) and what
# JSON or YAML ``\\ud800`` escapes decode to. UTF-8 cannot encode them.
_SURROGATE = re.compile("[\ud800-\udfff]")
# Line breaks and control characters (C0, DEL, C1, Unicode line and paragraph separators): what
# must not reach a one-line field (a name) or a terminal as it is.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")

_stemmer = Stemmer.Stemmer("english")

_CJK = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul
)
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
# What ``_TOKEN`` finds in lower-cased ASCII text (no CJK; a word character but ``_`` is a letter
# or digit), found twice as fast: most catalog text is ASCII.
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
_CJK_RUN = re.compile(rf"[{_CJK}]+")

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves also may might must shall us let
    please want need like get got use using used via etc e g i e s t d ll m o re ve y""".split()
)


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the rest untouched)."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def clean_json(value: Any) -> Any:
    """A JSON value with :func:`clean_text` applied to every string in it, keys included (call
    it on values whose nesting is bounded: ``limits.too_deep``)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [clean_json(v) for v in value]
    if isinstance(value, dict):
        return {clean_text(k): clean_json(v) for k, v in value.items()}
    return value


def one_line_text(text: str) -> str:
    """``text`` with line breaks and control characters as single spaces (unchanged without any)."""
    if not _CONTROL.search(text):
        return text
    return " ".join(_CONTROL.sub(" ", text).split())


def terminal_safe(text: str) -> str:
    """``text`` with every control character but tab and newline shown as ``\\xNN``, so that
    what a skill's files say (an escape sequence in a name) cannot drive the terminal."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: m.group() if m.group() in "\t\n" else f"\\x{ord(m.group()):02x}", text)


def cap_query(text: str) -> str:
    """The part of a query SkillPilot looks at (the first ``MAX_QUERY_CHARS`` characters), clean."""
    if not isinstance(text, str):
        # Every public call (route, search, explain, plan) passes its message through here.
        raise TypeError(f"a message is a str, not {type(text).__name__}: pass the user's text, e.g. route('...')")
    return clean_text(text[:MAX_QUERY_CHARS])


def mostly_cjk(text: str) -> bool:
    """Whether more than half of the letters of ``text`` are Chinese, Japanese or Korean."""
    letters = sum(c.isalpha() for c in text)
    return sum(len(run) for run in _CJK_RUN.findall(text)) * 2 > letters


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return str(_stemmer.stemWord(word))


def _cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return list(run) + [run[i : i + 2] for i in range(len(run) - 1)]


def words(text: str) -> list[str]:
    """Lower-cased surface words (no stemming, stop words kept); CJK runs stay whole."""
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


def tokenize(text: str) -> list[str]:
    """Index terms of ``text``: stemmed Latin words without stop words, CJK bigrams + unigrams."""
    terms: list[str] = []
    for word in words(text):
        terms.extend(word_terms(word))
    return terms


# A catalog's texts repeat a few tens of thousands of words hundreds of thousands of times:
# loading 10,000 skills spent most of its time deciding again what each word is.
@lru_cache(maxsize=1 << 18)
def word_terms(word: str) -> tuple[str, ...]:
    """Index terms of one surface word as :func:`words` yields it (see :func:`tokenize`)."""
    if _CJK_RUN.fullmatch(word):
        return tuple(_cjk_terms(word))
    if word not in STOP_WORDS and (len(word) > 1 or word.isdigit()):
        return (stem(word),)
    return ()


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text) is not None


@dataclass(frozen=True)
class Query:
    """One message as routing reads it: ``text`` (the first ``MAX_QUERY_CHARS`` characters, clean:
    what a route reports as its query), its surface ``words`` (:func:`words`) and its index
    ``terms`` (:func:`tokenize`), each computed once."""

    text: str
    words: tuple[str, ...]
    terms: tuple[str, ...]

    @classmethod
    def of(cls, message: str) -> Query:
        """The query of a user's message (capped and cleaned by :func:`cap_query`)."""
        return cls.piece(cap_query(message))

    @classmethod
    def piece(cls, text: str) -> Query:
        """The query of ``text``, already capped and clean (a clause of a query's text): only
        split into words and stemmed."""
        found = tuple(words(text))
        return cls(text, found, tuple(term for word in found for term in word_terms(word)))

    @cached_property
    def mostly_cjk(self) -> bool:
        """:func:`mostly_cjk` of the text (asked by every encoder that does not read CJK)."""
        return mostly_cjk(self.text)
