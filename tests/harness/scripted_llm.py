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

Every request is recorded (the server is :func:`skillpilot.bench.hostcli.recording_server`, the
host CLIs' one; these are its answers). The script sees an :class:`LlmRequest` (which API, the
model, the system prompt, the user's text, the body, the headers) and returns the answer's text,
or a :class:`Failure` for an HTTP error, or a :class:`RawReply` of any bytes; it may sleep to make a
client time out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from skillpilot.bench.hostcli import Answer, Recorded, Recorder, json_answer, recording_server

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


@dataclass(frozen=True)
class RawReply:
    """A 200 reply of exactly these bytes (JSON) instead of the API's answer shape: a broken or hostile endpoint."""

    body: bytes


Script = Callable[[LlmRequest], "str | Failure | RawReply"]


@dataclass
class ScriptedLlm:
    """The server's state: its script, every model request (parsed) and its URL."""

    script: Script
    recorder: Recorder
    requests: list[LlmRequest] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.recorder.url


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


def _sse(events: list[tuple[str | None, Any]]) -> list[bytes]:
    chunks = []
    for event, data in events:
        payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        chunks.append(((f"event: {event}\n" if event else "") + f"data: {payload}\n\n").encode("utf-8"))
    return chunks


def _chat_reply(request: LlmRequest, answer: str) -> Answer:
    prompt, completion = _usage(request, answer)
    if request.body.get("stream"):
        chunk = {"choices": [{"index": 0, "delta": {"role": "assistant", "content": answer}, "finish_reason": None}]}
        done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        return 200, "text/event-stream", _sse([(None, chunk), (None, done), (None, "[DONE]")])
    reply = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": request.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }
    return 200, "application/json", [json.dumps(reply, ensure_ascii=False).encode("utf-8")]


def _responses_reply(request: LlmRequest, answer: str) -> Answer:
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
    return (
        200,
        "text/event-stream",
        _sse(
            [
                ("response.created", {"type": "response.created", "response": {"id": "resp_scripted"}}),
                ("response.output_item.added", {"type": "response.output_item.added", "item": {**item, "content": []}}),
                ("response.output_text.delta", {"type": "response.output_text.delta", "delta": answer}),
                ("response.output_item.done", {"type": "response.output_item.done", "item": item}),
                (
                    "response.completed",
                    {"type": "response.completed", "response": {"id": "resp_scripted", "usage": usage}},
                ),
            ]
        ),
    )


def _gemini_reply(request: LlmRequest, answer: str, stream: bool) -> Answer:
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
        return 200, "text/event-stream", _sse([(None, reply)])
    return 200, "application/json", [json.dumps(reply, ensure_ascii=False).encode("utf-8")]


def _answer(state: ScriptedLlm) -> Callable[[Recorded], Answer]:
    def answer(recorded: Recorded) -> Answer:
        route, _, _ = recorded.path.partition("?")
        if recorded.method != "POST":
            return json_answer({"error": {"message": f"scripted LLM: no {recorded.method} {route}"}}, 404)
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
                return json_answer({"totalTokens": max(1, len(json.dumps(recorded.body)) // 4)})
        else:
            return json_answer({"error": {"message": f"scripted LLM: no POST {route}"}}, 404)
        request = _parse(api, model, recorded.body, recorded.headers)
        with state.recorder.lock:
            state.requests.append(request)
        reply = state.script(request)
        if isinstance(reply, Failure):
            return json_answer({"error": {"message": reply.message, "code": reply.status}}, reply.status)
        if isinstance(reply, RawReply):
            return 200, "application/json", [reply.body]
        if api == "chat":
            return _chat_reply(request, reply)
        if api == "responses":
            return _responses_reply(request, reply)
        return _gemini_reply(request, reply, "streamGenerateContent" in route)

    return answer


@contextmanager
def scripted_llm(script: Script) -> Iterator[ScriptedLlm]:
    """Serve ``script`` on 127.0.0.1 (a free port) for the duration of the block."""
    # The recorder keeps every request as it came; the model requests are parsed into ``requests``.
    state = ScriptedLlm(script, Recorder(lambda _recorded: True))
    with recording_server(state.recorder, _answer(state)):
        yield state
