"""The marketplace: search that is right and explainable, related skills that are not copies of
one another, and near-duplicate detection, without leaking a skill's private instructions.

    from skillpilot import SkillPilot
    from skillpilot.market import Market, find_skill
    market = Market(SkillPilot(home="~/.skillpilot/market"))
    market.search("extract a prompt from an image", top_k=10)
    market.related("image-to-prompt")
    market.dedup()
    find_skill("extract a prompt from an image", market=market, installed=SkillPilot())

Modules, in pipeline order: ``catalog`` (listings and weight profiles), ``views`` (public
projection vs private view), ``dedup`` (copies, on the private view), ``rank`` (signals, MMR),
``search`` (``Market``: recall, fusion, re-ranking, folding, hydration) and ``find``
(``find_skill``, the facade an agent tool calls).
"""

from .catalog import RELATED, SEARCH, Listing, Profile
from .dedup import ClusterMember, DuplicateCluster, DuplicatePair
from .find import find_skill
from .search import Market, MarketHit, SearchFilters
from .views import PublicSkill

__all__ = [
    "RELATED",
    "SEARCH",
    "ClusterMember",
    "DuplicateCluster",
    "DuplicatePair",
    "Listing",
    "Market",
    "MarketHit",
    "Profile",
    "PublicSkill",
    "SearchFilters",
    "find_skill",
]
