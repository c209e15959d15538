"""What each host module says about its host, on real folders and files: which skill folders it
offers and under which names, what a hook event means, and how Codex's trust entries leave its
config.toml (the real CLIs confirm the same in ``test_host_clis.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillpilot import SkillPilot
from skillpilot.adapters.hosts import available_hosts, get_host
from skillpilot.adapters.hosts.codex import forget_trust, hook_keys, skill_read_by
from skillpilot.adapters.hosts.codex import offered_roots as codex_roots
from skillpilot.adapters.hosts.files import hook_command
from skillpilot.adapters.hosts.gemini import offered_roots as gemini_roots
from skillpilot.adapters.hosts.gemini import workspace_trusted
from skillpilot.adapters.hosts.hooks import HostHooks, skill_names
from skillpilot.errors import ConfigError

from .conftest import write_skill
from .fake_encoder import SPEC
from .surfaces_util import cli, indexed


def test_the_registry_has_every_built_in_host_and_names_them_on_a_typo() -> None:
    assert {"claude-code", "codex", "gemini", "openclaw"} <= set(available_hosts())
    with pytest.raises(ConfigError, match="unknown host 'gemeni'; use one of claude-code, codex, gemini"):
        get_host("gemeni")


def test_a_host_registered_first_leaves_the_built_in_hosts_in_place() -> None:
    # A fresh process: the registry is per process, and this is about its very first use.
    script = (
        "from skillpilot.adapters.hosts import available_hosts, get_host, register_host\n"
        "from skillpilot.adapters.hosts.openclaw import OpenClaw\n"
        "mine = OpenClaw()\n"
        "mine.name = 'mine'\n"
        "register_host(mine)\n"
        "print(' '.join(available_hosts()))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert {"claude-code", "codex", "gemini", "mine", "openclaw"} <= set(proc.stdout.split())


def test_gemini_offers_its_four_folders_one_level_deep_without_disabled_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    write_skill(home / ".gemini" / "skills", "git-commit", "name: git-commit\ndescription: Commit staged changes.")
    write_skill(home / ".agents" / "skills", "csv", 'name: "csv:tools"\ndescription: Summarise a CSV file.')
    write_skill(home / ".agents" / "skills" / "group", "deep", "name: deep\ndescription: Listed by no host at depth 2.")
    write_skill(project / ".agents" / "skills", "scrape", "name: scrape\ndescription: Scrape a web page.")
    (project / ".gemini").mkdir()
    (project / ".gemini" / "settings.json").write_text(json.dumps({"skills": {"disabled": ["Scrape"]}}))
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    roots = gemini_roots(project)
    assert [r.path for r in roots] == [
        str(home / ".gemini" / "skills"),
        str(home / ".agents" / "skills"),
        str(project / ".agents" / "skills"),
    ]
    pilot = indexed(tmp_path / "sp")
    pilot.index([Path(r.path) for r in roots])
    names = set(skill_names(pilot.skills(), get_host("gemini"), roots).values())
    # Gemini CLI's own rules: ":" becomes "-", a skill two folders down is not listed, and
    # skills.disabled (any case) hides one.
    assert names == {"git-commit", "csv-tools"}
    (home / ".gemini" / "settings.json").write_text(json.dumps({"skills": {"enabled": False}}))
    assert gemini_roots(project) == []
    pilot.close()


def test_gemini_offers_a_projects_skills_only_in_a_folder_it_trusts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "work" / "project"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    for name in ("GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_RESTRICTED_MODE", "GEMINI_CLI_TRUSTED_FOLDERS_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(tmp_path / "etc" / "settings.json"))
    write_skill(home / ".gemini" / "skills", "git-commit", "name: git-commit\ndescription: Commit staged changes.")
    write_skill(project / ".gemini" / "skills", "scrape", "name: scrape\ndescription: Scrape a web page.")
    # A workspace's settings count in a trusted folder only: these would hide every skill.
    (project / ".gemini" / "settings.json").write_text(json.dumps({"skills": {"enabled": False}}))
    user = [str(home / ".gemini" / "skills")]
    trusted_folders = home / ".gemini" / "trustedFolders.json"

    def offered(rules: dict[str, str] | None = None) -> list[str]:
        if rules is not None:
            trusted_folders.write_text(json.dumps(rules))
        return [r.path for r in gemini_roots(project / "src")] if (project / "src").is_dir() else []

    (project / "src").mkdir()
    (project / "src" / ".gemini").symlink_to(project / ".gemini")
    project_roots = [str(project / "src" / ".gemini" / "skills")]
    assert offered() == user  # folder trust is on and no rule trusts the folder
    assert offered({str(project): "TRUST_FOLDER"}) == []  # trusted: its settings disable skills
    (project / ".gemini" / "settings.json").unlink()
    assert offered() == user + project_roots  # a subfolder of a trusted folder is trusted
    assert offered({str(project / "sibling"): "TRUST_PARENT"}) == user + project_roots
    assert offered({str(project / "src" / "x"): "DO_NOT_TRUST"}) == user  # the rule's folder only
    # The longest rule that holds the folder decides.
    assert offered({str(tmp_path): "TRUST_FOLDER", str(project): "DO_NOT_TRUST"}) == user
    assert offered({str(tmp_path): "DO_NOT_TRUST", str(project / "src"): "TRUST_FOLDER"}) == user + project_roots
    # A file Gemini CLI refuses trusts nothing.
    assert offered({str(project): "TRUST_FOLDER", "/elsewhere": "TRUST"}) == user
    assert offered({}) == user
    # Folder trust off in the user's settings: every folder is trusted; the system settings win.
    (home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"folderTrust": {"enabled": False}}}))
    assert offered() == user + project_roots
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "settings.json").write_text(json.dumps({"security": {"folderTrust": {"enabled": True}}}))
    assert offered() == user
    # The environment overrides every file, as --skip-trust (GEMINI_CLI_TRUST_WORKSPACE=true) does.
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    assert workspace_trusted(project) and offered() == user + project_roots
    monkeypatch.setenv("GEMINI_RESTRICTED_MODE", "true")
    assert not workspace_trusted(project) and offered() == user


def test_doctor_gemini_says_an_untrusted_projects_skills_are_not_offered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "gemini-home", tmp_path / "project"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    write_skill(project / ".agents" / "skills", "scrape", "name: scrape\ndescription: Scrape a web page.")
    skillpilot_home = tmp_path / "sp"
    pilot = indexed(skillpilot_home)
    pilot.index([project / ".agents" / "skills"])
    pilot.close()
    get_host("gemini").setup.install(skillpilot_home, None)

    def doctor() -> dict[str, Any]:
        proc = cli("doctor", "gemini", "--json", "--project", str(project), home=skillpilot_home)
        host: dict[str, Any] = json.loads(proc.stdout)["hosts"]["gemini"]
        return host

    folder = str(project / ".agents" / "skills")
    untrusted = doctor()
    assert untrusted["checks"][-1] == {
        "ok": False,
        "text": f"does not trust {project}, so neither it nor SkillPilot offers its project skills ({folder}): "
        "trust the folder in Gemini CLI (`/permissions` in a session)",
        "trusted": False,
        "project_skill_folders": [folder],
    }
    assert "scrape" not in untrusted["offered"]["skills"]
    human = cli("doctor", "gemini", "--project", str(project), home=skillpilot_home).stdout
    assert f"FIX  Gemini CLI: does not trust {project}, so neither" in human
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    trusted = doctor()
    assert trusted["checks"][-1]["text"] == f"trusts {project}: its project skills ({folder}) are offered"
    assert "scrape" in trusted["offered"]["skills"]


def test_gemini_offers_an_extensions_skills_where_it_is_enabled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    extension = home / ".gemini" / "extensions" / "toolbox"
    write_skill(extension / "skills", "lint", "name: lint\ndescription: Lint the code.")
    (extension / "gemini-extension.json").write_text(json.dumps({"name": "toolbox", "version": "1"}))
    work, other = tmp_path / "work", tmp_path / "other"
    rules = {"toolbox": {"overrides": [f"!{work}/*"]}}
    (home / ".gemini" / "extensions" / "extension-enablement.json").write_text(json.dumps(rules))
    assert str(extension / "skills") not in [r.path for r in gemini_roots(work / "sub")]
    assert str(extension / "skills") in [r.path for r in gemini_roots(other)]


@pytest.mark.parametrize(
    ("command", "read"),
    [
        ("cat /skills/git-commit/SKILL.md", "/skills/git-commit/SKILL.md"),
        ("sed -n '1,80p' skills/git-commit/SKILL.md", "{cwd}/skills/git-commit/SKILL.md"),
        ("/usr/bin/head -50 '/a b/SKILL.md'", "/a b/SKILL.md"),
        ("python3 {cwd}/skills/tool/scripts/run.py --fast", "{cwd}/skills/tool/SKILL.md"),
        ("ls /skills/git-commit/SKILL.md", None),
        ("grep name /skills/git-commit/SKILL.md", None),
        ("cat README.md", None),
        ("cat 'unclosed", None),
    ],
)
def test_codex_reads_the_skill_a_shell_command_loads_as_codex_itself_does(
    command: str, read: str | None, tmp_path: Path
) -> None:
    write_skill(tmp_path / "skills", "tool", "name: tool\ndescription: A tool with a script.")
    expected = read.format(cwd=tmp_path) if read else None
    assert skill_read_by(command.format(cwd=tmp_path), tmp_path) == expected


def test_codex_offers_repo_skills_from_the_root_down_and_a_trusted_projects_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex, repo = tmp_path / "codex", tmp_path / "repo"
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    (repo / ".git").mkdir(parents=True)
    for folder in (
        repo / ".agents" / "skills",
        repo / "app" / ".agents" / "skills",
        repo / "app" / ".codex" / "skills",
    ):
        folder.mkdir(parents=True)
    (codex / "skills").mkdir(parents=True)
    (tmp_path / "user" / ".agents" / "skills").mkdir(parents=True)
    expected = [
        str(codex / "skills"),
        str(tmp_path / "user" / ".agents" / "skills"),
        str(repo / ".agents" / "skills"),
        str(repo / "app" / ".agents" / "skills"),
    ]
    assert [r.path for r in codex_roots(repo / "app")] == expected
    (codex / "config.toml").write_text(f'[projects."{repo}"]\ntrust_level = "trusted"\n', encoding="utf-8")
    assert [r.path for r in codex_roots(repo / "app")] == [*expected, str(repo / "app" / ".codex" / "skills")]


def test_codex_trust_entries_go_and_the_rest_of_config_toml_stays(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks.json"
    ours = hook_command("codex", tmp_path / "home")
    theirs = {"type": "command", "command": "~/bin/audit"}
    hooks.write_text(
        json.dumps(
            {
                "hooks": {
                    "PostToolUse": [
                        {"hooks": [theirs]},
                        {"matcher": "Bash", "hooks": [{"type": "command", "command": ours}]},
                    ],
                    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": ours}]}],
                }
            }
        )
    )
    keys = hook_keys(hooks)
    assert keys == [f"{hooks}:post_tool_use:1:0", f"{hooks}:user_prompt_submit:0:0"]
    original = (
        '# my Codex\nmodel = "gpt-5.5"  # the default\n\n'
        '[hooks.state."/x/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:1"\n'
    )
    config = tmp_path / "config.toml"
    trusted = "".join(f'\n[hooks.state."{key}"]\ntrusted_hash = "sha256:{n}"\n' for n, key in enumerate(keys))
    config.write_text(original + trusted, encoding="utf-8")
    assert forget_trust(config, keys) == keys
    assert config.read_text(encoding="utf-8") == original
    assert forget_trust(config, keys) == []


def _same_names(folder: Path) -> None:
    """Two SKILL.md that both say mcp-builder, and a name that is not its folder's."""
    python = "Build MCP servers in Python with FastMCP. Use when the user wants an MCP server in Python."
    typescript = "Build MCP servers in TypeScript with the official SDK. Use when the user wants one in TypeScript."
    write_skill(folder, "mcp-builder", f"name: mcp-builder\ndescription: {python}")
    write_skill(folder, "mcp-builder-composiohq", f"name: mcp-builder\ndescription: {typescript}")
    write_skill(folder, "ahrefs-automation", "name: Ahrefs Automation\ndescription: Automate Ahrefs SEO reports.")


def test_gemini_names_one_skill_per_name_the_copy_it_lists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As Gemini CLI 0.61 lists them (test_host_clis.py): the last copy it reads holds the name,
    # reading folder by folder and each folder's skills in descending name order.
    home, project = tmp_path / "home", tmp_path / "project"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    _same_names(home / ".gemini" / "skills")
    pilot = indexed(tmp_path / "sp", embed_provider=SPEC)
    assert _gemini_names(pilot, project) == {"mcp-builder": "mcp-builder", "ahrefs-automation": "Ahrefs Automation"}
    # A workspace skill of the same name (a trusted folder's) is read after the user's: it holds the name.
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    write_skill(project / ".agents" / "skills", "mcp-local", "name: mcp-builder\ndescription: Our MCP server recipe.")
    assert _gemini_names(pilot, project) == {"mcp-local": "mcp-builder", "ahrefs-automation": "Ahrefs Automation"}
    pilot.close()


def _gemini_names(pilot: SkillPilot, project: Path) -> dict[str, str]:
    """Skill folder -> the name the hook gives it, for the skills Gemini CLI lists in ``project``."""
    roots = gemini_roots(project)
    pilot.index([Path(r.path) for r in roots])
    folder = {s.id: Path(s.skill.path).name for s in pilot.skills()}
    return {folder[i]: name for i, name in skill_names(pilot.skills(), get_host("gemini"), roots).items()}


def test_codex_names_same_name_skills_by_path_and_the_signal_goes_to_the_copy_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    skills = home / ".agents" / "skills"
    _same_names(skills)
    # Every route soft: the model's choice is then a signal.
    pilot = indexed(tmp_path / "sp", embed_provider=SPEC, soft_threshold=0.01, hard_threshold=1.0)
    pilot.index([skills])
    folder = {Path(s.skill.path).name: s.id for s in pilot.skills()}
    hooks = HostHooks(get_host("codex"), pilot, run=lambda call: call(pilot))
    session = {"session_id": "s1", "cwd": str(tmp_path), "turn_id": "t1"}
    prompt = "build an MCP server in Python with FastMCP"
    answer = hooks.answer({**session, "hook_event_name": "UserPromptSubmit", "prompt": prompt})
    context = answer["output"]["hookSpecificOutput"]["additionalContext"]
    assert "the skill `mcp-builder` may fit this prompt" in context
    assert f"Path: {skills / 'mcp-builder' / 'SKILL.md'}" in context, context
    read = {"tool_name": "Bash", "tool_input": {"command": f"cat {skills / 'mcp-builder' / 'SKILL.md'}"}}
    used = hooks.answer({**session, "hook_event_name": "PostToolUse", **read})
    # The copy it read is the one SkillPilot named first: a confirm, not a correction.
    assert used["signal"] == {"kind": "confirm", "skill": folder["mcp-builder"], "wrong": None, "right": None}
    pilot.close()
