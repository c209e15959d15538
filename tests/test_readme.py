"""The README is the front door and stays true: at most 250 lines, one line per CLI command, the
images and pages it links exist, and every command it shows runs as written (the slow tests run
them in a throwaway HOME; the OpenClaw block is the guide's, which the OpenClaw install test runs;
the test command is the one CI runs)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer.main

from skillpilot.cli import app
from skillpilot.config import default_model_cache

from .conftest import EXAMPLES, REPO
from .host_cli_util import host_cli
from .test_openclaw_install import marked_block

README = (REPO / "README.md").read_text(encoding="utf-8")
TEST_COMMAND = "pip install -e '.[all,dev]' && python -m pytest"
PIP = re.compile(r"^pip install (?P<spec>\S+)(?: && (?P<rest>.*))?$")


def fenced_blocks(language: str) -> list[str]:
    """The README's code blocks in ``language``, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```$", README, flags=re.S | re.M)


def command_lines() -> list[str]:
    """Every command of the README's bash blocks, as written (comments stripped as bash does)."""
    lines = []
    for block in fenced_blocks("bash"):
        for line in block.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command and not command.startswith("#"):
                lines.append(command)
    return lines


def test_the_readme_is_a_front_door() -> None:
    assert len(README.splitlines()) <= 250


def test_every_command_has_one_line_and_every_line_a_command() -> None:
    commands = list(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    section = README.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `skillpilot ([a-z-]+)` \|", section, flags=re.M)
    assert sorted(listed) == sorted(set(listed)), "a command has two lines"
    assert sorted(set(commands) - set(listed)) == [], "commands without a line in the README"
    assert sorted(set(listed) - set(commands)) == [], "README lines naming no command"


def test_ci_runs_the_readme_test_command() -> None:
    assert TEST_COMMAND in README
    assert TEST_COMMAND in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_images_and_pages_it_links_exist() -> None:
    targets = re.findall(r"\]\(([^)\s]+)\)", README)
    local = [t.split("#", 1)[0] for t in targets if not re.match(r"[a-z]+://", t)]
    assert "docs/demo.gif" in local and "docs/with-and-without.svg" in local
    assert [t for t in local if not (REPO / t).is_file()] == []
    assert (REPO / "docs" / "demo.gif").stat().st_size <= 2 * 1024 * 1024


def test_the_openclaw_block_is_the_one_the_install_test_runs() -> None:
    readme = REPO / "README.md"
    assert marked_block("openclaw-plugin", readme) == marked_block("openclaw-plugin")


def test_every_pip_install_names_extras_that_exist() -> None:
    extras = set(
        tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    )
    installs = [PIP.match(line) for line in command_lines() if line.startswith("pip install ")]
    inline = re.findall(r"`pip install ([^`]+)`", README)
    specs = [m.group("spec") for m in installs if m] + inline
    assert len(specs) >= 4
    for spec in specs:
        named = re.fullmatch(r"(?:-e )?'?\.(?:\[(?P<extras>[a-z,]+)\])?'?", spec.strip())
        assert named, spec
        assert set((named.group("extras") or "").split(",")) - {""} <= extras, spec


def test_the_mcp_config_starts_the_mcp_command() -> None:
    (config,) = [json.loads(block) for block in fenced_blocks("json")]
    assert config["mcpServers"]["skillpilot"] == {"command": "skillpilot", "args": ["mcp"]}
    assert "mcp" in typer.main.get_command(app).commands  # type: ignore[attr-defined]


# -- running them -----------------------------------------------------------------------------
def _sandbox(tmp_path: Path) -> dict[str, str]:
    """A HOME holding the example skills as ~/.claude/skills, and an environment whose PATH finds
    this interpreter's ``skillpilot`` first (the model cache stays the machine's: no rebuild)."""
    home = tmp_path / "user"
    shutil.copytree(EXAMPLES / "skills", home / ".claude" / "skills")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLPILOT_", "CLAUDE", "GEMINI", "CODEX"))}
    env.update(
        HOME=str(home),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        SKILLPILOT_MODEL_CACHE=str(default_model_cache()),
    )
    return env


def _run(command: str, env: dict[str, str], cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, f"{command}\n{proc.stdout}\n{proc.stderr}"
    return proc


HOST_CLIS = ("gemini ", "codex ", "openclaw ")


@pytest.mark.slow
def test_every_skillpilot_command_runs_as_written(tmp_path: Path) -> None:
    env = _sandbox(tmp_path)
    ran: dict[str, str] = {}
    try:
        for line in command_lines():
            if line == TEST_COMMAND or line.startswith(HOST_CLIS):
                continue  # CI runs the test command; the host CLIs have tests of their own below
            pip = PIP.match(line)
            command = (pip.group("rest") or "") if pip else line
            if command:
                assert command.startswith("skillpilot "), f"a README command no test runs: {line}"
                ran[command] = _run(command, env).stdout
    finally:
        _run("skillpilot service stop", env)  # `setup claude-code` started it
    assert "hard video-trim" in ran["skillpilot demo"]
    assert "git-commit" in ran['skillpilot route "commit my changes"']
    assert "git-commit" in ran['skillpilot explain "commit my changes"']
    settings = json.loads((Path(env["HOME"]) / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"} <= set(settings["hooks"])


@pytest.mark.slow
def test_the_python_examples_run_as_written(tmp_path: Path) -> None:
    env = _sandbox(tmp_path)
    # As a reader does: the README's index command comes first, and every host reads that index.
    (index,) = [line for line in command_lines() if line.startswith("skillpilot index ")]
    _run(index, env)
    blocks = fenced_blocks("python")
    assert len(blocks) == 2
    for block in blocks:
        proc = subprocess.run(
            [sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, block + proc.stderr
        assert "git-commit" in proc.stdout, proc.stdout


def _host_cli_line(name: str) -> str:
    (line,) = [line for line in command_lines() if line.startswith(f"{name} ")]
    return line


@pytest.mark.real_cli
def test_the_gemini_line_registers_the_mcp_server(tmp_path: Path) -> None:
    launcher, path = host_cli("gemini")
    env = _sandbox(tmp_path)
    env["PATH"] = f"{launcher.parent}{os.pathsep}{path['PATH']}"
    _run(_host_cli_line("gemini"), env, cwd=tmp_path)
    settings = json.loads((Path(env["HOME"]) / ".gemini" / "settings.json").read_text(encoding="utf-8"))
    assert settings["mcpServers"]["skillpilot"] == {"command": "skillpilot", "args": ["mcp"]}


@pytest.mark.real_cli
def test_the_codex_line_registers_the_mcp_server(tmp_path: Path) -> None:
    launcher, path = host_cli("codex")
    env = _sandbox(tmp_path)
    env["PATH"] = f"{launcher.parent}{os.pathsep}{path['PATH']}"
    _run(_host_cli_line("codex"), env, cwd=tmp_path)
    config = tomllib.loads((Path(env["HOME"]) / ".codex" / "config.toml").read_text(encoding="utf-8"))
    assert config["mcp_servers"]["skillpilot"] == {"command": "skillpilot", "args": ["mcp"]}
