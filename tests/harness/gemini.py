"""What the real-CLI tests read from a Gemini CLI model request beyond what ``skillpilot eval host``
needs (that part is :mod:`skillpilot.bench.hostcli.gemini`)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import termios
import time
from collections.abc import Callable
from pathlib import Path

from skillpilot.bench.hostcli import Recorded, Recorder
from skillpilot.bench.hostcli.gemini import MODEL


def replied_to_tool(request: Recorded) -> bool:
    """Whether the request carries a tool result (the model's second step of a turn)."""
    contents = request.body.get("contents", [])
    last = contents[-1] if contents else {}
    return any(isinstance(p, dict) and "functionResponse" in p for p in last.get("parts", []))


def interactive_turn(binary: Path, prompt: str, cwd: Path, env: dict[str, str], api: Recorder) -> list[Recorded]:
    """One prompt typed into an interactive ``gemini`` session in ``cwd`` on a pseudo-terminal, as
    a user runs it (headless ``gemini -p`` refuses an untrusted folder, a session does not): the
    model requests it made, once the first one came; the session is then ended."""
    api.clear()
    pid, terminal = pty.fork()
    if pid == 0:  # pragma: no cover - the child becomes Gemini CLI
        os.chdir(cwd)
        os.execve(str(binary), [str(binary), "-m", MODEL], {**env, "TERM": "xterm"})
    # Without a window size Ink draws no input box.
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    screen = bytearray()
    try:
        _read_until(terminal, screen, lambda: b"Type your message" in screen)
        os.write(terminal, prompt.encode())
        _read_until(terminal, screen, lambda: prompt[-20:].encode() in screen)
        # Ink may take an Enter that follows the typing closely as part of it: Enter again until
        # the prompt is sent (Enter in an empty input box does nothing).
        _read_until(terminal, screen, lambda: bool(api.model_requests()) or _enter(terminal))
        return api.model_requests()
    finally:
        os.killpg(pid, signal.SIGKILL)  # the session leader and the CLI it relaunched itself as
        os.waitpid(pid, 0)
        os.close(terminal)


def _enter(terminal: int) -> bool:
    os.write(terminal, b"\r")
    time.sleep(1)
    return False


def _read_until(terminal: int, screen: bytearray, done: Callable[[], bool], seconds: float = 180) -> None:
    """Read the session's screen into ``screen`` until ``done``; fails with the screen's end after
    ``seconds`` (a loaded machine starts Gemini CLI in tens of seconds)."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, screen[-2000:].decode(errors="replace")
        if select.select([terminal], [], [], 0.2)[0]:
            try:
                screen += os.read(terminal, 65536)
            except OSError:  # the session ended
                raise AssertionError(screen[-2000:].decode(errors="replace")) from None
