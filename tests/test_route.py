"""Routing on the project's example skills with the real bundled models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillpilot import RouteResult, SkillPilot
from skillpilot.index.builder import vector_space
from skillpilot.retrieve.dense import EMBEDDING, EmbeddingRecipe

from .conftest import EXAMPLES, write_skill


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> SkillPilot:
    home = tmp_path_factory.mktemp("route-home")
    pilot = SkillPilot(home=home, preconditions=False)
    pilot.index([EXAMPLES / "skills"])
    return pilot


def test_trigger_phrase_routes_hard_on_the_fast_path(pilot: SkillPilot) -> None:
    result = pilot.route("commit my changes")
    assert result.skill is not None and result.skill.id == "git-commit"
    assert (result.decision, result.method) == ("hard", "fast")
    assert "trigger 'commit my changes'" in result.reasons
    assert result.skill.path == str(EXAMPLES / "skills" / "git-commit")


def test_paraphrase_routes_by_meaning(pilot: SkillPilot) -> None:
    result = pilot.route("Cut the boring first minute out of my screen recording")
    assert result.skill is not None and result.skill.key == "media/video-trim"
    assert result.decision == "hard"
    assert result.method == "hybrid"
    assert result.alternatives and all(a.id != "video-trim" for a in result.alternatives)
    assert result.latency_ms > 0


def test_chinese_message_routes(pilot: SkillPilot) -> None:
    result = pilot.route("帮我把视频的前30秒剪掉")
    assert result.skill is not None and result.skill.key == "media/video-trim"
    assert result.decision in ("hard", "soft")


def test_the_english_only_model_is_not_asked_about_a_chinese_message(pilot: SkillPilot) -> None:
    chinese = {t.stage: t for t in pilot.route("帮我把视频的前30秒剪掉", trace=True).trace}
    english = {t.stage: t for t in pilot.route("cut the first 30 seconds of my video", trace=True).trace}
    minilm = next(name for name in english if "MiniLM" in name)
    assert chinese[minilm].candidates == () and "not asked" in chinese[minilm].notes[0]
    assert english[minilm].candidates[0][0] == "video-trim"


def test_out_of_scope_passes_through_with_exit_information(pilot: SkillPilot) -> None:
    result = pilot.route("Tell me a joke about penguins")
    assert result.decision == "passthrough"
    assert result.confidence < 0.45


def test_examples_accuracy(pilot: SkillPilot) -> None:
    """The example queries a user would try first: in-scope right at rank 1, jokes pass through."""
    lines = (EXAMPLES / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [json.loads(line) for line in lines if line.strip()]
    in_scope = [q for q in queries if q["expected"]]
    right = [q["id"] for q in in_scope if pilot.route(q["query"]).skill.key in q["expected"]]  # type: ignore[union-attr]
    assert len(right) / len(in_scope) >= 0.85, sorted({q["id"] for q in in_scope} - set(right))
    passed = [q["id"] for q in queries if not q["expected"] and pilot.route(q["query"]).decision == "passthrough"]
    assert len(passed) >= 5


def test_trace_names_every_stage(pilot: SkillPilot) -> None:
    result = pilot.route("plot monthly revenue from orders.csv as a line chart", trace=True)
    stages = [stage.stage for stage in result.trace or ()]
    assert stages[0].startswith("fast path")
    assert "bm25" in stages
    assert sum(s.startswith("dense:") for s in stages) == 2
    assert stages[-2].startswith("fusion")
    assert stages[-1] == "decision"
    assert any("runner-up" in note for note in result.trace[-1].notes)  # type: ignore[index]


def test_result_is_json_serialisable(pilot: SkillPilot) -> None:
    data = pilot.route("create a jira ticket for the flaky test").to_dict()
    again = json.loads(json.dumps(data))
    assert again["skill"]["id"] == "jira-ticket"
    assert set(again) >= {
        "skill",
        "confidence",
        "decision",
        "method",
        "alternatives",
        "latency_ms",
        "conflict_resolved",
        "conflict_alternatives",
        "reasons",
    }
    assert "trace" not in again


def test_search_cuts_off_filler(pilot: SkillPilot) -> None:
    hits = pilot.search("trim a video", top_k=5)
    assert hits and hits[0].key == "media/video-trim"
    assert len(hits) < 5
    assert all(h.score >= 0.4 for h in hits)
    assert pilot.search("a haiku about autumn leaves") == []


def test_search_agrees_with_a_route_made_at_once(pilot: SkillPilot) -> None:
    """A trigger phrase routes at once, without asking the models; search finds that skill with
    the route's own confidence instead of cutting it off for the evidence the models never gave."""
    route = pilot.route("resize an image")
    assert (route.method, route.decision) == ("fast", "hard")
    hits = pilot.search("resize an image")
    assert hits and (hits[0].key, hits[0].score) == (route.skill.key, route.confidence)  # type: ignore[union-attr]


def test_long_query_is_capped(pilot: SkillPilot) -> None:
    result = pilot.route("trim the video " + "x" * 5000)
    assert len(result.query) == 512


def test_empty_index_returns_a_no_match_result(isolated_home: Path) -> None:
    result = SkillPilot(home=isolated_home, enable_semantic=False).route("anything")
    assert isinstance(result, RouteResult)
    assert (result.skill, result.decision, result.method) == (None, "passthrough", "no-match")


def test_unmet_preconditions_lower_the_score_and_are_reported(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "skills"
    description = "description: Open pull requests on GitHub from the terminal."
    write_skill(root, "ghcli", f"name: ghcli\n{description}\nrequires:\n  env: [GH_TOKEN_TEST]")
    write_skill(root, "hubcli", f"name: hubcli\n{description}")
    monkeypatch.delenv("GH_TOKEN_TEST", raising=False)
    checked = SkillPilot(home=isolated_home, enable_semantic=False)
    checked.index([root])
    result = checked.route("open pull requests on github")
    assert result.skill is not None and result.skill.id == "hubcli"
    unchecked = SkillPilot(home=isolated_home, enable_semantic=False, preconditions=False)
    assert unchecked.route("open pull requests on github").skill.id == "ghcli"  # type: ignore[union-attr]
    named = checked.route("use ghcli to open pull requests on github")
    assert named.skill is not None and named.skill.id == "ghcli"
    assert named.unmet_preconditions == ("env GH_TOKEN_TEST is not set",)
    assert "score multiplied by 0.70 (trust tier / preconditions)" in named.reasons


def test_a_changed_encoder_routes_on_keywords_until_reindex_embeds(tmp_path: Path, isolated_home: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "video-trim", "name: video-trim\ndescription: Cut a video to a time range.")
    SkillPilot(home=isolated_home, embed_provider="use-multilingual").index([root])
    pilot = SkillPilot(home=isolated_home, embed_provider="minilm")
    space = vector_space(pilot.encoders[0], EMBEDDING)
    assert space.startswith("all-MiniLM-L6-v2-int8/1.0.0|")
    generation = pilot.store.generation()

    result = pilot.route("trim this video", trace=True)
    assert result.skill is not None and result.skill.id == "video-trim"
    assert result.trace is not None and result.trace[0].stage == "catalog: vectors missing"
    assert result.trace[0].notes == (
        f"1 of 1 skills have no {pilot.encoders[0].name} vectors (left out); run `skillpilot reindex` to embed them",
    )
    assert pilot.stats().missing_vectors == {pilot.encoders[0].name: 1}
    # The router read the index and wrote nothing: embedding is the indexer's job.
    assert pilot.store.generation() == generation
    assert pilot.store.vector_keys(space) == set()

    pilot.reindex()
    assert pilot.store.vector_keys(space) == {(str(root), "video-trim")}
    assert pilot.route("shorten my clip").skill.id == "video-trim"  # type: ignore[union-attr]
    assert pilot.stats().missing_vectors == {}


def test_a_changed_embedding_recipe_is_embedded_by_reindex(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "video-trim", "name: video-trim\ndescription: Cut a video to a time range.")
    SkillPilot(home=isolated_home, embed_provider="use-multilingual").index([root])
    monkeypatch.setattr(EmbeddingRecipe, "version", "parts-test")
    pilot = SkillPilot(home=isolated_home, embed_provider="use-multilingual")
    assert pilot.stats().missing_vectors == {"use-multilingual-v3/0.2.1+spm": 1}
    pilot.reindex()
    assert pilot.store.vector_keys("use-multilingual-v3/0.2.1+spm|parts-test") == {(str(root), "video-trim")}
    assert pilot.route("shorten my clip").skill.id == "video-trim"  # type: ignore[union-attr]
