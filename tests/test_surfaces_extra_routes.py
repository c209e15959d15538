"""The service's extra routes (/context, /lint, /plan) on a real uvicorn on 127.0.0.1."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.omni import load_triples  # noqa: E402
from skillpilot.serve.http import create_app  # noqa: E402

from .conftest import write_skill  # noqa: E402
from .surfaces_util import indexed, uvicorn_on_loopback  # noqa: E402

TRIPLES = "subject,predicate,object,subject_type,object_type\n张三,参与,项目A,人物,项目\n李四,参与,项目A,人物,项目\n"


def post(url: str, path: str, data: Any, **headers: str) -> tuple[int, Any]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.request(
            "POST",
            path,
            body=json.dumps(data).encode("utf-8"),
            headers={"Content-Type": "application/json", **headers},
        )
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Any:
    home = tmp_path_factory.mktemp("extra-routes")
    pilot: SkillPilot = indexed(home / "home")
    (home / "triples.csv").write_text(TRIPLES, encoding="utf-8")
    load_triples(pilot.settings, home / "triples.csv", "default")
    with uvicorn_on_loopback(create_app(pilot)) as base:
        yield base


def test_context_answers_omni_retrieval_in_camel_case(url: str) -> None:
    status, data = post(url, "/context", {"query": "张三和李四是什么关系？", "sources": ["graph"], "topK": 2})
    assert status == 200
    assert list(data) == ["intent", "sources", "items", "contextText", "warnings", "truncated"]
    assert (data["sources"], data["warnings"]) == (["graph"], [])
    assert data["items"][0] == {
        "source": "graph",
        "score": 1.0,
        "entityName": "张三",
        "entityType": "人物",
        "snippet": "张三 → 参与 → 项目A ← 参与 ← 李四",
    }
    assert data["contextText"].startswith("【图谱关联】\n[1] 张三（人物）")
    status, bad = post(url, "/context", {"query": "x", "sources": ["web"]})
    assert (status, bad["error"]["type"], bad["error"]["details"][0]["field"]) == (
        422,
        "InvalidRequest",
        "sources.0",
    )
    assert post(url, "/context", {"query": "x", "top_k": 3})[0] == 422


def test_lint_by_skill_or_path(url: str, tmp_path: Path) -> None:
    status, data = post(url, "/lint", {"skill": "git-commit"})
    assert status == 200
    assert [s["id"] for s in data["skills"]] == ["git-commit"]
    write_skill(tmp_path / "draft", "tidy", "name: tidy\ndescription: Tidy things.", body="Tidy up.\n")
    # A path outside the served index's roots is refused; inside them it is linted.
    status, refused = post(url, "/lint", {"path": str(tmp_path / "draft")})
    assert (status, refused["error"]["type"]) == (400, "InvalidRequest")
    drafts = indexed(tmp_path / "drafts-home")
    drafts.index([tmp_path / "draft"])
    with uvicorn_on_loopback(create_app(drafts)) as drafts_url:
        status, data = post(drafts_url, "/lint", {"path": str(tmp_path / "draft")})
    assert status == 200
    (tidy,) = data["skills"]
    assert (tidy["id"], tidy["failing"], data["failing"]) == ("tidy", True, 1)
    short = next(f for f in tidy["findings"] if f["code"] == "short-description")
    assert short["evidence"] == ["description: 'Tidy things.'"] and short["fix"]
    status, missing = post(url, "/lint", {"skill": "git-comit"})
    assert (status, missing["error"]["type"]) == (404, "SkillNotFoundError")
    status, both = post(url, "/lint", {"skill": "git-commit", "path": "."})
    assert (status, both["error"]["type"]) == (400, "InvalidRequest")
    assert post(url, "/lint", {"path": str(tmp_path / "nowhere")})[0] == 400


def test_plan_splits_at_every_marker(url: str) -> None:
    message = "commit my changes and write the changelog for the release"
    status, routed = post(url, "/route", {"message": message})
    assert (status, routed["plan"]) == (200, [])
    status, planned = post(url, "/plan", {"message": message})
    assert status == 200
    assert planned["skill"]["id"] in {"git-commit", "changelog-writer"}
    assert [(s["text"], s["skill"]["id"]) for s in planned["plan"]] == [
        ("commit my changes", "git-commit"),
        ("write the changelog for the release", "changelog-writer"),
    ]
    assert post(url, "/plan", {"message": ""})[0] == 422


def test_extra_routes_need_the_token(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home")
    with uvicorn_on_loopback(create_app(pilot, token="s3cret")) as base:
        for path, body in (
            ("/context", {"query": "x"}),
            ("/lint", {"skill": "git-commit"}),
            ("/plan", {"message": "x"}),
        ):
            assert post(base, path, body)[0] == 401
        status, planned = post(base, "/plan", {"message": "commit my changes"}, Authorization="Bearer s3cret")
        assert (status, planned["skill"]["id"]) == (200, "git-commit")
