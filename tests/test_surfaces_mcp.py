"""`skillpilot mcp` through real MCP client sessions: in-process, and over stdio to a real process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.types import CallToolResult  # noqa: E402

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.omni import load_triples  # noqa: E402
from skillpilot.ontoskills import shapes  # noqa: E402
from skillpilot.serve.mcp import build_server  # noqa: E402

from .conftest import REPO, write_skill  # noqa: E402
from .surfaces_util import SKILL_COUNT, indexed  # noqa: E402

SEARCH_KEYS = {"skill_id", "qualified_id", "score", "matched_by", "intents", "aliases", "trust_tier"}
TOOLS = {"route", "ontoskill", "find_skill", "omni_retrieve", "lint_skill", "feedback"}
TRIPLES = "subject,predicate,object,subject_type,object_type\n张三,参与,项目A,人物,项目\n李四,参与,项目A,人物,项目\n"


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> SkillPilot:
    return indexed(tmp_path_factory.mktemp("mcp-home"))


def call(pilot: SkillPilot, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    async def session() -> CallToolResult:
        async with Client(build_server(pilot)) as client:
            return await client.call_tool(tool, arguments)

    return anyio.run(session)


def test_tools_resource_and_route_in_process(pilot: SkillPilot) -> None:
    async def session() -> tuple[set[str], list[str], str, CallToolResult]:
        async with Client(build_server(pilot)) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            resources = [str(r.uri) for r in (await client.list_resources()).resources]
            schema = (await client.read_resource("ontology://schema")).contents[0]
            assert schema.mime_type == "application/json"
            routed = await client.call_tool("route", {"message": "commit my changes"})
            return tools, resources, schema.text, routed  # type: ignore[union-attr]

    tools, resources, schema, routed = anyio.run(session)
    assert tools == TOOLS
    assert resources == ["ontology://schema"]
    assert len(schema.encode("utf-8")) < 4096
    classes = json.loads(schema)["classes"]
    assert set(classes) == {
        "Skill", "SkillContext", "SearchResult", "RouteResult", "SkillRef", "Alternative", "StageTrace", "PlanStep"
    }  # fmt: skip
    # The schema names every field a route answer carries (plan included), and trace.
    described = set(classes["RouteResult"]["properties"])
    assert described == set(routed.structured_content or {}) | {"trace"}
    assert "plan" in described
    assert classes["PlanStep"]["properties"] == ["text", "skill", "confidence", "decision"]
    # Every tool and argument the server lists, with its type and default.
    arguments = json.loads(schema)["tools"]
    assert set(arguments) == TOOLS
    assert arguments["ontoskill"] == {"q": "string", "top_k": "integer (5)"}
    assert arguments["find_skill"]["scope"] == 'all|installed|market ("all")'
    assert "trust_tiers (local|official|verified|community)" in arguments["find_skill"]["filters"]
    assert routed.is_error is False
    result = routed.structured_content
    assert result is not None
    assert (result["decision"], result["method"], result["skill"]["id"]) == ("hard", "fast", "git-commit")
    assert json.loads(routed.content[0].text) == result  # type: ignore[union-attr]


def test_ontoskill_by_id_alias_or_qualified_id_gives_the_skill_context(pilot: SkillPilot) -> None:
    for q in ("git-commit", "local/git-commit", "GIT-COMMIT", "media/image-resize"):
        answer = call(pilot, "ontoskill", {"q": q})
        assert answer.is_error is False
        context = answer.structured_content
        assert context is not None
        assert context["include_inherited_knowledge"] is True
        skill = context["skill"]
        expected = "image-resize" if q.startswith("media/") else "git-commit"
        assert (skill["id"], skill["qualified_id"], skill["package_id"]) == (
            expected,
            f"local/{expected}",
            "local",
        )
        assert skill["skill_type"] == "declarative"
        assert skill["path"].endswith(expected)
    commit = call(pilot, "ontoskill", {"q": "git-commit"})
    assert commit.structured_content is not None
    skill = commit.structured_content["skill"]
    assert skill["requirements"] == [{"requirement_type": "Tool", "value": "git", "optional": False}]
    assert "commit my changes" in skill["intents"]
    assert commit.structured_content["instructions"].startswith("# Git Commit")
    text = commit.content[0].text  # type: ignore[union-attr]
    assert text.startswith("## git-commit\nStage changes and create a git commit")
    assert "Requires: git" in text


def test_ontoskill_loads_every_skill_id_its_search_returns(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    # Named as Composio's automation skills are: a space in the name, so in the id.
    write_skill(root, "ahrefs", "name: Ahrefs Automation\ndescription: Automate Ahrefs SEO backlink reports.")
    write_skill(root, "toggl", "name: Toggl Automation\ndescription: Automate Toggl time tracking entries.")
    pilot = SkillPilot(home=tmp_path / "home", embed_provider="trigram-test")
    pilot.index([root])
    found = call(pilot, "ontoskill", {"q": "automate ahrefs seo backlink reports"}).structured_content
    assert found is not None and found["results"], found
    for result in found["results"]:
        for q in (result["skill_id"], result["qualified_id"]):
            context = call(pilot, "ontoskill", {"q": q}).structured_content
            assert context is not None and context["skill"]["id"] == result["skill_id"], (q, context)


def test_the_claude_code_plugin_names_the_tools_the_server_has() -> None:
    manifest = json.loads((REPO / "adapters" / "claude-code" / ".claude-plugin" / "plugin.json").read_text())
    listed = manifest["description"].split("MCP server (", 1)[1].split(")", 1)[0]
    assert sorted(listed.split(", ")) == sorted(TOOLS)


def test_an_unknown_tool_is_a_structured_error(pilot: SkillPilot) -> None:
    answer = call(pilot, "route_message", {"message": "commit my changes"})
    assert answer.is_error is True
    assert answer.structured_content == {
        "error": {
            "code": "unknown_tool",
            "message": f"there is no tool 'route_message'; call one of {', '.join(sorted(TOOLS))}",
            "allowed": sorted(TOOLS),
        }
    }


def test_ontoskill_search_answers_in_ontoskills_result_shape(pilot: SkillPilot) -> None:
    answer = call(pilot, "ontoskill", {"q": "resize banner.png to 1200 pixels wide", "top_k": 3})
    data = answer.structured_content
    assert data is not None
    assert (data["mode"], data["query"]) == ("hybrid", "resize banner.png to 1200 pixels wide")
    assert data["results"][0]["skill_id"] == "image-resize"
    assert all(set(r) == SEARCH_KEYS for r in data["results"])
    assert data["results"][0]["qualified_id"] == "local/image-resize"
    # OntoSkills' keys in its (alphabetical) order; a workspace skill has no aliases (they come
    # from the install lock), in hybrid mode as in bm25 mode.
    assert all(list(r) == sorted(SEARCH_KEYS) for r in data["results"])
    assert data["results"][0]["aliases"] == []
    assert data["results"][0]["matched_by"] in ("hybrid", "semantic")
    assert answer.content[0].text.splitlines()[:2] == [  # type: ignore[union-attr]
        "Search mode: hybrid",
        "- image-resize [local]: resize this image; make a thumbnail",
    ]
    nothing = call(pilot, "ontoskill", {"q": "who won the 1998 world cup"})
    assert nothing.structured_content == {
        "mode": "hybrid",
        "query": "who won the 1998 world cup",
        "results": [],
    }
    assert nothing.content[0].text == "No results found."  # type: ignore[union-attr]


def test_private_skill_body_is_never_sent(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(
        root,
        "vault-notes",
        "name: vault-notes\ndescription: Look up notes in the team vault.\nprivate: true",
        body="SECRET-STEP: open the vault with the master key.\n",
    )
    pilot = SkillPilot(home=tmp_path / "home", preconditions=False)
    pilot.index([root])
    answer = call(pilot, "ontoskill", {"q": "vault-notes"})
    assert answer.structured_content is not None
    assert answer.structured_content["skill"]["id"] == "vault-notes"
    assert "instructions" not in answer.structured_content
    assert "SECRET-STEP" not in json.dumps(answer.structured_content)
    assert "SECRET-STEP" not in answer.content[0].text  # type: ignore[union-attr]


def test_find_skill_lists_searches_and_filters(pilot: SkillPilot) -> None:
    listed = call(pilot, "find_skill", {"intent": "", "scope": "installed", "top_k": 3}).structured_content
    assert listed is not None
    assert (listed["mode"], listed["total"]) == ("list", SKILL_COUNT)
    assert [r["id"] for r in listed["results"]] == [
        "aws-cost-report",
        "calendar-schedule",
        "changelog-writer",
    ]
    assert "notes" not in listed
    assert all("body" not in r and "instructions" not in r for r in listed["results"])

    found = call(pilot, "find_skill", {"intent": "resize banner.png to 1200 pixels wide"}).structured_content
    assert found is not None
    assert found["results"][0]["id"] == "image-resize"

    filtered = call(
        pilot,
        "find_skill",
        {
            "intent": "",
            "scope": "installed",
            "top_k": 100,
            "filters": {"side_effects": ["read-only"], "exclude_ids": ["csv-analyze"]},
        },
    ).structured_content
    assert filtered is not None
    ids = [r["id"] for r in filtered["results"]]
    assert ids and "csv-analyze" not in ids
    assert {r["side_effects"] for r in filtered["results"]} == {"read-only"}


def test_find_skill_in_the_market_calls_the_market_facade(pilot: SkillPilot) -> None:
    market = call(pilot, "find_skill", {"intent": "resize an image", "scope": "market"}).structured_content
    assert market is not None
    assert (market["mode"], market["scope"], market["errors"]) == ("search", "market", [])
    top = market["results"][0]
    assert (top["id"], top["sources"], top["installed"]) == ("image-resize", ["market"], False)
    assert top["explanation"] and "path" not in top and "body" not in top

    both = call(pilot, "find_skill", {"intent": "resize an image", "scope": "all", "top_k": 3})
    data = both.structured_content
    assert data is not None
    assert data["results"][0]["id"] == "image-resize"
    assert data["results"][0]["sources"] == ["market", "installed"]
    assert data["results"][0]["path"].endswith("image-resize")

    read_only = call(
        pilot,
        "find_skill",
        {"intent": "", "scope": "all", "top_k": 100, "filters": {"side_effects": ["read-only"]}},
    ).structured_content
    assert read_only is not None
    assert {r["id"] for r in read_only["results"]} == {"csv-analyze", "meeting-notes", "translate-text"}


def test_ontoskill_keyword_only_search_is_ontoskills_bm25_field_by_field(tmp_path: Path) -> None:
    keywords = indexed(tmp_path / "home", enable_semantic=False)
    answer = call(keywords, "ontoskill", {"q": "commit my changes", "top_k": 3})
    data = answer.structured_content
    assert data is not None
    views = [shapes.view(s) for s in keywords.skills()]
    assert data == shapes.KeywordSearch(views).search("commit my changes", 3)
    assert (data["mode"], data["results"][0]["skill_id"]) == ("bm25", "git-commit")
    # OntoSkills' serde order, raw BM25 scores (not 0-1), its cut-off (min 0.1) and no aliases
    # for a workspace skill (they come from the install lock).
    assert all(list(r) == sorted(SEARCH_KEYS) for r in data["results"])
    assert all(r["score"] >= 0.1 and r["aliases"] == [] for r in data["results"])
    assert data["results"][0]["score"] > 1
    assert answer.content[0].text.splitlines()[:2] == [  # type: ignore[union-attr]
        "Search mode: bm25",
        "- git-commit [local]: commit my changes; write a commit message",
    ]
    # A skill id still answers with the skill context.
    context = call(keywords, "ontoskill", {"q": "git-commit"}).structured_content
    assert context is not None and context["skill"]["qualified_id"] == "local/git-commit"


def test_omni_retrieve_answers_in_the_seed_shape(tmp_path: Path) -> None:
    omni = indexed(tmp_path / "home")
    triples = tmp_path / "triples.csv"
    triples.write_text(TRIPLES, encoding="utf-8")
    load_triples(omni.settings, triples, "default")
    answer = call(omni, "omni_retrieve", {"query": "张三和李四是什么关系？", "sources": ["graph"], "maxTokens": 300})
    assert answer.is_error is False
    data = answer.structured_content
    assert data is not None
    assert list(data) == ["intent", "sources", "items", "contextText", "warnings", "truncated"]
    assert (data["sources"], data["warnings"], data["truncated"]) == (["graph"], [], False)
    assert data["items"][0]["snippet"] == "张三 → 参与 → 项目A ← 参与 ← 李四"
    assert data["contextText"].startswith("【图谱关联】\n[1] 张三（人物）")


def test_lint_skill_by_id_and_by_path(pilot: SkillPilot, tmp_path: Path) -> None:
    by_id = call(pilot, "lint_skill", {"skill": "git-commit"}).structured_content
    assert by_id is not None
    assert [s["id"] for s in by_id["skills"]] == ["git-commit"]
    assert set(by_id["skills"][0]) == {"id", "key", "path", "score", "findings", "failing"}

    write_skill(tmp_path / "draft", "tidy", "name: tidy\ndescription: Tidy things.", body="Tidy up.\n")
    # A path outside the index's roots is refused; inside them it is linted.
    assert call(pilot, "lint_skill", {"path": str(tmp_path / "draft")}).is_error
    drafts = indexed(tmp_path / "drafts-home")
    drafts.index([tmp_path / "draft"])
    by_path = call(drafts, "lint_skill", {"path": str(tmp_path / "draft")}).structured_content
    assert by_path is not None
    (tidy,) = by_path["skills"]
    assert tidy["failing"] is True and by_path["failing"] == 1
    short = next(f for f in tidy["findings"] if f["code"] == "short-description")
    assert short["evidence"] == ["description: 'Tidy things.'"]
    assert short["fix"] and short["severity"] == "error"


@pytest.mark.parametrize(
    ("tool", "arguments", "argument", "allowed"),
    [
        ("find_skill", {"intent": "resize", "scope": "galaxy"}, "scope", ["all", "installed", "market"]),
        ("find_skill", {"intent": "resize", "top_k": 0}, "top_k", None),
        ("find_skill", {"intent": "resize", "top_k": "ten"}, "top_k", None),
        (
            "find_skill",
            {"intent": "resize", "filters": {"colour": ["red"]}},
            "filters",
            ["exclude_ids", "trust_tiers", "side_effects"],
        ),
        (
            "find_skill",
            {"intent": "resize", "filters": {"trust_tiers": ["gold"]}},
            "filters.trust_tiers",
            ["local", "official", "verified", "community"],
        ),
        (
            "find_skill",
            {"intent": "resize", "filters": {"exclude_ids": "git-commit"}},
            "filters.exclude_ids",
            None,
        ),
        ("ontoskill", {"top_k": 3}, "q", None),
        ("ontoskill", {"q": "  "}, "q", None),
        ("route", {"message": 42}, "message", None),
        (
            "omni_retrieve",
            {"query": "who is 张三", "sources": ["web"]},
            "sources",
            ["attachment", "knowledge", "graph"],
        ),
        ("omni_retrieve", {"query": "who is 张三", "maxTokens": 0}, "maxTokens", None),
        ("omni_retrieve", {"sessionId": "s1"}, "query", None),
        ("omni_retrieve", {"query": "x" * 32_001}, "query", None),
        ("lint_skill", {}, "skill", None),
        ("lint_skill", {"skill": "git-commit", "path": "."}, "skill", None),
        ("lint_skill", {"path": "/no/such/skill-folder"}, "path", None),
    ],
)
def test_bad_arguments_are_structured_errors(
    pilot: SkillPilot, tool: str, arguments: dict[str, Any], argument: str, allowed: list[str] | None
) -> None:
    answer = call(pilot, tool, arguments)
    assert answer.is_error is True
    assert answer.structured_content is not None
    error = answer.structured_content["error"]
    assert (error["code"], error["argument"]) == ("invalid_argument", argument)
    assert error.get("allowed") == allowed
    assert "Traceback" not in answer.content[0].text  # type: ignore[union-attr]


def test_stdio_session_with_a_real_process_writes_only_protocol(pilot: SkillPilot) -> None:
    stray: list[Exception] = []

    async def record(message: object) -> None:
        # Any line on stdout that is not a JSON-RPC message reaches the client as an exception.
        if isinstance(message, Exception):
            stray.append(message)

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillpilot", "mcp", "--home", str(pilot.settings.home)],
        env={**os.environ, "SKILLPILOT_PRECONDITIONS": "off"},
    )

    async def session() -> tuple[CallToolResult, CallToolResult, str]:
        async with Client(params, message_handler=record) as client:
            routed = await client.call_tool("route", {"message": "Cut the boring first minute out of my video"})
            context = await client.call_tool("ontoskill", {"q": "video-trim"})
            schema = (await client.read_resource("ontology://schema")).contents[0]
            return routed, context, schema.text  # type: ignore[union-attr]

    routed, context, schema = anyio.run(session)
    assert stray == []
    assert routed.structured_content is not None
    assert (routed.structured_content["skill"]["id"], routed.structured_content["decision"]) == (
        "video-trim",
        "hard",
    )
    assert context.structured_content is not None
    assert context.structured_content["skill"]["qualified_id"] == "local/video-trim"
    assert json.loads(schema)["tools"]["route"] == {"message": "string"}


def test_mcp_without_the_extra_says_how_to_install_it(tmp_path: Path) -> None:
    # A None entry in sys.modules makes `import mcp` fail exactly as if it were not installed.
    code = (
        "import sys; sys.modules['mcp'] = None; sys.argv = ['skillpilot', 'mcp']; "
        "from skillpilot.cli import main; main()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SKILLPILOT_HOME": str(tmp_path)},
    )
    assert proc.returncode == 1
    assert "install it with `pip install 'skillpilot[mcp]'`" in proc.stderr
    assert proc.stdout == ""


def test_streamable_http_session_with_a_real_process(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "skillpilot", "mcp", "--http", str(port), "--home", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Nothing is routed: the server need not warm the models (the stdio test above does).
        env={**os.environ, "SKILLPILOT_ENABLE_SEMANTIC": "false"},
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            assert time.monotonic() < deadline, "the server never listened"
            with socket.socket() as client:
                if client.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)

        async def session() -> tuple[set[str], str]:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                tools = {t.name for t in (await client.list_tools()).tools}
                schema = (await client.read_resource("ontology://schema")).contents[0]
                return tools, schema.text  # type: ignore[union-attr]

        tools, schema = anyio.run(session)
    finally:
        server.terminate()
        stdout, stderr = server.communicate(timeout=60)
    assert tools == TOOLS
    assert json.loads(schema)["prefix"] == "local"
    assert stdout == ""
    assert f"SkillPilot MCP server on http://127.0.0.1:{port}/mcp" in stderr
