"""Marketplace facts about a skill beyond its instructions, and the weights that rank by them.

Input: a skill's frontmatter ``metadata`` block and, optionally, a catalog metadata file
(``$SKILLPILOT_HOME/market.yaml`` by default, YAML or JSON). Output: one :class:`Listing` per
skill and the two weight profiles (:data:`SEARCH`, :data:`RELATED`), file values over
defaults.

Frontmatter (inside ``metadata:``) and file entries use the same keys::

    categories: [images, design]          # or "images, design"
    public_capabilities: [image-understanding]   # also public_tools: declared, never scraped
    quality: 0.8                          # 0-1, e.g. a review score
    installs: 1200                        # popularity
    updated: 2025-06-01                   # ISO date or epoch seconds: recency
    forked_from: other-skill              # explicit lineage: wins over text similarity
    version_of: other-skill

The file adds ``private: true`` and ``trust_tier: official`` per skill, and weights::

    weights:
      search:  {relevance: 0.75, quality: 0.08, popularity: 0.1, recency: 0.04, trust: 0.03,
                min_similarity: 0.25}
      related: {relevance: 0.85, category: 0.05, min_similarity: 0.55, mmr_lambda: 0.7, standout: 3,
                standout_first: 2.5}
    skills:
      <skill id, folder key or name>: {categories: [...], installs: 10, private: true}

Guarantees: a file entry overrides the frontmatter field by field, except ``private``, which is
true when either says so (a catalog can hide a body, never expose one). A malformed file or
value raises ``ConfigError`` naming the file and key; a malformed frontmatter value is ignored
with a warning (it never costs the skill).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

from ..catalog import trust_tier
from ..errors import ConfigError
from ..model import TRUST_TIERS, IndexedSkill, Skill, TrustTier

log = logging.getLogger(__name__)

CATALOG_FILE = "market.yaml"
# How much each trust tier is worth on the 0-1 trust signal (an official publisher's skill is the
# safe pick; an unreviewed community upload the least).
TRUST_VALUES: dict[str, float] = {"official": 1.0, "verified": 0.7, "local": 0.5, "community": 0.3}
# A skill without a declared quality is neither promoted nor demoted by it.
NEUTRAL_QUALITY = 0.5
SIGNALS = ("relevance", "quality", "popularity", "recency", "trust", "category")


@dataclass(frozen=True)
class Listing:
    """What the marketplace knows about one skill besides its text (all public)."""

    categories: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()
    quality: float | None = None
    installs: int | None = None
    updated: float | None = None
    trust_tier: TrustTier = "local"
    private: bool = False
    forked_from: str | None = None
    version_of: str | None = None


@dataclass(frozen=True)
class Profile:
    """One ranking recipe: signal weights (the final score is their weighted sum of 0-1 signals),
    the candidate pool, the relevance floor and, for related lists, MMR's lambda."""

    name: str
    relevance: float
    quality: float
    popularity: float
    recency: float
    trust: float
    category: float
    # Mean cosine (over encoders) of public vectors below which a candidate is filler, not a result.
    min_similarity: float
    # Related lists: a neighbour below min_similarity still counts when its similarity stands this
    # many standard deviations above the page's mean similarity to the catalog (``standout_first``
    # for the nearest one), and is at least half min_similarity: a skill in a sparse corner has
    # good neighbours that look far in absolute terms, and one in a crowded corner gets no filler.
    standout: float = 3.0
    standout_first: float = 2.5
    pool: int = 50
    mmr_lambda: float = 0.7
    recency_half_life_days: float = 180.0

    def weight(self, signal: str) -> float:
        return float(getattr(self, signal))


# A search page lets popular, trusted, fresh skills climb a few places; relevance still leads.
SEARCH = Profile(
    "search", relevance=0.75, quality=0.08, popularity=0.1, recency=0.04, trust=0.03, category=0.0, min_similarity=0.25
)
# A detail page's related list is about meaning: popularity must not bury a better match, and a
# shared category is only a light bonus.
RELATED = Profile(
    "related",
    relevance=0.85,
    quality=0.05,
    popularity=0.03,
    recency=0.02,
    trust=0.0,
    category=0.05,
    min_similarity=0.55,
)
_PROFILE_KEYS = {f.name for f in fields(Profile)} - {"name"}


@dataclass(frozen=True)
class CatalogFile:
    """A parsed catalog metadata file: per-skill overrides and the weight profiles."""

    path: Path | None = None
    entries: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    profiles: Mapping[str, Profile] = field(default_factory=lambda: {"search": SEARCH, "related": RELATED})

    def profile(self, name: str) -> Profile:
        return self.profiles[name]

    def entry_for(self, skill: IndexedSkill) -> Mapping[str, Any]:
        for ref in (skill.id, skill.key, skill.name):
            if ref in self.entries:
                return self.entries[ref]
        return {}


def read_catalog_file(path: Path | None) -> CatalogFile:
    """The catalog file at ``path``; a missing file (or None) means defaults only."""
    if path is None or not path.is_file():
        return CatalogFile(path)
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError("(file)", f"cannot read the catalog metadata file: {exc}", source) from exc
    data = data or {}
    if not isinstance(data, Mapping) or set(data) - {"weights", "skills"}:
        raise ConfigError("(file)", "the top level must be a mapping with `weights` and/or `skills`", source)
    skills = data.get("skills") or {}
    if not isinstance(skills, Mapping) or not all(isinstance(v, Mapping) for v in skills.values()):
        raise ConfigError("skills", "must map skill ids to mappings of fields", source)
    for ref, entry in skills.items():
        for key, value in entry.items():
            # Validate now, so a bad value is reported once, with its place, not at search time.
            _field(key, value, f"skills.{ref}.{key}", source, strict=True)
    profiles = {"search": SEARCH, "related": RELATED}
    weights = data.get("weights") or {}
    if not isinstance(weights, Mapping) or set(weights) - set(profiles):
        raise ConfigError("weights", "must map `search` and/or `related` to weights", source)
    for name, values in weights.items():
        if not isinstance(values, Mapping) or set(values) - _PROFILE_KEYS:
            raise ConfigError(f"weights.{name}", f"allowed keys: {', '.join(sorted(_PROFILE_KEYS))}", source)
        numbers: dict[str, Any] = {}
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"weights.{name}.{key}", f"{value!r} is not a number >= 0", source)
            numbers[key] = int(value) if key == "pool" else float(value)
        profiles[name] = replace(profiles[name], **numbers)
    return CatalogFile(path, {str(k): v for k, v in skills.items()}, profiles)


def listing_of(skill: IndexedSkill, catalog: CatalogFile, tiers: Mapping[str, str]) -> Listing:
    """The skill's listing: frontmatter ``metadata`` first, the catalog file's entry over it; the
    trust tier as everywhere (``tiers``: the ``trustTiers`` setting, over both)."""
    values: dict[str, Any] = {"trust_tier": skill.skill.trust_tier}
    source = skill.skill
    for key, value in _frontmatter_fields(source):
        parsed = _field(key, value, f"metadata.{key}", source.path, strict=False)
        if parsed is not None:
            values.update(parsed)
    file_entry = catalog.entry_for(skill)
    for key, value in file_entry.items():
        parsed = _field(key, value, key, str(catalog.path), strict=True)
        if parsed is not None:
            values.update(parsed)
    values["private"] = source.private or bool(file_entry.get("private", False))
    values["trust_tier"] = trust_tier(skill, tiers, values["trust_tier"])
    return Listing(**values)


_FRONTMATTER_KEYS = (
    "categories",
    "public_capabilities",
    "public_tools",
    "quality",
    "installs",
    "updated",
    "forked_from",
    "version_of",
)


def _frontmatter_fields(skill: Skill) -> list[tuple[str, Any]]:
    meta = skill.metadata
    return [(k, meta[k]) for k in _FRONTMATTER_KEYS if k in meta]


def _field(key: str, value: Any, where: str, source: str, *, strict: bool) -> dict[str, Any] | None:
    """One listing field from its written form; None (and a warning) or ConfigError if invalid."""
    try:
        return _parse_field(key, value, strict)
    except ValueError as exc:
        if strict:
            raise ConfigError(where, str(exc), source) from None
        log.warning("%s: frontmatter %s ignored: %s", source, where, exc)
        return None


def _parse_field(key: str, value: Any, strict: bool) -> dict[str, Any]:
    if key == "categories":
        return {"categories": _words(value)}
    if key in ("public_capabilities", "public_tools"):
        return {"capabilities": _words(value)}
    if key == "quality":
        number = _number(value)
        if not 0.0 <= number <= 1.0:
            raise ValueError(f"quality {value!r} must be between 0 and 1")
        return {"quality": number}
    if key == "installs":
        number = _number(value)
        if number < 0 or not float(number).is_integer():
            raise ValueError(f"installs {value!r} must be a whole number >= 0")
        return {"installs": int(number)}
    if key == "updated":
        return {"updated": _timestamp(value)}
    if key in ("forked_from", "version_of"):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{key} must name a skill")
        return {key: value.strip()}
    if strict and key == "trust_tier":
        if value not in TRUST_TIERS:
            raise ValueError(f"trust_tier {value!r} must be one of {', '.join(TRUST_TIERS)}")
        return {"trust_tier": value}
    if strict and key == "private":
        if not isinstance(value, bool):
            raise ValueError(f"private {value!r} must be true or false")
        return {}  # merged by listing_of: private stays true if the frontmatter says so
    raise ValueError(
        f"unknown field {key!r}; allowed: categories, public_capabilities, public_tools, quality, installs, "
        "updated, forked_from, version_of, trust_tier, private"
    )


def _words(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        items = list(value)
    else:
        raise ValueError(f"{value!r} is not a list of names")
    return tuple(dict.fromkeys(v.strip() for v in items if v.strip()))


def _number(value: Any) -> float:
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(value)
        number = float(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not a finite number")
    return number


def _timestamp(value: Any) -> float:
    """Epoch seconds from epoch seconds, an ISO date or an ISO date-time (UTC when unzoned)."""
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"updated {value!r} is not an ISO date such as 2025-06-01") from None
    else:
        return _number(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()
