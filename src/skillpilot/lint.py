"""Routability lint for skill authors: how likely each skill is to be picked when it should be,
and what to change in its SKILL.md so it is.

Input: a :class:`~skillpilot.router.SkillPilot` whose index holds the skills to check (every
skill in it is checked against all the others). Output: one :class:`SkillLint` per skill, worst
first, with a 0-100 score and :class:`Finding` s, each with its evidence and a fix. The router
is asked exactly as it routes users: its own ranking, embeddings, conflict groups and fast path.

A skill's public text (name + description) is what agents and the router see first, so a skill
that only its body explains should be fixed at the source, not guessed around. The checks, and
what each costs on the 100-point score:

========================  ========  =======  =================================================
code                      severity  penalty  fires when
========================  ========  =======  =================================================
short-description         error     25       the description has fewer than 8 words
vague-description         warning   <= 30    parts of the skill the router embeds besides its
                                             description (its "use when" clauses, the opening
                                             of its body) are closer in meaning to *another*
                                             skill's description than to its own (mean cosine
                                             over the encoders); 30 x the share of such parts.
                                             The fix names the salient words (fingerprint
                                             keywords) the description leaves out
no-use-when               warning   10       the description itself has no "Use when ..."
confusable                warning   <= 25    the skill's own sentences (description sentences,
                                             intent patterns, triggers; at most
                                             ``MAX_PROBES``) routed through SkillPilot go to
                                             another skill; 25 x the share of such probes
missing-prefer-when       warning   10       it is in a conflict group without
                                             ``route.prefer_when``; suggests the words only it
                                             uses among the group
trigger-collision         error     15 each  another skill's trigger phrase fires on one of its
                                             triggers (fast path), at most 30
quality                   warning   5 each   other fingerprint issues (name format, empty body,
                                             description over 1024 characters)
unmet-preconditions       info      0        this machine lacks an env var, binary or OS it
                                             needs (the router lowers its score x0.7 here; a CI
                                             machine is not where skills run, so no penalty)
========================  ========  =======  =================================================

Guarantees: deterministic for an index; the score is ``max(0, 100 - penalties)`` rounded to one
decimal; every finding names the skill(s) and the text it is about. Cost: one route per probe
(about ``MAX_PROBES`` x 20 ms per skill with the default encoders) plus one matrix product.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from .conflicts import ConflictGroup, _own_words
from .fingerprint import _BULLET, _FENCED, _SENTENCE_END, _clean, fingerprint, unmet_preconditions
from .index.builder import vector_space
from .model import IndexedSkill
from .plan import single_steps
from .retrieve.dense import EMBEDDING
from .retrieve.fast import ROUTE_AT_ONCE, FastMatcher
from .router import SkillPilot
from .text import tokenize

log = logging.getLogger(__name__)

Severity = Literal["error", "warning", "info"]
FAILING: tuple[Severity, ...] = ("error", "warning")
SHORT_DESCRIPTION_PENALTY = 25.0
VAGUE_PENALTY = 30.0
NO_USE_WHEN_PENALTY = 5.0
CONFUSABLE_PENALTY = 25.0
# Times the group's similarity: the closer the members, the more often the tie-breaker decides.
PREFER_WHEN_PENALTY = 15.0
COLLISION_PENALTY = 15.0
MAX_COLLISION_PENALTY = 30.0
QUALITY_PENALTY = 5.0
MAX_CLAIMS = 6
MAX_TASKS = 6
# A probe needs this many index terms to be a message a user could send ("Overview." is not);
# a body list item more, since many are fragments ("Run the tests").
MIN_PROBE_TERMS = 3
MIN_TASK_TERMS = 4
MAX_SUGGESTIONS = 5
SHORT_ISSUE = "description has fewer than 8 words"
NO_PATTERN_ISSUE = "no 'use when' signal in the description or body"
_EXCERPT = 80


@dataclass(frozen=True)
class Finding:
    """One problem with a skill: what, how sure (``evidence``), and what to change."""

    code: str
    severity: Severity
    message: str
    evidence: tuple[str, ...]
    fix: str
    penalty: float


@dataclass(frozen=True)
class SkillLint:
    """A skill's routability: 0-100 (higher is easier to route to) and its findings."""

    id: str
    key: str
    path: str
    score: float
    findings: tuple[Finding, ...]

    @property
    def failing(self) -> bool:
        """Whether ``--strict`` fails on it: it has an error or a warning."""
        return any(f.severity in FAILING for f in self.findings)


def lint(pilot: SkillPilot) -> list[SkillLint]:
    """Lint every skill in ``pilot``'s index; worst score first, then by id."""
    skills = pilot.skills()
    closest = _closest_descriptions(pilot, skills)
    groups = {i: g for g in pilot.conflict_groups() for i in g.indices}
    matcher = FastMatcher(skills)
    results = []
    for index, skill in enumerate(skills):
        findings = [
            *_text_findings(skill),
            *_vague(index, skills, closest[index] if closest else None),
            *_confusable(pilot, index, skills, matcher),
            *_prefer_when(index, skills, groups.get(index)),
            *_collisions(index, skills, matcher),
            *_preconditions(skill),
        ]
        score = max(0.0, 100.0 - sum(f.penalty for f in findings))
        results.append(SkillLint(skill.id, skill.key, skill.skill.path, round(score, 1), tuple(findings)))
    results.sort(key=lambda r: (r.score, r.id))
    return results


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1].rstrip() + "…"


def _text_findings(skill: IndexedSkill) -> list[Finding]:
    """What the fingerprint already says about the text, plus a description without "use when"."""
    findings = []
    issues = skill.fingerprint.quality_issues
    description = skill.skill.description
    if SHORT_ISSUE in issues:
        findings.append(Finding(
            "short-description", "error",
            "the description is too short to tell what the skill does",
            (f"description: {description!r}",),
            "write one or two sentences: what it does, on what, and 'Use when the user ...'",
            SHORT_DESCRIPTION_PENALTY,
        ))
    # The description alone, as an agent choosing from the skill list sees it.
    if not fingerprint(replace(skill.skill, body="")).intent_patterns:
        body_patterns = skill.fingerprint.intent_patterns
        if body_patterns:
            # SkillPilot embeds the body's "use when" clauses too: only other agents miss it.
            fix = f"move the body's 'use when' into the description: {_excerpt(body_patterns[0])!r}"
        else:
            fix = "add a 'Use when the user ...' sentence to the description"
        findings.append(Finding(
            "no-use-when", "warning",
            "the description does not say when to use the skill",
            (f"description: {_excerpt(description)!r}",),
            fix,
            0.0 if body_patterns else NO_USE_WHEN_PENALTY,
        ))
    for issue in issues:
        if issue not in (SHORT_ISSUE, NO_PATTERN_ISSUE):
            findings.append(Finding("quality", "warning", issue, (), _issue_fix(issue), QUALITY_PENALTY))
    return findings


def _issue_fix(issue: str) -> str:
    if issue.startswith("name "):
        return "rename it to lowercase words joined by hyphens, e.g. 'pdf-merge'"
    if issue.startswith("body is empty"):
        return "add the instructions an agent should follow below the frontmatter"
    return "shorten the description to 1024 characters; move details to the body"


def _closest_descriptions(pilot: SkillPilot, skills: Sequence[IndexedSkill]) -> list[list[tuple[int, float, float]]]:
    """Per skill, per embedded part after its description: (the skill whose description is
    closest, that similarity, the similarity to its own description); [] without encoders."""
    if not pilot.encoders or len(skills) < 2:
        return []
    stored = [pilot.store.vectors(vector_space(encoder, EMBEDDING)) for encoder in pilot.encoders]
    # Part 0 is always "name: description" (EmbeddingRecipe).
    descriptions = [np.stack([v[(s.skill.root, s.key)][0] for s in skills]) for v in stored]
    closest = []
    for index, skill in enumerate(skills):
        parts = [v[(skill.skill.root, skill.key)][1:] for v in stored]
        # mean cosine over encoders, like conflict detection: (parts, skills)
        sims = sum(p @ d.T for p, d in zip(parts, descriptions, strict=True)) / len(stored)
        closest.append([(int(np.argmax(row)), float(row.max()), float(row[index])) for row in np.atleast_2d(sims)])
    return closest


def _vague(
    own: int, skills: Sequence[IndexedSkill], closest: list[tuple[int, float, float]] | None
) -> list[Finding]:
    if not closest:
        return []
    skill = skills[own]
    texts = EMBEDDING(skill.skill, skill.fingerprint)[1:]
    elsewhere = [
        f"{_excerpt(text)!r} is closer to {skills[other].id}'s description ({sim:.2f}) than to this "
        f"one's ({mine:.2f})"
        for text, (other, sim, mine) in zip(texts, closest, strict=True)
        if other != own
    ]
    if not elsewhere:
        return []
    public = set(tokenize(f"{skill.name.replace('-', ' ')} {skill.skill.description}"))
    missing = [k for k in skill.fingerprint.keywords if not set(tokenize(k)) <= public][:MAX_SUGGESTIONS]
    words = f": mention {', '.join(repr(w) for w in missing)}" if missing else ""
    return [Finding(
        "vague-description", "warning",
        "the description does not say what the body does",
        tuple(elsewhere),
        f"say in the description what the skill does and for whom{words}",
        round(VAGUE_PENALTY * len(elsewhere) / len(texts), 1),
    )]


def _probes(index: int, skills: Sequence[IndexedSkill], matcher: FastMatcher) -> list[str]:
    """What the author says the skill does, as messages a user could send: the first
    ``MAX_CLAIMS`` description sentences, "use when" clauses and triggers, then the first
    ``MAX_TASKS`` list items of the body (the tasks it walks through). A sentence naming another
    skill is a redirect ("for charts, use spreadsheet-charts"), not a claim, and is left out."""
    skill = skills[index]
    claims = (
        *(s.strip() for s in _SENTENCE_END.split(skill.skill.description)),
        *skill.fingerprint.intent_patterns,
        *skill.skill.route.triggers,
    )
    tasks = (_clean(m.group(1)) for m in _BULLET.finditer(_FENCED.sub(" ", skill.skill.body)))
    found: dict[str, str] = {}
    for texts, limit, min_terms in ((claims, MAX_CLAIMS, MIN_PROBE_TERMS), (tasks, MAX_TASKS, MIN_TASK_TERMS)):
        kept = 0
        for text in texts:
            if kept == limit:
                break
            if len(tokenize(text)) < min_terms or text.lower() in found:
                continue
            if any(h.index != index and e.startswith("name ") for h in matcher.match(text) for e in h.evidence):
                continue
            found[text.lower()] = text
            kept += 1
    return list(found.values())


def _confusable(
    pilot: SkillPilot, index: int, skills: Sequence[IndexedSkill], matcher: FastMatcher
) -> list[Finding]:
    skill = skills[index]
    probes = _probes(index, skills, matcher)
    lost = []
    with single_steps():
        for probe in probes:
            result = pilot.route(probe)
            if result.skill is not None and result.skill.id != skill.id:
                lost.append((probe, result.skill.id, result.confidence))
    if not lost:
        return []
    rivals = sorted({rival for _, rival, _ in lost})
    return [Finding(
        "confusable", "warning",
        f"what it says it does routes to {', '.join(rivals)}",
        tuple(f"{_excerpt(probe)!r} routes to {rival} ({confidence:.2f})" for probe, rival, confidence in lost),
        f"say in the description what it does that {', '.join(rivals)} does not; or merge the skills",
        round(CONFUSABLE_PENALTY * len(lost) / len(probes), 1),
    )]


def _prefer_when(index: int, skills: Sequence[IndexedSkill], group: ConflictGroup | None) -> list[Finding]:
    skill = skills[index]
    if group is None or skill.skill.route.prefer_when:
        return []
    rivals = [skills[i] for i in group.indices if i != index]
    # The words the resolver would count for this member: its own, used by no rival.
    text = " ".join((skill.name.replace("-", " "), *skill.fingerprint.keywords, skill.skill.description))
    suggested = _own_words(text, skill, rivals)[:MAX_SUGGESTIONS]
    words = f": {', '.join(suggested)}" if suggested else " (no word sets it apart yet: add one)"
    return [Finding(
        "missing-prefer-when", "warning",
        f"it overlaps {', '.join(r.id for r in rivals)} and gives the router no tie-breaker",
        (f"conflict group {group.id} (similarity {group.similarity:.2f}): {', '.join(group.members)}",),
        f"add route.prefer_when with the words only it uses{words}",
        round(PREFER_WHEN_PENALTY * group.similarity, 1),
    )]


def _collisions(index: int, skills: Sequence[IndexedSkill], matcher: FastMatcher) -> list[Finding]:
    evidence = []
    for trigger in skills[index].skill.route.triggers:
        for hit in matcher.match(trigger):
            if hit.index != index and hit.score >= ROUTE_AT_ONCE:
                fired = next((e for e in hit.evidence if e.startswith("trigger")), hit.evidence[0])
                evidence.append(f"trigger {trigger!r} also fires {skills[hit.index].id}'s {fired}")
    if not evidence:
        return []
    return [Finding(
        "trigger-collision", "error",
        "a trigger phrase routes at once to another skill too",
        tuple(evidence),
        "make the trigger more specific, or drop it and rely on prefer_when",
        min(MAX_COLLISION_PENALTY, COLLISION_PENALTY * len(evidence)),
    )]


def _preconditions(skill: IndexedSkill) -> list[Finding]:
    unmet = unmet_preconditions(skill.fingerprint.preconditions)
    if not unmet:
        return []
    return [Finding(
        "unmet-preconditions", "info",
        "this machine lacks what the skill needs, so the router ranks it lower here",
        unmet,
        "install or set what is missing, or run with --preconditions off",
        0.0,
    )]
