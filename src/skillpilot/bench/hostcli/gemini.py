"""The real Gemini CLI driven offline: a scripted Gemini API (``generateContent``) on 127.0.0.1.

Gemini CLI (``gemini -p``, an API key and ``GOOGLE_GEMINI_BASE_URL``) asks ``POST
{base}/v1beta/models/{model}:streamGenerateContent?alt=sse`` for each turn and reads Server-Sent
Events, each a ``GenerateContentResponse`` (``candidates[0].content.parts``: text or a
``functionCall``). A fixed model (``-m``) skips the router's extra classifier requests, and
``--approval-mode yolo`` lets a headless run use its tools. Headless Gemini CLI refuses a folder it
does not trust: ``run`` trusts its folder in HOME's ``trustedFolders.json`` (as a user answering
Gemini's trust prompt does), not with ``--skip-trust``, which SkillPilot's service cannot see. What
the model reads: ``systemInstruction`` (with ``<available_skills>``) and ``contents`` (a hook's
context is a ``<hook_context>`` part after the prompt).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...adapters.hosts.gemini import TRUSTED_FOLDERS
from . import Answer, Recorded, Recorder, Script, json_answer, scripted_server, sse

MODEL = "gemini-2.5-pro"
SKILL_TOOL = "activate_skill"
_SKILL = re.compile(r"<skill>\s*<name>(.*?)</name>\s*<description>(.*?)</description>", re.S)
_LISTING = re.compile(r"<available_skills>.*?</available_skills>", re.S)
_CONTEXT = re.compile(r"^<hook_context>(.*)</hook_context>$", re.S)


def is_model_request(request: Recorded) -> bool:
    return f"/models/{MODEL}:" in request.path and "generatecontent" in request.path.lower()


def _answer(script: Script) -> Any:
    def answer(request: Recorded) -> Answer:
        if ":countTokens" in request.path:
            return json_answer({"totalTokens": len(json.dumps(request.body)) // 4})
        if request.method != "POST" or "generatecontent" not in request.path.lower():
            return json_answer({"error": {"code": 404, "message": "scripted Gemini API"}}, 404)
        reply = script(request)
        if reply.skill is not None:
            parts: list[dict[str, Any]] = [{"functionCall": {"name": SKILL_TOOL, "args": {"name": reply.skill}}}]
        else:
            parts = [{"text": reply.text}]
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": MODEL,
        }
        if "streamGenerateContent" in request.path:
            return 200, "text/event-stream", [sse(chunk)]
        return json_answer(chunk)

    return answer


# The scripted Gemini API on a free loopback port: ``with serve(script) as api``.
serve = scripted_server(is_model_request, _answer)


def environment(home: Path, api: Recorder, path: str) -> dict[str, str]:
    """The environment of an offline ``gemini`` run in the throwaway ``home``: its settings
    select API-key auth (merged into any settings already there) and send no usage statistics."""
    settings_path = home / ".gemini" / "settings.json"
    settings_path.parent.mkdir(parents=True, exist_ok=True)
    settings = json.loads(settings_path.read_text(encoding="utf-8")) if settings_path.exists() else {}
    settings.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
    settings.setdefault("privacy", {})["usageStatisticsEnabled"] = False
    settings_path.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return {
        "PATH": path,
        "HOME": str(home),
        "GEMINI_API_KEY": "offline-test-key",
        "GOOGLE_GEMINI_BASE_URL": api.url,
        "NO_COLOR": "1",
    }


def run(binary: Path, prompt: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One headless turn (``gemini -p``) in ``cwd``, trusted; raises with the CLI's output when it fails."""
    trust(Path(env["HOME"]), cwd)
    command = [str(binary), "-m", MODEL, "--approval-mode", "yolo", "-p", prompt]
    proc = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )
    if proc.returncode != 0:
        raise RuntimeError(f"gemini exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def trust(home: Path, folder: Path) -> None:
    """Gemini CLI trusts ``folder`` (``TRUST_FOLDER`` in ``home``'s ``trustedFolders.json``)."""
    path = home / ".gemini" / TRUSTED_FOLDERS
    rules = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    rules[str(folder.resolve())] = "TRUST_FOLDER"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rules, indent=2), encoding="utf-8")


def _system(request: Recorded) -> str:
    instruction = request.body.get("systemInstruction")
    parts = instruction.get("parts", []) if isinstance(instruction, dict) else []
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict))


def _texts(request: Recorded) -> Iterator[str]:
    for content in request.body.get("contents", []):
        for part in content.get("parts", []) if isinstance(content, dict) else []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                yield part["text"]


def listing(request: Recorded) -> dict[str, str | None]:
    """Gemini CLI's own ``<available_skills>`` in a model request: skill name -> description."""
    return {name.strip(): description.strip() for name, description in _SKILL.findall(_system(request))}


def listing_chars(request: Recorded) -> int:
    found = _LISTING.search(_system(request))
    return len(found.group(0)) if found else 0


def context(request: Recorded) -> str | None:
    """The hook's ``additionalContext``, as Gemini CLI wrapped it in ``<hook_context>``."""
    for text in _texts(request):
        found = _CONTEXT.match(text)
        if found:
            return found.group(1)
    return None
