"""Bounded lint on the service (real uvicorn on 127.0.0.1, real MCP client session): a path only
under the index's skill roots, one skill linted alone (same report as in a whole-index lint),
and routes answered while a lint runs (the lint never holds the routing lock)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from skillpilot import SkillPilot
from skillpilot.lint import lint

from .conftest import write_skill

pytest.importorskip("fastapi")

from skillpilot.serve import calls  # noqa: E402
from skillpilot.serve.http import create_app  # noqa: E402

from .surfaces_util import uvicorn_on_loopback  # noqa: E402
from .test_hardening_serve import send  # noqa: E402


@pytest.fixture()
def catalog(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "git-commit", "name: git-commit\ndescription: Use when the user wants to commit changes to git.")
    write_skill(root, "git-push", "name: git-push\ndescription: Use when the user wants to push commits to a remote.")
    write_skill(root, "image-resize", "name: image-resize\ndescription: Resize images.", "- resize a png\n")
    return root


@pytest.fixture()
def pilot(catalog: Path, tmp_path: Path) -> SkillPilot:
    router = SkillPilot(home=tmp_path / "home", enable_semantic=False, preconditions=False)
    router.index([catalog])
    return router


def test_one_skill_is_linted_alone_with_its_whole_index_report(pilot: SkillPilot) -> None:
    settings = pilot.settings.with_overrides(feedback_enabled=False)
    checker = SkillPilot(settings=settings, store=pilot.store)
    everyone = {r.id: r for r in lint(checker)}
    for skill_id in everyone:
        assert lint(checker, only={skill_id}) == [everyone[skill_id]]


def test_http_lints_paths_only_under_the_skill_roots(pilot: SkillPilot, catalog: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    write_skill(outside, "x", "name: x\ndescription: Use when something outside the roots is needed.")
    with uvicorn_on_loopback(create_app(pilot)) as url:
        for path in ("/", str(outside), str(catalog / ".." / "elsewhere"), str(tmp_path)):
            status, answer = send(url, "POST", "/lint", json.dumps({"path": path}).encode())
            assert status == 400 and answer["error"]["type"] == "InvalidRequest", path
            assert "outside the skill roots" in answer["error"]["message"]
            assert "skillpilot lint PATH" in answer["error"]["message"]
        status, answer = send(url, "POST", "/lint", json.dumps({"path": str(catalog / "image-resize")}).encode())
        assert (status, [s["id"] for s in answer["skills"]]) == (200, ["image-resize"])


def test_mcp_lints_paths_only_under_the_skill_roots(pilot: SkillPilot, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from skillpilot.serve.mcp import build_server

    async def session() -> Any:
        async with Client(build_server(pilot)) as client:
            return await client.call_tool("lint_skill", {"path": str(tmp_path)})

    answer = anyio.run(session)
    assert answer.is_error
    assert answer.structured_content["error"]["code"] == "invalid_argument"
    assert "outside the skill roots" in answer.structured_content["error"]["message"]


def test_routes_are_answered_while_a_lint_runs(pilot: SkillPilot, monkeypatch: pytest.MonkeyPatch) -> None:
    started, release = threading.Event(), threading.Event()
    real_lint = calls.lint

    def slow_lint(*args: Any, **kwargs: Any) -> Any:
        started.set()
        assert release.wait(60), "the test never released the lint"
        return real_lint(*args, **kwargs)

    monkeypatch.setattr(calls, "lint", slow_lint)
    with uvicorn_on_loopback(create_app(pilot)) as url:
        linted: list[Any] = []
        body = json.dumps({"skill": "git-commit"}).encode()
        worker = threading.Thread(target=lambda: linted.append(send(url, "POST", "/lint", body)))
        worker.start()
        assert started.wait(60)
        # The lint is mid-way: a route must still get its answer now, not after the lint.
        status, routed = send(url, "POST", "/route", json.dumps({"message": "commit my changes"}).encode())
        assert (status, routed["skill"]["id"]) == (200, "git-commit")
        assert not linted
        release.set()
        worker.join(60)
    assert linted[0][0] == 200 and [s["id"] for s in linted[0][1]["skills"]] == ["git-commit"]
