"""The OpenClaw guide's plugin commands (docs/hosts/openclaw.md; the README shows the same block),
run as written with OpenClaw's own CLI in a clean HOME.

Marked ``real_cli`` (CI-only, a minute or more: each openclaw command starts its whole CLI).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from .conftest import REPO
from .openclaw_util import require_openclaw
from .surfaces_util import cli

pytestmark = pytest.mark.real_cli


GUIDE = REPO / "docs" / "hosts" / "openclaw.md"


def marked_block(marker: str, page: Path = GUIDE) -> str:
    """The bash block of ``page`` between ``<!-- marker -->`` and ``<!-- /marker -->``."""
    text = page.read_text(encoding="utf-8")
    found = re.search(rf"<!-- {marker} -->\n```bash\n(.*?)```\n<!-- /{marker} -->", text, re.S)
    assert found, f"{page} has no {marker} block"
    return found.group(1)


def test_the_documented_plugin_commands_install_and_enable_the_plugin(tmp_path: Path) -> None:
    node, openclaw = require_openclaw()
    script = marked_block("openclaw-plugin").replace("/path/to/skillpilot", str(REPO))
    assert not (REPO / "adapters" / "openclaw" / "node_modules").exists(), "the plugin folder must ship bare"
    bin_dirs = f"{node.parent}{os.pathsep}{openclaw.parent / '.bin'}"
    env = {"PATH": f"{bin_dirs}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(tmp_path)}
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Linked plugin path: " + str(REPO / "adapters" / "openclaw") in proc.stdout
    assert "blocked" not in proc.stdout + proc.stderr, proc.stdout
    assert "checks passed" in proc.stdout, proc.stdout
    config = json.loads((tmp_path / ".openclaw" / "openclaw.json").read_text(encoding="utf-8"))
    entry = config["plugins"]["entries"]["skillpilot"]
    assert entry == {"enabled": True, "hooks": {"allowConversationAccess": True}}
    assert str(REPO / "adapters" / "openclaw") in config["plugins"]["load"]["paths"]
    # OpenClaw is a host of the registry: `doctor openclaw` reads the config these commands left.
    config_path = str(tmp_path / ".openclaw" / "openclaw.json")
    doctor = json.loads(
        cli("doctor", "openclaw", "--json", home=tmp_path / "sp", OPENCLAW_CONFIG_PATH=config_path).stdout
    )
    assert [c["ok"] for c in doctor["hosts"]["openclaw"]["checks"]] == [True]
