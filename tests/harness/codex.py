"""What the real-CLI tests read from a Codex CLI model request beyond what ``skillpilot eval host``
needs (that part is :mod:`skillpilot.bench.hostcli.codex`)."""

from __future__ import annotations

import re

from skillpilot.bench.hostcli import Recorded
from skillpilot.bench.hostcli.codex import SKILL_LINE, listing_text

ROOT_LINE = re.compile(r"^- `(r\d+)` = `(.*)`$", re.M)


def listing_paths(request: Recorded) -> dict[str, str]:
    """Skill name -> the SKILL.md path Codex's listing gives (its root table expanded)."""
    text = listing_text(request)
    roots = dict(ROOT_LINE.findall(text))
    paths = {}
    for name, _, short in SKILL_LINE.findall(text):
        root, _, rest = short.partition("/")
        paths[name] = f"{roots[root]}/{rest}" if root in roots else short
    return paths


def replied_to_tool(request: Recorded) -> bool:
    """Whether the request carries a tool result (the model's second step of a turn)."""
    items = request.body.get("input", [])
    return bool(items) and isinstance(items[-1], dict) and items[-1].get("type") == "function_call_output"
