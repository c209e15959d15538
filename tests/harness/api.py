"""A scripted model API on 127.0.0.1 that records every request an agent CLI makes.

A host's harness (``claude_code`` ...) subclasses :class:`RecordingHandler` with the routes its
CLI calls and answers each from the ``script`` of its :class:`RecordingApi`; :func:`serve` runs
it on a free port for the duration of a block.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar


@dataclass(frozen=True)
class Recorded:
    """One request the CLI made: method, path, headers and the JSON body (``{}`` when none)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def route(self) -> str:
        """The path without its query string."""
        return self.path.split("?")[0]

    def text(self) -> str:
        """Everything the model would read in this request: system prompt, messages, tool specs."""
        return json.dumps({k: self.body.get(k) for k in ("system", "messages", "tools")}, ensure_ascii=False)


@dataclass
class RecordingApi:
    """The server's state: the script (what to answer a request with) and every request, in order."""

    script: Callable[[Recorded], Any]
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def requests_to(self, route: str) -> list[Recorded]:
        """The requests to ``route`` (a path without its query string), in order."""
        with self.lock:
            return [r for r in self.requests if r.route == route]


class RecordingHandler(BaseHTTPRequestHandler):
    """Records each request into ``api`` (set by :func:`serve`); subclasses answer them."""

    api: RecordingApi
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def record(self) -> Recorded:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"raw": raw.decode("utf-8", "replace")}
        recorded = Recorded(self.command, self.path, dict(self.headers.items()), body)
        with self.api.lock:
            self.api.requests.append(recorded)
        return recorded

    def send_json(self, status: int, data: dict[str, Any]) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


Api = TypeVar("Api", bound=RecordingApi)


@contextmanager
def serve(api: Api, handler: type[RecordingHandler]) -> Iterator[Api]:
    """Serve ``api`` with ``handler`` on 127.0.0.1 (a free port, in ``api.url``) for the block."""
    bound = type(handler.__name__, (handler,), {"api": api})
    server = ThreadingHTTPServer(("127.0.0.1", 0), bound)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
