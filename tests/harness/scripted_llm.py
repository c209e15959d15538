"""Scripted LLM endpoints on 127.0.0.1 for offline tests: OpenAI chat completions, the OpenAI
Responses API (what the Codex CLI speaks, ``wire_api = "responses"``) and Gemini's
``generateContent`` / ``streamGenerateContent`` (what the Gemini CLI speaks through
``GOOGLE_GEMINI_BASE_URL``). One server answers all three.

Wire formats, as the clients read them:

- ``POST /v1/chat/completions``: ``{"choices": [{"message": {"role": "assistant", "content"}}],
  "usage": {"prompt_tokens", "completion_tokens"}}`` (with ``"stream": true``: ``data:`` chunks
  of ``choices[0].delta.content``, then ``data: [DONE]``).
- ``POST /v1/responses`` (always streamed; Codex's ``codex-api/src/sse/responses.rs`` reads
  ``response.created``, ``response.output_item.done`` with a ``message`` item of ``output_text``
  content, then ``response.completed`` with ``usage``).
- ``POST /v1beta/models/<model>:generateContent`` / ``:streamGenerateContent?alt=sse`` (``data:``
  lines of ``{"candidates": [{"content": {"role": "model", "parts": [{"text"}]},
  "finishReason": "STOP"}], "usageMetadata": {...}}``) and ``:countTokens``.

Every request is recorded. The script sees an :class:`LlmRequest` (which API, the model, the
system prompt, the user's text, the body, the headers) and returns the answer's text, or a
:class:`Failure` for an HTTP error; it may sleep to make a client time out.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Api = Literal["chat", "responses", "gemini"]


@dataclass(frozen=True)
class LlmRequest:
    """One model request: which API, the model, the system prompt and the user's text as the
    client sent them, and the raw body and headers."""

    api: Api
    model: str
    system: str
    user: str
    body: dict[str, Any]
    headers: dict[str, str]

    def tools(self) -> list[str]:
        """The names of the tools the client offered the model."""
        if self.api == "gemini":
            return [f["name"] for t in self.body.get("tools") or [] for f in t.get("functionDeclarations") or []]
        return [
            str(t.get("name") or t.get("type") or t.get("function", {}).get("name"))
            for t in self.body.get("tools") or []
        ]


@dataclass(frozen=True)
class Failure:
    """An HTTP error the server answers with instead of a reply."""

    status: int
    message: str = "scripted failure"


Script = Callable[[LlmRequest], "str | Failure"]


@dataclass
class ScriptedLlm:
    """The server's state: its script, every model request, every path asked for, and its URL."""

    script: Script
    requests: list[LlmRequest] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _parse(api: Api, model: str, body: dict[str, Any], headers: dict[str, str]) -> LlmRequest:
    if api == "chat":
        messages = body.get("messages") or []
        system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
        user = next((_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
        return LlmRequest(api, str(body.get("model", "")), system, user, body, headers)
    if api == "responses":
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        system = str(body.get("instructions") or "") + "\n".join(
            _text(i.get("content")) for i in items if i.get("role") in ("system", "developer")
        )
        user = next((_text(i.get("content")) for i in reversed(items) if i.get("role") == "user"), "")
        return LlmRequest(api, str(body.get("model", "")), system, user, body, headers)
    system = _text((body.get("systemInstruction") or {}).get("parts"))
    contents = [c for c in body.get("contents") or [] if c.get("role", "user") == "user"]
    user = _text(contents[-1].get("parts")) if contents else ""
    return LlmRequest(api, model, system, user, body, headers)


def _usage(request: LlmRequest, answer: str) -> tuple[int, int]:
    return max(1, len(json.dumps(request.body)) // 4), max(1, len(answer) // 4)


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    lines = []
    for event, data in events:
        payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        lines.append((f"event: {event}\n" if event else "") + f"data: {payload}\n\n")
    return "".join(lines).encode("utf-8")


def _chat_reply(request: LlmRequest, answer: str) -> tuple[str, bytes]:
    prompt, completion = _usage(request, answer)
    if request.body.get("stream"):
        chunk = {"choices": [{"index": 0, "delta": {"role": "assistant", "content": answer}, "finish_reason": None}]}
        done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        return "text/event-stream", _sse([(None, chunk), (None, done), (None, "[DONE]")])
    reply = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": request.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }
    return "application/json", json.dumps(reply, ensure_ascii=False).encode("utf-8")


def _responses_reply(request: LlmRequest, answer: str) -> tuple[str, bytes]:
    prompt, completion = _usage(request, answer)
    item = {
        "type": "message",
        "id": "msg_scripted",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": answer, "annotations": []}],
    }
    usage = {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }
    return "text/event-stream", _sse(
        [
            ("response.created", {"type": "response.created", "response": {"id": "resp_scripted"}}),
            ("response.output_item.added", {"type": "response.output_item.added", "item": {**item, "content": []}}),
            ("response.output_text.delta", {"type": "response.output_text.delta", "delta": answer}),
            ("response.output_item.done", {"type": "response.output_item.done", "item": item}),
            ("response.completed", {"type": "response.completed", "response": {"id": "resp_scripted", "usage": usage}}),
        ]
    )


def _gemini_reply(request: LlmRequest, answer: str, stream: bool) -> tuple[str, bytes]:
    prompt, completion = _usage(request, answer)
    reply = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": answer}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": prompt,
            "candidatesTokenCount": completion,
            "totalTokenCount": prompt + completion,
        },
        "modelVersion": request.model,
    }
    if stream:
        return "text/event-stream", _sse([(None, reply)])
    return "application/json", json.dumps(reply, ensure_ascii=False).encode("utf-8")


def _handler(server: ScriptedLlm) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, kind: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _json(self, status: int, data: Any) -> None:
            self._send(status, "application/json", json.dumps(data).encode("utf-8"))

        def do_GET(self) -> None:
            with server.lock:
                server.paths.append(self.path)
            self._json(404, {"error": {"message": f"scripted LLM: no GET {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {}
            route, _, _ = self.path.partition("?")
            with server.lock:
                server.paths.append(self.path)
            api: Api
            model = ""
            if route.endswith("/chat/completions"):
                api = "chat"
            elif route.endswith("/responses"):
                api = "responses"
            elif "/models/" in route and ":" in route:
                api = "gemini"
                model, _, method = route.rsplit("/", 1)[-1].partition(":")
                if method == "countTokens":
                    self._json(200, {"totalTokens": max(1, len(raw) // 4)})
                    return
            else:
                self._json(404, {"error": {"message": f"scripted LLM: no POST {route}"}})
                return
            request = _parse(api, model, body, dict(self.headers.items()))
            with server.lock:
                server.requests.append(request)
            answer = server.script(request)
            if isinstance(answer, Failure):
                self._json(answer.status, {"error": {"message": answer.message, "code": answer.status}})
                return
            if api == "chat":
                self._send(200, *_chat_reply(request, answer))
            elif api == "responses":
                self._send(200, *_responses_reply(request, answer))
            else:
                self._send(200, *_gemini_reply(request, answer, "streamGenerateContent" in route))

    return Handler


@contextmanager
def scripted_llm(script: Script) -> Iterator[ScriptedLlm]:
    """Serve ``script`` on 127.0.0.1 (a free port) for the duration of the block."""
    state = ScriptedLlm(script)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
