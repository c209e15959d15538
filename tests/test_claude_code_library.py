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
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from skillpilot.bench.hostcli import Recorded, claude_code  # noqa: E402

from .claude_code_util import SRC, claude_binary, setup_hooks  # noqa: E402
from .conftest import BENCH, require_corpus  # noqa: E402

pytestmark = pytest.mark.real_cli

LIBRARY = BENCH / "skills"
FIRST = next(iter(claude_code.LIBRARY_REQUESTS))


@dataclass
class Library:
    home: Path
    skillpilot_home: Path
    project: Path
    first: list[Recorded]  # the model requests of the first prompt after setup


def ask(library: Library, prompt: str) -> list[Recorded]:
    """``claude -p PROMPT`` in the project; the model reads the SKILL.md the context names first."""
    with claude_code.scripted_api(claude_code.reads_named_skill) as api:
        env = claude_code.claude_env(
            library.home, api, SKILLPILOT_HOME=str(library.skillpilot_home), PYTHONPATH=str(SRC)
        )
        claude_code.run_claude(claude_binary(), prompt, library.project, env)
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


@pytest.mark.parametrize("prompt", list(claude_code.LIBRARY_REQUESTS))
def test_a_library_skill_outside_the_cwd_is_named_and_read(library: Library, prompt: str) -> None:
    requests = library.first if prompt == FIRST else ask(library, prompt)
    context = claude_code.hook_context(requests[0])
    assert context is not None, f"no context for {prompt!r} (the first prompt after setup: {prompt == FIRST})"
    named = Path(claude_code.SKILL_MD_PATH.findall(context)[0])
    assert named.is_relative_to(LIBRARY) and named.parent.name in claude_code.LIBRARY_REQUESTS[prompt], context
    result = claude_code.read_result(requests)
    assert result is not None, "the model's Read call got no answer"
    text = json.dumps(result["content"], ensure_ascii=False)
    assert result.get("is_error") is not True and claude_code.READ_REFUSED not in text, text[:500]
    lines = named.read_text(encoding="utf-8").splitlines()
    first_line = next(line for line in lines[lines.index("---", 1) + 1 :] if line.strip())  # below the frontmatter
    assert json.dumps(first_line, ensure_ascii=False)[1:-1] in text, (first_line, text[:500])


def test_chit_chat_gets_nothing(library: Library) -> None:
    contexts = {prompt: claude_code.hook_context(ask(library, prompt)[0]) for prompt in claude_code.CHIT_CHAT}
    assert {p: c for p, c in contexts.items() if c is not None} == {}
