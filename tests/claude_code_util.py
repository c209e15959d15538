"""Finding the real Claude Code CLI for the tests that drive it (``skillpilot.bench.hostcli.claude_code``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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


SRC = Path(__file__).resolve().parents[1] / "src"


def setup_hooks(home: Path, skillpilot_home: Path, *args: str) -> dict[str, Any]:
    """``skillpilot setup claude-code ARGS`` as a user runs it, with ``home`` as HOME (``--no-start``
    where the test serves the home itself); its JSON report."""
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(SRC), "SKILLPILOT_HOME": str(skillpilot_home)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    command = [sys.executable, "-m", "skillpilot", "setup", "claude-code", "--json", *args]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    assert report["path"] == str(home / ".claude" / "settings.json")
    return report
