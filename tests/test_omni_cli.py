"""The omni-retrieval commands as a user runs them: real processes, stdout vs stderr, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from .cli_util import CliOutcome, run_cli


def run(*args: str, home: Path) -> CliOutcome:
    return run_cli(*args, home=home, SKILLPILOT_ENABLE_SEMANTIC="false")


def test_context_with_nothing_configured_exits_0_with_warnings(isolated_home: Path) -> None:
    proc = run("context", "张三和李四是什么关系？", "--json", home=isolated_home)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert (result["intent"], result["sources"], result["items"], result["contextText"]) == (
        "GRAPH",
        ["graph"],
        [],
        "",
    )
    assert result["warnings"] == [
        "graph: unavailable: graph space 'default' holds no triples; load some with "
        "`skillpilot graph load FILE --space default`"
    ]
    assert "warning: graph: unavailable" in proc.stderr
    assert not (isolated_home / "omni").exists()  # asking created no empty stores


def test_sources_are_built_by_commands_then_fused(isolated_home: Path, tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "deploy.md").write_text("# 部署步骤\n\n先执行数据库迁移，再滚动发布服务。", encoding="utf-8")
    built = run("kb", "build", "ops", str(kb), "--json", home=isolated_home)
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["added"] == ["deploy.md"]
    assert json.loads(run("kb", "list", "--json", home=isolated_home).stdout) == {"ops": ["deploy.md"]}

    memo = tmp_path / "memo.md"
    memo.write_text("项目A由张三负责，下周上线。", encoding="utf-8")
    attached = run("attach", "s1", str(memo), home=isolated_home)
    assert (attached.returncode, attached.stdout) == (0, "")
    assert "attachment 's1': 1 added" in attached.stderr

    triples = tmp_path / "t.json"
    triples.write_text(json.dumps([{"subject": "张三", "predicate": "负责", "object": "项目A"}]), encoding="utf-8")
    loaded = run("graph", "load", str(triples), "--json", home=isolated_home)
    assert json.loads(loaded.stdout)["triples"] == 1

    proc = run(
        "context",
        "项目A的部署步骤是什么，谁负责？",
        "--session",
        "s1",
        "--source",
        "knowledge",
        "--source",
        "graph",
        "--json",
        home=isolated_home,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["sources"] == ["knowledge", "graph"]
    assert [(i["source"], i.get("chunkId") or i.get("entityName")) for i in result["items"]] == [
        ("graph", "项目A"),
        ("knowledge", "ops:deploy.md:chunk-0"),
    ]
    assert result["contextText"] == (
        "【知识库片段】\n[2] ops/deploy.md: # 部署步骤 先执行数据库迁移，再滚动发布服务。\n\n"
        "【图谱关联】\n[1] 项目A: 张三 → 负责 → 项目A"
    )
    human = run("context", "项目A的部署步骤是什么，谁负责？", "--source", "graph", home=isolated_home)
    assert human.stdout == "【图谱关联】\n[1] 项目A: 张三 → 负责 → 项目A\n"
    assert "intent" in human.stderr


def test_usage_and_document_errors_have_their_exit_codes(isolated_home: Path, tmp_path: Path) -> None:
    bad_source = run("context", "q", "--source", "web", home=isolated_home)
    assert bad_source.returncode == 2
    assert "web: use attachment, knowledge, graph" in bad_source.stderr
    missing = run("attach", "s1", str(tmp_path / "gone.pdf"), home=isolated_home)
    assert missing.returncode == 1
    assert f"{tmp_path / 'gone.pdf'}: no such file" in missing.stderr
