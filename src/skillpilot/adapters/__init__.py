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

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..decide import SHORTLIST_SCORE
from ..model import RouteResult, SkillRef
from ..text import one_line_text

__all__ = ["MAX_CONTEXT_CHARS", "ActionType", "AdapterAction", "action_for", "footer_for", "in_library"]

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
    verb: str = "invoke",
) -> AdapterAction:
    """The action for ``result``. A soft context is a shortlist: the top skill and the
    runners-up whose own score reaches ``shortlist_score`` (``decide.SHORTLIST_SCORE``: chosen
    so the shortlist holds the right skill as often as the top three do); ``via`` names the tool
    that invokes a skill and ``verb`` what the model does with it ("activate" for Gemini CLI's
    activate_skill). A skill
    under one of ``library_roots`` is one the agent does not know, so the context tells the model
    to read its SKILL.md instead of invoking it."""
    skill = result.skill
    if skill is None or result.decision == "passthrough":
        return AdapterAction("passthrough")
    name = _code(skill.name)
    with_tool = f" with {via}" if via else ""
    if in_library(skill.path, library_roots):
        return _library_action(result, skill)
    description = _line(skill.description, MAX_DESCRIPTION_CHARS)
    why = _why(result)
    if result.decision == "hard":
        lines = [
            f"SkillPilot routed this prompt to the skill {name} (confidence {result.confidence:.2f}).",
            f"Before anything else, {verb} the skill {name}{with_tool}, then follow its instructions.",
            f"Skill: {description}",
            f"Path: {_line(skill.path)}",
        ]
        if why:
            lines.append(f"Why: {why}")
        return AdapterAction("route", skill, result.confidence, _clip("\n".join(lines), MAX_CONTEXT_CHARS), (skill.id,))
    runners_up = [a for a in result.alternatives if a.score >= shortlist_score][: MAX_SOFT_CANDIDATES - 1]
    lines = [
        f"SkillPilot: the skill {name} may fit this prompt (confidence {result.confidence:.2f}).",
        f"Skill: {description}",
        f"Path: {_line(skill.path)}",
    ]
    lines.extend(f"Also consider {_code(a.id)} (score {a.score:.2f}), path {_line(a.path)}" for a in runners_up)
    which = "one of them fits" if runners_up else "it fits"
    lines.append(f"If {which} the request, {verb} it{with_tool}; otherwise answer as usual.")
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


def _library_action(result: RouteResult, skill: SkillRef) -> AdapterAction:
    skill_md = _line(str(Path(skill.path) / "SKILL.md" if Path(skill.path).is_dir() else Path(skill.path)))
    name = _code(skill.name)
    if result.decision == "hard":
        lead = f"SkillPilot routed this prompt to the skill {name} (confidence {result.confidence:.2f})."
        order = f"Before anything else, read {skill_md} and follow its instructions."
    else:
        lead = f"SkillPilot: the skill {name} may fit this prompt (confidence {result.confidence:.2f})."
        order = f"If it fits the request, read {skill_md} and follow its instructions; otherwise answer as usual."
    lines = [lead, order, f"Skill: {_line(skill.description, MAX_DESCRIPTION_CHARS)}"]
    why = _why(result)
    if why:
        lines.append(f"Why: {why}")
    kind: ActionType = "route" if result.decision == "hard" else "inject"
    return AdapterAction(kind, skill, result.confidence, _clip("\n".join(lines), MAX_CONTEXT_CHARS), (skill.id,))


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
