"""``find_skill``: the facade an agent tool calls to find a skill, in the marketplace and at home.

    tool layer (MCP ``find_skill``)  -> find_skill(intent, scope, filters)  -> plain dicts
    facade (this module)             -> retrievers run in parallel, merged by id
    retrievers                       -> "market": Market.search / Market.browse
                                        "installed": SkillPilot.search / SkillPilot.skills

Input: an intent (search mode) or none (list mode), which sources to ask, filters and a
``top_k``. Output: ``{"mode", "intent", "results": [...], "errors": [...]}`` where each result
is a public projection plus ``score``, ``sources``, ``installed`` and ``explanation`` (installed
results also carry ``path``: the user's own folder). Guarantees: a skill found by both sources
is one result (by id) whose score is the better of the two plus ``installed_boost``; a source
that fails is reported in ``errors`` while the others still answer; when every source fails
the first error is raised. Scores of the two sources are both on a 0-1 scale (market: the
profile's weighted sum; installed: the router's calibrated relevance).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields
from typing import Any, Literal

from ..errors import ConfigError, SkillPilotError
from ..router import SkillPilot
from .catalog import CATALOG_FILE, listing_of, read_catalog_file
from .search import Market, SearchFilters
from .views import public_projection

Source = Literal["market", "installed"]
SOURCES: tuple[Source, ...] = ("market", "installed")
DEFAULT_INSTALLED_BOOST = 0.1


def find_skill(
    intent: str | None = None,
    *,
    market: Market | None = None,
    installed: SkillPilot | None = None,
    scope: Sequence[Source] = SOURCES,
    top_k: int = 5,
    filters: SearchFilters | Mapping[str, Sequence[str]] | None = None,
    installed_boost: float = DEFAULT_INSTALLED_BOOST,
) -> dict[str, Any]:
    """Find skills for ``intent`` (or list them when it is empty) in the sources of ``scope``.

    ``filters`` is a ``SearchFilters`` or its fields as a mapping (a tool call's JSON:
    ``{"exclude_ids": [...], "categories": [...], "trust_tiers": [...]}``). A scope or filter that
    is not allowed raises ``ConfigError`` naming it."""
    unknown = sorted(set(scope) - set(SOURCES))
    if unknown or not scope:
        raise ConfigError("scope", f"name some of {', '.join(SOURCES)}, got {list(scope)}")
    mode = "search" if intent and intent.strip() else "list"
    filters = _filters(filters)
    retrievers: dict[str, Callable[[], list[dict[str, Any]]]] = {}
    query = intent if mode == "search" else None
    if "market" in scope and market is not None:
        retrievers["market"] = lambda: _from_market(market, query, top_k, filters)
    if "installed" in scope and installed is not None:
        retrievers["installed"] = lambda: _from_installed(installed, query, top_k, filters)
    if not retrievers:
        raise ConfigError("scope", "find_skill needs market= for scope 'market' or installed= for 'installed'")
    answers: dict[str, list[dict[str, Any]]] = {}
    errors: list[dict[str, str]] = []
    failures: list[SkillPilotError] = []
    with ThreadPoolExecutor(max_workers=len(retrievers)) as pool:
        futures = {name: pool.submit(call) for name, call in retrievers.items()}
        for name, future in futures.items():
            try:
                answers[name] = future.result()
            except SkillPilotError as exc:
                errors.append({"source": name, "error": str(exc)})
                failures.append(exc)
    if not answers:
        raise failures[0]
    return {"mode": mode, "intent": intent or "", "results": _merge(answers, top_k, installed_boost), "errors": errors}


def _filters(given: SearchFilters | Mapping[str, Sequence[str]] | None) -> SearchFilters:
    if given is None or isinstance(given, SearchFilters):
        return given or SearchFilters()
    allowed = {f.name for f in fields(SearchFilters)}
    if set(given) - allowed:
        raise ConfigError("filters", f"unknown filters {sorted(set(given) - allowed)}; use {sorted(allowed)}")
    return SearchFilters(**{name: tuple(values) for name, values in given.items()})


def _from_market(market: Market, intent: str | None, top_k: int, filters: SearchFilters) -> list[dict[str, Any]]:
    hits = market.search(intent, top_k, filters) if intent else market.browse(top_k, filters)
    return [{**hit.skill.to_dict(), "score": hit.score, "explanation": list(hit.explanation)} for hit in hits]


def _from_installed(pilot: SkillPilot, intent: str | None, top_k: int, filters: SearchFilters) -> list[dict[str, Any]]:
    catalog = read_catalog_file(pilot.settings.home / CATALOG_FILE)
    by_id = {s.id: s for s in pilot.skills()}
    listings = {s.id: listing_of(s, catalog, pilot.settings.trust_tiers) for s in by_id.values()}
    if intent:
        # Ask for as many more as the filters remove, so they never shorten the list.
        excluded = sum(1 for i, listing in listings.items() if not filters.admits(i, listing))
        found = [
            (by_id[h.id], h.score, f"installed: relevance {h.score:.2f} ({', '.join(map(str, h.matched_by))})")
            for h in pilot.search(intent, top_k=top_k + excluded)
        ]
    else:
        found = [(s, 0.0, "installed") for s in sorted(by_id.values(), key=lambda s: s.id)]
    results = []
    for skill, relevance, why in found:
        listing = listings[skill.id]
        if filters.admits(skill.id, listing):
            item = public_projection(skill, listing).to_dict()
            results.append({**item, "path": skill.skill.path, "score": relevance, "explanation": [why]})
    return results[:top_k]


def _merge(answers: dict[str, list[dict[str, Any]]], top_k: int, boost: float) -> list[dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for source in SOURCES:
        for item in answers.get(source, []):
            previous = merged.get(item["id"])
            if previous is None:
                merged[item["id"]] = {**item, "sources": [source]}
                continue
            previous["sources"].append(source)
            previous["explanation"] = previous["explanation"] + item["explanation"]
            if source == "installed":
                previous["path"] = item["path"]
            previous["score"] = max(previous["score"], item["score"])
    results = list(merged.values())
    for item in results:
        item["installed"] = "installed" in item["sources"]
        if item["installed"]:
            item["score"] = round(item["score"] + boost, 4)
            item["explanation"] = item["explanation"] + [f"installed: +{boost:g}"]
    results.sort(key=lambda r: (-r["score"], r["id"]))
    return results[:top_k]
