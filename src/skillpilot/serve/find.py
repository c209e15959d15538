"""``find_skill`` and the argument checks shared by the MCP tools and the HTTP routes.

    find_skill(pilot, market, intent, scope, top_k, filters) -> {"mode", "scope", "results", ...}

``scope`` ``installed`` answers from this machine's index: ``mode`` ``list`` (no intent: every
skill by id, with ``total``) or ``search`` (the router's ``search``); each result is the skill's
public projection (seed 001: what it is for, never its instructions) with ``score`` and
``matched_by`` when searched. ``market`` and ``all`` answer through
:func:`skillpilot.market.find_skill` (the marketplace, or both merged by id). ``filters``:
``exclude_ids``, ``trust_tiers``, ``side_effects`` (lists of strings); a filter never shortens
the list, more is asked for as it removes.

Bad arguments raise :class:`InvalidArgument` naming the argument (and the allowed values), which
the MCP server answers as an ``invalid_argument`` error result and HTTP as a 422.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..catalog import trust_tier as catalog_trust_tier
from ..market import Market
from ..market import find_skill as market_find_skill
from ..model import SIDE_EFFECTS, TRUST_TIERS, IndexedSkill, RetrieverId
from ..router import SkillPilot
from .limits import MAX_MESSAGE_CHARS, MAX_TOP_K, MIN_TOP_K

SCOPES = ("all", "installed", "market")
MATCHED_BY = ("keyword", "semantic", "hybrid")
FILTERS = {"exclude_ids": None, "trust_tiers": TRUST_TIERS, "side_effects": SIDE_EFFECTS}
# find_skill scopes as the market facade's sources.
MARKET_SOURCES: dict[str, tuple[Any, ...]] = {"all": ("market", "installed"), "market": ("market",)}


class InvalidArgument(ValueError):
    """A tool or route argument that is not allowed: which one, why, and what is."""

    def __init__(self, argument: str, message: str, allowed: tuple[str, ...] | None = None) -> None:
        super().__init__(message)
        self.argument = argument
        self.allowed = allowed


def check_top_k(value: int, argument: str = "top_k") -> int:
    if not MIN_TOP_K <= value <= MAX_TOP_K:
        raise InvalidArgument(argument, f"{argument} must be between {MIN_TOP_K} and {MAX_TOP_K}, got {value}")
    return value


def check_query(argument: str, value: str, allow_empty: bool = False) -> str:
    if len(value) > MAX_MESSAGE_CHARS:
        raise InvalidArgument(argument, f"{argument} is {len(value)} characters; the limit is {MAX_MESSAGE_CHARS}")
    if not allow_empty and not value.strip():
        raise InvalidArgument(argument, f"{argument} must not be empty")
    return value


def find_skill(
    pilot: SkillPilot, market: Market, intent: str, scope: str, top_k: int, filters: Mapping[str, Any]
) -> dict[str, Any]:
    """Skills for ``intent`` (none: list them) in ``scope``, filtered; see the module docstring."""
    check_query("intent", intent, allow_empty=True)
    check_top_k(top_k)
    if scope not in SCOPES:
        raise InvalidArgument("scope", f"scope must be one of {', '.join(SCOPES)}, got {scope!r}", SCOPES)
    keep = _filter(pilot, filters)
    skills = pilot.skills()
    if scope in MARKET_SOURCES:
        return _from_market(pilot, market, intent, scope, top_k, filters, keep)
    excluded = sum(1 for s in skills if not keep(s))
    if not intent.strip():
        listed = sorted((s for s in skills if keep(s)), key=lambda s: s.id)
        data: dict[str, Any] = {
            "mode": "list",
            "scope": scope,
            "total": len(listed),
            "results": [_public(pilot, s, None, ()) for s in listed[:top_k]],
        }
    else:
        by_id = {s.id: s for s in skills}
        # Ask for as many more as the filters can remove, so the filters never shorten the list.
        hits = pilot.search(intent, top_k=top_k + excluded) if skills else []
        kept = [(h, by_id[h.id]) for h in hits if keep(by_id[h.id])][:top_k]
        data = {
            "mode": "search",
            "scope": scope,
            "intent": intent,
            "results": [_public(pilot, s, h.score, h.matched_by) for h, s in kept],
        }
    return data


def _from_market(
    pilot: SkillPilot,
    market: Market,
    intent: str,
    scope: str,
    top_k: int,
    filters: Mapping[str, Any],
    keep: Callable[[IndexedSkill], bool],
) -> dict[str, Any]:
    """``skillpilot.market.find_skill`` for scope market or all; the facade filters by id and
    tier, side effects (which the public projection does not carry) are filtered here."""
    by_id = {s.id: s for s in pilot.skills()}
    # Ask for as many more as the side-effect filter can remove, so it never shortens the list.
    extra = sum(1 for s in by_id.values() if not keep(s)) if "side_effects" in filters else 0
    answer = market_find_skill(
        intent,
        market=market,
        installed=pilot,
        scope=MARKET_SOURCES[scope],
        top_k=top_k + extra,
        filters={k: v for k, v in filters.items() if k != "side_effects"},
    )
    results = [r for r in answer["results"] if r["id"] not in by_id or keep(by_id[r["id"]])][:top_k]
    return {**answer, "scope": scope, "results": results}


def _filter(pilot: SkillPilot, filters: Mapping[str, Any]) -> Callable[[IndexedSkill], bool]:
    unknown = sorted(set(filters) - set(FILTERS))
    if unknown:
        raise InvalidArgument("filters", f"unknown filter {', '.join(unknown)}", tuple(FILTERS))
    chosen: dict[str, set[str]] = {}
    for name, value in filters.items():
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InvalidArgument(f"filters.{name}", f"filters.{name} must be a list of strings")
        allowed = FILTERS[name]
        if allowed is not None and (bad := sorted(set(value) - set(allowed))):
            raise InvalidArgument(
                f"filters.{name}",
                f"filters.{name}: {', '.join(bad)} is not one of {', '.join(allowed)}",
                tuple(allowed),
            )
        chosen[name] = set(value)

    def keep(skill: IndexedSkill) -> bool:
        return (
            skill.id not in chosen.get("exclude_ids", set())
            and ("trust_tiers" not in chosen or trust_tier(pilot, skill) in chosen["trust_tiers"])
            and ("side_effects" not in chosen or skill.fingerprint.side_effects in chosen["side_effects"])
        )

    return keep


def _public(
    pilot: SkillPilot, skill: IndexedSkill, score: float | None, retrievers: tuple[RetrieverId, ...]
) -> dict[str, Any]:
    """A skill's public projection (seed 001): what it is for, never its instructions."""
    result: dict[str, Any] = {
        "id": skill.id,
        "name": skill.name,
        "description": skill.skill.description,
        "source": "installed",
        "trust_tier": trust_tier(pilot, skill),
        "side_effects": skill.fingerprint.side_effects,
        "path": skill.skill.path,
    }
    if score is not None:
        result["score"] = score
        result["matched_by"] = matched_by(retrievers)
    return result


def trust_tier(pilot: SkillPilot, skill: IndexedSkill) -> str:
    """``skill``'s tier by the one rule (``catalog.trust_tier``: the ``trustTiers`` config first)."""
    return catalog_trust_tier(skill, pilot.settings.trust_tiers)


def matched_by(retrievers: tuple[RetrieverId, ...]) -> str:
    """OntoSkills' one word for what matched (:data:`MATCHED_BY`): ``keyword``, ``semantic`` or
    both (``hybrid``)."""
    meaning = any(r.is_dense for r in retrievers)
    keyword = any(not r.is_dense for r in retrievers)
    return "hybrid" if keyword and meaning else "semantic" if meaning else "keyword"
