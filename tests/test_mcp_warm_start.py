"""`skillpilot mcp` loads its models in the background from the start: a real stdio MCP session
gets `initialize` answered before the load is over, and its first route does not pay the load."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from .surfaces_util import indexed  # noqa: E402


def test_initialize_is_answered_while_the_models_load_and_the_first_route_is_warm(tmp_path: Path) -> None:
    home = tmp_path / "home"
    indexed(home).close()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillpilot", "mcp", "--home", str(home)],
        env={**os.environ, "SKILLPILOT_PRECONDITIONS": "off"},
    )

    async def session() -> tuple[float, dict[str, object]]:
        async with Client(params) as client:
            # Entering the client spawned the process and completed `initialize`; the route
            # is asked at once, so it waits for whatever is left of the background load.
            asked = time.perf_counter()
            routed = await client.call_tool("route", {"message": "Cut the boring first minute out of my video"})
            waited_ms = (time.perf_counter() - asked) * 1000
            assert routed.structured_content is not None
            return waited_ms, routed.structured_content

    waited_ms, result = anyio.run(session)
    assert result["decision"] == "hard"
    assert result["skill"]["id"] == "video-trim"  # type: ignore[index]
    routing_ms = float(result["latency_ms"])  # type: ignore[arg-type]
    # The call waited far longer than its own routing took: it queued behind the warm-up, which
    # was therefore still loading after `initialize` had been answered. Had the route loaded the
    # models itself, its own time would hold the load (``load_ms``; in ``latency_ms`` before
    # the two were told apart).
    assert waited_ms > 5 * routing_ms, (waited_ms, routing_ms)
    assert result.get("load_ms", 0.0) == 0.0
