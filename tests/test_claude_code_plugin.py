"""The repository's Claude Code plugin, checked and installed by the real Claude Code CLI.

``adapters/claude-code`` is the plugin (manifest, hooks, MCP config) and
``.claude-plugin/marketplace.json`` the marketplace listing it. The CLI's own ``plugin validate``
judges both; then, in a throwaway HOME, the marketplace is added and the plugin installed as a
user would, and a ``claude -p`` run against the scripted Messages API shows the plugin's hook
putting SkillPilot's context into the model request.

Marked ``real_cli`` (CI-only, tens of seconds): skipped without the CLI, required with CI=true.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.adapters.hosts.claude_code import HOOKS  # noqa: E402
from skillpilot.bench.hostcli.claude_code import claude_env, hook_context, run_claude, scripted_api, text_reply  # noqa: E402

from .claude_code_util import claude_binary  # noqa: E402
from .conftest import REPO  # noqa: E402
from .surfaces_util import SKILLS, advertised_service  # noqa: E402

pytestmark = pytest.mark.real_cli

PLUGIN = REPO / "adapters" / "claude-code"
# The standard-library client, found through the `skillpilot` command (hooks/hook.py), as setup runs it.
HOOK = 'python3 -S "${CLAUDE_PLUGIN_ROOT}/hooks/hook.py" claude-code'


def claude(binary: Path, *args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=180)


def offline_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def test_claude_code_validates_the_plugin_and_the_marketplace(tmp_path: Path) -> None:
    binary = claude_binary()
    env = offline_env(tmp_path)
    plugin = claude(binary, "plugin", "validate", "--strict", "--json", str(PLUGIN), env=env, cwd=tmp_path)
    assert plugin.returncode == 0, plugin.stdout + plugin.stderr
    report = json.loads(plugin.stdout)
    assert report["success"] and report["manifest"]["type"] == "plugin", report["manifest"]
    hooks = {(h["event"], h.get("matcher")): h["command"] for h in report["provides"]["hooks"]}
    # The same events `skillpilot setup claude-code` installs.
    assert hooks == {(event, matcher): HOOK for event, matcher in ((h.event, h.matcher) for h in HOOKS)}
    assert [(s["name"], s["target"], s["args"]) for s in report["provides"]["mcpServers"]] == [
        ("skillpilot", "skillpilot", ["mcp"])
    ]
    market = claude(binary, "plugin", "validate", "--strict", "--json", str(REPO), env=env, cwd=tmp_path)
    assert market.returncode == 0, market.stdout + market.stderr
    assert json.loads(market.stdout)["manifest"]["type"] == "marketplace"


def test_the_installed_plugin_routes_prompts_and_serves_mcp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = claude_binary()
    home, skillpilot_home, bin_dir = tmp_path / "home", tmp_path / "skillpilot", tmp_path / "bin"
    # The service (this process) finds Claude Code's skills and plugins where this HOME keeps them.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    for name in ("git-commit", "csv-analyze", "email-send"):
        shutil.copytree(SKILLS / name, home / ".claude" / "skills" / name)
    # The plugin runs `skillpilot` from PATH (its MCP server; its hook asks that command's
    # interpreter where the hook client is): a console script as `pip install` writes one.
    bin_dir.mkdir()
    shim = bin_dir / "skillpilot"
    shim.write_text(
        f"#!{sys.executable}\nimport sys\nfrom skillpilot.cli import main\nsys.exit(main())\n", encoding="utf-8"
    )
    shim.chmod(0o755)
    env = {**offline_env(home), "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["SKILLPILOT_HOME"] = str(skillpilot_home)
    # `skillpilot mcp` loads the models before it answers; a busy CI machine needs more than 30 s.
    env["MCP_TIMEOUT"] = "120000"

    pilot = SkillPilot(home=skillpilot_home, preconditions=False)
    pilot.index([home / ".claude" / "skills"])
    pilot.route("warm up")  # a service answers warm; the hook gives up on one that takes seconds
    added = claude(binary, "plugin", "marketplace", "add", str(REPO), env=env, cwd=tmp_path)
    assert added.returncode == 0, added.stdout + added.stderr
    installed = claude(binary, "plugin", "install", "skillpilot@skillpilot", env=env, cwd=tmp_path)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = json.loads(claude(binary, "plugin", "list", "--json", env=env, cwd=tmp_path).stdout)
    ours = [p for p in listed if p["id"] == "skillpilot@skillpilot"]
    assert ours and ours[0]["enabled"], listed
    servers = claude(binary, "mcp", "list", env=env, cwd=tmp_path)
    assert "plugin:skillpilot:skillpilot: skillpilot mcp - ✔ Connected" in servers.stdout, servers.stdout

    with advertised_service(pilot), scripted_api(lambda _r: text_reply("Done.")) as api:
        # The MCP server was checked above; starting it again here (it loads the models) would
        # compete with the service for the CPU while the hook waits at most 2 s for it.
        run_claude(binary, "commit my changes", tmp_path, {**claude_env(home, api), **env}, "--strict-mcp-config")
    pilot.close()
    context = hook_context(api.model_requests()[0])
    assert context is not None and "the skill `git-commit`" in context, context
