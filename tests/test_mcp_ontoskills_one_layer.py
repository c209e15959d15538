"""The MCP ``ontoskill`` tool answers through ``skillpilot.ontoskills.shapes``, the one OntoSkills
layer: its skill context is the shapes' context plus SkillPilot's additions, field for field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.ontoskills import shapes  # noqa: E402

from .conftest import write_skill  # noqa: E402
from .surfaces_util import SKILLS  # noqa: E402
from .test_surfaces_mcp import call  # noqa: E402


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> SkillPilot:
    root = tmp_path_factory.mktemp("extra-skills")
    write_skill(
        root,
        "mac-say",
        "name: mac-say\ndescription: Read text aloud with the macOS say command.\n"
        "requires:\n  bins: [say]\n  env: [VOICE]\n  os: [darwin]",
        body="# Say\nRun `say` with the text.\n",
    )
    router = SkillPilot(home=tmp_path_factory.mktemp("one-layer"), preconditions=False, enable_semantic=False)
    router.index([SKILLS, root])
    return router


def test_every_context_is_the_shapes_context_plus_name_description_path_and_instructions(pilot: SkillPilot) -> None:
    views = [shapes.view(s) for s in pilot.skills()]
    for target in views:
        answer = call(pilot, "ontoskill", {"q": target.skill_id})
        context = answer.structured_content
        assert context is not None and answer.is_error is False
        skill = target.skill.skill
        expected = dict(shapes.skill_context(target, views))
        expected["skill"] = {
            **expected["skill"],
            "name": skill.name,
            "description": skill.description,
            "path": skill.path,
        }
        expected["instructions"] = skill.body
        assert context == expected, target.skill_id
        assert list(context["skill"]) == sorted(context["skill"])  # OntoMCP's key order
        text = answer.content[0].text  # type: ignore[union-attr]
        assert text == shapes.context_text(target.skill_id, context, skill.description, skill.body)


def test_a_workspace_skill_answers_as_ontoskills_names_one(pilot: SkillPilot) -> None:
    context = call(pilot, "ontoskill", {"q": "mac-say"}).structured_content
    assert context is not None
    skill = context["skill"]
    assert (skill["qualified_id"], skill["package_id"], skill["nature"], skill["skill_type"]) == (
        "local/mac-say",
        "local",
        "Tool",
        "declarative",
    )
    assert "aliases" not in skill  # a workspace skill's aliases come from an install lock: none
    assert skill["requirements"] == [
        {"optional": False, "requirement_type": "Tool", "value": "say"},
        {"optional": False, "requirement_type": "EnvVar", "value": "VOICE"},
        {"optional": False, "requirement_type": "OS", "value": "darwin"},
    ]
    text = call(pilot, "ontoskill", {"q": "mac-say"}).content[0].text  # type: ignore[union-attr]
    assert text.splitlines()[:4] == [
        "## mac-say",
        "Read text aloud with the macOS say command.",
        "Requires: say; VOICE; darwin",
        "",
    ]
    assert text.endswith("Run `say` with the text.")


def test_skillpilots_own_names_resolve_after_ontomcps_rules(pilot: SkillPilot) -> None:
    # "media/image-resize" is the folder-relative key: not an OntoSkills name, still the skill.
    for q in ("media/image-resize", "MEDIA/IMAGE-RESIZE", "local/image-resize", "image-resize"):
        context = call(pilot, "ontoskill", {"q": q}).structured_content
        assert context is not None and context["skill"]["id"] == "image-resize", q
    # Not id-shaped: a search, never a lookup.
    search = call(pilot, "ontoskill", {"q": "resize an image"}).structured_content
    assert search is not None and search["mode"] == "bm25"
    assert json.dumps(search).count("instructions") == 0


def test_hybrid_and_keyword_results_share_the_shape(tmp_path: Path) -> None:
    router = SkillPilot(home=tmp_path / "home", preconditions=False, embed_provider="trigram-test")
    router.index([SKILLS])
    data = call(router, "ontoskill", {"q": "resize banner.png to 1200 pixels wide", "top_k": 3}).structured_content
    assert data is not None and data["mode"] == "hybrid" and data["results"]
    views = {v.skill_id: v for v in (shapes.view(s) for s in router.skills())}
    for result in data["results"]:
        assert result == shapes.search_result(views[result["skill_id"]], result["score"], result["matched_by"])
    assert {r["matched_by"] for r in data["results"]} <= {"keyword", "semantic", "hybrid"}
