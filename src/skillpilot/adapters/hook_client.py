"""The hook process Claude Code runs on every prompt: standard library only, so it starts in milliseconds.

    python -S -P .../skillpilot/adapters/hook_client.py claude-code [--home DIR]   (settings.json)

Input: Claude Code's hook JSON on stdin (``UserPromptSubmit``, ``PostToolUse`` on the Skill tool,
``SessionStart``). It forwards that JSON to the resident service (``POST /hook/claude-code``,
address in ``$SKILLPILOT_HOME/serve.json``), which routes, remembers and learns; the service's
answer is the one JSON line this process prints. Everything the hook needs to know (thresholds,
which skills Claude Code offers, privacy settings) lives in the service, so this file reads no
config and imports nothing of SkillPilot: ``skillpilot hook claude-code`` would spend about a
second importing the router, numpy and the CLI before its one request. ``-S`` skips the
interpreter's site-packages scan (its ``.pth`` files cost more than the rest of the hook on some
machines), ``-P`` keeps this folder off ``sys.path``; nothing here needs either.

Without a live service it starts one in the background (:func:`start_service`, at most one at a
time: the starter holds ``serve.lock`` and hands it to the service it spawns) and lets the prompt
go on unchanged; the next prompts use the service. ``SessionStart`` does that at the start of a
session, so the first prompt normally finds the service warm.

Guarantees (fail open): exit status 0, nothing on stdout but one JSON line or nothing, any error
one line on stderr; a service that does not answer within ``SERVICE_TIMEOUT`` seconds is skipped.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
from typing import Any, BinaryIO, TextIO

SERVE_FILE = "serve.json"
LOCK_FILE = "serve.lock"
SERVICE_LOG = "serve.log"
# The service a hook starts inherits the start lock on this descriptor (see start_service).
LOCK_FD_ENV = "SKILLPILOT_SERVE_LOCK_FD"
HOSTS = ("claude-code",)
PROMPT_EVENT = "UserPromptSubmit"
# Far above a warm route (milliseconds), far below Claude Code's 60 s hook timeout: a service
# this slow is stuck, and the prompt should go on without it.
SERVICE_TIMEOUT = 2.0


def home_dir(argv: list[str]) -> str:
    """``--home DIR`` if given, else ``$SKILLPILOT_HOME``, else ``~/.skillpilot`` (as the CLI)."""
    if "--home" in argv and argv.index("--home") + 1 < len(argv):
        return os.path.expanduser(argv[argv.index("--home") + 1])
    return os.path.expanduser(os.environ.get("SKILLPILOT_HOME") or "~/.skillpilot")


def read_service(home: str) -> dict[str, Any] | None:
    """The advertised service (``url``, ``pid``, ``token``), or None when ``serve.json`` is absent or unreadable."""
    try:
        with open(os.path.join(home, SERVE_FILE), encoding="utf-8") as handle:
            info = json.load(handle)
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) and isinstance(info.get("url"), str) else None


def post_json(url: str, path: str, data: Any, token: str | None, timeout: float) -> Any:
    """POST ``data`` as JSON to the service and return its JSON answer. One HTTP/1.1 request on a
    plain socket: ``urllib`` and ``http.client`` import ``ssl`` and ``email``, several times this
    file's whole cost. Raises ``OSError`` (refused, timed out, not 200) or ``ValueError``."""
    scheme, _, address = url.partition("://")
    if scheme != "http":
        raise ValueError(f"the hook speaks plain HTTP to a local service, not {url!r}")
    host, _, port = address.rstrip("/").rpartition(":")
    body = json.dumps(data, ensure_ascii=False).encode("utf-8")
    head = [
        f"POST {path} HTTP/1.1",
        f"Host: {address.rstrip('/')}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
    ]
    if token:
        head.append(f"Authorization: Bearer {token}")
    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:
        sock.sendall("\r\n".join(head).encode("latin-1") + b"\r\n\r\n" + body)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    status_and_headers, _, content = b"".join(chunks).partition(b"\r\n\r\n")
    lines = status_and_headers.decode("latin-1").split("\r\n")
    status = lines[0].split(" ", 2)
    if len(status) < 2 or status[1] != "200":
        raise OSError(f"the service answered {lines[0]!r}")
    if any(line.lower().replace(" ", "") == "transfer-encoding:chunked" for line in lines[1:]):
        raise ValueError("the service sent a chunked answer")
    return json.loads(content)


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


def answer(payload: bytes, home: str, host: str = "claude-code") -> dict[str, Any] | None:
    """What to print for one hook event (None: nothing). Starts a service when none answers. May raise."""
    event = json.loads(payload)
    if not isinstance(event, dict) or not isinstance(event.get("hook_event_name"), str):
        raise ValueError(f"expected a hook JSON object with 'hook_event_name', got {payload[:80]!r}")
    service = read_service(home)
    if service is not None:
        try:
            reply = post_json(service["url"], f"/hook/{host}", event, service.get("token"), SERVICE_TIMEOUT)
        except ConnectionRefusedError:
            service = None  # a stale serve.json: the service died without removing it
        else:
            output = reply.get("output") if isinstance(reply, dict) else None
            return output if isinstance(output, dict) else None
    if service is None and start_service(home) and event["hook_event_name"] == PROMPT_EVENT:
        print("skillpilot hook: starting the service; this prompt goes on unrouted", file=sys.stderr)
    return None


def main(argv: list[str] | None = None, stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """Run one hook; always 0 (a failing hook must never block the user's prompt)."""
    argv = sys.argv[1:] if argv is None else argv
    stdout = stdout or sys.stdout
    try:
        if not argv or argv[0] not in HOSTS:
            raise ValueError(f"usage: hook_client.py {{{','.join(HOSTS)}}} [--home DIR]")
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
