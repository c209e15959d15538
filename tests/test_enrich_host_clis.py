"""`skillpilot enrich --with claude|gemini|codex` through the real CLIs, offline: each CLI talks to
a scripted endpoint on 127.0.0.1 (Claude Code: the Messages API; Gemini CLI:
``GOOGLE_GEMINI_BASE_URL`` to ``generateContent``; Codex: a ``[model_providers]`` entry with
``wire_api = "responses"``), from a throwaway user home that has a hook and an MCP server
installed, each touching a marker file when it runs.

A control run of the bare CLI shows that hook runs; the enrichment run shows it does not, that
the model was offered no tool, that it read SkillPilot's system prompt, and that canned answers
land in the examples store (a malformed one turned down or failed with the reason).

Marked ``real_cli`` (CI-only, tens of seconds): skipped without the CLIs, required with CI=true.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from skillpilot.bench.hostcli import Recorded
from skillpilot.bench.hostcli.claude_code import scripted_api, text_reply
from skillpilot.examples import EXAMPLES_FILE, ExampleStore

from .claude_code_util import claude_binary
from .cli_util import run_cli
from .enrich_util import answer, requests_for, write_catalog
from .harness.scripted_llm import LlmRequest, scripted_llm
from .host_cli_util import host_cli

pytestmark = pytest.mark.real_cli

KEY = "sk-offline-test-0123456789"
WRITTEN = ["docker-build", "pdf-tools", "slack-post"]


@pytest.fixture
def indexed(tmp_path: Path, isolated_home: Path) -> Path:
    root = write_catalog(tmp_path / "skills")
    assert run_cli("index", str(root), home=isolated_home, SKILLPILOT_EMBED_PROVIDER="trigram-test").returncode == 0
    return isolated_home


def enrich(home: Path, writer: str, command: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    outcome = run_cli(
        "enrich",
        "--with",
        writer,
        "--json",
        *args,
        home=home,
        SKILLPILOT_EMBED_PROVIDER="trigram-test",
        SKILLPILOT_ENRICH_COMMAND=str(command),
        SKILLPILOT_ENRICH_RETRIES="0",
        **env,
    )
    assert outcome.stdout.strip(), outcome.stderr
    report: dict[str, object] = json.loads(outcome.stdout)
    return report


def stored(home: Path) -> dict[str, tuple[str, ...]]:
    store = ExampleStore(home / EXAMPLES_FILE)
    try:
        return {s.name: s.requests for s in store.all()}
    finally:
        store.close()


def canned(bad: str | None = None) -> Callable[[str], str]:
    """An answer for a prompt; the skill ``bad`` gets a string instead of a list."""
    return lambda prompt: answer(prompt, only={bad: "not a list"} if bad else None)


def run_bare(args: list[str], env: dict[str, str], cwd: Path) -> None:
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.claude_code
def test_claude_code_writes_examples_without_hooks_tools_or_mcp(indexed: Path, tmp_path: Path) -> None:
    binary = claude_binary()
    user = tmp_path / "user"
    hook, mcp = tmp_path / "hook-ran", tmp_path / "mcp-ran"
    (user / ".claude").mkdir(parents=True)
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"touch {hook}"}]}]}
    (user / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    servers = {"probe": {"type": "stdio", "command": "touch", "args": [str(mcp)]}}
    (user / ".claude.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")

    def script(request: Recorded) -> list[dict[str, object]]:
        text = "\n".join(
            b.get("text", "") if isinstance(b, dict) else str(b)
            for m in request.body.get("messages", [])
            for b in (m["content"] if isinstance(m["content"], list) else [m["content"]])
        )
        return text_reply(canned("slack-post")(text) if "<skill id=" in text else "ok")

    with scripted_api(script) as api:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(user),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        run_bare([str(binary), "-p", "hello"], env, tmp_path)
        assert hook.exists() and mcp.exists(), "control: the bare CLI runs the user's hook and MCP server"
        hook.unlink()
        mcp.unlink()
        before = len(api.model_requests())
        report = enrich(indexed, "claude", binary, env)
        requests = api.model_requests()[before:]
    assert report["written"] == ["docker-build", "pdf-tools"]
    assert report["rejected"] == [{"skill": "slack-post", "reason": "not a list of requests (got str)"}]
    assert report["writer"] == "claude-code/default" and int(report["tokens"]) > 0  # type: ignore[call-overload]
    assert not hook.exists() and not mcp.exists()
    (request,) = [r for r in requests if "<skill id=" in json.dumps(r.body, ensure_ascii=False)]
    assert request.body.get("tools", []) == []
    assert "You write example requests for a skill router" in json.dumps(request.body["system"])
    assert stored(indexed)["pdf-tools"] == tuple(requests_for("pdf-tools"))


def gemini_home(tmp_path: Path, hook: Path, mcp: Path) -> Path:
    user = tmp_path / "user"
    (user / ".gemini").mkdir(parents=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "hooks": {"BeforeAgent": [{"hooks": [{"type": "command", "command": f"touch {hook}", "name": "probe"}]}]},
        "mcpServers": {"probe": {"command": "touch", "args": [str(mcp)]}},
    }
    (user / ".gemini" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    return user


def test_gemini_cli_writes_examples_without_hooks_tools_or_mcp(indexed: Path, tmp_path: Path) -> None:
    launcher, path = host_cli("gemini")
    hook, mcp = tmp_path / "hook-ran", tmp_path / "mcp-ran"
    user = gemini_home(tmp_path, hook, mcp)

    def script(request: LlmRequest) -> str:
        return canned("docker-build")(request.user) if "<skill id=" in request.user else "{}"

    with scripted_llm(script) as llm:
        env = {
            **path,
            "HOME": str(user),
            "GEMINI_API_KEY": KEY,
            "GOOGLE_GEMINI_BASE_URL": llm.url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }
        control = tmp_path / "project"
        control.mkdir()
        run_bare([str(launcher), "-m", "gemini-2.5-flash", "-p", "hello", "-o", "json"], env, control)
        assert hook.exists(), "control: the bare CLI runs the user's hook"
        hook.unlink()
        mcp.unlink(missing_ok=True)
        before = len(llm.requests)
        report = enrich(
            indexed,
            "gemini",
            launcher,
            {k: v for k, v in env.items() if k != "GEMINI_CLI_TRUST_WORKSPACE"},
            "--model",
            "gemini-2.5-flash",
        )
        requests = llm.requests[before:]
    assert report["written"] == ["pdf-tools", "slack-post"]
    assert report["rejected"] == [{"skill": "docker-build", "reason": "not a list of requests (got str)"}]
    assert not hook.exists() and not mcp.exists()
    (request,) = [r for r in requests if "<skill id=" in r.user]
    assert request.model == "gemini-2.5-flash" and request.tools() == []
    assert request.system.startswith("You write example requests for a skill router")
    assert stored(indexed)["slack-post"] == tuple(requests_for("slack-post"))


def test_gemini_cli_answer_that_is_no_json_fails_its_batch_with_the_reason(indexed: Path, tmp_path: Path) -> None:
    launcher, path = host_cli("gemini")
    user = gemini_home(tmp_path, tmp_path / "hook", tmp_path / "mcp")
    with scripted_llm(lambda r: "I cannot help with that.") as llm:
        env = {**path, "HOME": str(user), "GEMINI_API_KEY": KEY, "GOOGLE_GEMINI_BASE_URL": llm.url}
        report = enrich(indexed, "gemini", launcher, env, "--model", "gemini-2.5-flash")
    assert report["written"] == []
    assert {f["skill"]: f["reason"] for f in report["failed"]} == {  # type: ignore[index, union-attr]
        s: "the answer is not a JSON object of request lists" for s in WRITTEN
    }


def test_codex_writes_examples_without_hooks_tools_or_mcp(indexed: Path, tmp_path: Path) -> None:
    launcher, path = host_cli("codex")
    hook, mcp = tmp_path / "hook-ran", tmp_path / "mcp-ran"
    codex_home = tmp_path / "user" / ".codex"
    codex_home.mkdir(parents=True)
    # The wrapper trusts every hook for the run, as a user who reviewed them would have: so only
    # SkillPilot's flags can keep the hook from running.
    wrapper = tmp_path / "codex-trusting-hooks"
    wrapper.write_text(
        f'#!/bin/sh\nsub="$1"; shift\nexec {launcher} "$sub" --dangerously-bypass-hook-trust "$@"\n', encoding="utf-8"
    )
    wrapper.chmod(0o755)

    def script(request: LlmRequest) -> str:
        return canned("pdf-tools")(request.user) if "<skill id=" in request.user else "hello"

    with scripted_llm(script) as llm:
        (codex_home / "config.toml").write_text(
            f"""model = "gpt-scripted"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "{llm.url}/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
supports_websockets = false

[mcp_servers.probe]
command = "touch"
args = ["{mcp}"]

[[hooks.UserPromptSubmit]]
[[hooks.UserPromptSubmit.hooks]]
type = "command"
command = "touch {hook}"
""",
            encoding="utf-8",
        )
        env = {**path, "HOME": str(tmp_path / "user"), "CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": KEY}
        control = tmp_path / "project"
        control.mkdir()
        run_bare([str(wrapper), "exec", "--json", "--skip-git-repo-check", "hello"], env, control)
        assert hook.exists() and mcp.exists(), "control: the bare CLI runs the user's hook and MCP server"
        hook.unlink()
        mcp.unlink()
        before = len(llm.requests)
        report = enrich(indexed, "codex", wrapper, env)
        requests = llm.requests[before:]
    assert report["written"] == ["docker-build", "slack-post"]
    assert report["rejected"] == [{"skill": "pdf-tools", "reason": "not a list of requests (got str)"}]
    assert not hook.exists() and not mcp.exists()
    (request,) = requests
    assert request.tools() == []
    assert "You write example requests for a skill router" in request.system
    assert stored(indexed)["docker-build"] == tuple(requests_for("docker-build"))
