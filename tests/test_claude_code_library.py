"""Library mode with the real Claude Code CLI, as a user sets it up: the bench corpus (294 skills)
as a library outside the working folder, ``skillpilot setup claude-code`` (which grants Claude
Code read access to the library and starts the service), then ``claude -p`` against a scripted
Messages API on 127.0.0.1.

What a user must see: the first prompt after setup is routed (the service setup started answers
it); a semgrep scan, a GDPR DPIA and a PDF form each get a context naming the right skill (or a
copy of it) by its SKILL.md path; the model's Read of that SKILL.md is allowed and its text comes
back as the tool result; 20 chit-chat prompts get nothing. Uninstall stops the service.

Marked ``real_cli`` (CI-only, minutes: the 294 skills are indexed with the real models).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from skillpilot.bench.hostcli import Recorded  # noqa: E402
from skillpilot.bench.hostcli.claude_code import (  # noqa: E402
    claude_env,
    hook_context,
    run_claude,
    scripted_api,
    text_reply,
    tool_use,
)

from .claude_code_util import SRC, claude_binary, setup_hooks  # noqa: E402
from .conftest import BENCH, require_corpus  # noqa: E402

pytestmark = pytest.mark.real_cli

LIBRARY = BENCH / "skills"
# Request -> the skill folders that serve it (a copy of the right skill counts).
REQUESTS = {
    "scan this repository with semgrep for security issues": {"semgrep"},
    "write a GDPR data protection impact assessment for our new customer database": {
        "gdpr-dsgvo-expert",
        "gdpr-compliant",
    },
    "fill in the fields of this PDF application form with my details": {"pdftk-server", "nano-pdf"},
}
FIRST = next(iter(REQUESTS))
CHIT_CHAT = [
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
    "what time is it?",
    "tell me a joke",
    "bye!",
    "who are you?",
    "nice",
    "yes please",
    "great job",
    "谢谢",
    "see you tomorrow",
    "good night",
]
SKILL_MD = re.compile(r"(/\S+/SKILL\.md)")


@dataclass
class Library:
    home: Path
    skillpilot_home: Path
    project: Path
    first: list[Recorded]  # the model requests of the first prompt after setup


def ask(library: Library, prompt: str) -> list[Recorded]:
    """``claude -p PROMPT`` in the project; the scripted model reads the first SKILL.md the hook's
    context names, then answers."""

    def script(request: Recorded) -> list[dict[str, object]]:
        named = SKILL_MD.search(hook_context(request) or "")
        if named is not None and len(request.body["messages"]) <= 2:
            return tool_use("Read", {"file_path": named.group(1)}, "toolu_read")
        return text_reply("Done.")

    with scripted_api(script) as api:
        env = claude_env(library.home, api, SKILLPILOT_HOME=str(library.skillpilot_home), PYTHONPATH=str(SRC))
        run_claude(claude_binary(), prompt, library.project, env)
        return api.model_requests()


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    claude_binary()
    require_corpus()
    root = tmp_path_factory.mktemp("claude-code-library")
    home, skillpilot_home, project = root / "home", root / "skillpilot", root / "project"
    (home / ".claude").mkdir(parents=True)
    project.mkdir()
    skillpilot_home.mkdir()
    config = {"platforms": {"claudeCode": {"libraryRoots": [str(LIBRARY)]}}}
    (skillpilot_home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")
    index = [sys.executable, "-m", "skillpilot", "index", str(LIBRARY)]
    env = {**os.environ, "SKILLPILOT_HOME": str(skillpilot_home), "PYTHONPATH": str(SRC)}
    indexed = subprocess.run(index, env=env, capture_output=True, text=True, timeout=1200)
    assert indexed.returncode == 0, indexed.stderr
    report = setup_hooks(home, skillpilot_home)
    try:
        assert report["granted"] == [str(LIBRARY)]
        assert (report["service"]["running"], report["service"]["started"]) == (True, True)
        settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
        assert settings["permissions"]["additionalDirectories"] == [str(LIBRARY)]
        current = Library(home, skillpilot_home, project, [])
        current.first = ask(current, FIRST)  # the first prompt after setup
        yield current
    finally:
        removed = setup_hooks(home, skillpilot_home, "--uninstall")
        assert removed["service"]["stopped"] is True, removed


def read_result(requests: list[Recorded]) -> dict[str, object]:
    """The tool result of the model's Read call, as Claude Code sent it back to the model."""
    assert len(requests) >= 2, "the model's Read call got no answer"
    results = [
        block
        for message in requests[1].body["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") == "toolu_read"
    ]
    assert len(results) == 1, requests[1].body["messages"]
    result: dict[str, object] = results[0]
    return result


@pytest.mark.parametrize("prompt", list(REQUESTS))
def test_a_library_skill_outside_the_cwd_is_named_and_read(library: Library, prompt: str) -> None:
    requests = library.first if prompt == FIRST else ask(library, prompt)
    context = hook_context(requests[0])
    assert context is not None, f"no context for {prompt!r} (the first prompt after setup: {prompt == FIRST})"
    named = Path(SKILL_MD.findall(context)[0])
    assert named.is_relative_to(LIBRARY) and named.parent.name in REQUESTS[prompt], context
    result = read_result(requests)
    text = json.dumps(result["content"], ensure_ascii=False)
    assert result.get("is_error") is not True and "permission" not in text.lower(), text[:500]
    lines = named.read_text(encoding="utf-8").splitlines()
    first_line = next(line for line in lines[lines.index("---", 1) + 1 :] if line.strip())  # below the frontmatter
    assert json.dumps(first_line, ensure_ascii=False)[1:-1] in text, (first_line, text[:500])


def test_chit_chat_gets_nothing(library: Library) -> None:
    contexts = {prompt: hook_context(ask(library, prompt)[0]) for prompt in CHIT_CHAT}
    assert {p: c for p, c in contexts.items() if c is not None} == {}
