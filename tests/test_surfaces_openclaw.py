"""The OpenClaw plugin against the real `openclaw` package and a real service on 127.0.0.1.

The plugin's own tests (``adapters/openclaw/test/``, Node's test runner) load it with OpenClaw's
plugin loader and fire its hooks with OpenClaw's hook runner; this test gives them a running
service. It needs Node >= 24.16 and openclaw installed: ``cd adapters/openclaw && npm install``
(both come from the npm registry as that package's devDependencies).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from skillpilot.serve import ServeInfo, write_serve_file  # noqa: E402
from skillpilot.serve.http import create_app  # noqa: E402

from .conftest import REPO  # noqa: E402
from .surfaces_util import indexed, uvicorn_on_loopback  # noqa: E402

PLUGIN = REPO / "adapters" / "openclaw"
MIN_NODE = (24, 16)


def node_24() -> str | None:
    """The plugin's own Node (its devDependency), else a new enough ``node`` on PATH."""
    for node in (PLUGIN / "node_modules" / ".bin" / "node", shutil.which("node")):
        if node is None or not Path(node).exists():
            continue
        version = subprocess.run([str(node), "--version"], capture_output=True, text=True).stdout
        major, minor = (int(part) for part in version.strip().lstrip("v").split(".")[:2])
        if (major, minor) >= MIN_NODE:
            return str(node)
    return None


@pytest.mark.openclaw
def test_plugin_runs_inside_openclaw(tmp_path: Path) -> None:
    node = node_24()
    if node is None or not (PLUGIN / "node_modules" / "openclaw" / "package.json").exists():
        message = "needs `npm ci` in adapters/openclaw (Node 24 and openclaw 2026.9.x)"
        if os.environ.get("CI"):
            pytest.fail(message + "; .ci/run installs them")
        pytest.skip(message)
    home = tmp_path / "home"
    pilot = indexed(home, show_routing_info=True)
    with uvicorn_on_loopback(create_app(pilot)) as url:
        write_serve_file(home, ServeInfo(url=url, pid=os.getpid()))
        proc = subprocess.run(
            [node, "--test", str(PLUGIN / "test" / "plugin.test.mjs")],
            cwd=PLUGIN,
            capture_output=True,
            text=True,
            timeout=300,
            # OpenClaw keeps its state under HOME: a throwaway one, never the user's.
            env={**os.environ, "SKILLPILOT_HOME": str(home), "HOME": str(tmp_path / "openclaw-home")},
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ℹ pass 4" in proc.stdout and "ℹ fail 0" in proc.stdout
