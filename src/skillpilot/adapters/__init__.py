"""The contract every agent adapter shares: a ``RouteResult`` in, one ``AdapterAction`` out.

The spec's ``AdapterAction`` (section 6) has three kinds:

    route        a hard decision: the agent should invoke ``skill`` before anything else
    inject       a soft decision: offer ``skill`` (and close runners-up) to the model
    passthrough  no skill fits well enough: leave the model alone

``action_for`` makes that choice from the router's decision and writes the short context an
adapter puts in front of the model. Adapters differ only in the tool a skill is invoked with
(Claude Code: "your Skill tool"), which they pass in as ``via``, and the verb for it (``verb``).

Guarantees: a pass-through has no skill and an empty context; a context never exceeds
``MAX_CONTEXT_CHARS`` (Claude Code's limit for a hook's ``additionalContext``). What a skill's
files say (its name, description, path, triggers quoted in the reasons) is untrusted text: in a
context each is one line (line breaks and control characters become spaces), and a name is one
code span (a backtick in it becomes ``'``), so no skill can add a line or an instruction of its
own to what SkillPilot tells the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..decide import SHORTLIST_SCORE
from ..model import RouteResult, SkillRef
from ..text import one_line_text

__all__ = ["MAX_CONTEXT_CHARS", "ActionType", "AdapterAction", "action_for", "footer_for", "in_library", "skill_md"]

ActionType = Literal["route", "inject", "passthrough"]
MAX_CONTEXT_CHARS = 10_000
# A soft context names the top skill and the runners-up the model might prefer; more than three
# names stops being short.
MAX_SOFT_CANDIDATES = 3
# Long descriptions are the model's to read in the skill itself; the context only has to identify it.
MAX_DESCRIPTION_CHARS = 400
MAX_REASONS = 3


@dataclass(frozen=True)
class AdapterAction:
    """What an adapter does with one message. ``candidates`` are skill ids, best first."""

    type: ActionType
    skill: SkillRef | None = None
    confidence: float = 0.0
    context: str = ""
    candidates: tuple[str, ...] = ()


def action_for(
    result: RouteResult,
    shortlist_score: float = SHORTLIST_SCORE,
    via: str | None = None,
    library_roots: tuple[str, ...] = (),
    copies: Sequence[Sequence[str]] = (),
    verb: str = "invoke",
) -> AdapterAction:
    """The action for ``result``. A soft context is a shortlist: the router's pick, then the
    first two runners-up whose own confidence (each as if it were the pick) reaches
    ``shortlist_score`` (``decide.SHORTLIST_SCORE``: chosen so the shortlist holds the right skill
    as often as the top three do), shown the most confident first; every number is the confidence as the result gives
    it. ``via`` names the tool that invokes a skill and ``verb`` what the model does with it
    ("activate" for Gemini CLI's activate_skill); with none (LangChain, OpenClaw: no Skill
    tool), and for a skill under one of ``library_roots`` (one the agent does not know), the
    context tells the model to read the skill's SKILL.md instead of invoking it.

    Library mode (the pick under ``library_roots``): the host lists none of those skills, so a
    pass-through would leave the model unaware of them. When two or more of the top five are
    copies of one another (``copies``: groups of ids, ``market.copies_among``) and one of them
    reaches ``shortlist_score`` by itself, copies split the router's confidence between them, so
    the pass-through is a shortlist instead: the pick and the copies first, then runners-up as
    above, at most three, each with its SKILL.md."""
    skill = result.skill
    if skill is None:
        return AdapterAction("passthrough")
    confidence_of = {skill.id: result.confidence, **{a.id: a.score for a in result.alternatives[:4]}}
    top_five = list(confidence_of)
    group_of = {i: n for n, group in enumerate(copies) for i in group}
    shown = [group_of.get(i) for i in top_five]
    # A group counts when one of its copies would qualify for a shortlist by itself: copies of a
    # skill nothing points to (small talk at 1,000 skills with forks) stay a pass-through.
    strong = {group_of[i] for i in top_five if i in group_of and confidence_of[i] >= shortlist_score}
    copied = {i for i, group in zip(top_five, shown, strict=True) if group in strong and shown.count(group) >= 2}
    in_library_mode = in_library(skill.path, library_roots)
    if result.decision == "passthrough" and not (in_library_mode and copied):
        return AdapterAction("passthrough")
    name = _code(skill.name)
    read = via is None or in_library_mode
    path = _line(str(skill_md(skill.path)) if read else skill.path)
    use = f"read {path} and follow its instructions" if read else f"{verb} it with {via}"
    lines = [f"Skill: {_line(skill.description, MAX_DESCRIPTION_CHARS)}", f"Path: {path}"]
    why = _why(result)
    confidence = _number(result.confidence)
    if result.decision == "hard":
        order = (
            f"Before anything else, read {path} and follow its instructions."
            if read
            else f"Before anything else, {verb} the skill {name} with {via}, then follow its instructions."
        )
        lines = [f"SkillPilot routed this prompt to the skill {name} (confidence {confidence}).", order, *lines]
        if why:
            lines.append(f"Why: {why}")
        return AdapterAction("route", skill, result.confidence, _clip("\n".join(lines), MAX_CONTEXT_CHARS), (skill.id,))
    # Which runners-up: the first to qualify in the router's order (the set the shortlist score
    # was calibrated on), the pick's copies before them in library mode; shown most confident first.
    qualifying = [a for a in result.alternatives if a.score >= shortlist_score]
    first = [a for a in result.alternatives if a.id in copied] if in_library_mode else []
    chosen = list(dict.fromkeys([*first, *qualifying]))[: MAX_SOFT_CANDIDATES - 1]
    runners_up = sorted(chosen, key=lambda a: -a.score)
    lines.insert(0, f"SkillPilot: the skill {name} may fit this prompt (confidence {confidence}).")
    reads = [read or in_library(runner.path, library_roots) for runner in runners_up]
    for runner, by_path in zip(runners_up, reads, strict=True):
        where = _line(str(skill_md(runner.path)) if by_path else runner.path)
        same = runner.id in copied and group_of.get(runner.id) == group_of.get(skill.id)
        copy = f", a copy of {_code(skill.id)}" if same else ""
        lines.append(f"Also consider {_code(runner.id)} (confidence {_number(runner.score)}{copy}), {where}")
    if not runners_up:
        lines.append(f"If it fits the request, {use}; otherwise answer as usual.")
    elif read:
        lines.append(
            "If one of them fits the request, read its SKILL.md and follow its instructions; otherwise answer as usual."
        )
    else:
        also = ", or read the SKILL.md named for it" if any(reads) else ""
        lines.append(f"If one of them fits the request, {verb} it with {via}{also}; otherwise answer as usual.")
    return AdapterAction(
        "inject",
        skill,
        result.confidence,
        _clip("\n".join(lines), MAX_CONTEXT_CHARS),
        (skill.id, *(a.id for a in runners_up)),
    )


def in_library(path: str, library_roots: tuple[str, ...]) -> bool:
    """Whether the skill at ``path`` lies under one of ``library_roots`` (``~`` expanded)."""
    resolved = Path(path).expanduser().resolve()
    return any(resolved.is_relative_to(Path(root).expanduser().resolve()) for root in library_roots)


def skill_md(path: str) -> Path:
    """The file a model reads to use the skill at ``path`` (a skill folder's SKILL.md)."""
    folder = Path(path)
    try:
        is_folder = folder.is_dir()
    except OSError:  # a path the system cannot look up (too long) names no folder
        is_folder = False
    return folder / "SKILL.md" if is_folder else folder


def _number(value: float) -> str:
    """A confidence as the result gives it (rounded to 4 decimals, no trailing zeros): a context
    that says 0.80 for 0.7963 tells the model more than the router knows."""
    return f"{round(value, 4):g}"


def footer_for(result: RouteResult, show_routing_info: bool, show_conflict_info: bool) -> str:
    """The spec's optional reply footers (section 6.1) for a hard route: which skill answered
    (``platforms.openclaw.showRoutingInfo``) and which overlapping skills it was chosen over
    (``showConflictInfo``). Empty when neither applies."""
    if result.skill is None or result.decision != "hard":
        return ""
    lines: list[str] = []
    if show_conflict_info and result.conflict_resolved and result.conflict_alternatives:
        others = ", ".join(_line(a) for a in result.conflict_alternatives)
        lines.append(f"_SkillPilot: chose {_code(result.skill.name)} over [{others}]_")
    if show_routing_info:
        lines.append(f"_via {_line(result.skill.name)} · {result.latency_ms:.0f}ms_")
    return "\n".join(lines)


def _line(text: str, limit: int | None = None) -> str:
    """Untrusted text as one line of a context, clipped to ``limit`` characters."""
    line = one_line_text(text)
    return line if limit is None else _clip(line, limit)


def _code(name: str) -> str:
    """A skill name or id as one inline code span that nothing in the name can close early."""
    return "`" + _line(name).replace("`", "'") + "`"


def _why(result: RouteResult) -> str:
    return _line("; ".join(result.reasons[:MAX_REASONS]))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
