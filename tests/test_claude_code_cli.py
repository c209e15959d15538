"""The Claude Code hook inside the real Claude Code CLI, driven offline.

``claude -p`` runs in a throwaway HOME whose ``~/.claude/skills`` holds real SKILL.md folders and
whose settings.json carries SkillPilot's hooks; the model is a scripted Messages API on
127.0.0.1 that records every request (``skillpilot.bench.hostcli.claude_code``). The assertions read what
Claude Code actually sent the model: its own skill listing and the hook's context beside it.

Marked ``real_cli`` (CI-only, tens of seconds): skipped without the CLI, required with CI=true.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.bench.hostcli import Recorded  # noqa: E402
from skillpilot.bench.hostcli.claude_code import (  # noqa: E402
    claude_env,
    hook_context,
    run_claude,
    scripted_api,
    skill_listing,
    text_reply,
    tool_use,
)
from skillpilot.feedback import FeedbackStore  # noqa: E402

from .claude_code_util import SRC, claude_binary, setup_hooks  # noqa: E402
from .surfaces_util import SKILLS, advertised_service, wait_until_indexed  # noqa: E402

pytestmark = pytest.mark.real_cli

USER_SKILLS = ["git-commit", "csv-analyze", "email-send", "translate-text", "changelog-writer"]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """HOME with the user skills and SkillPilot's hooks, and a running service over those skills."""
    claude_binary()
    root = tmp_path_factory.mktemp("claude-code")
    home, skillpilot_home = root / "home", root / "skillpilot"
    for name in USER_SKILLS:
        shutil.copytree(SKILLS / name, home / ".claude" / "skills" / name)
    pilot = SkillPilot(home=skillpilot_home, preconditions=False)
    pilot.index([home / ".claude" / "skills"])
    pilot.route("warm up")  # a service answers warm; the hook gives up on one that takes seconds
    setup_hooks(home, skillpilot_home, "--no-start")
    # The service (this process) finds Claude Code's skills where Claude Code keeps them for this HOME.
    with pytest.MonkeyPatch.context() as patch, advertised_service(pilot):
        patch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
        yield home, skillpilot_home
    pilot.close()


def run(session: tuple[Path, Path], prompt: str, cwd: Path, script: object = None) -> list[Recorded]:
    home, skillpilot_home = session
    with scripted_api(script or (lambda _request: text_reply("Done."))) as api:  # type: ignore[arg-type]
        env = claude_env(home, api, SKILLPILOT_HOME=str(skillpilot_home), PYTHONPATH=str(SRC))
        run_claude(claude_binary(), prompt, cwd, env)
        return api.model_requests()


def test_hook_context_reaches_the_model_and_names_a_skill_claude_code_lists(
    session: tuple[Path, Path], tmp_path: Path
) -> None:
    requests = run(session, "commit my changes", tmp_path)
    first = requests[0]
    context = hook_context(first)
    assert context is not None, "the hook's additionalContext is not in the model request"
    assert "SkillPilot routed this prompt to the skill `git-commit`" in context
    listing = skill_listing(first)
    assert set(USER_SKILLS) <= set(listing), listing
    assert listing["git-commit"], "Claude Code listed git-commit without its description"


def test_a_passthrough_prompt_adds_nothing(session: tuple[Path, Path], tmp_path: Path) -> None:
    requests = run(session, "what is the capital of France?", tmp_path)
    assert "git-commit" in skill_listing(requests[0]), "the request has no skill listing to compare with"
    assert all(hook_context(request) is None for request in requests)
    assert "SkillPilot" not in json.dumps([request.body.get("messages") for request in requests])


def test_a_project_skill_from_the_cwd_is_routed(session: tuple[Path, Path], tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(SKILLS / "web-scrape", project / ".claude" / "skills" / "web-scrape")
    run(session, "hello", project)
    wait_until_indexed(session[1], project / ".claude" / "skills")
    requests = run(session, "scrape the product prices off https://example.com/shop into a CSV", project)
    first = requests[0]
    assert "web-scrape" in skill_listing(first), "Claude Code did not list the project skill"
    context = hook_context(first)
    assert context is not None and "`web-scrape`" in context, context


def test_library_mode_hands_the_model_a_skill_md_it_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Skills in a library root Claude Code does not read: the hook names the SKILL.md to read,
    the model reads it with Claude Code's Read tool, and the skill's instructions reach the model."""
    binary = claude_binary()
    home, skillpilot_home, library = tmp_path / "home", tmp_path / "skillpilot", tmp_path / "library"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    for name in USER_SKILLS:
        shutil.copytree(SKILLS / name, library / name)
    skillpilot_home.mkdir()
    config = {"platforms": {"claudeCode": {"libraryRoots": [str(library)]}}}
    (skillpilot_home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")
    pilot = SkillPilot(home=skillpilot_home, preconditions=False)
    pilot.index([library])
    pilot.route("warm up")  # a service answers warm; the hook gives up on one that takes seconds
    setup_hooks(home, skillpilot_home, "--no-start")
    skill_md = library / "git-commit" / "SKILL.md"

    def script(request: Recorded) -> list[dict[str, object]]:
        context = hook_context(request) or ""
        if f"read {skill_md}" in context and len(request.body["messages"]) <= 2:
            return tool_use("Read", {"file_path": str(skill_md)}, "toolu_read")
        return text_reply("Done.")

    with advertised_service(pilot), scripted_api(script) as api:
        env = claude_env(home, api, SKILLPILOT_HOME=str(skillpilot_home), PYTHONPATH=str(SRC))
        project = tmp_path / "project"
        project.mkdir()
        run_claude(binary, "commit my changes", project, env)  # the library lies outside the cwd
    pilot.close()
    first, *rest = api.model_requests()
    context = hook_context(first)
    assert context is not None and f"read {skill_md} and follow its instructions" in context, context
    assert "Skill tool" not in context
    assert "git-commit" not in skill_listing(first), "Claude Code listed a library skill itself"
    assert rest, "the model's Read call got no answer"
    results = [
        b
        for m in rest[0].body["messages"]
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    instructions = "Run `git status --short` and `git diff --staged`"
    assert any(instructions in json.dumps(r["content"]) for r in results), results


def test_the_skill_the_model_invokes_is_stored_as_an_implicit_signal(
    session: tuple[Path, Path], tmp_path: Path
) -> None:
    """A soft route the model answers with a Skill call: Claude Code's PostToolUse hook reaches the
    service, which stores an implicit confirm for the invoked skill."""
    prompt = "how do I say good morning to my team in Japanese?"

    def script(request: Recorded) -> list[dict[str, object]]:
        if len(request.body["messages"]) <= 2:
            return tool_use("Skill", {"skill": "translate-text"}, "toolu_skill")
        return text_reply("おはようございます")

    requests = run(session, prompt, tmp_path, script)
    context = hook_context(requests[0])
    assert context is not None and "may fit this prompt" in context, context
    assert any("Launching skill: translate-text" in json.dumps(r.body["messages"]) for r in requests[1:])
    store = FeedbackStore(session[1] / "feedback.sqlite")
    signals = [s for s in store.signals() if s.query == prompt]
    store.close()
    assert [(s.kind, s.skill, s.implicit) for s in signals] == [("confirmed", "translate-text", True)], signals
