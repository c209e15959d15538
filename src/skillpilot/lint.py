"""Routability lint for skill authors: how likely each skill is to be picked when it should be,
and what to change in its SKILL.md so it is.

Input: a :class:`~skillpilot.router.SkillPilot` whose index holds the skills to check (every
skill in it is checked against all the others). Output: one :class:`SkillLint` per skill, worst
first, with a 0-100 score and :class:`Finding` s, each with its evidence and a fix. The router
is asked exactly as it routes users: its own ranking, embeddings, conflict groups and fast path.

A skill's public text (name + description) is what agents and the router see first, so a skill
that only its body explains should be fixed at the source, not guessed around. The checks and
what each costs on the 100-point score:

- ``short-description`` (error, 25): fewer than 8 words (the fingerprint's check).
- ``vague-description`` (warning, up to 60): the description does not say what the body does,
  seen two ways. (a) Every part the router embeds besides the description (the "use when"
  clauses, the opening of the body) is compared with every skill's description (mean cosine over
  the encoders): 30 x the share of parts closer to *another* skill's description. (b) The body's
  list items (the tasks it walks an agent through; ``MAX_TASKS`` spread evenly over the body)
  are routed as users' messages: 30 x the share whose route does not have the skill in its top
  ``TASK_WITHIN`` (3), pass-throughs included. The fix names the salient words (fingerprint
  keywords) the description leaves out.
- ``generic-description`` (warning, up to 15): the description's words are common among the
  catalog's descriptions (mean inverse document frequency of its terms below the catalog's 25th
  percentile), so nothing in it stands out from its neighbours: 15 x how far below, reaching 15
  at the 5th percentile. The evidence quotes its most shared words and how many other
  descriptions use each; the fix names its body's rarest salient words the description leaves
  out. Needs ``GENERIC_MIN_SKILLS`` (20) skills to count words over.
- ``no-use-when`` (warning, 5): the description has no "Use when ..." and neither has the
  body; 0 when only the body has one (SkillPilot embeds it, but agents choosing from the skill
  list never see it, so it is still a warning).
- ``confusable`` (warning, up to 25): what the skill says it is for (description sentences,
  "use when" clauses, triggers; at most ``MAX_CLAIMS``), routed through SkillPilot, goes to
  another skill: 25 x the share of such claims, naming the skill each went to. A sentence (or
  body task) that names another skill (unless the name is an everyday word, "commit") or says
  "not for" or "instead" is a redirect ("for charts, use spreadsheet-charts") and is not
  routed; a pass-through goes nowhere and does not count.
- ``missing-prefer-when`` (warning, 15 x the group's similarity): in a conflict group without
  ``route.prefer_when``; suggests its salient words that no other member uses.
- ``trigger-collision`` (error, 15 each, at most 30): another skill's trigger phrase fires on
  one of its triggers (fast path).
- ``quality`` (warning, 5 each): the fingerprint's other issues (name format, empty body,
  description over 1024 characters).
- ``unmet-preconditions`` (info, 0): this machine lacks an env var, binary or OS it needs (with
  ``router.preconditions`` on the router ranks it x0.7 here; a CI machine is not where skills
  run, so it costs nothing).
- ``no-examples`` (info, 0): other skills of the home have example requests and this one has
  none (``skillpilot enrich`` writes them; an OntoSkills skill's own intents count), so the router
  knows only its author's words for it, not what its users say.
- ``redirect-target-missing`` (info, 0): a redirect in its text ("NOT for testing — use
  playwright-pro", the fingerprint's ``redirects``) names a skill the index does not hold, so
  routing ignores it. Info only: a skill pack linted on its own may redirect to another pack's
  skills, and a package name written like a skill's ("use scvi-tools for ...") reads the same.

Guarantees: deterministic for an index; the score is ``max(0, 100 - penalties)`` rounded to one
decimal; every finding quotes the text it is about and names the other skills involved. Cost:
one route per claim and task (at most ``MAX_CLAIMS + MAX_TASKS``, about 20 ms each with the
default encoders) plus one matrix product per encoder; the word counts are one pass over the
descriptions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np

# The conflict resolver's "words only this member uses" and the fingerprint's own sentence, list
# and markup rules, so that lint reads a SKILL.md exactly as routing does.
from .conflicts import ConflictGroup, Vocabularies, own_words
from .fingerprint import _BULLET, _FENCED, _SENTENCE_END, _clean, fingerprint, unmet_preconditions
from .index.builder import vector_space
from .model import IndexedSkill, IssueCode
from .redirects import target_finder
from .retrieve.dense import EMBEDDING
from .retrieve.fast import ROUTE_AT_ONCE, FastMatcher
from .router import SkillPilot
from .skills.discover import load_skills
from .text import Query, tokenize, words

Severity = Literal["error", "warning", "info"]
FAILING: tuple[Severity, ...] = ("error", "warning")
SHORT_DESCRIPTION_PENALTY = 25.0
# Times the share of embedded parts closer to another description, and of body tasks that do
# not bring the skill into the route's top TASK_WITHIN: two views of "the description does not
# say what the body does". The tasks are what users ask in their own words (the body's, not the
# description's), so they are the nearer stand-in for a paraphrase and weigh as much.
VAGUE_PARTS_PENALTY = 30.0
VAGUE_TASKS_PENALTY = 30.0
# A task only needs to reach the candidates the router and an agent still weigh (the route's
# top 3), not to win outright: list items are narrower than the messages they stand for.
TASK_WITHIN = 3
NO_USE_WHEN_PENALTY = 5.0
CONFUSABLE_PENALTY = 25.0
# Times the group's similarity: the closer the members, the more often the tie-breaker decides.
PREFER_WHEN_PENALTY = 15.0
COLLISION_PENALTY = 15.0
MAX_COLLISION_PENALTY = 30.0
QUALITY_PENALTY = 5.0
# Times how far the mean inverse document frequency of a description's terms is below the
# catalog's GENERIC_QUANTILE, as a share of the way down to its GENERIC_FLOOR_QUANTILE. Relative
# to the catalog (a word is common or rare among these skills), so it needs enough skills.
GENERIC_PENALTY = 15.0
GENERIC_QUANTILE = 25.0
GENERIC_FLOOR_QUANTILE = 5.0
GENERIC_MIN_SKILLS = 20
MAX_COMMON_WORDS = 5
MAX_CLAIMS = 6
MAX_TASKS = 8
# A probe needs this many index terms to be a message a user could send ("Overview." is not);
# a body list item more, since many are fragments ("Run the tests").
MIN_PROBE_TERMS = 3
MIN_TASK_TERMS = 4
MAX_SUGGESTIONS = 5
_EXCERPT = 80
# "Not for ...", "... use X instead": a redirect, even when X is not a skill of this catalog.
_SENDS_ELSEWHERE = re.compile(r"\binstead\b|\bnot\s+for\b", re.IGNORECASE)


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


def lint(
    pilot: SkillPilot,
    only: Collection[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[SkillLint]:
    """Lint every skill in ``pilot``'s index, or only the skills whose ids are in ``only`` (each
    still checked against the whole index, so its report is the same, in a fraction of the time);
    worst score first, then by id. ``progress(done, total)`` is called after each skill (a
    background job reports it, and may stop there by raising)."""
    skills = pilot.skills()
    targets = [i for i, s in enumerate(skills) if only is None or s.id in only]
    closest = _closest_descriptions(pilot, skills, targets)
    groups = {i: g for g in pilot.conflict_groups() for i in g.indices}
    matcher = FastMatcher(skills)
    rarity = _DescriptionRarity(skills)
    installed = target_finder(skills)
    with_examples = pilot.example_sets()
    results = []
    for done, index in enumerate(targets, start=1):
        skill = skills[index]
        claims, tasks = _probes(index, skills, matcher)
        claims_lost, tasks_unreached = _lost(pilot, skill, claims), _unreached(pilot, skill, tasks)
        findings = [
            *_text_findings(skill),
            *_vague(index, skills, closest.get(index, []), tasks_unreached, len(tasks)),
            *_generic(index, skills, rarity),
            *_confusable(claims_lost, len(claims)),
            *_prefer_when(index, skills, groups.get(index)),
            *_collisions(index, skills, matcher),
            *_preconditions(skill),
            *_missing_redirect_targets(skill, installed),
            *_no_examples(skill, with_examples),
        ]
        score = max(0.0, 100.0 - sum(f.penalty for f in findings))
        results.append(SkillLint(skill.id, skill.key, skill.skill.path, round(score, 1), tuple(findings)))
        if progress is not None:
            progress(done, len(targets))
    results.sort(key=lambda r: (r.score, r.id))
    return results


def indexed_under(pilot: SkillPilot, paths: Sequence[Path]) -> list[str] | None:
    """The ids of the skills under ``paths`` when ``pilot``'s index holds every one of them as it
    is on disk (same path, same content), else None. Those are linted by id, against the whole
    index, so a skill scores the same whether it is named by its id or by its folder; a folder
    the index lacks (or holds an older version of) is linted on its own instead."""
    found = load_skills(list(paths)).skills
    held = {(s.skill.path, s.skill.content_hash): s.id for s in pilot.skills()}
    ids = [held.get((s.path, s.content_hash)) for s in found]
    return [i for i in ids if i is not None] if found and None not in ids else None


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1].rstrip() + "…"


def _text_findings(skill: IndexedSkill) -> list[Finding]:
    """What the fingerprint already says about the text, plus a description without "use when"."""
    findings = []
    issues = skill.fingerprint.quality_issues
    description = skill.skill.description
    if any(issue.code == "short-description" for issue in issues):
        findings.append(
            Finding(
                "short-description",
                "error",
                "the description is too short to tell what the skill does",
                (f"description: {description!r}",),
                "write one or two sentences: what it does, on what, and 'Use when the user ...'",
                SHORT_DESCRIPTION_PENALTY,
            )
        )
    # The description alone, as an agent choosing from the skill list sees it.
    if not fingerprint(replace(skill.skill, body="")).intent_patterns:
        body_patterns = skill.fingerprint.intent_patterns
        if body_patterns:
            # SkillPilot embeds the body's "use when" clauses too: only other agents miss it.
            fix = f"move the body's 'use when' into the description: {_excerpt(body_patterns[0])!r}"
        else:
            fix = "add a 'Use when the user ...' sentence to the description"
        findings.append(
            Finding(
                "no-use-when",
                "warning",
                "the description does not say when to use the skill",
                (f"description: {_excerpt(description)!r}",),
                fix,
                0.0 if body_patterns else NO_USE_WHEN_PENALTY,
            )
        )
    for issue in issues:
        if issue.code in _ISSUE_FIXES:
            findings.append(Finding("quality", "warning", issue.message, (), _ISSUE_FIXES[issue.code], QUALITY_PENALTY))
    return findings


# The fingerprint's issues reported as ``quality`` findings (the others have checks of their own).
_ISSUE_FIXES: dict[IssueCode, str] = {
    "name-format": "rename it to lowercase words joined by hyphens, e.g. 'pdf-merge'",
    "empty-body": "add the instructions an agent should follow below the frontmatter",
    "long-description": "shorten the description to 1024 characters; move details to the body",
}


def _closest_descriptions(
    pilot: SkillPilot, skills: Sequence[IndexedSkill], targets: Sequence[int]
) -> dict[int, list[tuple[int, float, float]]]:
    """Per target skill, per embedded part after its description: (the skill whose description
    is closest, that similarity, the similarity to its own description); {} without encoders."""
    if not pilot.encoders or len(skills) < 2:
        return {}
    stored = [pilot.store.vectors(vector_space(encoder, EMBEDDING)) for encoder in pilot.encoders]
    # A skill indexed without these models (keywords only) has no vectors: it is compared with
    # nothing (a zero row), and has no parts of its own to compare.
    embedded = [all((s.skill.root, s.key) in v for v in stored) for s in skills]
    zeros = [np.zeros(e.dim, dtype=np.float32) for e in pilot.encoders]
    # Part 0 is always "name: description" (EmbeddingRecipe).
    descriptions = [
        np.stack([v[(s.skill.root, s.key)][0] if ok else zero for s, ok in zip(skills, embedded, strict=True)])
        for v, zero in zip(stored, zeros, strict=True)
    ]
    closest = {}
    for index in targets:
        skill = skills[index]
        if not embedded[index]:
            continue
        parts = [v[(skill.skill.root, skill.key)][1:] for v in stored]
        # mean cosine over encoders, like conflict detection: (parts, skills)
        sims = sum(p @ d.T for p, d in zip(parts, descriptions, strict=True)) / len(stored)
        rows = np.atleast_2d(sims)
        closest[index] = [(int(np.argmax(row)), float(row.max()), float(row[index])) for row in rows]
    return closest


def _vague(
    own: int,
    skills: Sequence[IndexedSkill],
    closest: list[tuple[int, float, float]],
    tasks_unreached: list[tuple[str, str, float]],
    tasks: int,
) -> list[Finding]:
    """The description against the rest of the skill, by meaning (embedded parts) and by the
    router's own choice (body tasks whose route leaves the skill out of its top few)."""
    skill = skills[own]
    # Without encoders there are no vectors to compare (closest is empty): tasks only.
    texts = EMBEDDING(skill.skill, skill.fingerprint)[1:] if closest else []
    elsewhere = [
        f"{_excerpt(text)!r} is closer to {skills[other].id}'s description ({sim:.2f}) than to this one's ({mine:.2f})"
        for text, (other, sim, mine) in zip(texts, closest, strict=True)
        if other != own
    ]
    if not elsewhere and not tasks_unreached:
        return []
    penalty = VAGUE_PARTS_PENALTY * len(elsewhere) / max(1, len(closest))
    penalty += VAGUE_TASKS_PENALTY * len(tasks_unreached) / max(1, tasks)
    missing = _left_out_keywords(skill)[:MAX_SUGGESTIONS]
    words = f": mention {', '.join(repr(w) for w in missing)}" if missing else ""
    return [
        Finding(
            "vague-description",
            "warning",
            "the description does not say what the body does",
            (
                *elsewhere,
                *(
                    f"the body's task {_excerpt(t)!r} leaves it out of the route's top {TASK_WITHIN} "
                    f"(routes to {r}, {c:.2f})"
                    for t, r, c in tasks_unreached
                ),
            ),
            f"say in the description what the skill does and for whom{words}",
            round(penalty, 1),
        )
    ]


def _left_out_keywords(skill: IndexedSkill) -> list[str]:
    """The skill's salient words (fingerprint keywords) that its name and description do not use."""
    public = set(tokenize(f"{skill.name.replace('-', ' ')} {skill.skill.description}"))
    return [k for k in skill.fingerprint.keywords if not set(tokenize(k)) <= public]


class _DescriptionRarity:
    """How specific each description's words are among the catalog's descriptions: the mean
    inverse document frequency of its distinct terms (higher is rarer), and the catalog's
    thresholds below which a description counts as generic (None: too few skills to tell)."""

    def __init__(self, skills: Sequence[IndexedSkill]) -> None:
        self.terms = [set(tokenize(s.skill.description)) for s in skills]
        self.frequency = Counter(term for terms in self.terms for term in terms)
        self.size = len(skills)
        self.mean_idf = [
            float(np.mean([np.log(self.size / self.frequency[t]) for t in terms])) if terms else 0.0
            for terms in self.terms
        ]
        self.thresholds: tuple[float, float] | None = None
        if self.size >= GENERIC_MIN_SKILLS:
            start, floor = np.percentile(self.mean_idf, [GENERIC_QUANTILE, GENERIC_FLOOR_QUANTILE])
            self.thresholds = (float(start), float(floor))


def _surface_words(text: str) -> dict[str, str]:
    """Each index term of ``text`` and the first word it came from, to quote the author's words
    rather than stems."""
    words: dict[str, str] = {}
    for word in re.findall(r"[^\W_]+", text.lower()):
        for term in tokenize(word):
            words.setdefault(term, word)
    return words


def _generic(index: int, skills: Sequence[IndexedSkill], rarity: _DescriptionRarity) -> list[Finding]:
    """A description made of words many other descriptions use: nothing in it stands out, so
    messages in the user's own words match other skills as well as this one."""
    if rarity.thresholds is None:
        return []
    start, floor = rarity.thresholds
    mine = rarity.mean_idf[index]
    # Rounded first: a description at the threshold, give or take float noise, is not generic.
    penalty = round(GENERIC_PENALTY * min(1.0, (start - mine) / max(start - floor, 1e-9)), 1)
    if penalty <= 0 or not rarity.terms[index]:
        return []
    skill = skills[index]
    words = _surface_words(skill.skill.description)
    common = sorted(rarity.terms[index], key=lambda t: (-rarity.frequency[t], t))[:MAX_COMMON_WORDS]
    # The rarest first: they set it apart the most.
    specific = sorted(
        _left_out_keywords(skill),
        key=lambda k: (max((rarity.frequency[t] for t in tokenize(k)), default=0), k),
    )[:MAX_SUGGESTIONS]
    # exp(-mean idf) is the geometric mean of its words' shares of the descriptions.
    typical = rarity.size * float(np.exp(-mine))
    mention = f": mention {', '.join(repr(k) for k in specific)}" if specific else ""
    return [
        Finding(
            "generic-description",
            "warning",
            "the description is made of words many other descriptions use",
            (
                f"a typical word of the description is in {typical:.1f} of the {rarity.size} descriptions, "
                f"more than for {100 - GENERIC_QUANTILE:.0f}% of the skills",
                "its most shared words: "
                + ", ".join(f"{words.get(t, t)!r} ({rarity.frequency[t] - 1} others)" for t in common),
            ),
            f"name the specific tools, inputs and outcomes it is about{mention}",
            penalty,
        )
    ]


def _probes(index: int, skills: Sequence[IndexedSkill], matcher: FastMatcher) -> tuple[list[str], list[str]]:
    """What the author says the skill does, as messages a user could send: (claims, tasks).
    Claims are the first ``MAX_CLAIMS`` description sentences, "use when" clauses and triggers;
    tasks ``MAX_TASKS`` list items of the body (what it walks an agent through), spread evenly
    over it: the first items are often the same setup steps in every skill of a kind. A sentence
    or item that names another skill, or says "not for" or "instead", is a redirect ("for charts,
    use spreadsheet-charts"), not a claim, and is left out."""
    skill = skills[index]
    claims = (
        *(s.strip() for s in _SENTENCE_END.split(skill.skill.description)),
        *skill.fingerprint.intent_patterns,
        *skill.skill.route.triggers,
    )
    tasks = (_clean(m.group(1)) for m in _BULLET.finditer(_FENCED.sub(" ", skill.skill.body)))
    seen: set[str] = set()

    def keep(texts: Iterable[str], min_terms: int) -> list[str]:
        kept: list[str] = []
        for text in texts:
            if len(tokenize(text)) < min_terms or text.lower() in seen or _SENDS_ELSEWHERE.search(text):
                continue
            # A name that is an everyday word ("commit", "github") is the word, not the skill.
            if any(
                h.index != index and e.kind == "name" and not e.generic
                for h in matcher.match(Query.of(text))
                for e in h.evidence
            ):
                continue
            seen.add(text.lower())
            kept.append(text)
        return kept

    return keep(claims, MIN_PROBE_TERMS)[:MAX_CLAIMS], _spread(keep(tasks, MIN_TASK_TERMS), MAX_TASKS)


def _spread(items: Sequence[str], limit: int) -> list[str]:
    """At most ``limit`` of ``items``, evenly spaced from the first."""
    if len(items) <= limit:
        return list(items)
    return [items[step * len(items) // limit] for step in range(limit)]


def _lost(pilot: SkillPilot, skill: IndexedSkill, probes: Sequence[str]) -> list[tuple[str, str, float]]:
    """(probe, the skill it routes to, confidence) for each probe routed to another skill (a
    pass-through goes nowhere, so it does not count)."""
    lost = []
    for probe in probes:
        result = pilot.route(probe, plan=False, log=False)
        if result.skill is not None and result.skill.id != skill.id and result.decision != "passthrough":
            lost.append((probe, result.skill.id, result.confidence))
    return lost


def _unreached(pilot: SkillPilot, skill: IndexedSkill, tasks: Sequence[str]) -> list[tuple[str, str, float]]:
    """(task, the skill it routes to or "no skill", confidence) for each task whose route does
    not have ``skill`` in its top ``TASK_WITHIN``. Unlike a claim, a task counts even when the
    router would pass it through: the ranking still says which skills its words are closer to."""
    unreached = []
    for task in tasks:
        result = pilot.route(task, plan=False, log=False)
        ranked = ([result.skill.id] if result.skill else []) + [a.id for a in result.alternatives]
        if skill.id not in ranked[:TASK_WITHIN]:
            unreached.append((task, ranked[0] if ranked else "no skill", result.confidence))
    return unreached


def _confusable(lost: list[tuple[str, str, float]], claims: int) -> list[Finding]:
    if not lost:
        return []
    rivals = sorted({rival for _, rival, _ in lost})
    return [
        Finding(
            "confusable",
            "warning",
            f"what it says it is for routes to {', '.join(rivals)}",
            tuple(f"{_excerpt(probe)!r} routes to {rival} ({conf:.2f})" for probe, rival, conf in lost),
            f"say in the description what it does that {', '.join(rivals)} does not; or merge the skills",
            round(CONFUSABLE_PENALTY * len(lost) / claims, 1),
        )
    ]


def _prefer_when(index: int, skills: Sequence[IndexedSkill], group: ConflictGroup | None) -> list[Finding]:
    skill = skills[index]
    if group is None or skill.skill.route.prefer_when:
        return []
    rivals = [skills[i] for i in group.indices if i != index]
    # Its salient words (name, keywords) that the resolver would count for it: used by no rival.
    text = " ".join((skill.name.replace("-", " "), *skill.fingerprint.keywords))
    rival_indices = [i for i in group.indices if i != index]
    suggested = own_words(words(text), index, rival_indices, Vocabularies(skills))[:MAX_SUGGESTIONS]
    named = f": {', '.join(suggested)}" if suggested else " (no word sets it apart yet: add one)"
    return [
        Finding(
            "missing-prefer-when",
            "warning",
            f"it overlaps {', '.join(r.id for r in rivals)} and gives the router no tie-breaker",
            (f"conflict group {group.id} (similarity {group.similarity:.2f}): {', '.join(group.members)}",),
            f"add route.prefer_when with the words only it uses{named}",
            round(PREFER_WHEN_PENALTY * group.similarity, 1),
        )
    ]


def _collisions(index: int, skills: Sequence[IndexedSkill], matcher: FastMatcher) -> list[Finding]:
    evidence = []
    for trigger in skills[index].skill.route.triggers:
        for hit in matcher.match(Query.of(trigger)):
            if hit.index != index and hit.score >= ROUTE_AT_ONCE:
                fired = next((e for e in hit.evidence if e.kind == "trigger"), hit.evidence[0])
                evidence.append(f"trigger {trigger!r} also fires {skills[hit.index].id}'s {fired}")
    if not evidence:
        return []
    return [
        Finding(
            "trigger-collision",
            "error",
            "a trigger phrase routes at once to another skill too",
            tuple(evidence),
            "make the trigger more specific, or drop it and rely on prefer_when",
            min(MAX_COLLISION_PENALTY, COLLISION_PENALTY * len(evidence)),
        )
    ]


def _preconditions(skill: IndexedSkill) -> list[Finding]:
    unmet = unmet_preconditions(skill.fingerprint.preconditions)
    if not unmet:
        return []
    return [
        Finding(
            "unmet-preconditions",
            "info",
            "this machine lacks what the skill needs, so the router ranks it lower here",
            unmet,
            "install or set what is missing, or run with --preconditions off",
            0.0,
        )
    ]


def _no_examples(skill: IndexedSkill, with_examples: Collection[str]) -> list[Finding]:
    # Only once the home has examples at all: before any `enrich` run, every skill would say it.
    if not with_examples or skill.id in with_examples:
        return []
    return [
        Finding(
            "no-examples",
            "info",
            "it has no example requests, so the router knows only the author's words for it, not what its users say",
            (),
            "run `skillpilot enrich --with <your LLM>` (or `skillpilot enrich --import FILE`)",
            0.0,
        )
    ]


def _missing_redirect_targets(skill: IndexedSkill, installed: Callable[[str], int | None]) -> list[Finding]:
    missing = [r for r in skill.fingerprint.redirects if r.target and installed(r.target) is None]
    if not missing:
        return []
    names = sorted({r.target for r in missing})
    return [
        Finding(
            "redirect-target-missing",
            "info",
            f"it sends cases to {', '.join(names)}, which no indexed skill is, so routing ignores "
            f"{'that redirect' if len(missing) == 1 else 'those redirects'}",
            tuple(f"{_excerpt(r.case)!r} -> {r.target}" for r in missing),
            "install the skill it names, or correct the name to that of an indexed skill",
            0.0,
        )
    ]
