"""Finding the real Claude Code CLI for the tests that drive it (``skillpilot.bench.hostcli.claude_code``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillpilot.bench.hostcli.claude_code import CLAUDE_CODE_PREFIX, find_claude_binary


def claude_binary() -> Path:
    """The real Claude Code binary. Skips the test when it is missing; with ``CI=true`` it is
    required, so its absence fails."""
    binary = find_claude_binary()
    if binary is not None:
        return binary
    message = (
        f"the Claude Code CLI is not installed (npm install --prefix {CLAUDE_CODE_PREFIX} @anthropic-ai/claude-code)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message + "; .ci/run installs it")
    pytest.skip(message)
