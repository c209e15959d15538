"""Stage 2, fingerprint: a :class:`~skillpilot.model.Skill` in, a
:class:`~skillpilot.model.Fingerprint` out, from the text alone (no model; about a millisecond
for a long skill, since descriptions and bodies are read up to their first 20,000 characters;
the keyword index still reads the whole description).

- ``intent_patterns``: what the author says the skill is for, up to 10 clauses: the rest of the
  sentence after "Use when" (or "Use this skill when", "Use it for", "Use proactively when",
  "Use for", "Use if"), "Invoke this skill when", "Call when", "Triggered by", "Trigger when",
  "Triggers:", or a bare "When the user / you need ..." (case-insensitive), then the bullets
  under a "When to use" heading; the description first, then the body (fenced code skipped).
  Each is the clause without its cue, markdown and extra whitespace removed, cut at the
  sentence end and at 300 characters.
- ``keywords``: up to 15 salient words, weighted name (x3) > description (x2) > body
  (1 + log of its count); stop words (``skillpilot.text.STOP_WORDS``), numbers, fenced code and
  words every skill uses ("skill", "user", "https" ...) are left out. Words are grouped by stem
  and shown in their most frequent written form, so ``skillpilot.text.tokenize`` of a keyword
  gives the stem the keyword path matches.
- ``side_effects``: ``route.side_effects`` when the author declared it, else inferred from the
  name and description (bodies mention too much in passing): a remote write (send, post, push, deploy ... or a
  write verb with a remote noun such as GitHub, Slack, email) -> ``write-remote``; any other
  write verb -> ``write-local``; fetching, downloading, searching, browsing or a remote noun ->
  ``network``; else ``read-only``.
- ``preconditions``: ``skill.requires``; :func:`unmet_preconditions` says which of them this
  machine lacks, in words.
- ``quality_issues``: :class:`~skillpilot.model.QualityIssue` values, each a stable code and a
  short sentence a skill author can act on.
- ``redirects``: up to 10 :class:`~skillpilot.model.Redirect` s, cases the author sends to
  another skill: "NOT for X — use Y" (or "(use Y)", "that's Y"), "for X, use / see / prefer
  [the] Y [skill] [instead]", "use / prefer Y [instead] for X", a list item "X — use Y instead";
  and, in the description only, cases sent nowhere in particular: "not for X", "don't use this
  for X". Y is a skill name as authors write one: lowercase words joined by hyphens (a
  ``plugin:`` prefix allowed), or one lowercase word followed by "skill"; quoted, bold or bare,
  and followed by the end of the clause or by "skill", "instead", "for", "when" (so "use
  text-based layouts" or "see docs/x.md" name no skill). The skill's own name, a case without a
  content word ("for that", "for example") and repeats are left out.
  ``skillpilot.redirects`` applies them at route time.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import sys
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache

from .limits import ANALYSED_CHARS
from .model import Fingerprint, QualityIssue, Redirect, Requirements, SideEffects, Skill
from .text import STOP_WORDS, has_cjk, stem, tokenize, words

MAX_INTENT_PATTERNS = 10
MAX_KEYWORDS = 15
MAX_REDIRECTS = 10
# Long bodies are reference material; their opening says what the skill is about.
_BODY_CHARS = ANALYSED_CHARS
_MAX_CLAUSE = 300

_CUE = re.compile(
    # The lookahead lets the engine skip most positions without trying every alternative.
    r"\b(?=[uictw])(?:use\s+(?:this\s+skill\s+|this\s+|it\s+)?(?:\w+ly\s+)?(?:when(?:ever)?|for|if)"
    r"|invoke\s+this\s+skill\s+when|call\s+(?:this\s+)?when|triggered\s+by|trigger\s+when|triggers?\s*:"
    # "When the user wants ..." without a "use": the clause keeps "the user wants ...".
    r"|when\s+(?=(?:the\s+|a\s+)?users?\s|you\s+(?:need|want)\s))"
    r"[\s:]*",
    re.IGNORECASE,
)
# A sentence ends at . ! ? before a space (not in "e.g." / "i.e." / "etc."), at a blank line,
# or where a list item or heading starts.
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)[.!?](?=\s|$)|\n\s*\n|\n\s*(?:[-*+#]|\d+\.)\s")
_FENCED = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)
_WHEN_HEADING = re.compile(
    r"^#{1,6}\s*when\s+(?:to|should\s+you|you\s+should)\s+use\b.*$", re.IGNORECASE | re.MULTILINE
)
_HEADING = re.compile(r"^#{1,6}\s", re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.+)$", re.MULTILINE)
_MARKUP = re.compile(r"\*\*|__|`|\[([^\]]*)\]\([^)]*\)")
# Possessive and anchored at a word start: on a long word without a hyphen the plain `\w+(?:-\w+)+`
# backtracks from every position (quadratic; 15 s for a 30,000-character name).
_COMPOUND = re.compile(r"(?<!\w)\w++(?:-\w++)+")
_NAME_RULE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

# Redirect clauses (see the module docstring). A skill name is lowercase, as SKILL.md names are;
# the words around it match in any case. Each clause is found from its verb and the name after it
# (literal searches, fast on a 20,000-character body), then the case is read before the verb
# (within the line) or after the name.
_CASE = r"(?P<case>[^.;:!?\n()—–]{3,160}?)"
_SKILL_NAME = re.compile(
    r"\s+(?i:the\s+)?(?!(?:this|that|the|a|an|it|its|any|your|our|each|every)\b)"
    r"[`*'\"]*(?P<target>[a-z0-9]+(?:[-:][a-z0-9]+)+|[a-z0-9]+(?=[`*'\"]*\s+skill\b))[`*'\"]*"
    # The name ends the clause or a redirect goes on: "use text-based layouts" and "see
    # notes-v2.md" name no skill.
    r"(?=\s+(?:skill|instead|for|when)\b|[ \t]*(?:[—–(,;:!?)\n]|\.(?!\S))|\s*$)"
)
_SENDING_VERBS = ("use", "see", "try", "prefer", "that's", "that’s", "that is")
_VERB = {verb: re.compile(rf"{verb}(?<![\w-]{verb})") for verb in _SENDING_VERBS}
_DASH = r"[ \t]*(?:[—–:]|--|[ \t]-[ \t])[ \t]*"
# What comes before "use Y": "not for X — ", "for X, ", a list item "- X — ".
_CASE_BEFORE = (
    re.compile(rf"(?<![\w-])(?i:not\s+for)\s+{_CASE}(?:{_DASH}|[ \t]*[,(][ \t]*|\.\s+)(?i:instead\s+)?\Z"),
    re.compile(rf"(?<![\w-])(?i:for|when|if)\s+{_CASE},?\s+\Z"),
)
_ITEM_BEFORE = re.compile(rf"^[ \t]*[-*+][ \t]+{_CASE}{_DASH}\Z")
# What comes after "use Y": " [skill] [instead] for X". Without "skill", "instead" or a plugin
# prefix Y is as often a package or a technique ("use expo-image for all images").
_CASE_AFTER = re.compile(
    rf"(?P<marker>\s+skill|\s+(?i:instead))?\s+(?i:instead\s+)?(?i:for|when)\s+{_CASE}(?=[.;:!?\n()]|$)"
)
_LOOK_BACK = 200
_UNNAMED_REDIRECT = re.compile(
    rf"\b(?i:not\s+for|(?:don'?t|do\s+not|never)\s+use\s+(?:this|it)(?:\s+skill)?\s+(?:for|when|to))\s+{_CASE}"
    r"(?=[.;!?\n()]|$)"
)
# "For example, use ..." is an example, not a case; nor is a code name ("- `rule-id` - use ...").
_CODE_ONLY = re.compile(r"\s*`[^`]*`\s*")
_NOT_A_CASE = frozenset(tokenize("example instance"))


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in text.split())


# Words nearly every skill description uses: they say nothing about this skill in particular.
# (Every list below is stemmed, so one form of each word is enough.)
_NOISE = _stems(
    "skill user ask claude agent assistant http https www com org io md yes true false null none "
    "example eg ie etc following whenever"
)
# Verbs only: "message", "email" and "merge" are left out because they are more often nouns
# ("commit message") or local ("merge PDFs").
_REMOTE_VERBS = _stems("send post publish deploy push upload tweet reply comment invite broadcast notify")
_WRITE_VERBS = _stems(
    "create write edit update delete remove modify save rename move insert append overwrite install "
    "commit add archive schedule convert fill manage build stop clean resize crop split rotate import "
    "export stage apply close scale label administer"
)
_REMOTE_NOUNS = _stems(
    "github gitlab bitbucket slack discord jira linear notion trello asana confluence email gmail "
    "outlook calendar drive pr issue repository repo channel server cloud aws gcp azure vercel "
    "supabase netlify heroku remote webhook twitter whatsapp telegram imessage sms api saas postgres "
    "postgresql mysql mongodb redis kubernetes"
)
_NETWORK_WORDS = _stems("fetch download search browse crawl scrape web website url internet online http")


def fingerprint(skill: Skill) -> Fingerprint:
    """The routing signals of ``skill``; see the module docstring for how each is derived."""
    description, body = _analysed(skill)
    patterns = _intent_patterns(description, body)
    declared = skill.route.side_effects
    side_effects = declared or _infer_side_effects(f"{skill.name} {description}")
    return Fingerprint(
        intent_patterns=patterns,
        keywords=_keywords(skill.name, description, body),
        side_effects=side_effects,
        side_effects_declared=declared is not None,
        preconditions=skill.requires,
        quality_issues=quality_issues(skill, patterns),
        redirects=_redirects(skill.name, description, body),
    )


def _analysed(skill: Skill) -> tuple[str, str]:
    """The description and body as the fingerprint reads them: cut, fenced code left out."""
    return skill.description[:_BODY_CHARS], _FENCED.sub(" ", skill.body[:_BODY_CHARS])


def redirects(skill: Skill) -> tuple[Redirect, ...]:
    """The cases the author of ``skill`` sends elsewhere: its fingerprint's ``redirects``."""
    return _redirects(skill.name, *_analysed(skill))


def _intent_patterns(description: str, body: str) -> tuple[str, ...]:
    """The "use when" clauses of a description, then of a body, at most ``MAX_INTENT_PATTERNS``."""
    found: dict[str, str] = {}
    for text in (description, body):
        for clause in _cued_clauses(text) + _when_to_use_bullets(text):
            found.setdefault(clause.lower(), clause)
            if len(found) == MAX_INTENT_PATTERNS:
                return tuple(found.values())
    return tuple(found.values())


def _cued_clauses(text: str) -> list[str]:
    clauses = []
    for match in _CUE.finditer(text):
        end = _SENTENCE_END.search(text, match.end())
        clause = _clean(text[match.end() : end.start() if end else len(text)])
        if len(clause) >= 3:
            clauses.append(clause)
    return clauses


def _when_to_use_bullets(text: str) -> list[str]:
    bullets: list[str] = []
    for heading in _WHEN_HEADING.finditer(text):
        following = _HEADING.search(text, heading.end())
        section = text[heading.end() : following.start() if following else len(text)]
        bullets.extend(c for c in (_clean(m.group(1)) for m in _BULLET.finditer(section)) if len(c) >= 3)
    return bullets


def _clean(text: str) -> str:
    text = " ".join(_MARKUP.sub(lambda m: m.group(1) or "", text).split()).strip(" ,;:-")
    if len(text) > _MAX_CLAUSE:
        text = text[:_MAX_CLAUSE].rsplit(" ", 1)[0]
    return text


def _redirects(name: str, description: str, body: str) -> tuple[Redirect, ...]:
    """The cases the author of skill ``name`` sends elsewhere (see the module docstring),
    description first, at most ``MAX_REDIRECTS``."""
    found: dict[tuple[str, str], Redirect] = {}
    for text, unnamed in ((description, True), (body, False)):
        sent = _named_redirects(text)
        if unnamed:
            sent += [(m.group("case"), "") for m in _UNNAMED_REDIRECT.finditer(text)]
        for raw_case, target in sent:
            case = _clean(raw_case)
            if (
                _CODE_ONLY.fullmatch(raw_case)
                or name in (target, target.rsplit(":", 1)[-1])
                or not set(tokenize(case)) - _NOT_A_CASE
            ):
                continue
            found.setdefault((case.lower(), target), Redirect(case, target))
    # A case the author also sent to a named skill is that redirect, not one to nowhere.
    named_cases = {case for case, target in found if target}
    kept = [r for (case, target), r in found.items() if target or case not in named_cases]
    return tuple(kept[:MAX_REDIRECTS])


def _named_redirects(text: str) -> list[tuple[str, str]]:
    """(case as written, skill name) for each clause of ``text`` that sends a case to a named skill."""
    lowered = text.lower()
    # Offsets in the lowered copy must be those of the text (a few letters lower to two).
    searched = lowered if len(lowered) == len(text) else text
    sent: list[tuple[int, str, str]] = []
    for verb, pattern in _VERB.items():
        for found in pattern.finditer(searched):
            named = _SKILL_NAME.match(text, found.end())
            if named is None:
                continue
            line = text.rfind("\n", 0, found.start()) + 1
            before = text[max(line, found.start() - _LOOK_BACK) : found.start()]
            patterns = (*_CASE_BEFORE, _ITEM_BEFORE) if line >= found.start() - _LOOK_BACK else _CASE_BEFORE
            case = next((m.group("case") for p in patterns if (m := p.search(before))), None)
            if case is None and verb in ("use", "prefer"):
                after = _CASE_AFTER.match(text, named.end())
                if after and (after.group("marker") or ":" in named.group("target")):
                    case = after.group("case")
            if case is not None:
                sent.append((found.start(), case, named.group("target")))
    return [(case, target) for _, case, target in sorted(sent)]


def _keywords(name: str, description: str, body: str) -> tuple[str, ...]:
    score: dict[str, float] = {}
    forms: dict[str, dict[str, int]] = {}
    for weight, text in ((3.0, name), (2.0, description), (0.0, body)):
        # Counter keeps first-occurrence order; sorted() is stable, so that order breaks ties.
        for word, count in Counter(words(text)).items():
            term = _term(word)
            if term is None:
                continue
            seen = forms.setdefault(term, {})
            seen[word] = seen.get(word, 0) + count
            score[term] = score.get(term, 0.0) + (weight * count if weight else 1.0 + math.log(count))
    ranked = sorted(score, key=lambda t: -score[t])
    return tuple(max(forms[t], key=forms[t].__getitem__) for t in ranked[:MAX_KEYWORDS])


@lru_cache(maxsize=65536)
def _term(word: str) -> str | None:
    """The stem a keyword is counted under, or None for words that are not keywords."""
    if has_cjk(word):
        return word if 2 <= len(word) <= 8 else None
    if len(word) < 2 or word in STOP_WORDS or not word.isalpha():
        return None
    term = stem(word)
    return None if term in _NOISE else term


def _infer_side_effects(text: str) -> SideEffects:
    # Hyphenated compounds ("post-mortem", "follow-up", "read-only") are not verbs.
    stems = {stem(w) for w in words(_COMPOUND.sub(" ", text))}
    remote_noun = bool(stems & _REMOTE_NOUNS)
    if stems & _REMOTE_VERBS or (remote_noun and stems & _WRITE_VERBS):
        return "write-remote"
    if stems & _WRITE_VERBS:
        return "write-local"
    if remote_noun or stems & _NETWORK_WORDS:
        return "network"
    return "read-only"


def quality_issues(skill: Skill, patterns: tuple[str, ...]) -> tuple[QualityIssue, ...]:
    """What an author should fix in ``skill``'s text, given its intent ``patterns``."""
    issues = []
    description_words = words(skill.description[:_BODY_CHARS])
    # A CJK run is one "word" to words(); count about one word per two characters instead.
    count = sum(max(1, len(w) // 2) if has_cjk(w) else 1 for w in description_words)
    if count < 8:
        issues.append(QualityIssue("short-description", "description has fewer than 8 words"))
    if not patterns:
        issues.append(QualityIssue("no-use-when", "no 'use when' signal in the description or body"))
    if skill.source_kind == "skill-md":
        if len(skill.description) > 1024:
            issues.append(
                QualityIssue("long-description", "description is longer than 1024 characters (the SKILL.md limit)")
            )
        # A private skill's body is withheld by the loader; it is not missing.
        if not skill.body.strip() and not skill.private:
            issues.append(QualityIssue("empty-body", "body is empty: add instructions below the frontmatter"))
        if not _NAME_RULE.match(skill.name) or len(skill.name) > 64:
            issues.append(
                QualityIssue(
                    "name-format",
                    f"name {skill.name!r} is not lowercase words joined by hyphens (at most 64 characters)",
                )
            )
    return tuple(issues)


def unmet_preconditions(req: Requirements, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """What ``req`` needs that this machine lacks, one sentence each.

    ``environ`` (default ``os.environ``) is used for the variables and for ``PATH``.
    """
    env = os.environ if environ is None else environ
    unmet = [f"env {name} is not set" for name in req.env if not env.get(name)]
    search_path = env.get("PATH", "")
    unmet += [f"binary {name} not found on PATH" for name in req.bins if shutil.which(name, path=search_path) is None]
    if req.os and sys.platform not in req.os:
        unmet.append(f"needs OS {' or '.join(req.os)}, this is {sys.platform}")
    return tuple(unmet)
