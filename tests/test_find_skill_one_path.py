"""Every ``find_skill`` scope answers through the market facade (``skillpilot.market.find_skill``),
so installed results have the market's shape, and a filter never shortens a search."""

from __future__ import annotations

import pytest

from skillpilot import SkillPilot
from skillpilot.errors import ConfigError
from skillpilot.market import Market
from skillpilot.market import find_skill as market_find_skill
from skillpilot.serve.find import InvalidArgument, find_skill

from .surfaces_util import SKILL_COUNT, SKILLS


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> SkillPilot:
    router = SkillPilot(home=tmp_path_factory.mktemp("one-path"), preconditions=False, enable_semantic=False)
    router.index([SKILLS])
    return router


def test_installed_results_are_the_market_facades_with_path_and_side_effects(pilot: SkillPilot) -> None:
    answer = find_skill(pilot, Market(pilot), "resize an image", "installed", 3, {})
    assert (answer["mode"], answer["scope"], answer["errors"]) == ("search", "installed", [])
    top = answer["results"][0]
    assert (top["id"], top["sources"], top["installed"]) == ("image-resize", ["installed"], True)
    assert top["path"] == pilot.get("image-resize").skill.path
    assert top["side_effects"] == pilot.get("image-resize").fingerprint.side_effects
    assert top["explanation"][0].startswith("installed: relevance ")
    assert "body" not in top and "instructions" not in top
    listed = find_skill(pilot, Market(pilot), "", "installed", 2, {"exclude_ids": ["aws-cost-report"]})
    assert (listed["mode"], listed["total"]) == ("list", SKILL_COUNT - 1)
    assert [r["id"] for r in listed["results"]] == ["calendar-schedule", "changelog-writer"]


@pytest.mark.parametrize("scope", ["installed", "all"])
def test_excluding_the_best_skills_does_not_shorten_the_search(pilot: SkillPilot, scope: str) -> None:
    market = Market(pilot)
    wide = [r["id"] for r in find_skill(pilot, market, "file", scope, 4, {})["results"]]
    assert len(wide) == 4
    narrowed = find_skill(pilot, market, "file", scope, 2, {"exclude_ids": wide[:2]})
    assert [r["id"] for r in narrowed["results"]] == wide[2:4]


def test_an_unknown_scope_or_filter_names_the_argument(pilot: SkillPilot) -> None:
    with pytest.raises(InvalidArgument) as scope:
        find_skill(pilot, Market(pilot), "image", "galaxy", 3, {})
    assert scope.value.argument == "scope" and scope.value.allowed == ("all", "installed", "market")
    with pytest.raises(InvalidArgument) as tier:
        find_skill(pilot, Market(pilot), "image", "installed", 3, {"trust_tiers": ["gold"]})
    assert tier.value.argument == "filters.trust_tiers"


def test_the_market_facade_refuses_bad_input_with_project_errors(pilot: SkillPilot) -> None:
    with pytest.raises(ConfigError, match="'scope'.*galaxy"):
        market_find_skill("image", installed=pilot, scope=["galaxy"])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="'filters'.*colour"):
        market_find_skill("image", installed=pilot, filters={"colour": ["red"]})
    with pytest.raises(ConfigError, match="market="):
        market_find_skill("image", installed=pilot, scope=["market"])
