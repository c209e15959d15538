"""Short Chinese searches over English skills: the keyword index reads none of their terms, so the
models' evidence alone scores them (search, MCP ontoskill and find_skill alike).

Real bundled models over the bench corpus (English skills; it has no translator, so one is added
in a second root): at 294 skills a three-character query's route confidence, with the blind
keyword retriever counted as dissenting, stayed under the search cut-off and every search came
back empty.
"""

from __future__ import annotations

from typing import Any

import pytest

from skillpilot import SkillPilot
from skillpilot.market import find_skill

from .conftest import BENCH, require_corpus, write_skill
from .test_keyword_search import _mcp

REQUESTS = {
    "流程图": {"excalidraw-diagram-generator", "draw-io-diagram-generator"},
    "生成一张图片": {"github-awesome-copilot/generate-image", "k-dense-scientific-skills/generate-image"},
    "翻译这段文字": {"text-translator"},
}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> SkillPilot:
    require_corpus()
    extra = tmp_path_factory.mktemp("skills")
    write_skill(
        extra,
        "text-translator",
        "name: text-translator\ndescription: Translate a passage of text from one language into another, keeping "
        "its tone.",
    )
    pilot = SkillPilot(home=tmp_path_factory.mktemp("home"), preconditions=False, log_enabled=False)
    pilot.index([BENCH / "skills", extra])
    return pilot


@pytest.mark.parametrize(("query", "expected"), REQUESTS.items())
def test_a_short_chinese_search_finds_the_english_skill(pilot: SkillPilot, query: str, expected: set[str]) -> None:
    hits = pilot.search(query, top_k=5)
    assert hits and hits[0].id in expected, hits
    found: dict[str, Any] = find_skill(query, installed=pilot, scope=["installed"], top_k=5)
    assert found["results"] and found["results"][0]["id"] in expected
    answer = _mcp(pilot, "ontoskill", {"q": query, "top_k": 3})
    assert answer["mode"] == "hybrid"
    assert answer["results"] and answer["results"][0]["skill_id"] in expected, answer


def test_a_chinese_search_that_means_no_skill_still_finds_none(pilot: SkillPilot) -> None:
    assert pilot.search("我想吃饺子") == []
    assert pilot.search("讲个笑话") == []
