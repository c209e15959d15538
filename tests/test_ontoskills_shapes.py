"""OntoMCP's ``ontoskill`` answer shapes over a real catalog: the copied registry plus small modules."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from skillpilot import SkillPilot
from skillpilot.ontoskills.shapes import (
    KeywordSearch,
    OntoView,
    adaptive_cutoff,
    context_text,
    resolve,
    search_text,
    skill_context,
    view,
)

from .conftest import BENCH, require_corpus

pytest.importorskip("rdflib")

REGISTRY = BENCH / "ontoskills" / "registry"
PREFIX = "@prefix oc: <https://ontoskills.sh/ontology#> .\n@prefix dcterms: <http://purl.org/dc/terms/> .\n"
PARENT = (
    PREFIX
    + """
oc:skill_local_base a oc:Skill, oc:DeclarativeSkill ; dcterms:identifier "base" ; oc:nature "Concept" ;
    oc:resolvesIntent "share the base rules" ; oc:impartsKnowledge oc:kn_base .
oc:kn_base a oc:Constraint, oc:KnowledgeNode ; oc:directiveContent "Never skip validation." ;
    oc:severityLevel "HIGH" ; oc:hasRationale "Broken files are worse than none." .
"""
)
CHILD = (
    PREFIX
    + """
oc:skill_local_child a oc:Skill, oc:DeclarativeSkill ; dcterms:identifier "child" ; oc:nature "Tool" ;
    oc:resolvesIntent "convert invoices", "export invoices to csv" ;
    oc:extends oc:skill_local_base ; oc:dependsOnSkill oc:skill_local_base, oc:skill_elsewhere_gone ;
    oc:impartsKnowledge oc:kn_child .
oc:kn_child a oc:Procedure, oc:KnowledgeNode ; oc:directiveContent "Read the invoice first." ;
    oc:stepOrder 1 .
"""
)


@pytest.fixture()
def views(isolated_home: Path, tmp_path: Path) -> list[OntoView]:
    require_corpus()
    tree = tmp_path / "tree"
    shutil.copytree(REGISTRY / "packages", tree / "packages")
    for name, text in (("base", PARENT), ("child", CHILD)):
        (tree / name).mkdir()
        (tree / name / "ontoskill.ttl").write_text(text, "utf-8")
    shutil.copytree(REGISTRY / "compiled-tree", tree / "compiled-tree")
    pilot = SkillPilot(home=isolated_home, enable_semantic=False)
    assert pilot.index([tree]).total == 5
    return [view(s) for s in pilot.skills()]


def test_adaptive_cutoff_is_ontomcps_rule() -> None:
    assert adaptive_cutoff([], 0.1, 0.15) == 0
    assert adaptive_cutoff([0.09, 0.05], 0.1, 0.15) == 0  # the best is below min
    assert adaptive_cutoff([3.0, 2.0, 0.5, 0.2], 0.1, 0.15) == 4  # no gap lands below min
    assert adaptive_cutoff([0.5, 0.3, 0.05], 0.4, 0.15) == 1  # a big drop below min cuts
    assert adaptive_cutoff([0.5, 0.38, 0.35, 0.05], 0.4, 0.15) == 3  # the quirk: 0.38, 0.35 pass
    assert adaptive_cutoff([0.5, 0.45, 0.3, 0.29], 0.4, 0.15) == 2  # no big gap: exactly those >= min


def test_resolve_follows_ontomcps_order(views: list[OntoView]) -> None:
    def named(q: str) -> str | None:
        found = resolve(q, views)
        return found.qualified_id if found else None

    assert named("MAREASW/Greeting/Hello") == "mareasw/greeting/hello"
    assert named("CIAO") == "mareasw/greeting/hello"  # an alias, any case
    assert named("local/child") == "local/child"
    # Short id "office" is in two packages: tier breaks the tie (local before verified).
    assert named("office") == "local/office"
    assert named("say hello") is None  # not an id: a search
    assert named("x" * 65) is None


def test_search_answers_in_bm25_shape_with_tier_factors(views: list[OntoView]) -> None:
    search = KeywordSearch(views)
    answer = search.search("Say hello!", top_k=5)
    assert list(answer) == ["mode", "query", "results"] and answer["mode"] == "bm25"
    [top] = answer["results"][:1]
    assert list(top) == sorted(top)
    assert (top["skill_id"], top["qualified_id"], top["trust_tier"]) == (
        "hello",
        "mareasw/greeting/hello",
        "verified",
    )
    assert (top["intents"], top["aliases"], top["matched_by"]) == (
        ["greet the user", "say hello"],
        ["greeting", "ciao"],
        "keyword",
    )
    raw = dict(search.scores("Say hello!"))
    hello = next(i for i, v in enumerate(views) if v.skill_id == "hello")
    assert top["score"] == pytest.approx(raw[hello], rel=1e-6)  # verified: factor 1.0
    assert search.tokens("Don't test-driven Documents") == ["test", "driven", "document"]
    assert search_text(answer).splitlines()[:2] == [
        "Search mode: bm25",
        "- hello [verified]: greet the user; say hello",
    ]
    nothing = search.search("zebra quantum", top_k=5)
    assert nothing["results"] == [] and search_text(nothing) == "No results found."


def test_search_idf_counts_occurrences_and_scores_every_query_token(views: list[OntoView]) -> None:
    search = KeywordSearch(views)
    child = next(i for i, v in enumerate(views) if v.skill_id == "child")
    once, twice = dict(search.scores("invoices")), dict(search.scores("invoices invoices"))
    assert twice[child] == pytest.approx(2 * once[child], rel=1e-6)
    # "invoic" occurs twice in one document of five: n = 2 occurrences, not 1 document.
    assert search._idf["invoic"] == pytest.approx(math.log(1 + (5 - 2 + 0.5) / (2 + 0.5)))


def test_skill_context_of_an_executable_registry_skill(views: list[OntoView]) -> None:
    hello = resolve("hello", views)
    assert hello is not None
    context = skill_context(hello, views)
    assert list(context) == ["include_inherited_knowledge", "knowledge_nodes", "payload", "skill"]
    assert context["skill"] == {
        "aliases": ["greeting", "ciao"],
        "differentia": "A minimal demo skill that responds with a friendly greeting.",
        "id": "hello",
        "intents": ["greet the user", "say hello"],
        "nature": "Greeting demo",
        "package_id": "mareasw/greeting",
        "qualified_id": "mareasw/greeting/hello",
        "skill_type": "executable",
        "source": "https://github.com/mareasw/ontostore",
        "trust_tier": "verified",
        "version": "0.1.0",
    }
    assert context["payload"] == {
        "available": True,
        "code": 'echo "ciao io sto bene e tu?"',
        "executor": "shell",
        "safety_notes": [
            "Payload execution is delegated to the calling agent.",
            "The MCP server does not execute code.",
        ],
        "skill_id": "mareasw/greeting/hello",
        "timeout": 5000,
    }
    [node] = context["knowledge_nodes"]
    assert (node["kind"], node["dimension"], node["severity_level"], node["inherited"]) == (
        "standard",
        "normative_rule",
        "LOW",
        False,
    )


def test_skill_context_inherits_through_extends_and_names_dependencies(views: list[OntoView]) -> None:
    child = resolve("child", views)
    assert child is not None
    context = skill_context(child, views)
    skill = context["skill"]
    assert skill["extends"] == ["base"]
    assert skill["depends_on"] == ["oc:skill_elsewhere_gone", "base"]  # a dangling IRI stays an IRI
    nodes = [(n["source_skill_id"], n["kind"], n["inherited"]) for n in context["knowledge_nodes"]]
    assert nodes == [("child", "procedure", False), ("base", "constraint", True)]
    assert context_text("child", context).splitlines() == [
        "## child",
        "Intents: convert invoices; export invoices to csv",
        "",
        "  PROCEDURE:",
        "  Read the invoice first.",
        "  CONSTRAINT [HIGH]:",
        "  Never skip validation.",
        "  Why: Broken files are worse than none.",
    ]
