"""What each host module says about its host, on real folders and files: which skill folders it
offers and under which names, what a hook event means, and how Codex's trust entries leave its
config.toml (the real CLIs confirm the same in ``test_host_clis.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skillpilot.adapters.hosts import available_hosts, get_host
from skillpilot.adapters.hosts.codex import forget_trust, hook_keys, skill_read_by
from skillpilot.adapters.hosts.codex import offered_roots as codex_roots
from skillpilot.adapters.hosts.files import hook_command
from skillpilot.adapters.hosts.gemini import offered_roots as gemini_roots
from skillpilot.adapters.hosts.hooks import skill_names
from skillpilot.errors import ConfigError

from .conftest import write_skill
from .surfaces_util import indexed


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
