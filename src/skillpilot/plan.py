"""Multi-skill messages: a message that asks for several things in order becomes an ordered plan.

Input: a message read once (:class:`~skillpilot.text.Query`), a router (anything with
``route(query, plan=False, log=False) -> RouteResult``; the facade calls :func:`plan_steps` at
the end of ``SkillPilot.route``) and the confidence of the whole message's own route. Output: a
tuple of :class:`~skillpilot.model.PlanStep` in the order the user asked, empty unless the
message splits into at least two steps that go to different skills.

How, cheapest test first:

1. Markers. A message is cut where it chains requests. Sequence markers say "in this order":
   "then", "and then", "after that", "afterwards", 然后 / 之后 / 接着 / 随后 / 最后 / 再 (not
   再次 / 再见). Other conjunctions only say "and": "also", "as well as", "plus", a plain "and",
   并且 / 同时 / 以及. So does the end of a sentence followed by another ("... Additionally, ").
   A message without any marker is one step and no clause is routed: it costs one regular
   expression. Commas are not markers ("QC, normalize and cluster" is one task), nor is 和
   (it joins nouns).
2. Clauses. Pieces with fewer than two index terms (``skillpilot.text.tokenize``: "and why?",
   "please") are glued to the next piece, the last one to the previous. Each clause is read
   (:meth:`~skillpilot.text.Query.piece`) once, here, and routed as read.
3. Routing. Each clause is routed with the same router, told not to plan it again nor log it
   (``plan=False, log=False``: it is a piece of the message's decision). A
   clause asks for a skill when its confidence reaches ``STEP_CONFIDENCE``; a clause with a
   sentence end on either side needs ``SENTENCE_STEP_CONFIDENCE``, because a sentence on its
   own is often context ("checkout is throwing 500s. help me ..."). Clauses that ask for
   nothing are context and join the step after them (the last step, at the end); neighbouring
   clauses that ask for the same skill are one step, routed as its most confident clause.
4. Acceptance. The plan stands when two or more different skills remain, and either a sequence
   marker starts a later step, or splitting made the router surer (the steps' mean confidence
   is at least the whole message's), or every step names its skill outright (confidence at
   least ``SURE_STEP_CONFIDENCE``, runner-up at most ``SURE_STEP_RUNNER_UP``). A single-skill
   message routes best whole (its clauses lose context), which is what keeps it in one piece:
   7 of the 160 development messages (``../shared/bench/queries/real-dev.jsonl``, one skill
   each) are split, 4.4 % against a 5 % budget (``benchmarks/plan_eval.py``).

Measured limit: on MetaTool's 497 two-tool queries (199 tools) plans name both tools in 5.2 %
(34.0 % against each query's 10 candidate tools). Both tools are the top route of the whole
message or of one of its clauses in only 21.1 %, so no acceptance rule over these clause routes
can reach much more; looser bars and acceptance rules that find more cost development false
splits one for one.

Cost: a message with markers routes each clause once more (route p50 on the development set,
2-core AVX2 machine, 2026-12-01: 10.4 ms for the 156 messages without a sequence marker, 34.4 ms
for the 4 with one, whose 2-3 clauses are routed too). ``SkillPilot.route`` therefore plans only
messages with a sequence marker; ``skillpilot plan`` (and ``plan_steps``' default) considers
every marker.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .model import PlanStep, RouteResult
from .text import Query

# Calibrated confidences: 0.15 is "this clause is about that skill, weakly"; the bars were chosen
# on the development set and MetaTool's multi-tool queries (benchmarks/plan_eval.py) against
# the 5 % false-split budget. A new sentence must be a soft route on its own (the soft threshold).
STEP_CONFIDENCE = 0.15
SENTENCE_STEP_CONFIDENCE = 0.45
# A step this sure of its skill, with its runner-up this far behind, names that skill outright.
SURE_STEP_CONFIDENCE = 0.85
SURE_STEP_RUNNER_UP = 0.1
MIN_CLAUSE_TERMS = 2

_MARKER = re.compile(
    # Sequence markers say "in this order" outright; the other conjunctions only "and".
    r"(?P<sequence>,?\s+(?:and\s+)?then\b,?\s*|,?\s+after\s+that\b,?\s*|,?\s+afterwards\b,?\s*"
    r"|\s*(?:然后|之后|接着|随后|最后|再(?![次见]))\s*)"
    r"|(?P<conjunction>,?\s+(?:and\s+)?also\b,?\s*|,?\s+as\s+well\s+as\s+|,?\s+plus\s+|,?\s+and\s+"
    r"|\s*(?:并且|同时|以及)\s*)"
    r"|(?P<sentence>(?<=[.!?;])\s+(?:additionally,?\s*)?(?=\S)|(?<=[。！？；])\s*(?=\S))",
    re.IGNORECASE,
)
# Commas and semicolons left at a clause's ends by the cut (the models read "X，" unlike "X").
_LEFTOVER = " \t\r\n,;，；、"


class Router(Protocol):
    """What planning needs of the facade: one route per clause, without planning or logging it."""

    def route(self, query: Query, *, plan: bool, log: bool) -> RouteResult: ...


@dataclass(frozen=True)
class Clause:
    """A piece of a message, read: ``sentence`` when a sentence end is at either side of it,
    ``sequence`` when a sequence marker ("then", 然后 ...) introduced it."""

    query: Query
    sentence: bool
    sequence: bool

    @property
    def text(self) -> str:
        return self.query.text


def split(query: Query) -> list[Clause]:
    """The clauses of ``query`` (steps 1 and 2 of the module docstring); the whole query when it
    has no marker. A glued clause keeps the words between its pieces ("what's X, and why?")."""
    message = query.text
    # (start, end, the marker that introduced it) of each piece between markers
    pieces: list[tuple[int, int, str]] = []
    start, kind = 0, "start"
    for match in _MARKER.finditer(message):
        pieces.append((start, match.start(), kind))
        start, kind = match.end(), match.lastgroup or "conjunction"
    pieces.append((start, len(message), kind))
    if len(pieces) == 1:
        whole = message.strip(_LEFTOVER) if len(query.terms) >= MIN_CLAUSE_TERMS else message.strip()
        return [Clause(query if whole == message else Query.piece(whole), False, False)]
    spans: list[tuple[int, int, bool, bool, Query]] = []  # (start, end, sentence, sequence, clause)
    begin: int | None = None  # start of a short piece waiting to be glued to the next
    sentence = sequence = False
    for number, (start, stop, kind) in enumerate(pieces):
        begin = start if begin is None else begin
        followed = number + 1 < len(pieces) and pieces[number + 1][2] == "sentence"
        sentence = sentence or kind == "sentence" or followed
        sequence = sequence or kind == "sequence"
        clause = Query.piece(message[begin:stop].strip(_LEFTOVER))
        if len(clause.terms) >= MIN_CLAUSE_TERMS:
            spans.append((begin, stop, sentence, sequence, clause))
            begin, sentence, sequence = None, False, False
    if not spans:
        return [Clause(Query.piece(message.strip()), False, False)]
    if begin is not None:
        # A short tail ("..., and why?") belongs to the clause before it.
        start, _, before, was_sequence, _ = spans.pop()
        tail = Query.piece(message[start:].strip(_LEFTOVER))
        spans.append((start, len(message), before or sentence, was_sequence, tail))
    return [Clause(clause, sen, seq) for _, _, sen, seq, clause in spans]


@dataclass
class _Step:
    texts: list[str]
    route: RouteResult
    sequence: bool


def plan_steps(
    router: Router, query: Query, confidence: float, *, sequences_only: bool = False
) -> tuple[PlanStep, ...]:
    """The ordered plan for ``query`` whose whole route had ``confidence``; () when it is one
    step (see the module docstring). ``sequences_only`` plans only messages that say "in this
    order" ("then", 然后 ...): what every ``route`` does, so a plain "and" costs no extra routes."""
    if sequences_only and not any(m.lastgroup == "sequence" for m in _MARKER.finditer(query.text)):
        return ()  # the common case, for every route: no clause could say "in this order"
    clauses = split(query)
    if len(clauses) < 2 or (sequences_only and not any(c.sequence for c in clauses[1:])):
        return ()
    routes = [router.route(clause.query, plan=False, log=False) for clause in clauses]
    steps = _steps(clauses, routes)
    if len({step.route.skill.id for step in steps if step.route.skill is not None}) < 2:
        return ()
    surer = sum(s.route.confidence for s in steps) / len(steps) >= confidence
    if not (surer or any(s.sequence for s in steps[1:]) or all(_sure(s.route) for s in steps)):
        return ()
    return tuple(PlanStep(" ".join(s.texts), s.route.skill, s.route.confidence, s.route.decision) for s in steps)


def _sure(route: RouteResult) -> bool:
    """The clause names its skill outright: a confident route that no runner-up contests. A
    message whose every step is one such clause asks for those skills even when the whole
    message, with the words of every step, routes surer still (many catalogs have a skill
    that covers both halves loosely)."""
    runner_up = route.alternatives[0].score if route.alternatives else 0.0
    return route.confidence >= SURE_STEP_CONFIDENCE and runner_up <= SURE_STEP_RUNNER_UP


def _steps(clauses: Sequence[Clause], routes: Sequence[RouteResult]) -> list[_Step]:
    """Clauses grouped into steps: context joins the next step, same-skill neighbours merge."""
    steps: list[_Step] = []
    context: list[str] = []
    for clause, route in zip(clauses, routes, strict=True):
        bar = SENTENCE_STEP_CONFIDENCE if clause.sentence else STEP_CONFIDENCE
        if route.skill is None or route.confidence < bar:
            context.append(clause.text)
            continue
        if steps and steps[-1].route.skill is not None and steps[-1].route.skill.id == route.skill.id:
            previous = steps[-1]
            previous.texts.extend([*context, clause.text])
            if route.confidence > previous.route.confidence:
                previous.route = route
        else:
            steps.append(_Step([*context, clause.text], route, clause.sequence))
        context = []
    if context and steps:
        steps[-1].texts.extend(context)
    return steps


def as_plan(result: RouteResult) -> tuple[PlanStep, ...]:
    """``result.plan``, or the whole route as a plan of one step when the message is one step."""
    if result.plan:
        return result.plan
    return (PlanStep(result.query, result.skill, result.confidence, result.decision),)
