"""What the real-CLI tests read from a Gemini CLI model request beyond what ``skillpilot eval host``
needs (that part is :mod:`skillpilot.bench.hostcli.gemini`)."""

from __future__ import annotations

from skillpilot.bench.hostcli import Recorded


def replied_to_tool(request: Recorded) -> bool:
    """Whether the request carries a tool result (the model's second step of a turn)."""
    contents = request.body.get("contents", [])
    last = contents[-1] if contents else {}
    return any(isinstance(p, dict) and "functionResponse" in p for p in last.get("parts", []))
