"""Enrich: an LLM the user already has writes example requests for the indexed skills, once.

Input: the indexed skills, the :class:`~skillpilot.examples.ExampleStore`, an
:class:`~skillpilot.enrich.writers.ExampleWriter` and :class:`EnrichOptions`. Output: an
:class:`EnrichReport` (what was written, turned down, failed or left for the next run, and the
tokens spent); the accepted sets are in the store.

What it does, in order:

1. picks the skills whose text has no examples yet (``force``: every one), one per distinct
   text; private skills only with ``include_private``, and never a skill that states its own
   requests (an OntoSkills skill's intents);
2. groups them ``batch_size`` to a request and writes each batch's prompt
   (:mod:`~skillpilot.enrich.prompt`), with its token count estimated (the bundled WordPiece
   tokenizer, ``skillpilot.tokens``, plus ``ANSWER_TOKENS_PER_REQUEST`` per asked request);
3. ``dry_run``: stops there, the prompts in the report;
4. sends up to ``concurrency`` batches at once, each with ``timeout`` seconds and ``retries``
   more tries when the writer fails or the answer is not JSON at all; a batch is sent only
   while the tokens spent (as the model reports them, else the estimate) plus those reserved by
   batches in flight stay within ``token_budget`` (0: no limit), else the run stops and says so;
5. stores each batch's accepted sets as it completes (one transaction per batch): a failed
   batch, a budget stop or Ctrl-C loses nothing that was done, and the next run picks up what is
   left (they still have no examples).

Guarantees: one skill's bad answer is that skill's rejection (with the reason), one batch's
failure is its skills' failure, never the run's; the writer's name, the prompt version and the
time are stored with every set; nothing is written into a skill's folder.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..errors import EnrichError
from ..examples import ExampleSet, ExampleStore, own_requests
from ..model import IndexedSkill
from .prompt import PROMPT_VERSION, RequestPlan, Verdict, batch_prompt, read_answer, system_prompt
from .writers import ExampleWriter

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
ANSWER_TOKENS_PER_REQUEST = 40
# Waits before the 2nd, 3rd ... try of a failed batch (seconds; the last one repeats).
RETRY_WAITS = (1.0, 4.0, 10.0)


@dataclass(frozen=True)
class EnrichOptions:
    """How a run asks: languages (codes), requests per skill, skills per request, requests at
    once, seconds and extra tries per request, the token budget (0: none), and which skills.
    The numbers have no defaults here: they are the ``enrich.*`` settings (``config.Settings``)."""

    languages: tuple[str, ...]
    per_skill: int
    batch_size: int
    concurrency: int
    timeout: float
    retries: int
    token_budget: int
    include_private: bool = False
    force: bool = False

    @property
    def plan(self) -> RequestPlan:
        return RequestPlan.of(self.languages, self.per_skill)


@dataclass(frozen=True)
class Batch:
    """One request's skills (ids), the exact prompt sent and its estimated tokens."""

    skills: tuple[str, ...]
    prompt: str
    estimated_tokens: int


@dataclass(frozen=True)
class EnrichReport:
    """What a run did. ``written``: skill ids now with examples; ``rejected`` / ``failed``:
    (id, reason); ``left``: ids not sent (budget, interruption); ``private``: ids left out as
    private; ``had_examples``: skills that needed none; ``stopped``: why the run ended early."""

    writer: str
    plan: RequestPlan
    system: str
    batches: tuple[Batch, ...]
    dry_run: bool = False
    written: tuple[str, ...] = ()
    rejected: tuple[tuple[str, str], ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    left: tuple[str, ...] = ()
    private: tuple[str, ...] = ()
    had_examples: int = 0
    tokens: int = 0
    stopped: str = ""

    @property
    def estimated_tokens(self) -> int:
        return sum(b.estimated_tokens for b in self.batches)

    def to_dict(self, prompts: bool = False) -> dict[str, object]:
        return {
            "writer": self.writer,
            "prompt_version": PROMPT_VERSION,
            "languages": dict(self.plan.counts),
            "dry_run": self.dry_run,
            "batches": [
                {
                    "skills": list(b.skills),
                    "estimated_tokens": b.estimated_tokens,
                    **({"prompt": b.prompt} if prompts else {}),
                }
                for b in self.batches
            ],
            **({"system": self.system} if prompts else {}),
            "estimated_tokens": self.estimated_tokens,
            "tokens": self.tokens,
            "written": list(self.written),
            "rejected": [{"skill": s, "reason": r} for s, r in self.rejected],
            "failed": [{"skill": s, "reason": r} for s, r in self.failed],
            "left": list(self.left),
            "private": list(self.private),
            "had_examples": self.had_examples,
            "stopped": self.stopped,
        }


@dataclass
class _Outcome:
    written: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    tokens: int = 0


def to_enrich(
    skills: Sequence[IndexedSkill], stored: Mapping[str, ExampleSet], options: EnrichOptions
) -> tuple[list[IndexedSkill], list[str], int]:
    """The skills a run writes for (one per distinct text, catalog order), the private ones left
    out, and how many need none (they have examples in ``stored``, by content hash, or state
    their own requests)."""
    chosen: dict[str, IndexedSkill] = {}
    private: list[str] = []
    had = 0
    for skill in skills:
        text = skill.skill.content_hash
        if own_requests(skill.skill) or (text in stored and not options.force):
            had += 1
        elif skill.skill.private and not options.include_private:
            private.append(skill.id)
        else:
            chosen.setdefault(text, skill)
    return list(chosen.values()), private, had


def plan_batches(skills: Sequence[IndexedSkill], options: EnrichOptions, count: Callable[[str], int]) -> list[Batch]:
    """The requests a run sends, in order, with their prompts and estimated tokens."""
    plan = options.plan
    system = system_prompt()
    batches = []
    for start in range(0, len(skills), options.batch_size):
        chunk = skills[start : start + options.batch_size]
        prompt = batch_prompt([s.skill for s in chunk], plan)
        estimate = count(system) + count(prompt) + ANSWER_TOKENS_PER_REQUEST * plan.total * len(chunk)
        batches.append(Batch(tuple(s.id for s in chunk), prompt, estimate))
    return batches


@dataclass(frozen=True)
class _Answer:
    """What became of one batch: the verdict per skill (None: it failed, ``problem`` says why)
    and the tokens its tries cost."""

    verdicts: tuple[Verdict, ...] | None
    problem: str
    tokens: int


def enrich(
    skills: Sequence[IndexedSkill],
    store: ExampleStore | None,
    writer: ExampleWriter,
    options: EnrichOptions,
    *,
    count: Callable[[str], int],
    dry_run: bool = False,
    progress: Progress | None = None,
) -> EnrichReport:
    """Write example requests for ``skills`` with ``writer`` into ``store`` (see the module
    docstring); a dry run needs no store (None: a home without examples yet)."""
    stored = store.get(s.skill.content_hash for s in skills) if store is not None else {}
    todo, private, had = to_enrich(skills, stored, options)
    batches = plan_batches(todo, options, count)
    report = EnrichReport(
        writer.name, options.plan, system_prompt(), tuple(batches), dry_run, private=tuple(private), had_examples=had
    )
    if dry_run or not batches:
        return report
    if store is None:
        raise ValueError("enrich needs an examples store unless it is a dry run")
    by_id = {s.id: s for s in todo}
    outcome = _Outcome()
    stopped = ""
    label = f"writing examples with {writer.name}"
    if progress:
        progress(label, 0, len(todo))
    # Daemon threads, not an executor: after Ctrl-C the process must not wait for a request in
    # flight to time out (a CLI child gets the same Ctrl-C; an HTTP request is abandoned).
    answers: queue.SimpleQueue[tuple[Batch, _Answer]] = queue.SimpleQueue()
    in_flight: list[Batch] = []
    waiting = list(batches)
    try:
        while waiting or in_flight:
            while waiting and len(in_flight) < options.concurrency:
                committed = outcome.tokens + sum(b.estimated_tokens for b in in_flight)
                if options.token_budget and committed + waiting[0].estimated_tokens > options.token_budget:
                    break
                batch = waiting.pop(0)
                in_flight.append(batch)
                threading.Thread(
                    target=lambda b=batch: answers.put((b, _ask(writer, b, options))),
                    name="skillpilot-enrich",
                    daemon=True,
                ).start()
            if not in_flight:
                stopped = f"token budget reached ({outcome.tokens} of {options.token_budget} spent)"
                break
            batch, answer = answers.get()
            in_flight.remove(batch)
            _record(batch, answer, by_id, store, writer.name, outcome)
            if progress:
                progress(label, len(outcome.written) + len(outcome.rejected) + len(outcome.failed), len(todo))
    except KeyboardInterrupt:
        stopped = "interrupted"
    return replace(
        report,
        written=tuple(outcome.written),
        rejected=tuple(outcome.rejected),
        failed=tuple(outcome.failed),
        left=tuple(skill for batch in (*in_flight, *waiting) for skill in batch.skills),
        tokens=outcome.tokens,
        stopped=stopped,
    )


def _ask(writer: ExampleWriter, batch: Batch, options: EnrichOptions) -> _Answer:
    """One batch, tried up to ``1 + retries`` times while the writer fails or the answer is no
    JSON object of request lists at all."""
    problem = ""
    tokens = 0
    for attempt in range(options.retries + 1):
        if attempt:
            time.sleep(RETRY_WAITS[min(attempt, len(RETRY_WAITS)) - 1])
        try:
            completion = writer.write(system_prompt(), batch.prompt, options.timeout)
        except EnrichError as exc:
            problem = str(exc)
            log.info("batch %s, try %d: %s", ", ".join(batch.skills), attempt + 1, problem)
            continue
        tokens += completion.tokens if completion.tokens is not None else batch.estimated_tokens
        verdicts = read_answer(completion.text, len(batch.skills), options.plan)
        if any(v.accepted for v in verdicts) or len({v.reason for v in verdicts}) > 1:
            return _Answer(tuple(verdicts), "", tokens)
        problem = verdicts[0].reason
    return _Answer(None, problem, tokens)


def _record(
    batch: Batch, answer: _Answer, by_id: dict[str, IndexedSkill], store: ExampleStore, writer: str, outcome: _Outcome
) -> None:
    """Count one batch's answer and store its accepted sets (one transaction)."""
    outcome.tokens += answer.tokens
    if answer.verdicts is None:
        outcome.failed.extend((skill, answer.problem) for skill in batch.skills)
        return
    now = time.time()
    accepted = []
    for skill_id, verdict in zip(batch.skills, answer.verdicts, strict=True):
        if not verdict.accepted:
            outcome.rejected.append((skill_id, verdict.reason))
            continue
        skill = by_id[skill_id].skill
        accepted.append(
            ExampleSet(skill.content_hash, skill.key, skill.name, verdict.requests, writer, PROMPT_VERSION, now, "llm")
        )
        outcome.written.append(skill_id)
    store.put(accepted)


__all__ = ["Batch", "EnrichOptions", "EnrichReport", "enrich", "plan_batches", "to_enrich"]
