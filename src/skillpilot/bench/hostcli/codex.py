"""The real Codex CLI driven offline: a scripted OpenAI Responses API on 127.0.0.1.

Codex (``codex exec``) reads its model provider from ``~/.codex/config.toml``; a
``[model_providers.scripted]`` with this server's ``base_url``, ``wire_api = "responses"`` and
``supports_websockets = false`` makes it ``POST {base}/responses`` with ``stream: true`` and read
Server-Sent Events (``response.created``, ``response.output_item.done`` with a message or a
``function_call``, ``response.completed``). Its model chooses a skill by running a shell command
(``exec_command``) that reads the skill's SKILL.md. What the model reads: ``input`` (developer
messages with ``<skills_instructions>``, the user's prompt, and a hook's context as a developer
message after it) and ``tools``.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import Answer, Recorded, Recorder, Script, json_answer, scripted_server, sse

# A model in Codex's own catalog: its context window sets the skill listing's budget.
MODEL = "gpt-5.5"
SHELL_TOOL = "exec_command"
LISTING_START = "<skills_instructions>"
LISTING_END = "</skills_instructions>"
# "- name: description (file: r0/name/SKILL.md)"; past its budget Codex drops descriptions.
SKILL_LINE = re.compile(r"^- ([^:\n(]+?)(?:: (.*))? \(file: (\S+)\)$", re.M)


def is_model_request(request: Recorded) -> bool:
    return request.method == "POST" and request.path.split("?")[0].endswith("/responses")


def _answer(script: Script) -> Any:
    def answer(request: Recorded) -> Answer:
        if not is_model_request(request):
            return json_answer({"models": []} if request.method == "GET" else {"error": "scripted"})
        reply = script(request)
        if reply.skill is not None:
            arguments = json.dumps({"cmd": f"cat {reply.skill}"})
            item: dict[str, Any] = {
                "type": "function_call",
                "call_id": "call_1",
                "name": SHELL_TOOL,
                "arguments": arguments,
            }
        else:
            content = [{"type": "output_text", "text": reply.text}]
            item = {"type": "message", "role": "assistant", "id": "msg_1", "content": content}
        usage = {"input_tokens": 10, "input_tokens_details": None, "output_tokens": 5, "output_tokens_details": None}
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {"id": "resp_1"}},
            {"type": "response.output_item.done", "item": item},
            {"type": "response.completed", "response": {"id": "resp_1", "usage": {**usage, "total_tokens": 15}}},
        ]
        return 200, "text/event-stream", [sse(e, str(e["type"])) for e in events]

    return answer


# The scripted Responses API on a free loopback port: ``with serve(script) as api``.
serve = scripted_server(is_model_request, _answer)


def environment(home: Path, api: Recorder, path: str) -> dict[str, str]:
    """The environment of an offline ``codex`` run in the throwaway ``home``: its config.toml
    selects the scripted provider (written once; setup adds to it later)."""
    config = home / ".codex" / "config.toml"
    if not config.exists():
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            "# written by the offline test harness\n"
            f'model = "{MODEL}"\n'
            'model_provider = "scripted"\n'
            "check_for_update_on_startup = false\n\n"
            "[model_providers.scripted]\n"
            'name = "scripted"\n'
            f'base_url = "{api.url}/v1"\n'
            'wire_api = "responses"\n'
            "supports_websockets = false\n",
            encoding="utf-8",
        )
    return {"PATH": path, "HOME": str(home), "NO_COLOR": "1"}


def run(binary: Path, prompt: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One headless turn (``codex exec``) in ``cwd``; raises with the CLI's output when it fails."""
    command = [str(binary), "exec", "--json", "--skip-git-repo-check", prompt]
    proc = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )
    if proc.returncode != 0:
        raise RuntimeError(f"codex exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def _messages(request: Recorded) -> Iterator[tuple[str, str]]:
    """(role, text) of each message in the request's input, in order."""
    for item in request.body.get("input", []):
        if isinstance(item, dict) and item.get("type") == "message":
            content = item.get("content")
            parts = content if isinstance(content, list) else []
            text = "".join(p.get("text", "") for p in parts if isinstance(p, dict))
            yield str(item.get("role")), text


def listing_text(request: Recorded) -> str:
    for role, text in _messages(request):
        start = text.find(LISTING_START)
        if role == "developer" and start >= 0:
            end = text.find(LISTING_END, start)
            return text[start : end + len(LISTING_END) if end >= 0 else len(text)]
    return ""


def listing(request: Recorded) -> dict[str, str | None]:
    """Codex's own skill listing in a model request: skill name -> description (None for a name
    listed without one)."""
    return {name: description or None for name, description, _ in SKILL_LINE.findall(listing_text(request))}


def listing_chars(request: Recorded) -> int:
    return len(listing_text(request))


def context(request: Recorded) -> str | None:
    """The hook's ``additionalContext``: the developer message after the user's prompt."""
    messages = list(_messages(request))
    prompts = [n for n, (role, text) in enumerate(messages) if role == "user" and not text.startswith("<")]
    if not prompts:
        return None
    after = [text for role, text in messages[prompts[-1] + 1 :] if role == "developer"]
    return "\n".join(after) if after else None
