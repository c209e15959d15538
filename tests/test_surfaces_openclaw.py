"""The OpenClaw plugin against the real `openclaw` package and a real service on 127.0.0.1.

The plugin's own tests (``adapters/openclaw/test/``, Node's test runner) load it with OpenClaw's
plugin loader and fire its hooks with OpenClaw's hook runner; this test gives them a running
service. It needs Node >= 24.16 and openclaw in ``$OPENCLAW_PREFIX`` (the OpenClaw guide's install
commands; `.ci/run` runs them into /opt/openclaw). Marked ``real_cli``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from skillpilot.serve import ServeInfo, write_serve_file  # noqa: E402
from skillpilot.serve.http import create_app  # noqa: E402

from .conftest import REPO  # noqa: E402
from .openclaw_util import require_openclaw  # noqa: E402
from .surfaces_util import indexed, uvicorn_on_loopback  # noqa: E402

PLUGIN = REPO / "adapters" / "openclaw"

pytestmark = pytest.mark.real_cli


@pytest.mark.openclaw
def test_plugin_runs_inside_openclaw(tmp_path: Path) -> None:
    node, openclaw = require_openclaw()
    home = tmp_path / "home"
    pilot = indexed(home, show_routing_info=True)
    with uvicorn_on_loopback(create_app(pilot)) as url:
        write_serve_file(home, ServeInfo(url=url, pid=os.getpid()))
        proc = subprocess.run(
            [str(node), "--test", str(PLUGIN / "test" / "plugin.test.mjs")],
            cwd=PLUGIN,
            capture_output=True,
            text=True,
            timeout=300,
            # OpenClaw keeps its state under HOME: a throwaway one, never the user's.
            env={
                **os.environ,
                "SKILLPILOT_HOME": str(home),
                "HOME": str(tmp_path / "openclaw-home"),
                "OPENCLAW_DIR": str(openclaw),
            },
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ℹ pass 4" in proc.stdout and "ℹ fail 0" in proc.stdout
