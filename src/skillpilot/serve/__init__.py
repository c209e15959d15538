"""Long-running surfaces: the MCP server (``serve.mcp``) and the resident HTTP service (``serve.http``).

This package itself imports no server framework, so hooks and plugins can find a running
service without the ``[server]`` extra:

- ``serve.json`` in ``$SKILLPILOT_HOME`` says where the resident service listens
  (:func:`write_serve_file` / :func:`read_serve_file` / :func:`remove_serve_file`), and
  ``serve.key`` holds the home's secret (:func:`home_key`);
- :class:`SharedPilot` lets a server's worker threads share one warm ``SkillPilot``;
- :class:`Refresher` re-indexes the skill folders when they change (``skillpilot.watch``).

Guarantees: ``serve.json`` is replaced atomically and readable by its owner only (it may hold
the bearer token); a missing, unreadable or malformed file reads as "no service".
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..errors import ServiceError
from ..sqlitefile import FOLDER_MODE
from ..watch import IndexWatcher

if TYPE_CHECKING:
    from ..config import Settings
    from ..model import IndexReport
    from ..router import SkillPilot

log = logging.getLogger(__name__)

SERVE_FILE = "serve.json"
T = TypeVar("T")


@dataclass(frozen=True)
class ServeInfo:
    """Where a resident service listens: its base URL, its process id, its token (if any)."""

    url: str
    pid: int
    token: str | None = None


def package_version() -> str:
    """SkillPilot's installed version, which servers announce (MCP ``serverInfo``, OpenAPI)."""
    try:
        return version("skillpilot")
    except PackageNotFoundError:
        return "0+unknown"


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (servers refuse others without a token)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def home_key(home: Path) -> bytes:
    """The home's secret (``serve.key``: 32 random bytes, readable by its owner only), made the
    first time a service needs it. A hook asks the service to prove it knows it before sending
    anything, and the service asks it (derived: ``hook_client.hook_key``) of every hook event."""
    # Here, not with this package: ``skillpilot.adapters`` loads the router's decision stage,
    # which the MCP server's handshake does without.
    from ..adapters.hook_client import KEY_FILE, read_key

    path = home / KEY_FILE
    home.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    key = read_key(str(home))
    if key is None and not path.exists():
        # Written whole under another name, then linked into place: a reader never sees half a
        # key, and of two services starting at once the first link wins.
        temporary = path.with_name(f".{KEY_FILE}.{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(os.urandom(32).hex())
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
        temporary.unlink()
        key = read_key(str(home))
    if key is None or len(key) < 16:
        raise ServiceError(
            home, f"{path} is unreadable or damaged: remove it and run `skillpilot service restart` (a new one is made)"
        )
    return key


def serve_file(home: Path) -> Path:
    return home / SERVE_FILE


def write_serve_file(home: Path, info: ServeInfo) -> Path:
    path = serve_file(home)
    home.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    temporary = path.with_name(f".{SERVE_FILE}.{os.getpid()}")
    # Created 0600 from the start: the token must never be readable by other users, even briefly.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(asdict(info), handle)
    os.replace(temporary, path)
    return path


def read_serve_file(home: Path) -> ServeInfo | None:
    """The advertised service, or None when there is none (or the file is not ours to read)."""
    try:
        data = json.loads(serve_file(home).read_text(encoding="utf-8"))
        token = data.get("token")
        return ServeInfo(url=str(data["url"]), pid=int(data["pid"]), token=str(token) if token else None)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def remove_serve_file(home: Path, pid: int) -> None:
    """Remove ``serve.json`` if it still names process ``pid`` (a newer service may have replaced it)."""
    info = read_serve_file(home)
    if info is not None and info.pid == pid:
        serve_file(home).unlink(missing_ok=True)


def hold_service_lock(home: Path) -> int:
    """Take ``serve.lock``, the one-service-per-home lock, for as long as the returned descriptor
    stays open, and write this process's id into it (``skillpilot service stop`` reads it while the
    service still loads). A service a hook started inherits the lock its starter took
    (``$SKILLPILOT_SERVE_LOCK_FD``). Raises ``ServiceError`` when another process holds it."""
    from ..adapters.hook_client import LOCK_FD_ENV, LOCK_FILE

    home.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    path = home / LOCK_FILE
    inherited = os.environ.pop(LOCK_FD_ENV, "")
    fd = -1
    if inherited.isdigit():
        with contextlib.suppress(OSError):
            if os.path.samestat(os.fstat(int(inherited)), os.stat(path)):
                fd = int(inherited)
    if fd < 0:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        running = read_serve_file(home)
        where = f" (pid {running.pid}, {running.url})" if running else " (it is still starting)"
        raise ServiceError(
            home, f"one already runs{where}: use it, or stop it first with `skillpilot service stop`"
        ) from None
    os.set_inheritable(fd, False)
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


class SharedPilot:
    """One ``SkillPilot`` used by many worker threads, one call at a time.

    The facade keeps its catalog cache and SQLite connection without locks; a route takes
    milliseconds, so serialising calls costs little and rules out two threads reloading the
    catalog at once. Given a function instead of a pilot, it builds the pilot on first use: the
    MCP server answers ``initialize`` before the router is even imported.
    """

    def __init__(self, pilot: SkillPilot | Callable[[], SkillPilot]) -> None:
        self._pilot = None if callable(pilot) else pilot
        self._make = pilot if callable(pilot) else None
        self._lock = threading.Lock()
        self._making = threading.Lock()

    @property
    def pilot(self) -> SkillPilot:
        with self._making:
            if self._pilot is None:
                assert self._make is not None
                self._pilot = self._make()
            return self._pilot

    def __call__(self, call: Callable[[SkillPilot], T]) -> T:
        with self._lock:
            return call(self.pilot)

    def warm_up_in_background(self) -> threading.Thread:
        """Load the models and the catalog on a daemon thread, under the lock: a call that comes
        meanwhile waits for the rest of the load instead of starting a second one."""

        def warm() -> None:
            try:
                self(lambda p: p.search("warm up"))
            except Exception as exc:  # the first real call reports it again, to its caller
                log.warning("warming up failed: %s", exc)
            else:
                log.info("models and catalog loaded")

        thread = threading.Thread(target=warm, name="skillpilot-warm-up", daemon=True)
        thread.start()
        return thread


class Refresher(IndexWatcher):
    """Keep the served index in step with its skill folders: watchdog events re-index changed
    skills within about a second, and ``settings.refresh_interval`` minutes is the fallback poll
    (see :mod:`skillpilot.watch`). Servers without watchdog installed only poll.

    It writes through its own ``SkillPilot`` (its own store connection), so routing is never
    blocked by a re-index: the serving router sees the store's generation change on its next
    call and reloads its catalog then.
    """

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings, on_report=_log_report, require_watchdog=False)


def _log_report(report: IndexReport) -> None:
    if report.added or report.updated or report.removed:
        log.info("re-indexed: %d added, %d updated, %d removed", report.added, report.updated, report.removed)
