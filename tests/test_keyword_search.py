"""Search the way people search: one to three keywords find the skills that mention them, on
every surface (library, CLI, HTTP, MCP ontoskill and find_skill), installed and market alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from skillpilot import SkillPilot
from skillpilot.market import Market, find_skill
from skillpilot.model import IndexedSkill
from skillpilot.retrieve.keywords import KEYWORD_FLOOR, keyword_terms
from skillpilot.text import Query, tokenize

from .conftest import BENCH, require_corpus
from .surfaces_util import cli, indexed, uvicorn_on_loopback

# The examples; no skill in the bench corpus says "kubernetes" in its name or description
# (two mention it deep in their bodies), so that one finds nothing rather than filler.
FOUND = ("pdf", "terraform", "diagram", "security scan")
NOT_DESCRIBED = "kubernetes"


def mentions(skill: IndexedSkill, query: str) -> bool:
    said = set(tokenize(f"{skill.name.replace('-', ' ')} {skill.skill.description}"))
    return set(keyword_terms(Query.of(query))) <= said


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> SkillPilot:
    """The bench corpus, keywords only (seconds to index; the models are covered below)."""
    require_corpus()
    pilot = SkillPilot(home=tmp_path_factory.mktemp("bench-home"), preconditions=False, enable_semantic=False)
    pilot.index([BENCH / "skills"])
    return pilot


def test_keyword_terms_are_one_to_three_words() -> None:
    assert keyword_terms(Query.of("pdf")) == ["pdf"]
    assert keyword_terms(Query.of("security scan")) == ["secur", "scan"]
    assert keyword_terms(Query.of("convert this scanned pdf to text")) == []
    assert keyword_terms(Query.of("the")) == []


@pytest.mark.parametrize("query", FOUND)
def test_keywords_find_the_skills_that_mention_them(bench: SkillPilot, query: str) -> None:
    hits = bench.search(query, top_k=5)
    assert len(hits) == 5, query
    by_id = {s.id: s for s in bench.skills()}
    assert all(mentions(by_id[h.id], query) for h in hits), [h.id for h in hits]
    # Ranked; a keyword alone is evidence, not a confident route: its floor is under the cut-off.
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].score >= KEYWORD_FLOOR and all(h.score > 0 for h in hits)


def test_a_keyword_no_skill_describes_finds_nothing(bench: SkillPilot) -> None:
    assert bench.search(NOT_DESCRIBED) == []
    assert Market(bench).search(NOT_DESCRIBED, top_k=5) == []


@pytest.mark.parametrize("query", [*FOUND, NOT_DESCRIBED])
def test_installed_and_market_scopes_agree(bench: SkillPilot, query: str) -> None:
    installed = find_skill(query, installed=bench, scope=("installed",), top_k=5)["results"]
    market = find_skill(query, market=Market(bench), scope=("market",), top_k=5)["results"]
    assert {r["id"] for r in installed} == {r["id"] for r in market}


def test_cli_and_http_search_find_keywords(bench: SkillPilot) -> None:
    pytest.importorskip("fastapi")
    from skillpilot.serve.http import create_app

    from .test_surfaces_serve import post

    done = cli("search", "terraform", "--json", home=bench.settings.home, SKILLPILOT_ENABLE_SEMANTIC="false")
    assert done.returncode == 0, done.stderr
    expected = [h.id for h in bench.search("terraform")]
    cli_ids = [r["id"] for r in json.loads(done.stdout)]
    assert cli_ids == expected and all("terraform" in i for i in cli_ids[:4])
    with uvicorn_on_loopback(create_app(bench)) as url:
        status, answer = post(url, "/search", {"query": "diagram", "top_k": 5})
    assert status == 200
    assert [r["id"] for r in answer["results"]] == [h.id for h in bench.search("diagram")]


def _mcp(pilot: SkillPilot, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    pytest.importorskip("mcp")
    from mcp import Client

    from skillpilot.serve.mcp import build_server

    async def session() -> dict[str, Any]:
        async with Client(build_server(pilot)) as client:
            answer = await client.call_tool(tool, arguments)
            assert answer.structured_content is not None
            return answer.structured_content

    return anyio.run(session)


@pytest.mark.slow
def test_mcp_hybrid_search_and_find_skill_find_keywords(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home")
    onto = _mcp(pilot, "ontoskill", {"q": "jira", "top_k": 3})
    assert onto["mode"] == "hybrid"
    assert [r["skill_id"] for r in onto["results"]][:1] == ["jira-ticket"]
    for query in ("email", "csv"):
        installed = _mcp(pilot, "find_skill", {"intent": query, "scope": "installed", "top_k": 5})["results"]
        market = _mcp(pilot, "find_skill", {"intent": query, "scope": "market", "top_k": 5})["results"]
        assert installed, query
        by_id = {s.id: s for s in pilot.skills()}
        assert all(mentions(by_id[r["id"]], query) for r in installed), installed
        assert {r["id"] for r in installed} <= {r["id"] for r in market}


@pytest.mark.slow
def test_keywords_with_the_models_on_the_bench_corpus(tmp_path: Path) -> None:
    require_corpus()
    pilot = SkillPilot(home=tmp_path / "home", preconditions=False)
    pilot.index([BENCH / "skills"])
    market = Market(pilot)
    by_id = {s.id: s for s in pilot.skills()}
    for query in FOUND:
        hits = pilot.search(query, top_k=5)
        assert len(hits) == 5 and all(mentions(by_id[h.id], query) for h in hits), (query, hits)
        shown = {h.skill.id for h in market.search(query, top_k=5)}
        assert len(shown & {h.id for h in hits}) >= 3, query
    assert pilot.search(NOT_DESCRIBED) == []
