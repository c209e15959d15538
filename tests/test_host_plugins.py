"""A host arrives from a distribution, in the files a third party writes: its module and the
dist-info that declares it in the ``skillpilot.hosts`` entry-point group (METADATA and
entry_points.txt, as pip leaves them). Nothing of SkillPilot changes: ``setup echo`` writes its
hook file, ``doctor echo`` checks it, and ``POST /hook/echo`` routes over its skills and names
them its way."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import REPO, write_plugin
from .surfaces_util import SKILLS

PROBE = """
import json, os, sys
from pathlib import Path
from fastapi.testclient import TestClient
from skillpilot import SkillPilot
from skillpilot.adapters.hosts import available_hosts
from skillpilot.serve.http import create_app
from skillpilot.adapters.hook_client import HOOK_KEY_HEADER, hook_key
from skillpilot.serve import home_key

pilot = SkillPilot(home=Path(sys.argv[1]), preconditions=False)
pilot.index([Path(os.environ["ECHO_HOME"]) / "skills"])
client = TestClient(create_app(pilot), base_url="http://127.0.0.1")
key = {HOOK_KEY_HEADER: hook_key(home_key(pilot.settings.home))}
ask = {"hook_event_name": "ask", "session_id": "s", "text": "commit my changes"}
used = {"hook_event_name": "used", "session_id": "s", "skill": "echo:git-commit"}
ask, used = (client.post("/hook/echo", headers=key, json=event) for event in (ask, used))
print(json.dumps({"hosts": available_hosts(), "ask": ask.json()["output"], "used": used.status_code}))
"""


def test_a_host_from_an_installed_distribution_is_served_set_up_and_checked(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    site.mkdir()
    shutil.copy(REPO / "tests" / "fixtures" / "echo_host" / "skillpilot_echo_host.py", site)
    write_plugin(site, "skillpilot-echo-host", "skillpilot.hosts", {"echo": "skillpilot_echo_host:HOST"})
    echo = tmp_path / "echo"
    shutil.copytree(SKILLS / "git-commit", echo / "skills" / "git-commit")
    env = {
        **os.environ,
        "ECHO_HOME": str(echo),
        "SKILLPILOT_HOME": str(tmp_path / "home"),
        # Keyword matching only: no model loads in the three processes, so the test is quick.
        "SKILLPILOT_ENABLE_SEMANTIC": "false",
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(site)]),
    }

    def skillpilot(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "skillpilot", *args], env=env, capture_output=True, text=True, timeout=300
        )

    setup = skillpilot("setup", "echo", "--json")
    assert setup.returncode == 0, setup.stderr
    assert json.loads(setup.stdout)["service"]["started"] is True
    hooks = json.loads((echo / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert sorted(hooks) == ["ask", "used"] and hooks["used"][0]["matcher"] == "skill"
    assert hooks["ask"][0]["hooks"][0]["command"].split()[-3:] == ["echo", "--home", str(tmp_path / "home")]
    doctor = json.loads(skillpilot("doctor", "echo", "--json").stdout)
    assert doctor["hosts"]["echo"]["checks"][0]["ok"] is True
    assert doctor["hosts"]["echo"]["offered"]["skills"] == ["echo:git-commit"]
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "probe")], env=env, capture_output=True, text=True, timeout=300
    )
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert {"claude-code", "codex", "echo", "gemini", "openclaw"} <= set(found["hosts"])
    assert found["ask"]["say"].splitlines()[:2] == [
        "SkillPilot routed this prompt to the skill `echo:git-commit` (confidence 0.95).",
        "Before anything else, run the skill `echo:git-commit` with its /skill command, then follow its instructions.",
    ]
    assert found["used"] == 200
    removed = skillpilot("setup", "echo", "--uninstall", "--json")
    assert removed.returncode == 0 and not (echo / "hooks.json").exists()
    assert json.loads(removed.stdout)["service"]["stopped"] is True  # no other host uses it
