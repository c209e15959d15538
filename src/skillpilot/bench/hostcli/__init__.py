"""Real host CLIs driven offline: a scripted model endpoint on 127.0.0.1 that records every request.

Each host module here (``claude_code``, ``gemini``, ``codex``) speaks its CLI's model wire
protocol and reads back what the CLI sent the model:

    serve(script)          a recording endpoint; ``script`` picks each reply (:data:`Script`)
    environment(...)       a throwaway HOME that points the CLI at the endpoint, no login
    run(binary, prompt)    one non-interactive turn of the real CLI
    listing(request)       the host's own skill listing in a model request: name -> description
    context(request)       SkillPilot's hook context as the CLI placed it (None without one)
    listing_chars(request) the characters of that listing

A reply is host-neutral (:class:`Reply`): text, or "the model chooses skill X" (Gemini CLI:
``activate_skill``; Codex: a shell command that reads X's SKILL.md), which each module turns
into its wire format (Claude Code's script answers with content blocks instead).

They ship in the package, not beside the tests, because ``skillpilot eval host`` drives the
real CLIs through them at run time; the real-CLI tests use the same drivers, and what only the
tests need is in the repository's ``tests/harness``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

__all__ = ["Recorded", "Recorder", "Reply", "Script", "recording_server", "scripted_server", "text_reply"]


@dataclass(frozen=True)
class Recorded:
    """One request the CLI made: method, path, headers and the JSON body (``{}`` when none)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """What the scripted model answers: ``text``, or it chooses the skill ``skill`` (a name, or
    for Codex the SKILL.md path to read)."""

    text: str = ""
    skill: str | None = None


def text_reply(text: str = "ok") -> Reply:
    return Reply(text=text)


Script = Callable[[Recorded], Reply]
# The wire answer for one model request: (status, content type, body chunks).
Answer = tuple[int, str, list[bytes]]


@dataclass
class Recorder:
    """A recording endpoint's state: every request received, in order, and its URL."""

    is_model_request: Callable[[Recorded], bool]
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def model_requests(self) -> list[Recorded]:
        """The requests that asked the model for a turn (not token counts or side requests)."""
        with self.lock:
            return [r for r in self.requests if self.is_model_request(r)]

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()


def _handler(recorder: Recorder, answer: Callable[[Recorded], Answer]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _record(self) -> Recorded:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {"raw": raw.decode("utf-8", "replace")}
            recorded = Recorded(self.command, self.path, dict(self.headers.items()), body)
            with recorder.lock:
                recorder.requests.append(recorded)
            return recorded

        def _answer(self) -> None:
            status, content_type, chunks = answer(self._record())
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("connection", "close")
            if content_type != "text/event-stream":
                self.send_header("content-length", str(sum(len(c) for c in chunks)))
            self.end_headers()
            for chunk in chunks if self.command != "HEAD" else []:
                self.wfile.write(chunk)
                self.wfile.flush()
            self.close_connection = True

        do_GET = _answer
        do_HEAD = _answer
        do_POST = _answer

    return Handler


@contextmanager
def recording_server(recorder: Recorder, answer: Callable[[Recorded], Answer]) -> Iterator[Recorder]:
    """Serve ``answer`` on 127.0.0.1 (a free port), recording into ``recorder``, for the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(recorder, answer))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    recorder.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield recorder
    finally:
        server.shutdown()
        server.server_close()


HostScript = TypeVar("HostScript")


def scripted_server(
    is_model_request: Callable[[Recorded], bool], answer_for: Callable[[HostScript], Callable[[Recorded], Answer]]
) -> Callable[[HostScript], AbstractContextManager[Recorder]]:
    """A host module's ``serve(script)``: its wire protocol (``answer_for(script)`` answers each
    request) on a free loopback port for the block, recording into a new :class:`Recorder` that
    tells model requests by ``is_model_request``."""

    def serve(script: HostScript) -> AbstractContextManager[Recorder]:
        return recording_server(Recorder(is_model_request), answer_for(script))

    return serve


def json_answer(data: Any, status: int = 200) -> Answer:
    return status, "application/json", [json.dumps(data).encode()]


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()
