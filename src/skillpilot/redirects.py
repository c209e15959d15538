"""Redirects: what skill authors say about other skills ("NOT for testing — use playwright-pro"),
applied to one message at route time.

Input: the catalog's skills (each fingerprint's :class:`~skillpilot.model.Redirect` s, read at
index time by ``skillpilot.fingerprint``), a message, its fused candidates before redirects and
its fast-path hits. Output: a :class:`~skillpilot.model.Redirection` (per-skill ln-multipliers
and the redirects that applied), or None when none applies.

A redirect applies to a message when all of these hold:

1. the skill that wrote it (the *source*) is among the first ``REDIRECT_WITHIN`` (3) fused
   candidates: it was in the running, so the author's word about it matters;
2. the skill it names (the *target*) is installed: :func:`target_finder` finds it by id, name
   or folder key, a ``plugin:`` prefix aside; a redirect naming no skill ("not for X") only
   demotes its source;
3. the message is about the case: the case splits into alternatives at commas and "or"
   ("lifecycle emails, newsletters, or drip campaigns"), and the message holds the term of a
   one-term alternative ("newsletters"), or two or more terms of a longer one carrying at least
   ``CASE_COVERAGE`` (0.75) of its weight (BM25 IDF over the catalog, so "broader product
   strategy" needs "broader", not only "product" and "strategy", and "too JS-heavy" more than
   "js");
4. the message does not name the source (no trigger or name evidence for it on the fast path):
   a user who asks for the skill gets it.

Effect: the source's relevance is divided by ``REDIRECT_FACTOR`` (4) and the target's multiplied by
it (fusion adds ``ln`` multipliers to the fused score, as for trust tiers and feedback); a target
outside the candidate pool joins it; in a conflict contest the redirect counts right after the
user's feedback. Four each way (2.8 fused-score units) outweighs a usual winner's margin but not an
overwhelming one: the author's word reorders the race, while the confidence still comes from the
retrievers' evidence, so a redirect alone seldom makes a hard route (on the fixture corpus a
factor of 2 left a redirected message a hard route to the skill that sent it away:
``benchmarks/redirect_eval.py``). Cost per route: one set lookup per message term; the
candidates are fused a second time only when a case matched. Without the keyword path (no BM25
index) every term weighs the same.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .model import AppliedRedirect, Candidate, FastHit, IndexedSkill, Redirect, Redirection
from .text import Query, tokenize

REDIRECT_WITHIN = 3
CASE_COVERAGE = 0.75
REDIRECT_FACTOR = 4.0
# "lifecycle emails, newsletters, or drip campaigns": each part is a case of its own.
_ALTERNATIVES = re.compile(r",\s*(?:(?:or|and)\s+)?|\s+or\s+", re.IGNORECASE)


def target_finder(skills: Sequence[IndexedSkill]) -> Callable[[str], int | None]:
    """A function from the skill name a redirect is written with to that skill's catalog
    position: by id, else a unique name, else a unique folder key ("superpowers:brainstorming"
    names "brainstorming"); None when no such skill is installed."""
    fields: list[dict[str, list[int]]] = [{}, {}, {}]
    for position, skill in enumerate(skills):
        for table, value in zip(fields, (skill.id, skill.name, skill.key), strict=True):
            table.setdefault(value, []).append(position)

    def find(name: str) -> int | None:
        for table in fields:
            found = sorted({i for wanted in (name, name.rsplit(":", 1)[-1]) for i in table.get(wanted, ())})
            if len(found) == 1:
                return found[0]
        return None

    return find


@dataclass(frozen=True)
class _Rule:
    """One redirect, ready to match: its source and target positions, and each alternative of its
    case as (text, terms)."""

    source: int
    target: int | None
    redirect: Redirect
    alternatives: tuple[tuple[str, frozenset[str]], ...]


class Redirects:
    """The redirects of one catalog whose target is installed (or who name none), indexed by the
    terms of their cases. ``weight`` is a term's weight (IDF); built once per catalog."""

    def __init__(self, skills: Sequence[IndexedSkill], weight: Callable[[str], float]) -> None:
        self._weight = weight
        self._rules: list[_Rule] = []
        self._by_term: dict[str, list[int]] = {}
        # Indexing every skill's names is left until a redirect names a target: most catalogs
        # have none (at 50,000 skills the index costs ~1 s of a first route).
        find: Callable[[str], int | None] | None = None
        for source, skill in enumerate(skills):
            for redirect in skill.fingerprint.redirects:
                target = None
                if redirect.target:
                    find = find or target_finder(skills)
                    target = find(redirect.target)
                    if target is None or target == source:
                        continue
                parts = [p.strip() for p in _ALTERNATIVES.split(redirect.case)]
                alternatives = tuple((p, frozenset(tokenize(p))) for p in parts if tokenize(p))
                if not alternatives:
                    continue
                rule = len(self._rules)
                self._rules.append(_Rule(source, target, redirect, alternatives))
                for term in {t for _, terms in alternatives for t in terms}:
                    self._by_term.setdefault(term, []).append(rule)

    def __bool__(self) -> bool:
        return bool(self._rules)

    def matching(self, query: Query) -> list[tuple[_Rule, str]]:
        """The rules whose case the message is about, each with the alternative it matched."""
        terms = set(query.terms)
        touched = sorted({r for t in terms for r in self._by_term.get(t, ())})
        found = []
        for number in touched:
            rule = self._rules[number]
            matched = next((text for text, case in rule.alternatives if self._covers(terms, case)), None)
            if matched is not None:
                found.append((rule, matched))
        return found

    def _covers(self, terms: set[str], case: frozenset[str]) -> bool:
        found = case & terms
        if len(found) < min(2, len(case)):
            return False
        total = sum(self._weight(t) for t in case)
        return total > 0 and sum(self._weight(t) for t in found) >= CASE_COVERAGE * total


def redirection(
    redirects: Redirects,
    query: Query,
    fuse_without: Callable[[], Sequence[Candidate]],
    fast_hits: Sequence[FastHit],
    size: int,
    allowed: np.ndarray | None = None,
) -> Redirection | None:
    """The redirects that apply to ``query`` (see the module docstring) as ln-multipliers over a
    catalog of ``size`` skills; ``fuse_without`` gives the candidates before redirects (called
    only when a case matched). With ``allowed`` (a mask over the catalog: the skills an agent host
    offers) a redirect to a skill outside it is as one to a skill not installed."""
    if not redirects:
        return None
    matching = redirects.matching(query)
    if not matching:
        return None
    running = {c.index for c in fuse_without()[:REDIRECT_WITHIN]}
    asked_for = {h.index for h in fast_hits if any(e.kind in ("trigger", "name") for e in h.evidence)}
    applied: dict[tuple[int, int | None], AppliedRedirect] = {}
    for rule, matched in matching:
        offered = rule.target is None or allowed is None or bool(allowed[rule.target])
        if offered and rule.source in running and rule.source not in asked_for:
            key = (rule.source, rule.target)
            applied.setdefault(key, AppliedRedirect(rule.source, rule.target, rule.redirect, matched))
    if not applied:
        return None
    # One step each way however many redirects agree: an author's word, not a vote.
    log_multipliers = np.zeros(size)
    step = math.log(REDIRECT_FACTOR)
    for redirect in applied.values():
        log_multipliers[redirect.source] = -step
    for redirect in applied.values():
        if redirect.target is not None:
            log_multipliers[redirect.target] = step
    return Redirection(log_multipliers, tuple(applied.values()))


def targets(redirected: Redirection | None) -> set[int]:
    """The skills redirects sent this message to (they join the candidate pool)."""
    return {r.target for r in redirected.applied if r.target is not None} if redirected else set()


def described(redirect: AppliedRedirect, skills: Sequence[IndexedSkill]) -> str:
    """One applied redirect in words, as explanations quote it."""
    source = skills[redirect.source].id
    where = f"to {skills[redirect.target].id}" if redirect.target is not None else "away"
    return f"{source} sends {redirect.redirect.case!r} {where}; the message is about {redirect.matched!r}"
