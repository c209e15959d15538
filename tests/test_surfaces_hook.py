"""`skillpilot hook claude-code`: real UserPromptSubmit JSON in, the hook's JSON (or nothing) out."""

from __future__ import annotations

import contextlib
import io
import json
import socket
from pathlib import Path

import pytest

from skillpilot.adapters.claude_code import run_hook
from skillpilot.serve import ServeInfo, write_serve_file

from .surfaces_util import SKILLS, cli, indexed, prompt_payload


def hook(payload: str, home: Path) -> tuple[str, str]:
    """Run the hook in-process as the CLI does; its stdout, and what it wrote to stderr."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(stderr):
        run_hook(io.StringIO(payload), stdout, home)
    return stdout.getvalue(), stderr.getvalue()


def context_of(stdout: str) -> str:
    answer = json.loads(stdout)
    assert set(answer) == {"hookSpecificOutput"}
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    context: str = answer["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= 10_000
    return context


def test_hard_route_tells_the_model_to_invoke_the_skill_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    indexed(home)
    proc = cli("hook", "claude-code", home=home, stdin=prompt_payload("commit my changes", tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1
    assert context_of(proc.stdout).splitlines()[:4] == [
        "SkillPilot routed this prompt to the skill `git-commit` (confidence 0.95).",
        "Before anything else, invoke the skill `git-commit` with your Skill tool, then follow its "
        "instructions.",
        "Skill: Stage changes and create a git commit with a clear, conventional commit message written from "
        "the actual diff. Use when the user wants to commit, save their work to git, or needs a commit "
        "message for staged changes.",
        f"Path: {SKILLS / 'git-commit'}",
    ]


def test_soft_route_names_the_candidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    indexed(home)
    # Trigger-phrase routes have confidence 0.95: above this hard threshold, they become soft.
    monkeypatch.setenv("SKILLPILOT_HARD_THRESHOLD", "0.99")
    stdout, _ = hook(prompt_payload("commit my changes", tmp_path), home)
    lines = context_of(stdout).splitlines()
    assert lines[0] == "SkillPilot: the skill `git-commit` may fit this prompt (confidence 0.95)."
    assert lines[-1] == "If it fits the request, invoke it with your Skill tool; otherwise answer as usual."
    assert "Before anything else" not in stdout


def test_pass_through_prints_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    indexed(home)
    assert hook(prompt_payload("Tell me a joke about penguins", tmp_path), home) == ("", "")
    assert hook(prompt_payload("   ", tmp_path), home) == ("", "")


@pytest.mark.parametrize(
    "payload",
    [
        "{not json",
        json.dumps({"session_id": "s", "hook_event_name": "UserPromptSubmit"}),
        json.dumps(["prompt"]),
    ],
)
def test_bad_input_fails_open(tmp_path: Path, payload: str) -> None:
    proc = cli("hook", "claude-code", home=tmp_path, stdin=payload)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr.startswith("skillpilot hook: skipped (")


def test_broken_config_fails_open(tmp_path: Path) -> None:
    home = tmp_path / "home"
    indexed(home)
    (home / "config.yaml").write_text("router:\n  hardRouteThreshold: very high\n", encoding="utf-8")
    stdout, stderr = hook(prompt_payload("commit my changes", tmp_path), home)
    assert stdout == ""
    assert "skipped (ConfigError: config 'router.hardRouteThreshold'" in stderr


def test_stale_serve_file_falls_back_to_routing_in_process(tmp_path: Path) -> None:
    home = tmp_path / "home"
    indexed(home)
    # A port nobody listens on: bound, then closed, so connecting to it is refused.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    write_serve_file(home, ServeInfo(url=f"http://127.0.0.1:{port}", pid=1))
    stdout, _ = hook(prompt_payload("commit my changes", tmp_path), home)
    assert context_of(stdout).startswith("SkillPilot routed this prompt to the skill `git-commit`")
