"""Claude Code's hooks as settings.json runs them: the standard-library hook process against a real
service on 127.0.0.1, over the skills Claude Code offers the session."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import skillpilot
from skillpilot import SkillPilot
from skillpilot.adapters.hooks import RECHECK_SECONDS
from skillpilot.adapters.hosts import SkillRoot, get_host
from skillpilot.adapters.hosts.claude_code import offered_roots
from skillpilot.adapters.hosts.files import hook_command
from skillpilot.adapters.hosts.hooks import HostHooks, RoutedPrompt, implicit_signal
from skillpilot.model import IndexedSkill
from skillpilot.serve import service as lifecycle

from .conftest import EXAMPLES, write_skill
from .surfaces_util import advertised_service, cli, indexed, prompt_payload

SESSION = "3f6c2a9e-5a51-4c1e-9d0b-6e2f1c7a8b90"
# Below the release-notes prompt's confidence on the example skills (0.35 with the shipped
# calibration), so that it gets a soft shortlist the model can choose from.
SOFT_FOR_RELEASE_NOTES = 0.3


def run_hook(home: Path, payload: str) -> subprocess.CompletedProcess[str]:
    """The hook exactly as `skillpilot setup claude-code` writes it into settings.json."""
    return subprocess.run(
        hook_command("claude-code", home), shell=True, input=payload, capture_output=True, text=True, timeout=30
    )


service = advertised_service


@pytest.fixture
def claude_home(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's folder whose skills/ are the example skills (the index's root)."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(EXAMPLES))
    return EXAMPLES


def context_of(stdout: str) -> str:
    assert stdout.count("\n") == 1
    answer = json.loads(stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    context: str = answer["hookSpecificOutput"]["additionalContext"]
    return context


def tool_payload(skill: str, cwd: Path, session: str = SESSION) -> str:
    return json.dumps(
        {
            "session_id": session,
            "cwd": str(cwd),
            "hook_event_name": "PostToolUse",
            "tool_name": "Skill",
            "tool_input": {"skill": skill},
            "tool_response": {"success": True},
        }
    )


def test_the_hook_process_imports_only_the_standard_library(tmp_path: Path) -> None:
    command = hook_command("claude-code", tmp_path / "home").replace(" -S ", " -S -X importtime ", 1)
    proc = subprocess.run(command, shell=True, input="{not json", capture_output=True, text=True, timeout=30)
    assert (proc.returncode, proc.stdout) == (0, "")
    # `-X importtime` lists every module the process imports, one "import time: ... | name" line each.
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "imported package" not in line
    }
    assert {"json", "socket", "fcntl"} <= imported
    assert imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)
    assert "skipped (JSONDecodeError" in proc.stderr


def test_hard_route_names_the_skill_claude_code_offers(tmp_path: Path, claude_home: Path) -> None:
    pilot = indexed(tmp_path / "home")
    with service(pilot):
        proc = run_hook(pilot.settings.home, prompt_payload("commit my changes", tmp_path))
        assert proc.returncode == 0, proc.stderr
        assert context_of(proc.stdout).splitlines()[:2] == [
            "SkillPilot routed this prompt to the skill `git-commit` (confidence 0.95).",
            "Before anything else, invoke the skill `git-commit` with your Skill tool, then follow its instructions.",
        ]
        assert run_hook(pilot.settings.home, prompt_payload("Tell me a joke about penguins", tmp_path)).stdout == ""


def test_an_install_from_before_the_host_registry_keeps_working_without_a_rerun(
    tmp_path: Path, claude_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """settings.json exactly as `setup claude-code` wrote it before hosts were modules (its own
    hook command, events and timeout, written out here rather than by today's code)."""
    pilot = indexed(tmp_path / "home")
    home = pilot.settings.home
    client = Path(skillpilot.__file__).resolve().parent / "adapters" / "hook_client.py"
    command = f"{Path(sys.executable).absolute()} -S -P {client} claude-code --home {home}"
    entry = {"type": "command", "command": command, "timeout": 10}
    events = {"SessionStart": None, "UserPromptSubmit": None, "PostToolUse": "Skill", "Stop": None}
    hooks = {e: [{**({"matcher": m} if m else {}), "hooks": [entry]}] for e, m in events.items()}
    claude = tmp_path / "claude"
    claude.mkdir()
    settings = claude / "settings.json"
    settings.write_text(json.dumps({"model": "opus", "hooks": hooks}, indent=2) + "\n", encoding="utf-8")
    before = settings.read_bytes()
    with service(pilot):
        proc = subprocess.run(
            command, shell=True, input=prompt_payload("commit my changes", tmp_path), capture_output=True, text=True
        )
        assert context_of(proc.stdout).startswith("SkillPilot routed this prompt to the skill `git-commit`")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    doctor = json.loads(cli("doctor", "claude-code", "--json", home=home).stdout)
    assert doctor["hosts"]["claude-code"]["checks"][0]["missing"] == []
    # Setting up again finds nothing to change; uninstall still finds the old entries.
    assert json.loads(cli("setup", "claude-code", "--no-start", "--json", home=home).stdout)["changed"] is False
    assert settings.read_bytes() == before
    cli("setup", "claude-code", "--uninstall", home=home)
    assert json.loads(settings.read_text(encoding="utf-8")) == {"model": "opus"}


def test_skills_claude_code_does_not_offer_are_never_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The index holds the example skills, but this Claude Code has no skills/ folder of its own.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    pilot = indexed(tmp_path / "home")
    with service(pilot):
        proc = run_hook(pilot.settings.home, prompt_payload("commit my changes", tmp_path))
    assert (proc.returncode, proc.stdout) == (0, "")


def test_project_and_plugin_skills_are_indexed_at_session_start_and_namespaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = tmp_path / "claude"
    plugin = tmp_path / "plugins" / "cache" / "acme-market" / "acme" / "1.0.0"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "acme"}), encoding="utf-8")
    write_skill(
        plugin / "skills",
        "rocket-launch",
        "name: rocket-launch\ndescription: Launch the model rocket with the countdown checklist. Use to launch "
        "a rocket.\ntriggers: [launch the rocket]",
    )
    (claude / "plugins").mkdir(parents=True)
    entry = {"scope": "user", "installPath": str(plugin), "version": "1.0.0"}
    (claude / "plugins" / "installed_plugins.json").write_text(
        json.dumps({"version": 2, "plugins": {"acme@acme-market": [entry]}}), encoding="utf-8"
    )
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {"acme@acme-market": True}}), "utf-8")
    project = tmp_path / "project"
    write_skill(
        project / ".claude" / "skills",
        "brew-coffee",
        "name: brew-coffee\ndescription: Brew pour-over coffee step by step. Use when the user wants coffee "
        "brewed.\ntriggers: [brew the coffee]",
    )
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    assert [(r.path, r.namespace) for r in offered_roots(project)] == [
        (str(project / ".claude" / "skills"), None),
        (str((plugin / "skills").resolve()), "acme"),
    ]
    pilot = indexed(tmp_path / "home")
    with service(pilot):
        # As Claude Code starts a session: SessionStart indexes the new roots in the background.
        session = {"session_id": SESSION, "cwd": str(project), "hook_event_name": "SessionStart"}
        assert run_hook(pilot.settings.home, json.dumps(session)).returncode == 0
        offered = {str(project / ".claude" / "skills"), str((plugin / "skills").resolve())}
        deadline = time.monotonic() + 60
        while not offered <= set(pilot.store.roots()):
            assert time.monotonic() < deadline, "SessionStart never indexed the offered roots"
            time.sleep(0.05)
        coffee = run_hook(pilot.settings.home, prompt_payload("please brew the coffee", project))
        rocket = run_hook(pilot.settings.home, prompt_payload("launch the rocket now", project))
        # The example skills are in the index but not in this Claude Code's folders.
        commit = run_hook(pilot.settings.home, prompt_payload("commit my changes", project))
    assert "invoke the skill `brew-coffee` with your Skill tool" in context_of(coffee.stdout)
    assert "invoke the skill `acme:rocket-launch` with your Skill tool" in context_of(rocket.stdout)
    assert commit.stdout == ""


@pytest.mark.parametrize(
    ("decision", "named", "invoked", "expected"),
    [
        ("hard", ("git-commit",), "changelog-writer", None),
        ("hard", ("git-commit",), "git-commit", None),
        ("soft", ("git-commit", "changelog-writer"), "git-commit", ("confirm", "git-commit", None, None)),
        ("soft", ("git-commit",), "changelog-writer", ("correct", None, "git-commit", "changelog-writer")),
        ("passthrough", (), "changelog-writer", ("confirm", "changelog-writer", None, None)),
        ("soft", ("git-commit",), None, None),
    ],
)
def test_implicit_signal_only_where_the_model_chose(
    decision: str, named: tuple[str, ...], invoked: str | None, expected: tuple[Any, ...] | None
) -> None:
    last = RoutedPrompt(SESSION, 1, "write release notes", decision, named)
    signal = implicit_signal(last, invoked)
    assert (signal and (signal.kind, signal.skill, signal.wrong, signal.right)) == expected
    assert implicit_signal(None, "git-commit") is None


def test_the_model_choosing_another_skill_is_sent_as_an_implicit_correction(tmp_path: Path, claude_home: Path) -> None:
    pilot = indexed(tmp_path / "home", soft_threshold=SOFT_FOR_RELEASE_NOTES)
    sent: list[tuple[Any, ...]] = []
    recorded = pilot.feedback

    def spy(*args: Any, **kwargs: Any) -> Any:
        sent.append((args, kwargs))
        if "implicit" in inspect.signature(recorded).parameters:
            return recorded(*args, **kwargs)
        return None

    pilot.feedback = spy  # type: ignore[method-assign]
    with service(pilot):
        soft = run_hook(pilot.settings.home, prompt_payload("write release notes for this version", tmp_path))
        assert context_of(soft.stdout).startswith("SkillPilot: the skill `git-commit` may fit this prompt")
        used = run_hook(pilot.settings.home, tool_payload("changelog-writer", tmp_path))
        # One signal per routed prompt: a second Skill call in the same turn is not the answer to it.
        again = run_hook(pilot.settings.home, tool_payload("meeting-notes", tmp_path))
        hard = run_hook(pilot.settings.home, prompt_payload("commit my changes", tmp_path))
        obeyed = run_hook(pilot.settings.home, tool_payload("changelog-writer", tmp_path))
    for proc in (used, again, hard, obeyed):
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert used.stdout == again.stdout == obeyed.stdout == ""
    assert sent == [
        (
            ("correct", "write release notes for this version"),
            {"skill": None, "wrong": "git-commit", "right": "changelog-writer", "implicit": True},
        )
    ]


def transcript_line(kind: str, content: object, **extra: object) -> str:
    """One line of a Claude Code transcript (the JSON lines file a hook gets as transcript_path)."""
    return json.dumps({"type": kind, "message": {"role": kind, "content": content}, **extra})


def test_the_stop_hook_reads_the_skill_from_the_transcript(tmp_path: Path, claude_home: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    use = {"type": "tool_use", "id": "toolu_1", "name": "Skill", "input": {"skill": "changelog-writer"}}
    transcript.write_text(
        "\n".join(
            [
                transcript_line("user", "commit my changes"),
                transcript_line(
                    "assistant",
                    [{"type": "tool_use", "id": "toolu_0", "name": "Skill", "input": {"skill": "git-commit"}}],
                ),
                transcript_line("user", "write release notes for this version"),
                transcript_line("assistant", [{"type": "text", "text": "I'll use the changelog skill."}, use]),
                transcript_line("user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Launching"}]),
                transcript_line("user", [{"type": "text", "text": "# Changelog writer ..."}], isMeta=True),
                transcript_line(
                    "assistant",
                    [{"type": "tool_use", "id": "toolu_2", "name": "Skill", "input": {"skill": "meeting-notes"}}],
                ),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    pilot = indexed(tmp_path / "home", soft_threshold=SOFT_FOR_RELEASE_NOTES)
    sent: list[Any] = []
    pilot.feedback = lambda *a, **k: sent.append((a, k))  # type: ignore[method-assign]
    stop = json.dumps(
        {"session_id": SESSION, "cwd": str(tmp_path), "hook_event_name": "Stop", "transcript_path": str(transcript)}
    )
    with service(pilot):
        run_hook(pilot.settings.home, prompt_payload("write release notes for this version", tmp_path))
        ended = run_hook(pilot.settings.home, stop)
        # PostToolUse fired as well (newer Claude Code): the prompt's one signal is already taken.
        run_hook(pilot.settings.home, tool_payload("changelog-writer", tmp_path))
    assert (ended.returncode, ended.stdout, ended.stderr) == (0, "", "")
    assert sent == [
        (
            ("correct", "write release notes for this version"),
            {"skill": None, "wrong": "git-commit", "right": "changelog-writer", "implicit": True},
        )
    ]


def test_with_log_queries_off_no_prompt_is_kept_and_nothing_is_learned(tmp_path: Path, claude_home: Path) -> None:
    pilot = indexed(tmp_path / "home", log_queries="off")
    sent: list[Any] = []
    pilot.feedback = lambda *a, **k: sent.append((a, k))  # type: ignore[method-assign]
    with service(pilot):
        run_hook(pilot.settings.home, prompt_payload("write release notes for this version", tmp_path))
        run_hook(pilot.settings.home, tool_payload("changelog-writer", tmp_path))
    assert sent == []


@pytest.mark.parametrize(
    "payload",
    ["{not json", json.dumps({"session_id": "s"}), json.dumps(["prompt"]), json.dumps({"hook_event_name": 3})],
)
def test_bad_input_fails_open(tmp_path: Path, payload: str) -> None:
    proc = run_hook(tmp_path / "home", payload)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr.startswith("skillpilot hook: skipped (")


def test_a_service_that_errors_fails_open(tmp_path: Path, claude_home: Path) -> None:
    pilot = indexed(tmp_path / "home")
    with service(pilot):
        proc = run_hook(pilot.settings.home, json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": 7}))
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "skipped (OSError: the service answered 'HTTP/1.1 422 Unprocessable Entity')" in proc.stderr


def test_session_start_starts_the_service_detached_and_the_first_prompt_is_routed(
    tmp_path: Path, claude_home: Path
) -> None:
    home = tmp_path / "home"
    indexed(home).close()
    # Keyword matching only: the started service needs no models, so the test is quick.
    (home / "config.yaml").write_text("router:\n  enableSemantic: false\n", encoding="utf-8")
    session = json.dumps({"session_id": SESSION, "cwd": str(tmp_path), "hook_event_name": "SessionStart"})
    # run_hook reads the hook's stdout and stderr to their end: a service that kept them open
    # would make it wait until the service exits.
    started = run_hook(home, session)
    prompt = run_hook(home, prompt_payload("commit my changes", tmp_path))
    try:
        assert (started.returncode, started.stdout, started.stderr) == (0, "", "")
        # The prompt found the service starting (it holds serve.lock): no second start; it waited
        # for the service (at most STARTUP_WAIT) and was routed.
        assert (prompt.returncode, prompt.stderr) == (0, "")
        assert "git-commit" in context_of(prompt.stdout)
        pid = lifecycle.lock_holder(home)
        assert pid
        current, again = lifecycle.start(home)
        assert (again, current.running, current.pid) == (False, True, pid)
        assert "git-commit" in context_of(run_hook(home, prompt_payload("commit my changes", tmp_path)).stdout)
    finally:
        lifecycle.stop(home)
    assert not (home / "serve.json").exists()


def test_a_prompt_without_a_service_starts_one_and_is_routed_by_it(tmp_path: Path, claude_home: Path) -> None:
    home = tmp_path / "home"
    indexed(home).close()
    (home / "config.yaml").write_text("router:\n  enableSemantic: false\n", encoding="utf-8")
    try:
        proc = run_hook(home, prompt_payload("commit my changes", tmp_path))
        assert (proc.returncode, proc.stderr) == (0, "")
        assert "git-commit" in context_of(proc.stdout)
        assert lifecycle.lock_holder(home)
    finally:
        lifecycle.stop(home)


def test_a_broken_config_is_named_on_the_prompts_stderr_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.yaml"
    config.write_text("router:\n  hardThreshold: 0.9\n  softThreshold: [oops\n", encoding="utf-8")
    for _ in range(2):  # every prompt says it, not only the first
        proc = run_hook(home, prompt_payload("commit my changes", tmp_path))
        assert (proc.returncode, proc.stdout) == (0, "")
        assert proc.stderr == (
            f"skillpilot hook: the service could not start: error: config '(file)' (in {config}): not valid "
            "YAML: line 4, column 1: expected ',' or ']', but got '<stream end>' (while parsing a flow sequence "
            f"that starts at line 3, column 18); this prompt goes on unrouted (see {home / 'serve.log'})\n"
        )
        assert lifecycle.lock_holder(home) is None


def test_hook_client_main_is_the_cli_hook(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "skillpilot", "hook", "claude-code", "--home", str(tmp_path)],
        input="{not json",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr.startswith("skillpilot hook: skipped (JSONDecodeError")


def test_the_implicit_correction_is_stored_and_one_never_makes_a_hard_route(tmp_path: Path, claude_home: Path) -> None:
    pilot = indexed(tmp_path / "home", soft_threshold=SOFT_FOR_RELEASE_NOTES)
    prompt = "write release notes for this version"
    with service(pilot):
        run_hook(pilot.settings.home, prompt_payload(prompt, tmp_path))
        run_hook(pilot.settings.home, tool_payload("changelog-writer", tmp_path))
        again = run_hook(pilot.settings.home, prompt_payload(prompt, tmp_path))
    (signal,) = pilot.feedback_signals()
    assert (signal.kind, signal.skill, signal.wrong, signal.implicit) == (
        "corrected",
        "changelog-writer",
        "git-commit",
        True,
    )
    # The model's choice now leads, and one implicit signal is not enough for a hard route.
    first_line = context_of(again.stdout).splitlines()[0]
    assert first_line == "SkillPilot: the skill `changelog-writer` may fit this prompt (confidence 0.45)."


def test_an_edited_project_skill_is_indexed_again(tmp_path: Path, claude_home: Path) -> None:
    project = tmp_path / "project"
    skills = project / ".claude" / "skills"
    write_skill(skills, "office-chores", "name: office-chores\ndescription: Brew pour-over coffee for the office.")
    pilot = indexed(tmp_path / "home")
    hard = "Before anything else, invoke the skill `office-chores`"
    with service(pilot):
        before = run_hook(pilot.settings.home, prompt_payload("water the plants", project))
        write_skill(
            skills,
            "office-chores",
            "name: office-chores\ndescription: Water the office plants on Mondays.\ntriggers: [water the plants]",
        )
        time.sleep(RECHECK_SECONDS + 0.1)
        # The first prompt after the edit has it looked at (off the routing path, so that prompt
        # does not wait); a later one routes with the new text.
        deadline = time.monotonic() + 60
        while hard not in (after := run_hook(pilot.settings.home, prompt_payload("water the plants", project))).stdout:
            assert time.monotonic() < deadline, "the edited skill was never indexed again"
            time.sleep(0.1)
    assert hard not in before.stdout
    assert hard in context_of(after.stdout)


def test_same_name_skills_are_named_as_claude_code_lists_them_and_the_signal_goes_to_the_one_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Claude Code lists a skill by its folder: both SKILL.md say `mcp-builder` (checked with the CLI).
    claude = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    skills = claude / "skills"
    write_skill(
        skills,
        "mcp-builder",
        "name: mcp-builder\ndescription: Build MCP servers in Python with FastMCP. Use when the user wants an MCP "
        "server in Python.",
    )
    write_skill(
        skills,
        "mcp-builder-composiohq",
        "name: mcp-builder\ndescription: Build MCP servers in TypeScript with the official SDK. Use when the user "
        "wants an MCP server in TypeScript.",
    )
    write_skill(skills, "ahrefs-automation", "name: Ahrefs Automation\ndescription: Automate Ahrefs SEO reports.")
    # Every route soft: a signal follows only a shortlist or a pass-through.
    pilot = SkillPilot(home=tmp_path / "home", preconditions=False, soft_threshold=0.01, hard_threshold=0.999)
    pilot.index([skills])
    by_folder = {Path(s.skill.path).name: s.id for s in pilot.skills()}
    with advertised_service(pilot):
        home = pilot.settings.home
        typescript = run_hook(home, prompt_payload("build an MCP server in TypeScript with the official SDK", tmp_path))
        assert "`mcp-builder-composiohq`" in context_of(typescript.stdout)
        seo = run_hook(home, prompt_payload("automate my Ahrefs SEO reports", tmp_path))
        assert "`ahrefs-automation`" in context_of(seo.stdout) and "Ahrefs Automation`" not in seo.stdout
        run_hook(home, prompt_payload("build an MCP server", tmp_path))
        run_hook(home, tool_payload("mcp-builder-composiohq", tmp_path))
    (signal,) = [s for s in pilot.feedback_signals() if s.query == "build an MCP server"]
    assert (signal.skill, signal.wrong) == (by_folder["mcp-builder-composiohq"], by_folder["mcp-builder"])
    pilot.close()


def test_the_hook_works_out_the_listed_names_once_per_index_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every prompt walked every skill's path for the names the host lists them by (35 ms a
    prompt at 1,000 skills on a loaded machine); now a re-index is what makes it walk them again."""
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    skills = tmp_path / "user" / ".claude" / "skills"
    write_skill(skills, "invoice-pdf", "name: invoice-pdf\ndescription: Render an invoice as a PDF.", "# Invoice\n")
    pilot = SkillPilot(home=tmp_path / "home", preconditions=False, embed_provider="trigram-test")
    pilot.index([skills])
    host = get_host("claude-code")
    listed: list[str] = []
    skill_name = type(host).skill_name

    def counted(self: Any, skill: IndexedSkill, root: SkillRoot) -> str | None:
        listed.append(skill.id)
        return skill_name(self, skill, root)

    monkeypatch.setattr(type(host), "skill_name", counted)
    hooks = HostHooks(host, pilot, lambda call: call(pilot))

    def prompt(text: str) -> None:
        hooks.answer({"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": str(tmp_path), "prompt": text})

    prompt("render an invoice pdf")
    prompt("render another invoice pdf")
    assert sorted(listed) == ["invoice-pdf"]
    write_skill(skills, "receipt-scan", "name: receipt-scan\ndescription: Read a photographed receipt.", "# Scan\n")
    pilot.index([skills])
    prompt("scan this receipt")
    assert sorted(listed) == ["invoice-pdf", "invoice-pdf", "receipt-scan"]
    pilot.close()
