"""``find_skill`` over HTTP (``POST /find_skill``, a real uvicorn on 127.0.0.1) takes the MCP tool's
arguments and gives the MCP tool's answer, and both refuse the same out-of-range arguments."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.limits import MAX_MESSAGE_CHARS, MAX_TOP_K  # noqa: E402
from skillpilot.serve.http import create_app  # noqa: E402

from .surfaces_util import indexed, uvicorn_on_loopback  # noqa: E402
from .test_surfaces_mcp import call  # noqa: E402

ASKED = [
    {"intent": "", "scope": "installed", "top_k": 3},
    {"intent": "resize banner.png to 1200 pixels wide", "scope": "installed", "top_k": 2},
    {"intent": "", "scope": "installed", "top_k": MAX_TOP_K, "filters": {"side_effects": ["read-only"]}},
    {"intent": "resize an image", "scope": "all", "top_k": 3},
]


def _post(url: str, data: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        url + "/find_skill", json.dumps(data).encode("utf-8"), {"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> SkillPilot:
    return indexed(tmp_path_factory.mktemp("find-home"), enable_semantic=False)


def test_http_answers_as_the_mcp_tool(pilot: SkillPilot) -> None:
    with uvicorn_on_loopback(create_app(pilot)) as url:
        answers = [_post(url, arguments) for arguments in ASKED]
    for arguments, (status, answer) in zip(ASKED, answers, strict=True):
        assert status == 200, answer
        assert answer == call(pilot, "find_skill", arguments).structured_content, arguments
    assert [r["id"] for r in answers[0][1]["results"]] == ["aws-cost-report", "calendar-schedule", "changelog-writer"]
    assert answers[1][1]["results"][0]["id"] == "image-resize"


@pytest.mark.parametrize(
    ("arguments", "argument"),
    [
        ({"intent": "resize", "top_k": 0}, "top_k"),
        ({"intent": "resize", "top_k": MAX_TOP_K + 1}, "top_k"),
        ({"intent": "x" * (MAX_MESSAGE_CHARS + 1)}, "intent"),
        ({"intent": "resize", "scope": "galaxy"}, "scope"),
        ({"intent": "resize", "filters": {"colour": ["red"]}}, "filters"),
    ],
)
def test_both_refuse_the_same_arguments(pilot: SkillPilot, arguments: dict[str, Any], argument: str) -> None:
    with uvicorn_on_loopback(create_app(pilot)) as url:
        status, answer = _post(url, arguments)
    assert status == 422
    assert answer["error"]["details"][0]["field"] == argument
    tool = call(pilot, "find_skill", arguments)
    assert tool.is_error and tool.structured_content is not None
    assert tool.structured_content["error"]["argument"] == argument
