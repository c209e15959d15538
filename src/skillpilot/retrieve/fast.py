"""The fast path: an author's trigger phrase or a skill's name found in the query.

Input: the catalog (``IndexedSkill`` in catalog order) once; then one
:class:`~skillpilot.text.Query` per :meth:`FastMatcher.match` (its words, as split once per
route). Output: one :class:`FastHit` per skill with any evidence, best first (score
descending, then catalog position), each with the evidence that scored it.

Score scale, fixed 0-10 so that one threshold means the same thing on every catalog:

    trigger phrase   8 + min(2, 0.5 * (content terms - 1))   "open a PR" (open, pr) -> 8.5
    skill name       6, or 4 when generic                    "docker compose" -> docker-compose
    prefer_when      +0.5 per distinct phrase, at most +1.5
    total            max(trigger, name) + prefer_when, capped at 10

8 or more (:data:`ROUTE_AT_ONCE`) is the spec's "routes at once", and only a trigger gets
there: a name plus the whole prefer_when allowance is 7.5, prefer_when alone at most 1.5
(evidence to break ties, never a decision). A longer trigger is a more deliberate claim, hence
the length bonus.

Matching: a text is split like :func:`skillpilot.text.tokenize` splits it (lower-cased, Latin
words Snowball-stemmed) but keeps its order, CJK runs as single characters. A phrase matches
where its terms occur contiguously in the query's, with stop words ignored on both sides, so
"opening a PR" and "open the PR" match the trigger "open a PR" and "create an issue" matches
"create issue"; "PR opening" does not. One exception: a phrase whose stop words are most of
its meaning (one content word among several words: "all repos", "notify me", "photo of") is
matched with its stop words, as written (stemmed), or "all repos" would fire on every "repo".
A phrase of stop words only is ignored.

Names: "docker-compose" is the phrase (docker, compos), mentioned by "docker compose" and
"docker-compose" alike. A name counts if it has two or more content terms or its one term (the
stem) has four or more characters: "gh" or "pdf" alone is too short to tell a mention from a
coincidence. A name is *generic* when its phrase also occurs in the descriptions of at least
``max(2, ceil(1% of the catalog))`` other skills (skills with the same name excluded): "github"
in a catalog of GitHub skills, "commit", "summarize"; a mention then says little about which
skill is meant. A name matched inside a longer name's match counts only as the longer name
("docker compose" mentions docker-compose, not docker). A one-word name that is an everyday
word the catalog rarely uses ("bird") still scores 6: only the catalog is known here.

Cost: everything is built once. ``match`` looks each query term up in a dict from first term to
the phrases starting with it, so it is O(query terms x phrases sharing a first term).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from skillpilot.limits import ANALYSED_CHARS
from skillpilot.model import Evidence, EvidenceKind, FastHit, IndexedSkill
from skillpilot.text import Query, has_cjk, word_terms, words

logger = logging.getLogger(__name__)

# A score at or above this routes without asking anything else (only triggers reach it).
ROUTE_AT_ONCE = 8.0
# Below this a hit is only prefer_when words: too weak to count as evidence on its own.
EVIDENCE_SCORE = 4.0
TRIGGER_SCORE = 8.0
TRIGGER_LENGTH_STEP = 0.5
TRIGGER_LENGTH_CAP = 2.0
NAME_SCORE = 6.0
GENERIC_NAME_SCORE = 4.0
PREFER_STEP = 0.5
PREFER_CAP = 1.5
MAX_SCORE = 10.0
MIN_NAME_CHARS = 4
GENERIC_MIN_SKILLS = 2
GENERIC_CATALOG_SHARE = 0.01

Kind = EvidenceKind
Terms = tuple[str, ...]
# How a phrase is looked for: (with stop words?, terms).
Pattern = tuple[bool, Terms]
_KIND_ORDER: dict[Kind, int] = {"trigger": 0, "name": 1, "prefer_when": 2}


@dataclass(frozen=True)
class _Text:
    """A text as phrase matching sees it."""

    full: Terms  # every word in order: content words stemmed, stop words as written, CJK characters
    positions: tuple[int, ...]  # where each content (non-stop) term sits in ``full``

    @property
    def content(self) -> Terms:
        return tuple(self.full[i] for i in self.positions)


def _analyse(text: str) -> _Text:
    return _analysed(words(text))


def _analysed(surface: Sequence[str]) -> _Text:
    """A text's surface words (:func:`~skillpilot.text.words`) as phrase matching sees them."""
    full: list[str] = []
    positions: list[int] = []
    for word in surface:
        terms, content = _as_matched(word)
        if content:
            positions.extend(range(len(full), len(full) + len(terms)))
        full.extend(terms)
    return _Text(tuple(full), tuple(positions))


# Loading a catalog analyses every name and description: the same words, many times over.
@lru_cache(maxsize=1 << 18)
def _as_matched(word: str) -> tuple[Terms, bool]:
    """What one surface word adds to ``_Text.full``, and whether those are content terms."""
    # ``words`` yields a CJK run whole; its characters in order make contiguity mean the
    # CJK substring occurs (tokenize's bigrams would not line up).
    if has_cjk(word[0]):
        return tuple(word), True
    term = word_terms(word)  # (stem,) for a content word, () for a stop word
    return ((term[0],), True) if term else ((word,), False)


def _pattern(text: _Text) -> Pattern | None:
    """How to look for a phrase, or None for a phrase of stop words only (it would match anything)."""
    content = text.content
    if not content:
        return None
    if len(content) == 1 and len(text.full) > 1:
        return True, text.full
    return False, content


@dataclass(frozen=True)
class _Phrase:
    """One skill's use of a pattern, with what finding it is worth."""

    pattern: Pattern
    skill: int
    kind: Kind
    text: str
    score: float
    generic: bool = False

    @property
    def evidence(self) -> Evidence:
        return Evidence(self.kind, self.text, self.generic)


class _Node:
    """One step of a pattern trie: the patterns that end here and the terms that go on."""

    __slots__ = ("children", "ends")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.ends: Terms | None = None


class _Finder:
    """Finds patterns in texts: a trie of terms per mode, so looking at one position costs the
    length of the longest pattern found there, not the number of patterns sharing its first term
    (a catalog of forks shares first terms across thousands of names)."""

    def __init__(self, patterns: Sequence[Pattern]) -> None:
        self._tries: dict[bool, _Node] = {False: _Node(), True: _Node()}
        for exact, terms in dict.fromkeys(patterns):
            node = self._tries[exact]
            for term in terms:
                node = node.children.setdefault(term, _Node())
            node.ends = terms

    def find(self, text: _Text) -> Iterator[tuple[Pattern, int, int]]:
        """Every occurrence as (pattern, start, end); positions index ``text.full`` either way."""
        content = text.content
        for start, terms in _scan(content, self._tries[False]):
            yield (False, terms), text.positions[start], text.positions[start + len(terms) - 1] + 1
        for start, terms in _scan(text.full, self._tries[True]):
            yield (True, terms), start, start + len(terms)


def _scan(terms: Terms, trie: _Node) -> Iterator[tuple[int, Terms]]:
    """Each (start, pattern) of ``trie`` found in ``terms``, by start, shorter patterns first."""
    for start in range(len(terms)):
        node = trie.children.get(terms[start])
        position = start + 1
        while node is not None:
            if node.ends is not None:
                yield start, node.ends
            if position == len(terms):
                break
            node = node.children.get(terms[position])
            position += 1


def _name_pattern(name: str) -> Pattern | None:
    """A name's pattern, or None for a name too short to count as mentioned."""
    text = _analyse(name)
    content = text.content
    if len(content) >= 2 or (len(content) == 1 and len(content[0]) >= MIN_NAME_CHARS):
        return _pattern(text)
    return None


def _describers(finder: _Finder, descriptions: Sequence[str]) -> dict[Pattern, set[int]]:
    """For each pattern of ``finder``, the skills whose description contains it. A description
    many skills share (forks, re-published skills) is read once."""
    found: dict[Pattern, set[int]] = {}
    read: dict[str, list[Pattern]] = {}
    for position, description in enumerate(descriptions):
        patterns = read.get(description)
        if patterns is None:
            patterns = read[description] = [pattern for pattern, _, _ in finder.find(_analyse(description))]
        for pattern in patterns:
            found.setdefault(pattern, set()).add(position)
    return found


def _inside_longer(span: tuple[int, int], spans: Sequence[tuple[int, int]]) -> bool:
    start, end = span
    return any(s <= start and end <= e and e - s > end - start for s, e in spans)


class FastMatcher:
    """Trigger / name / prefer_when phrase matching over a catalog; see the module docstring."""

    def __init__(self, skills: Sequence[IndexedSkill]) -> None:
        names = [_name_pattern(skill.name) for skill in skills]
        triggers = [[(t, _pattern(_analyse(t))) for t in skill.skill.route.triggers] for skill in skills]
        prefers = [[(w, _pattern(_analyse(w))) for w in skill.skill.route.prefer_when] for skill in skills]
        # One trie of every phrase serves both the generic-name check and ``match``.
        self._finder = _Finder(
            [pattern for uses in (*triggers, *prefers) for _, pattern in uses if pattern is not None]
            + [name for name in names if name is not None]
        )
        describers = _describers(self._finder, [skill.skill.description[:ANALYSED_CHARS] for skill in skills])
        generic_at = max(GENERIC_MIN_SKILLS, math.ceil(GENERIC_CATALOG_SHARE * len(skills)))

        # Pattern -> each skill's use of it; keying by (skill, kind) drops an author's repeats,
        # which should not count twice.
        self._phrases: dict[Pattern, dict[tuple[int, Kind], _Phrase]] = {}

        def add(phrase: _Phrase) -> None:
            uses = self._phrases.setdefault(phrase.pattern, {})
            uses.setdefault((phrase.skill, phrase.kind), phrase)

        for position, skill in enumerate(skills):
            for trigger, pattern in triggers[position]:
                if pattern is None:
                    logger.debug("skill %s: trigger %r is only stop words; ignored", skill.id, trigger)
                    continue
                content_terms = 1 if pattern[0] else len(pattern[1])
                bonus = min(TRIGGER_LENGTH_CAP, TRIGGER_LENGTH_STEP * (content_terms - 1))
                add(_Phrase(pattern, position, "trigger", trigger, TRIGGER_SCORE + bonus))
            name = names[position]
            if name is not None:
                others = [i for i in describers.get(name, ()) if names[i] != name]
                generic = len(others) >= generic_at
                score = GENERIC_NAME_SCORE if generic else NAME_SCORE
                add(_Phrase(name, position, "name", skill.name, score, generic))
            for word, pattern in prefers[position]:
                if pattern is not None:
                    add(_Phrase(pattern, position, "prefer_when", word, PREFER_STEP))

        self._name_patterns = frozenset(
            pattern for pattern, uses in self._phrases.items() if any(kind == "name" for _, kind in uses)
        )
        logger.debug("fast matcher: %d phrases from %d skills", len(self._phrases), len(skills))

    def match(self, query: Query) -> list[FastHit]:
        """Skills whose trigger, name or prefer_when phrases occur in ``query``, best first."""
        # In query order, so evidence of equal weight reads in the order the user wrote it.
        found = sorted(self._finder.find(_analysed(query.words)), key=lambda f: (f[1], -f[2]))
        name_spans = [(start, end) for pattern, start, end in found if pattern in self._name_patterns]

        # Inner dict keys double as an ordered set: a phrase found twice is evidence once.
        by_skill: dict[int, dict[_Phrase, None]] = {}
        for pattern, start, end in found:
            shadowed = _inside_longer((start, end), name_spans)
            for phrase in self._phrases[pattern].values():
                if not (phrase.kind == "name" and shadowed):
                    by_skill.setdefault(phrase.skill, {})[phrase] = None

        hits: list[FastHit] = []
        for position, matched in by_skill.items():
            ranked = sorted(matched, key=lambda p: (_KIND_ORDER[p.kind], -p.score))
            base = max((p.score for p in ranked if p.kind != "prefer_when"), default=0.0)
            prefer = min(PREFER_CAP, PREFER_STEP * sum(p.kind == "prefer_when" for p in ranked))
            evidence = tuple(p.evidence for p in ranked)
            hits.append(FastHit(position, min(MAX_SCORE, base + prefer), evidence))
        hits.sort(key=lambda hit: (-hit.score, hit.index))
        return hits


def routes_at_once(hits: Sequence[FastHit], bm25: np.ndarray | None) -> bool:
    """The spec's fast path: one skill's trigger phrase is in the message (``ROUTE_AT_ONCE``)
    and the keyword ranking agrees it is the best match. Then the models are not even asked."""
    triggered = {h.index for h in hits if h.score >= ROUTE_AT_ONCE}
    if len(triggered) != 1:
        return False
    return bm25 is None or int(np.argmax(bm25)) in triggered
