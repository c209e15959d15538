"""``find_skill`` and the argument checks shared by the MCP tools and the HTTP routes.

    find_skill(pilot, market, intent, scope, top_k, filters) -> {"mode", "scope", "results", ...}

Every scope answers through :func:`skillpilot.market.find_skill`: ``installed`` from this
machine's index, ``market`` from the marketplace, ``all`` both merged by id; ``mode`` ``list``
(no intent) or ``search``. Each result is a public projection (seed 001: what the skill is for,
never its instructions) with ``score``, ``sources`` and ``explanation``; installed results add
their ``path`` and ``side_effects``, and an installed list its ``total``. ``filters``:
``exclude_ids``, ``trust_tiers``, ``side_effects`` (lists of strings); a filter never shortens
the list, more is asked for as it removes.

Bad arguments raise :class:`InvalidArgument` naming the argument (and the allowed values), which
the MCP server answers as an ``invalid_argument`` error result and HTTP as a 422.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..limits import MAX_MESSAGE_CHARS, MAX_TOP_K, MIN_TOP_K
from ..model import SIDE_EFFECTS, TRUST_TIERS, IndexedSkill, RetrieverId

if TYPE_CHECKING:
    # The MCP server imports this module before it answers ``initialize``; the marketplace and
    # the router load with the first call.
    from ..market import Market
    from ..market.find import Source
    from ..router import SkillPilot

SCOPES = ("all", "installed", "market")
MATCHED_BY = ("keyword", "semantic", "hybrid")
FILTERS = {"exclude_ids": None, "trust_tiers": TRUST_TIERS, "side_effects": SIDE_EFFECTS}
# find_skill scopes as the market facade's sources.
MARKET_SOURCES: dict[str, tuple[Source, ...]] = {
    "all": ("market", "installed"),
    "installed": ("installed",),
    "market": ("market",),
}


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
    from ..market import find_skill as market_find_skill

    check_query("intent", intent, allow_empty=True)
    check_top_k(top_k)
    if scope not in SCOPES:
        raise InvalidArgument("scope", f"scope must be one of {', '.join(SCOPES)}, got {scope!r}", SCOPES)
    keep = _side_effects(filters)
    by_id = {s.id: s for s in pilot.skills()}
    # An installed list is asked for whole, to count it; otherwise for as many more as the
    # side-effect filter can remove (the market facade applies the others), so that filter
    # never shortens the list.
    listing = scope == "installed" and not intent.strip()
    removed = sum(1 for s in by_id.values() if not keep(s))
    answer = market_find_skill(
        intent,
        market=market,
        installed=pilot,
        scope=MARKET_SOURCES[scope],
        top_k=len(by_id) if listing else top_k + removed,
        filters={k: v for k, v in filters.items() if k != "side_effects"},
    )
    kept = [
        {**r, "side_effects": by_id[r["id"]].fingerprint.side_effects} if r["installed"] else r
        for r in answer["results"]
        if r["id"] not in by_id or keep(by_id[r["id"]])
    ]
    data = {**answer, "scope": scope, "results": kept[:top_k]}
    if listing:
        data["total"] = len(kept)
    return data


def _side_effects(filters: Mapping[str, Any]) -> Callable[[IndexedSkill], bool]:
    """Whether an installed skill passes ``filters.side_effects``, once every filter is checked
    (the market facade applies ``exclude_ids`` and ``trust_tiers`` itself)."""
    unknown = sorted(set(filters) - set(FILTERS))
    if unknown:
        raise InvalidArgument("filters", f"unknown filter {', '.join(unknown)}", tuple(FILTERS))
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
    wanted = set(filters.get("side_effects", SIDE_EFFECTS))
    return lambda skill: skill.fingerprint.side_effects in wanted


def matched_by(retrievers: tuple[RetrieverId, ...]) -> str:
    """OntoSkills' one word for what matched (:data:`MATCHED_BY`): ``keyword``, ``semantic`` or
    both (``hybrid``)."""
    meaning = any(r.is_dense for r in retrievers)
    keyword = any(not r.is_dense for r in retrievers)
    return "hybrid" if keyword and meaning else "semantic" if meaning else "keyword"
