"""`skillpilot service`: one resident service per home, started, reported and stopped by real processes."""

from __future__ import annotations

import json
import plistlib
import sys
from pathlib import Path

import pytest

from skillpilot.serve import service

from .surfaces_util import cli, cli_process, indexed


@pytest.fixture
def keyword_home(tmp_path: Path) -> Path:
    """A home with the example skills indexed; keyword matching only, so its service starts in a second."""
    home = tmp_path / "home"
    indexed(home).close()
    (home / "config.yaml").write_text("router:\n  enableSemantic: false\n", encoding="utf-8")
    return home


def test_start_status_second_start_second_serve_and_stop(keyword_home: Path) -> None:
    home = keyword_home
    try:
        started = cli("service", "start", "--json", home=home)
        assert started.returncode == 0, started.stderr
        first = json.loads(started.stdout)
        assert first["started"] is True and first["running"] is True and first["skills"] == 16
        advertised = (home / "serve.json").read_text(encoding="utf-8")
        assert json.loads(advertised)["pid"] == first["pid"]

        again = json.loads(cli("service", "start", "--json", home=home).stdout)
        assert (again["started"], again["pid"], again["url"]) == (False, first["pid"], first["url"])

        cli("route", "commit my changes", home=home)  # in-process: not one of the service's routes
        # A real process: were the lock not held, this serve would not return.
        second = cli_process("serve", "--port", "0", home=home)
        assert second.returncode == 1
        assert f"service for {home}: one already runs (pid {first['pid']}, {first['url']})" in second.stderr
        assert (home / "serve.json").read_text(encoding="utf-8") == advertised

        restarted = json.loads(cli("service", "restart", "--json", home=home).stdout)
        assert restarted["stopped"] == first["pid"] and restarted["running"] is True
        assert restarted["pid"] != first["pid"]
        first = {**first, "pid": restarted["pid"], "url": restarted["url"]}

        up = cli("service", "status", "--json", home=home)
        assert up.returncode == 0
        status = json.loads(up.stdout)
        assert {k: status[k] for k in ("running", "pid", "url", "skills")} == {
            "running": True,
            "pid": first["pid"],
            "url": first["url"],
            "skills": 16,
        }
        assert status["uptime_s"] >= 0 and status["generation"] >= 1
        assert (status["recent_routes"], status["route_p50_ms"]) == (0, None)
    finally:
        stopped = cli("service", "stop", "--json", home=home)
    assert json.loads(stopped.stdout) == {"stopped": True, "pid": first["pid"]}
    assert not (home / "serve.json").exists()
    down = cli("service", "status", "--json", home=home)
    assert (down.returncode, json.loads(down.stdout)["running"]) == (1, False)
    assert json.loads(cli("service", "stop", "--json", home=home).stdout) == {"stopped": False, "pid": None}


def test_status_counts_the_services_recent_routes(keyword_home: Path) -> None:
    import urllib.request

    try:
        current, _ = service.start(keyword_home)
        assert current.url is not None
        for _ in range(3):
            request = urllib.request.Request(
                current.url + "/route",
                data=b'{"message": "commit my changes"}',
                headers={"Content-Type": "application/json"},
            )
            urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10).read()
        later = service.status(keyword_home)
        assert later.recent_routes == 3 and later.route_p50_ms is not None and later.route_p50_ms > 0
        human = cli("service", "status", home=keyword_home)
        assert f"service pid {current.pid} at {current.url}" in human.stdout and "over 3 recent routes" in human.stdout
    finally:
        service.stop(keyword_home)


def test_systemd_unit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    home = tmp_path / "my home"
    proc = cli("service", "install", "--kind", "systemd", "--json", home=home)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    path = tmp_path / "config" / "systemd" / "user" / "skillpilot.service"
    assert answer == {
        "kind": "systemd",
        "path": str(path),
        "enable": "systemctl --user daemon-reload && systemctl --user enable --now skillpilot.service",
    }
    assert path.read_text(encoding="utf-8") == (
        "[Unit]\nDescription=SkillPilot skill router (resident service)\n\n[Service]\n"
        f'ExecStart={sys.executable} -m skillpilot serve --port 0 --home "{home}"\n'
        f'Environment="SKILLPILOT_HOME={home}"\nRestart=on-failure\nRestartSec=5\n\n'
        "[Install]\nWantedBy=default.target\n"
    )


def test_launchd_agent(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = service.install_unit("launchd", home, user_home=tmp_path)
    assert path == tmp_path / "Library" / "LaunchAgents" / "dev.skillpilot.service.plist"
    assert plistlib.loads(path.read_bytes()) == {
        "Label": "dev.skillpilot.service",
        "ProgramArguments": [sys.executable, "-m", "skillpilot", "serve", "--port", "0", "--home", str(home)],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardErrorPath": str(home / "serve.log"),
        "EnvironmentVariables": {"SKILLPILOT_HOME": str(home)},
    }
    assert service.enable_hint("launchd", path) == f"launchctl bootstrap gui/$(id -u) {path}"
