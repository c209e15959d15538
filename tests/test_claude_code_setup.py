"""`skillpilot setup claude-code` and `skillpilot doctor` on real settings files."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from skillpilot.adapters.hosts import files
from skillpilot.adapters.hosts.claude_code import HOST

from .conftest import EXAMPLES, write_skill
from .surfaces_util import cli, cli_process, indexed

USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "enabledPlugins": {"acme@market": True},
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "~/bin/remind-me", "timeout": 5}]}],
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "prettier --write"}]}],
    },
}


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "claude"
    folder.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    return folder


def ours(home: Path) -> dict[str, list[object]]:
    command = files.hook_command("claude-code", home)
    entry = {"type": "command", "command": command, "timeout": 10}
    return {
        "SessionStart": [{"hooks": [entry]}],
        "UserPromptSubmit": [{"hooks": [entry]}],
        "PostToolUse": [{"matcher": "Skill", "hooks": [entry]}],
        "Stop": [{"hooks": [entry]}],
    }


def test_setup_merges_keeps_the_rest_is_idempotent_and_uninstalls_only_its_own(claude: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = claude / "settings.json"
    original = json.dumps(USER_SETTINGS, indent=4)
    settings.write_text(original, encoding="utf-8")

    proc = cli("setup", "claude-code", "--no-start", "--json", home=home, CLAUDE_CONFIG_DIR=str(claude))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["path"], report["changed"], report["backup"]) == (str(settings), True, f"{settings}.bak")
    assert Path(report["backup"]).read_text(encoding="utf-8") == original
    merged = json.loads(settings.read_text(encoding="utf-8"))
    mine = ours(home)
    assert merged == {
        **USER_SETTINGS,
        "hooks": {
            "UserPromptSubmit": USER_SETTINGS["hooks"]["UserPromptSubmit"] + mine["UserPromptSubmit"],  # type: ignore[index]
            "PostToolUse": USER_SETTINGS["hooks"]["PostToolUse"] + mine["PostToolUse"],  # type: ignore[index]
            "SessionStart": mine["SessionStart"],
            "Stop": mine["Stop"],
        },
    }
    words = shlex.split(report["command"])
    assert words[:3] == [sys.executable, "-S", "-P"] and Path(words[3]).is_file()
    assert words[4:] == ["claude-code", "--home", str(home.absolute())]

    again = json.loads(
        cli("setup", "claude-code", "--no-start", "--json", home=home, CLAUDE_CONFIG_DIR=str(claude)).stdout
    )
    assert again["changed"] is False
    assert json.loads(settings.read_text(encoding="utf-8")) == merged

    removed = cli("setup", "claude-code", "--uninstall", "--json", home=home, CLAUDE_CONFIG_DIR=str(claude))
    assert json.loads(removed.stdout)["changed"] is True
    assert json.loads(settings.read_text(encoding="utf-8")) == USER_SETTINGS


def test_setup_into_a_project_creates_its_settings(tmp_path: Path, claude: Path) -> None:
    project = tmp_path / "project"
    report = HOST.setup.install(tmp_path / "home", project)
    path = project / ".claude" / "settings.json"
    assert (report["path"], report["changed"], report["backup"]) == (str(path), True, None)
    assert set(json.loads(path.read_text(encoding="utf-8"))["hooks"]) == {
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "Stop",
    }
    assert not (claude / "settings.json").exists()
    # The file only held SkillPilot's hooks: uninstall removes it, leaving the project as it was.
    assert HOST.setup.uninstall(project)["changed"] and not path.exists()


def test_setup_replaces_the_old_slow_hook(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    old = {"type": "command", "command": "/usr/local/bin/skillpilot hook claude-code"}
    path.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [old]}]}}), encoding="utf-8")
    command = files.hook_command("claude-code", tmp_path / "home")
    files.install(path, HOST.setup.groups(command), command)
    assert files.installed_commands(path)["UserPromptSubmit"] == [command]


def test_setup_refuses_a_settings_file_that_is_not_json(tmp_path: Path, claude: Path) -> None:
    (claude / "settings.json").write_text("{oops", encoding="utf-8")
    proc = cli("setup", "claude-code", home=tmp_path / "home", CLAUDE_CONFIG_DIR=str(claude))
    assert proc.returncode == 1
    assert f"{claude / 'settings.json'} is not valid JSON" in proc.stderr
    assert (claude / "settings.json").read_text(encoding="utf-8") == "{oops"


def test_doctor_reports_what_claude_code_gets(tmp_path: Path) -> None:
    home = tmp_path / "home"
    indexed(home).close()
    # Claude Code's folder is examples/: its skills/ are the indexed example skills.
    settings = tmp_path / "project" / ".claude" / "settings.json"
    HOST.setup.install(home, tmp_path / "project")
    proc = cli("doctor", "--json", "--project", str(tmp_path / "project"), home=home, CLAUDE_CONFIG_DIR=str(EXAMPLES))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["index"] == {"path": str(home / "index.sqlite"), "present": True, "skills": 16}
    assert report["service"]["running"] is False
    assert list(report["hosts"]) == ["claude-code"]  # the only host set up
    user, project = report["hosts"]["claude-code"]["checks"]
    assert project == {
        "ok": True,
        "text": f"project hooks in {settings}: SessionStart, UserPromptSubmit, PostToolUse(Skill), Stop",
        "scope": "project",
        "path": str(settings),
        "events": ["PostToolUse", "SessionStart", "Stop", "UserPromptSubmit"],
        "missing": [],
    }
    assert (user["ok"], user["missing"]) == (False, ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"])
    offered = report["hosts"]["claude-code"]["offered"]
    assert offered["roots"] == [str(EXAMPLES / "skills")]
    assert "git-commit" in offered["skills"] and len(offered["skills"]) == 16
    assert report["ok"] is False  # no service runs
    human = cli("doctor", "--project", str(tmp_path / "project"), home=home, CLAUDE_CONFIG_DIR=str(EXAMPLES))
    assert "FIX  no service runs: `skillpilot service start`" in human.stdout
    assert "ok   Claude Code is offered 16 indexed skills: " in human.stdout


def test_doctor_names_a_hook_whose_interpreter_is_gone(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    gone = files.hook_command("claude-code", tmp_path / "home", python=str(tmp_path / "venv" / "bin" / "python"))
    path.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [{"command": gone}]}]}}), encoding="utf-8")
    (command,) = files.installed_commands(path)["UserPromptSubmit"]
    assert files.command_problem(command, "skillpilot setup claude-code") == (
        f"the interpreter {tmp_path / 'venv' / 'bin' / 'python'} does not exist or is not executable"
    )


def library_home(home: Path, *roots: Path) -> Path:
    """A SkillPilot home whose config.yaml sets Claude Code's library roots."""
    home.mkdir(parents=True)
    config = {"platforms": {"claudeCode": {"libraryRoots": [str(r) for r in roots]}}}
    (home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")
    return home


def test_setup_grants_claude_code_the_library_roots_and_uninstall_takes_back_only_those(
    claude: Path, tmp_path: Path
) -> None:
    shared, mine = tmp_path / "team-library", tmp_path / "my-library"
    home = library_home(tmp_path / "home", shared, mine)
    settings = claude / "settings.json"
    user = {**USER_SETTINGS, "permissions": {"allow": ["Bash(git status)"], "additionalDirectories": [str(shared)]}}
    original = json.dumps(user, indent=4)
    settings.write_text(original, encoding="utf-8")

    report = json.loads(cli("setup", "claude-code", "--no-start", "--json", home=home).stdout)
    assert report["granted"] == [str(mine)]  # the user's own entry for the shared one is theirs
    assert json.loads(settings.read_text(encoding="utf-8"))["permissions"] == {
        "allow": ["Bash(git status)"],
        "additionalDirectories": [str(shared), str(mine)],
    }
    human = cli("setup", "claude-code", "--no-start", home=home)
    assert f"Claude Code may read the library roots: {mine}" in human.stdout
    assert settings.read_text(encoding="utf-8").count(str(mine)) == 1  # idempotent

    removed = cli("setup", "claude-code", "--uninstall", "--json", home=home)
    assert json.loads(removed.stdout)["changed"] is True
    assert settings.read_text(encoding="utf-8") == original


def test_a_grant_setup_created_goes_with_uninstall(claude: Path, tmp_path: Path) -> None:
    library = tmp_path / "library"
    home = library_home(tmp_path / "home", library)
    settings = claude / "settings.json"
    original = json.dumps({"model": "opus"}, indent=2)
    settings.write_text(original, encoding="utf-8")
    cli("setup", "claude-code", "--no-start", home=home)
    assert json.loads(settings.read_text(encoding="utf-8"))["permissions"] == {"additionalDirectories": [str(library)]}
    # The library roots changed: the old grant is taken back, the new one given.
    other = tmp_path / "other-library"
    (home / "config.yaml").write_text(
        json.dumps({"platforms": {"claudeCode": {"libraryRoots": [str(other)]}}}), encoding="utf-8"
    )
    cli("setup", "claude-code", "--no-start", home=home)
    assert json.loads(settings.read_text(encoding="utf-8"))["permissions"] == {"additionalDirectories": [str(other)]}
    cli("setup", "claude-code", "--uninstall", home=home)
    assert json.loads(settings.read_text(encoding="utf-8")) == {"model": "opus"}


def test_setup_starts_the_service_and_uninstall_stops_it_once_no_host_uses_it(claude: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    # Keyword matching only: the service starts without loading a model.
    env = {"CLAUDE_CONFIG_DIR": str(claude), "GEMINI_CLI_HOME": str(tmp_path), "SKILLPILOT_ENABLE_SEMANTIC": "false"}
    setup = cli_process("setup", "claude-code", "--json", home=home, **env)
    assert setup.returncode == 0, setup.stderr
    started = json.loads(setup.stdout)["service"]
    assert (started["running"], started["started"]) == (True, True)
    again = cli_process("setup", "gemini", home=home, **env)
    assert f"the service already runs: pid {started['pid']} at {started['url']}" in again.stdout, again.stdout

    kept = cli_process("setup", "claude-code", "--uninstall", "--json", home=home, **env)
    assert json.loads(kept.stdout)["service"] == {"stopped": False, "pid": None, "kept_for": ["gemini"]}
    assert cli_process("service", "status", home=home).returncode == 0
    stopped = cli_process("setup", "gemini", "--uninstall", home=home, **env)
    assert f"stopped the service (pid {started['pid']}): no host set up in this home uses it" in stopped.stdout
    assert cli_process("service", "status", home=home).returncode == 1


def test_doctor_counts_what_library_mode_offers(claude: Path, tmp_path: Path) -> None:
    library = tmp_path / "library"
    for name in ("invoice-pdf", "semgrep-scan", "dpia-writer"):
        write_skill(library, name, f"name: {name}\ndescription: The {name} skill, for tests.")
    home = library_home(tmp_path / "home", library)
    pilot = indexed(home, embed_provider="trigram-test")
    pilot.index([library])
    pilot.close()
    cli("setup", "claude-code", "--no-start", home=home)
    report = json.loads(cli("doctor", "claude-code", "--json", home=home).stdout)
    offered = report["hosts"]["claude-code"]["offered"]
    assert (offered["skills"], offered["library_roots"], offered["library_skills"]) == ([], [str(library)], 3)
    human = cli("doctor", "claude-code", home=home).stdout
    assert f"ok   Claude Code is handed 3 library skills by SKILL.md path, from {library}" in human, human
    assert "ok   Claude Code: permissions.additionalDirectories lets the host read the library roots" in human
    # A library root added after setup: Claude Code would refuse to read its skills.
    later = tmp_path / "later-library"
    (home / "config.yaml").write_text(
        json.dumps({"platforms": {"claudeCode": {"libraryRoots": [str(library), str(later)]}}}), encoding="utf-8"
    )
    report = json.loads(cli("doctor", "claude-code", "--json", home=home).stdout)
    assert report["hosts"]["claude-code"]["checks"][-1]["ungranted"] == [str(later)]
    assert (
        f"FIX  Claude Code: permissions.additionalDirectories lacks the library roots {later}: "
        "run `skillpilot setup claude-code` again" in cli("doctor", "claude-code", home=home).stdout
    )


def test_doctor_takes_the_user_hooks_as_covering_a_project(claude: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    indexed(home).close()
    project = tmp_path / "project"
    cli("setup", "claude-code", "--no-start", home=home)
    report = json.loads(cli("doctor", "claude-code", "--json", "--project", str(project), home=home).stdout)
    user, in_project = report["hosts"]["claude-code"]["checks"]
    assert (user["ok"], in_project["ok"], in_project["missing"]) == (True, True, [])
    assert in_project["text"] == (
        f"project hooks in {project / '.claude' / 'settings.json'}: none needed, the user's hooks cover this project "
        "(SessionStart, UserPromptSubmit, PostToolUse(Skill), Stop)"
    )
