"""The real Claude Code CLI driven offline: a scripted Anthropic Messages API on 127.0.0.1.

Claude Code (``claude -p``) talks to ``$ANTHROPIC_BASE_URL/v1/messages`` with ``stream: true``
and reads Server-Sent Events: ``message_start``, then per content block ``content_block_start`` /
``content_block_delta`` (``text_delta`` or ``input_json_delta``) / ``content_block_stop``, then
``message_delta`` (stop reason, usage) and ``message_stop``. This server records every request
and answers each ``/v1/messages`` call with the content blocks its ``script`` picks for it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from . import Answer, Recorded, Recorder, json_answer, scripted_server, sse

Block = dict[str, Any]
Script = Callable[[Recorded], list[Block]]
MESSAGES = "/v1/messages"


def text_reply(text: str) -> list[Block]:
    return [{"type": "text", "text": text}]


def tool_use(name: str, tool_input: dict[str, Any], block_id: str) -> list[Block]:
    return [{"type": "tool_use", "id": block_id, "name": name, "input": tool_input}]


def _stream(model: str, blocks: list[Block]) -> Iterator[bytes]:
    usage = {"input_tokens": 10, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    message: dict[str, Any] = {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    yield sse(event="message_start", data={"type": "message_start", "message": message})
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start: Block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield sse(
            event="content_block_start", data={"type": "content_block_start", "index": index, "content_block": start}
        )
        yield sse(event="content_block_delta", data={"type": "content_block_delta", "index": index, "delta": delta})
        yield sse(event="content_block_stop", data={"type": "content_block_stop", "index": index})
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    delta = {"stop_reason": stop, "stop_sequence": None}
    yield sse(event="message_delta", data={"type": "message_delta", "delta": delta, "usage": {"output_tokens": 5}})
    yield sse(event="message_stop", data={"type": "message_stop"})


def _route(request: Recorded) -> str:
    return request.path.split("?")[0]


def is_model_request(request: Recorded) -> bool:
    """A ``/v1/messages`` call (not a token count or another side request)."""
    return request.method == "POST" and _route(request) == MESSAGES


def _answer(script: Script) -> Callable[[Recorded], Answer]:
    def answer(request: Recorded) -> Answer:
        route = _route(request)
        if request.method == "POST" and route == f"{MESSAGES}/count_tokens":
            return json_answer({"input_tokens": len(json.dumps(request.body)) // 4})
        if not is_model_request(request):
            return json_answer({"type": "error", "error": {"type": "not_found_error", "message": route}}, 404)
        blocks = script(request)
        model = str(request.body.get("model", "claude-scripted"))
        if request.body.get("stream"):
            return 200, "text/event-stream", list(_stream(model, blocks))
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        message = {
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        return json_answer(message)

    return answer


# ``script`` as the Anthropic Messages API on a free loopback port: ``with scripted_api(script) as api``.
scripted_api = scripted_server(is_model_request, _answer)


# `.ci/run` installs the pinned CLI here; CLAUDE_CODE_BIN points at another copy.
CLAUDE_CODE_PREFIX = Path("/opt/claude-code")
LISTING_HEADER = "The following skills are available for use with the Skill tool:\n\n"
HOOK_CONTEXT_HEADER = "UserPromptSubmit hook additional context: "


def find_claude_binary() -> Path | None:
    """The real Claude Code binary (the platform package inside the npm install), if installed."""
    configured = os.environ.get("CLAUDE_CODE_BIN")
    candidates = (
        [Path(configured)]
        if configured
        else sorted((CLAUDE_CODE_PREFIX / "node_modules" / "@anthropic-ai").glob("claude-code-*/claude"))
    )
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def claude_env(home: Path, api: Recorder, **extra: str) -> dict[str, str]:
    """The environment of an offline ``claude`` run: a throwaway HOME, the scripted API, a dummy key."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-offline-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        **extra,
    }


def run_claude(
    binary: Path, prompt: str, cwd: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(binary), "-p", prompt, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )
    if proc.returncode != 0:
        raise RuntimeError(f"claude exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def _texts(request: Recorded) -> Iterator[str]:
    for message in request.body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            yield from (block.get("text", "") for block in content if isinstance(block, dict))


def skill_listing(request: Recorded) -> dict[str, str | None]:
    """Claude Code's own skill listing in a model request: skill name -> description, or None
    for a name listed bare (Claude Code drops descriptions when the listing outgrows its budget)."""
    for text in _texts(request):
        start = text.find(LISTING_HEADER)
        if start < 0:
            continue
        listing: dict[str, str | None] = {}
        body = text[start + len(LISTING_HEADER) :]
        for line in body.split("\n"):
            if not line.startswith("- "):
                if not line.strip() or line.startswith(HOOK_CONTEXT_HEADER):
                    break
                continue  # a multi-line description's continuation
            name, _, description = line[2:].partition(": ")
            listing[name.strip().rstrip(":")] = description or None
        return listing
    return {}


def listing_chars(request: Recorded) -> int:
    """Characters of the skill listing block (header included) in a model request."""
    for text in _texts(request):
        start = text.find(LISTING_HEADER)
        if start >= 0:
            end = text.find("\n\n", start + len(LISTING_HEADER))
            return (end if end >= 0 else len(text)) - start
    return 0


def hook_context(request: Recorded) -> str | None:
    """The ``additionalContext`` of the UserPromptSubmit hook as Claude Code put it in the request."""
    for text in _texts(request):
        start = text.find(HOOK_CONTEXT_HEADER)
        if start >= 0:
            return text[start + len(HOOK_CONTEXT_HEADER) :]
    return None


# Library mode as a user meets it (tests/test_claude_code_library.py, benchmarks/claude_code_library.py):
# request -> the skill folders that serve it (a copy of the right skill counts), and small talk
# that must get nothing.
LIBRARY_REQUESTS = {
    "scan this repository with semgrep for security issues": ("semgrep",),
    "write a GDPR data protection impact assessment for our new customer database": (
        "gdpr-dsgvo-expert",
        "gdpr-compliant",
    ),
    "fill in the fields of this PDF application form with my details": ("pdftk-server", "nano-pdf"),
}
CHIT_CHAT = (
    "hi",
    "what's 2+2?",
    "thanks!",
    "你好",
    "hello there",
    "good morning",
    "how are you?",
    "ok",
    "cool, thanks",
    "lol",
    "how's it going?",
    "tell me a joke",
    "bye!",
    "who are you?",
    "nice",
    "yes please",
    "great job",
    "谢谢",
    "see you tomorrow",
    "good night",
)
SKILL_MD_PATH = re.compile(r"(/\S+/SKILL\.md)")
READ_ID = "toolu_read"
# Claude Code's answer to a Read outside the folders it may read.
READ_REFUSED = "haven't granted"


def reads_named_skill(request: Recorded) -> list[Block]:
    """A script: the model reads the first SKILL.md the hook's context names, then answers."""
    named = SKILL_MD_PATH.search(hook_context(request) or "")
    if named is not None and len(request.body["messages"]) <= 2:
        return tool_use("Read", {"file_path": named.group(1)}, READ_ID)
    return text_reply("Done.")


def read_result(requests: list[Recorded]) -> dict[str, Any] | None:
    """The tool result of the model's Read call (:func:`reads_named_skill`) as Claude Code sent it
    back to the model; None when no request carries it."""
    for request in requests[1:]:
        for message in request.body.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "tool_result"
                    and block.get("tool_use_id") == READ_ID
                ):
                    return block
    return None
