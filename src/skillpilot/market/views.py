"""The two views of a skill: what anyone may see, and what only the index owner may read.

- :class:`PublicSkill`, the *public projection*: id, name, description, categories, declared
  public capabilities, trust tier and the listing's signals. It is the only type search,
  related lists and ``find_skill`` return, and its text (:func:`public_text`) is the only text
  public retrieval indexes, for every skill, so a recommendation can always be justified with
  what the user can read. It has no ``path``: a folder path would lead to the instructions.
- :class:`PrivateView`: the projection's skill plus its instructions (the SKILL.md body) and
  folder. Only internal, permission-controlled work reads it: near-duplicate detection.

Guarantee: no function here copies ``Skill.body`` (or the fingerprint, which is derived from
the body) into a ``PublicSkill``; a private skill's body therefore never reaches a public output.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..model import IndexedSkill
from .catalog import Listing


@dataclass(frozen=True)
class PublicSkill:
    """The public projection of one skill."""

    id: str
    name: str
    description: str
    categories: tuple[str, ...]
    capabilities: tuple[str, ...]
    trust_tier: str
    private: bool
    quality: float | None
    installs: int | None
    updated: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PrivateView:
    """A skill as near-duplicate detection reads it: its public face plus its instructions."""

    public: PublicSkill
    key: str
    path: str
    instructions: str
    listing: Listing

    @property
    def text(self) -> str:
        """Name, description and instructions: the private view's text."""
        return f"{self.public.name}\n{self.public.description}\n{self.instructions}"


def public_projection(skill: IndexedSkill, listing: Listing) -> PublicSkill:
    return PublicSkill(
        id=skill.id,
        name=skill.name,
        description=skill.skill.description,
        categories=listing.categories,
        capabilities=listing.capabilities,
        trust_tier=listing.trust_tier,
        private=listing.private,
        quality=listing.quality,
        installs=listing.installs,
        updated=listing.updated,
    )


def private_view(skill: IndexedSkill, listing: Listing) -> PrivateView:
    return PrivateView(
        public=public_projection(skill, listing),
        key=skill.key,
        path=skill.skill.path,
        instructions=skill.skill.body,
        listing=listing,
    )


def public_text(skill: PublicSkill) -> str:
    """The stable text public keyword retrieval indexes (the seed's ``Name/Description/
    Categories/Tools`` document)."""
    lines = [f"Name: {skill.name.replace('-', ' ').replace('_', ' ')}", f"Description: {skill.description}"]
    if skill.categories:
        lines.append(f"Categories: {', '.join(skill.categories)}")
    if skill.capabilities:
        lines.append(f"Tools: {', '.join(skill.capabilities)}")
    return "\n".join(lines)
