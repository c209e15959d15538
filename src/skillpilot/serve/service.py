"""The resident service as something that runs itself: start, stop, status, and a user unit.

Input: a SkillPilot home. One service per home: whoever holds ``serve.lock`` is it (a starting
service holds it before its models load, and writes its pid into it), and only the holder writes
or removes ``serve.json``. Output: :class:`ServiceStatus`.

    start(home)         spawn ``skillpilot serve --port 0`` detached and wait until it answers;
                        a running (or starting) service is reported and left alone
    stop(home)          SIGTERM (SIGKILL after ``timeout``); ``serve.json`` is gone afterwards
    status(home)        pid, URL, uptime, index generation, skill count, p50 of recent routes
    unit_file(kind)     a systemd user unit (Linux) or launchd agent (macOS) that runs it at login

Needs no server framework itself (the service it starts does).
"""

from __future__ import annotations

import contextlib
import os
import plistlib
import signal
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from ..adapters.hook_client import LOCK_FILE, SERVICE_LOG, lock_holder, start_service
from ..errors import ServiceError
from . import read_serve_file, serve_file
from .client import get_json

UnitKind = Literal["systemd", "launchd"]
UNIT_NAME = "skillpilot"
LAUNCHD_LABEL = "dev.skillpilot.service"
# A cold start loads two embedding models and the catalog: seconds, more on a busy machine.
START_TIMEOUT = 180.0
STOP_TIMEOUT = 10.0
POLL_SECONDS = 0.1


@dataclass(frozen=True)
class ServiceStatus:
    """What ``skillpilot service status`` shows. ``starting``: the lock is held, the service not
    answering yet."""

    home: str
    running: bool
    starting: bool = False
    pid: int | None = None
    url: str | None = None
    uptime_s: float | None = None
    generation: int | None = None
    skills: int | None = None
    recent_routes: int = 0
    route_p50_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def status(home: Path, timeout: float = 2.0) -> ServiceStatus:
    holder = lock_holder(home)
    if holder is None:
        return ServiceStatus(str(home), running=False)
    info = read_serve_file(home)
    if info is None or info.pid != holder:
        return ServiceStatus(str(home), running=False, starting=True, pid=holder or None)
    try:
        data = get_json(info, "/service", timeout)
    except (OSError, ValueError):
        return ServiceStatus(str(home), running=False, starting=True, pid=holder, url=info.url)
    return ServiceStatus(
        str(home),
        running=True,
        pid=int(data["pid"]),
        url=info.url,
        uptime_s=float(data["uptime_s"]),
        generation=int(data["generation"]),
        skills=int(data["skills"]),
        recent_routes=int(data["recent_routes"]),
        route_p50_ms=data["route_p50_ms"],
    )


def start(home: Path, port: int = 0, timeout: float = START_TIMEOUT) -> tuple[ServiceStatus, bool]:
    """Start the home's service unless one runs or is starting; wait until it answers. Returns its
    status and whether this call started it. Raises ``ServiceError`` if it dies or never answers."""
    started = start_service(str(home), port=port)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = status(home)
        if current.running:
            return current, started
        if not current.starting:
            raise ServiceError(home, f"it stopped while starting; the end of {home / SERVICE_LOG}:\n{_log_tail(home)}")
        time.sleep(POLL_SECONDS)
    raise ServiceError(home, f"it did not answer within {timeout:.0f} s; see {home / SERVICE_LOG}")


def stop(home: Path, timeout: float = STOP_TIMEOUT) -> int | None:
    """Stop the home's service (running or starting); the pid stopped, or None if none ran."""
    pid = lock_holder(home)
    if pid is None:
        _remove_stale_serve_file(home)
        return None
    if pid == 0:
        raise ServiceError(home, f"{home / LOCK_FILE} is held by a process that wrote no pid; try again")
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if lock_holder(home) is None:
                _remove_stale_serve_file(home)
                return pid
            time.sleep(POLL_SECONDS)
    raise ServiceError(home, f"process {pid} still holds {home / LOCK_FILE} after SIGKILL")


def _remove_stale_serve_file(home: Path) -> None:
    # Nobody holds the lock, so no service owns serve.json: a leftover from a killed process.
    serve_file(home).unlink(missing_ok=True)


def _log_tail(home: Path, lines: int = 15) -> str:
    try:
        return "\n".join((home / SERVICE_LOG).read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def default_unit_kind() -> UnitKind:
    return "launchd" if sys.platform == "darwin" else "systemd"


def unit_path(kind: UnitKind, user_home: Path | None = None) -> Path:
    """Where a user's service manager looks for the unit."""
    base = user_home or Path.home()
    if kind == "launchd":
        return base / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    config = Path(os.environ["XDG_CONFIG_HOME"]) if os.environ.get("XDG_CONFIG_HOME") else base / ".config"
    return config / "systemd" / "user" / f"{UNIT_NAME}.service"


def serve_command(home: Path, python: str = sys.executable) -> list[str]:
    """The foreground command a service manager runs: the same ``serve`` a hook would start."""
    return [python, "-m", "skillpilot", "serve", "--port", "0", "--home", str(home)]


def unit_file(kind: UnitKind, home: Path, python: str = sys.executable) -> str:
    """The text of a user unit that keeps ``home``'s service running (restarted if it fails)."""
    command = serve_command(home, python)
    if kind == "launchd":
        plist = {
            "Label": LAUNCHD_LABEL,
            "ProgramArguments": command,
            "RunAtLoad": True,
            "KeepAlive": {"SuccessfulExit": False},
            "StandardErrorPath": str(home / SERVICE_LOG),
            "EnvironmentVariables": {"SKILLPILOT_HOME": str(home)},
        }
        return plistlib.dumps(plist).decode("utf-8")
    quoted = " ".join(_systemd_quote(part) for part in command)
    return (
        "[Unit]\n"
        "Description=SkillPilot skill router (resident service)\n"
        "\n"
        "[Service]\n"
        f"ExecStart={quoted}\n"
        f"Environment={_systemd_quote('SKILLPILOT_HOME=' + str(home))}\n"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def enable_hint(kind: UnitKind, path: Path) -> str:
    """The commands that start the unit now and at every login."""
    if kind == "launchd":
        return f"launchctl bootstrap gui/$(id -u) {path}"
    return f"systemctl --user daemon-reload && systemctl --user enable --now {path.name}"


def install_unit(kind: UnitKind, home: Path, user_home: Path | None = None) -> Path:
    path = unit_path(kind, user_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(unit_file(kind, home), encoding="utf-8")
    return path


def _systemd_quote(word: str) -> str:
    if word and all(c.isalnum() or c in "/._-=+:@" for c in word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
