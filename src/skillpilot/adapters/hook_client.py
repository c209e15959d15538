"""The hook process every agent host runs on each event: standard library only, so it starts in milliseconds.

    python -S -P .../skillpilot/adapters/hook_client.py HOST [--home DIR]   (written by `setup HOST`)

Input: the host's hook JSON on stdin (Claude Code's ``UserPromptSubmit``, Gemini CLI's
``BeforeAgent``, ...; any object with a ``hook_event_name``). It forwards that JSON to the
resident service (``POST /hook/HOST``, address in ``$SKILLPILOT_HOME/serve.json``), which reads
it with the host's module (:mod:`skillpilot.adapters.hosts`), routes, remembers and learns; the
service's answer is the one JSON line this process prints. Everything the hook needs to know
(thresholds, which skills the host offers, privacy settings) lives in the service, so this file
reads no config, knows no host and imports nothing of SkillPilot: ``skillpilot hook HOST`` would
spend about a second importing the router, numpy and the CLI before its one request. ``-S`` skips the
interpreter's site-packages scan (its ``.pth`` files cost more than the rest of the hook on some
machines), ``-P`` keeps this folder off ``sys.path``; nothing here needs either.

Who it talks to (:func:`find_service`): the process holding ``serve.lock`` is the home's service;
``serve.json`` must name that process. Before the event (the prompt) or the token is sent, the
peer proves it is this home's service: it answers a fresh random challenge with a MAC of the
challenge, its port and its pid under the home's secret (``serve.key``, readable by its owner
only), which a program that took the port of a dead service cannot compute (:func:`exchange`).
The event then goes on the same connection with the hook key (also derived from ``serve.key``),
which the service asks of every ``/hook`` request, so no other user's process can send events.

Without a live service (the lock is free, whatever ``serve.json`` says) it starts one in the
background (:func:`start_service`, at most one at a time: the starter holds ``serve.lock`` and
hands it to the service it spawns). ``SessionStart`` does that at the start of a session and goes
on at once. A prompt that finds this home's service starting (its own start, or one another hook
began) waits for it up to ``STARTUP_WAIT`` (7) seconds (the models load in 3-6 s) and is routed; a
service still loading after that, or one that exits while starting (a broken ``config.yaml``),
lets the prompt go on unrouted with one line on stderr saying which, the latter with the error
the service wrote to ``serve.log``.

Guarantees (fail open): exit status 0, nothing on stdout but one JSON line or nothing, any error
one line on stderr; the whole exchange with the service ends within ``SERVICE_TIMEOUT`` seconds,
however slowly the peer sends its bytes.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from typing import Any, BinaryIO, NamedTuple, TextIO

try:
    # hashlib's own BLAKE2 (hashlib.blake2b is this class): importing hashlib loads OpenSSL,
    # about 20 ms of a hook that takes 100.
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

SERVE_FILE = "serve.json"
LOCK_FILE = "serve.lock"
KEY_FILE = "serve.key"
SERVICE_LOG = "serve.log"
# The service a hook starts inherits the start lock on this descriptor (see start_service).
LOCK_FD_ENV = "SKILLPILOT_SERVE_LOCK_FD"
# The longest host name the service's registry accepts (a URL path segment).
MAX_HOST_NAME = 32
# The handshake: GET this path with a challenge header; the answer's proof; the hook key header.
HELLO_PATH = "/hook/hello"
CHALLENGE_HEADER = "X-SkillPilot-Challenge"
HOOK_KEY_HEADER = "X-SkillPilot-Hook-Key"
# Far above a warm route (milliseconds), far below Claude Code's 60 s hook timeout: a service
# this slow is stuck, and the prompt should go on without it. It bounds the whole exchange.
SERVICE_TIMEOUT = 2.0
# What a hook reads of an answer: the service's are a few KB; a peer sending more is not it.
MAX_ANSWER_BYTES = 4 * 1024 * 1024
# How long a prompt waits for a starting service: its models load in 3-6 s on a 2-core machine;
# with SERVICE_TIMEOUT the hook still ends inside the 10 s timeout `setup` gives each hook.
STARTUP_WAIT = 7.0
STARTUP_POLL = 0.05
# What a hook reads of serve.log to say why a service exited: its last error line.
LOG_TAIL_BYTES = 16 * 1024


class Service(NamedTuple):
    """The home's live service: where it listens, its pid, its token (if any) and the home's key."""

    url: str
    pid: int
    token: str | None
    key: bytes


def home_dir(argv: list[str]) -> str:
    """``--home DIR`` if given, else ``$SKILLPILOT_HOME``, else ``~/.skillpilot`` (as the CLI)."""
    if "--home" in argv and argv.index("--home") + 1 < len(argv):
        return os.path.expanduser(argv[argv.index("--home") + 1])
    return os.path.expanduser(os.environ.get("SKILLPILOT_HOME") or "~/.skillpilot")


def is_host_name(word: str) -> bool:
    """Lowercase ASCII letters, digits and '-', starting with a letter (``re`` would cost more
    to import than the check)."""
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789-")
    return 0 < len(word) <= MAX_HOST_NAME and word[0].isalpha() and set(word) <= allowed


def lock_holder(home: str | os.PathLike[str]) -> int | None:
    """The pid of the process holding ``serve.lock`` (0 if it wrote none yet), or None when free."""
    try:
        fd = os.open(os.path.join(home, LOCK_FILE), os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else 0
        return None
    finally:
        os.close(fd)


def read_key(home: str) -> bytes | None:
    """The home's secret (``serve.key``), or None when the service has not made it yet."""
    try:
        with open(os.path.join(home, KEY_FILE), encoding="ascii") as handle:
            return bytes.fromhex(handle.read(256).strip())
    except (OSError, ValueError):
        return None


def mac(key: bytes, purpose: str, *parts: str) -> str:
    """Keyed BLAKE2b of ``purpose`` and ``parts`` (hex): the service's proof and the hook key."""
    return blake2b("\0".join((purpose, *parts)).encode(), key=key[:64], digest_size=32).hexdigest()


def service_proof(key: bytes, challenge: str, port: int, pid: int) -> str:
    """What only this home's service can answer to ``challenge`` on ``port`` as process ``pid``."""
    return mac(key, "skillpilot-service", challenge, str(port), str(pid))


def hook_key(key: bytes) -> str:
    """The header value a ``/hook`` request carries: derived from ``serve.key``, never the key."""
    return mac(key, "skillpilot-hook")


def find_service(home: str) -> Service | str:
    """The home's live service, or why there is none to talk to: ``"free"`` (no process holds
    ``serve.lock``: start one) or ``"starting"`` (it holds the lock but does not answer yet)."""
    holder = lock_holder(home)
    if holder is None:
        return "free"
    try:
        with open(os.path.join(home, SERVE_FILE), encoding="utf-8") as handle:
            info = json.loads(handle.read(65536))
    except (OSError, ValueError):
        return "starting"
    key = read_key(home)
    if not isinstance(info, dict) or info.get("pid") != holder or not isinstance(info.get("url"), str) or key is None:
        # serve.json names another process (a dead one: the new service has not written it yet).
        return "starting"
    token = info.get("token")
    return Service(info["url"], holder, token if isinstance(token, str) else None, key)


class _Deadline:
    """One deadline for a whole exchange: every socket wait gets what is left of it."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the service did not answer within {SERVICE_TIMEOUT:g} s")
        return left


def _address(url: str) -> tuple[str, int, str]:
    scheme, _, address = url.partition("://")
    if scheme != "http":
        raise ValueError(f"the hook speaks plain HTTP to a local service, not {url!r}")
    address = address.rstrip("/")
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port), address


def _request(method: str, path: str, address: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {address}", *(f"{k}: {v}" for k, v in headers.items())]
    if body:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return "\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + body


def _response(sock: socket.socket, deadline: _Deadline) -> Any:
    """One HTTP response read from ``sock`` (framed by Content-Length), its JSON body decoded.
    Raises ``OSError`` for a status other than 200, ``ValueError`` for anything malformed."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += _recv(sock, deadline, len(data))
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0].split(" ", 2)
    if len(status) < 2 or status[1] != "200":
        raise OSError(f"the service answered {lines[0]!r}")
    fields = dict(line.lower().replace(" ", "").partition(":")[::2] for line in lines[1:])
    length = fields.get("content-length", "")
    if not length.isdigit() or int(length) > MAX_ANSWER_BYTES:
        raise ValueError("the service sent no Content-Length (or one too large)")
    while len(body) < int(length):
        body += _recv(sock, deadline, len(body))
    return json.loads(body[: int(length)])


def _recv(sock: socket.socket, deadline: _Deadline, have: int) -> bytes:
    sock.settimeout(deadline.left())
    try:
        chunk = sock.recv(65536)
    except TimeoutError:
        deadline.left()  # raises the deadline's own error once it has passed
        raise
    if not chunk:
        raise ConnectionError("the service closed the connection before it answered")
    if have + len(chunk) > MAX_ANSWER_BYTES:
        raise ValueError("the service's answer is too large")
    return chunk


def exchange(service: Service, path: str, event: Any, timeout: float = SERVICE_TIMEOUT) -> Any:
    """POST ``event`` to ``path`` once the peer has proved it is ``service``; its JSON answer.
    One keep-alive HTTP/1.1 connection on a plain socket (``urllib`` and ``http.client`` import
    ``ssl`` and ``email``, several times this file's whole cost), all of it within ``timeout``.
    Raises ``OSError`` (refused, timed out, not 200, not the service) or ``ValueError``."""
    deadline = _Deadline(timeout)
    host, port, address = _address(service.url)
    challenge = os.urandom(16).hex()
    with socket.create_connection((host, port), timeout=deadline.left()) as sock:
        sock.settimeout(deadline.left())
        sock.sendall(_request("GET", HELLO_PATH, address, {CHALLENGE_HEADER: challenge}))
        hello = _response(sock, deadline)
        expected = service_proof(service.key, challenge, port, service.pid)
        if not isinstance(hello, dict) or hello.get("proof") != expected:
            raise PermissionError(f"{service.url} is not this home's service (it could not prove it): nothing was sent")
        headers = {HOOK_KEY_HEADER: hook_key(service.key), "Connection": "close"}
        if service.token:
            headers["Authorization"] = f"Bearer {service.token}"
        # ASCII escapes: a host's JSON may carry lone surrogates ("\ud800"), which UTF-8 cannot encode.
        body = json.dumps(event).encode("ascii")
        sock.settimeout(deadline.left())
        sock.sendall(_request("POST", path, address, headers, body))
        return _response(sock, deadline)


def start_service(home: str, port: int = 0, python: str = sys.executable) -> bool:
    """Start ``skillpilot serve`` for ``home`` detached from this process (its own session, no
    pipes), unless a service holds or is taking ``serve.lock``. Returns whether one was started.

    The lock is taken here and passed to the child on an inherited descriptor, so from this call
    on no other hook can start a second service while this one loads its models; the child's pid
    is written into it at once (``skillpilot service stop`` reads it there)."""
    os.makedirs(home, exist_ok=True)
    lock = os.open(os.path.join(home, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        import subprocess  # only on this rare path: it costs more than the rest of the hook

        with open(os.path.join(home, SERVICE_LOG), "ab") as log:
            child = subprocess.Popen(
                [python, "-m", "skillpilot", "serve", "--port", str(port), "--home", home],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
                pass_fds=(lock,),
                env={**os.environ, LOCK_FD_ENV: str(lock)},
            )
        os.ftruncate(lock, 0)
        os.pwrite(lock, str(child.pid).encode(), 0)
        return True
    finally:
        os.close(lock)


def answer(payload: bytes, home: str, host: str) -> dict[str, Any] | None:
    """What to print for one hook event (None: nothing). Starts a service when none runs. May raise."""
    event = json.loads(payload)
    if not isinstance(event, dict) or not isinstance(event.get("hook_event_name"), str):
        raise ValueError(f"expected a hook JSON object with 'hook_event_name', got {payload[:80]!r}")
    service = find_service(home)
    log_start = _log_size(home)
    if service == "free":
        # A free lock: no service, whatever a leftover serve.json says (a killed service's, its
        # port perhaps another program's now). A held one: the service is starting.
        start_service(home)
        service = "starting"
    if not isinstance(service, Service):
        # Every host's prompt event carries the prompt: that is the event the user would wait on.
        if not isinstance(event.get("prompt"), str):
            return None
        service = wait_for_service(home, STARTUP_WAIT)
    if service == "free":
        print(f"skillpilot hook: the service could not start: {_last_error(home, log_start)}", file=sys.stderr)
        return None
    if not isinstance(service, Service):
        print(
            f"skillpilot hook: the service is still loading after {STARTUP_WAIT:g} s; this prompt goes on unrouted",
            file=sys.stderr,
        )
        return None
    reply = exchange(service, f"/hook/{host}", event)
    output = reply.get("output") if isinstance(reply, dict) else None
    return output if isinstance(output, dict) else None


def wait_for_service(home: str, seconds: float) -> Service | str:
    """The home's service once it answers, or ``"free"`` as soon as the starting process let go
    of ``serve.lock`` (it exited), or ``"starting"`` when ``seconds`` passed first."""
    end = time.monotonic() + seconds
    while True:
        found = find_service(home)
        if found != "starting" or time.monotonic() >= end:
            return found
        time.sleep(STARTUP_POLL)


def _log_size(home: str) -> int:
    try:
        return os.path.getsize(os.path.join(home, SERVICE_LOG))
    except OSError:
        return 0


def _last_error(home: str, since: int) -> str:
    """The service's last line in ``serve.log`` written after ``since`` (its error, one line),
    and where the whole log is."""
    path = os.path.join(home, SERVICE_LOG)
    try:
        with open(path, "rb") as log:
            log.seek(max(since, _log_size(home) - LOG_TAIL_BYTES))
            lines = [line.strip() for line in log.read().decode("utf-8", "replace").splitlines() if line.strip()]
    except OSError:
        lines = []
    said = " ".join(lines[-1].split())[:500] if lines else "it exited without a word"
    return f"{said}; this prompt goes on unrouted (see {path})"


def main(argv: list[str] | None = None, stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """Run one hook; always 0 (a failing hook must never block the user's prompt)."""
    argv = sys.argv[1:] if argv is None else argv
    stdout = stdout or sys.stdout
    try:
        if not argv or not is_host_name(argv[0]):
            raise ValueError("usage: hook_client.py HOST [--home DIR] (HOST: claude-code, gemini, codex ...)")
        output = answer((stdin or sys.stdin.buffer).read(), home_dir(argv), argv[0])
    except Exception as exc:
        print(f"skillpilot hook: skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 0
    if output is not None:
        stdout.write(json.dumps(output, ensure_ascii=False) + "\n")
        stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
