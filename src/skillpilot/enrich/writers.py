"""The LLMs that write example requests, behind one Protocol, and the registry that builds them.

Input: a name (``enrich.with``: ``claude``, ``gemini``, ``codex``, ``openai``, ``anthropic``, or a
registered third-party name) and the resolved ``Settings``. Output: an :class:`ExampleWriter`
whose ``write(system, prompt, timeout)`` returns the model's answer as a :class:`Completion`
(its text, and the tokens it cost when the model says).

Built-ins:

- ``claude``: the Claude Code CLI, ``claude -p``, on the user's own login, with
  ``--safe-mode`` (no hooks, plugins, skills, MCP servers or CLAUDE.md), ``--tools ""``,
  ``--strict-mcp-config``, ``--no-session-persistence`` and its own system prompt.
- ``gemini``: the Gemini CLI, ``gemini -p``, on the user's own login, run in a workspace folder
  of the SkillPilot home whose ``.gemini/settings.json`` turns hooks, tools, skills and MCP
  servers off (trusted for the run, ``GEMINI_CLI_TRUST_WORKSPACE``), ``-e none`` (no
  extensions), and its system prompt in ``GEMINI_SYSTEM_MD``.
- ``codex``: the Codex CLI, ``codex exec --json``, on the user's own login, ``--ephemeral``,
  ``--sandbox read-only``, hooks, the shell and every other tool disabled, each MCP server of the
  user's config switched off, its own instructions (``model_instructions_file``), stdin closed.
- ``openai``: any OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, Ollama, vLLM, LM
  Studio): ``enrich.baseUrl`` (default ``https://api.openai.com/v1``), ``enrich.model``, the key
  from ``SKILLPILOT_ENRICH_API_KEY`` or ``OPENAI_API_KEY`` (none: no Authorization header).
- ``anthropic``: the Messages API, ``enrich.baseUrl`` (default ``https://api.anthropic.com``),
  the key from ``SKILLPILOT_ENRICH_API_KEY`` or ``ANTHROPIC_API_KEY``.

So the host CLIs never route, hook or learn from an enrichment prompt, and never run a tool.
Each runs in its own folder of the home (``enrich/<cli>``), never in the user's project, and the
CLI is found on ``PATH`` or at ``enrich.command``.

Guarantees: every call has a timeout; every failure is an ``EnrichError`` that says what to do;
no message, log line or error ever holds an API key (known key values are masked in whatever a
server or CLI printed). Third parties register a factory ``(Settings) -> ExampleWriter`` in the
entry-point group ``skillpilot.writers`` (the entry point's name is what ``enrich.with`` names),
registered on first use through the same ``register_writer`` the built-ins call.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import re
import shutil
import subprocess
import threading
import tomllib
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import EnrichError
from ..limits import MAX_LLM_ANSWER_BYTES

if TYPE_CHECKING:  # config checks writer names against this registry: no import back
    from ..config import Settings

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "skillpilot.writers"
ENRICH_KEY_ENV = "SKILLPILOT_ENRICH_API_KEY"
OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_MODEL = "gpt-4.1-mini"
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_MODEL = "claude-haiku-4-5"
ANTHROPIC_VERSION = "2023-06-01"
# Room for a batch of skills' requests in the answer (a request is ~30 tokens, 6 per skill).
MAX_ANSWER_TOKENS = 8192
# Environment variables whose values are secrets: masked in anything a CLI prints.
_SECRET_NAME = re.compile(r"(?:KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
_SHOWN_OUTPUT = 600


@dataclass(frozen=True)
class Completion:
    """A model's answer: its text and, when the model reports them, the tokens it cost."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def tokens(self) -> int | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)


class ExampleWriter(Protocol):
    """An LLM that answers one prompt. ``name`` says which model wrote what (stored with every
    example set); ``write`` raises ``EnrichError`` on any failure, within ``timeout`` seconds."""

    @property
    def name(self) -> str: ...

    def write(self, system: str, prompt: str, timeout: float) -> Completion: ...


WriterFactory = Callable[["Settings"], ExampleWriter]
_REGISTRY: dict[str, WriterFactory] = {}
_LOCK = threading.Lock()
_plugins_loaded = False


def register_writer(name: str, factory: WriterFactory) -> None:
    """Make ``enrich.with: name`` build writers with ``factory`` (replacing any earlier one)."""
    with _LOCK:
        _REGISTRY[name] = factory


def _load_plugins() -> None:
    global _plugins_loaded
    with _LOCK:
        if _plugins_loaded:
            return
        _plugins_loaded = True
        found = list(entry_points(group=ENTRY_POINT_GROUP))
    for entry_point in found:
        try:
            register_writer(entry_point.name, entry_point.load())
        except Exception as exc:  # a broken plugin must not take the built-ins down with it
            log.warning("writer plugin %s (%s) cannot be loaded: %r", entry_point.name, entry_point.value, exc)


def available_writers() -> list[str]:
    _load_plugins()
    return sorted(_REGISTRY)


def get_writer(name: str, settings: Settings) -> ExampleWriter:
    """The writer ``name`` for these settings; ``EnrichError`` for an unknown name."""
    _load_plugins()
    factory = _REGISTRY.get(name)
    if factory is None:
        known = ", ".join(available_writers())
        raise EnrichError(name or "(none)", f"no such LLM to write examples with; use --with one of {known}")
    return factory(settings)


def masked(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value replaced by ``***``."""
    for secret in sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The values of the environment's key-like variables (``*_KEY``, ``*_TOKEN`` ...)."""
    return [value for name, value in environ.items() if _SECRET_NAME.search(name) and value]


def _api_key(*names: str) -> str | None:
    return next((os.environ[n] for n in names if os.environ.get(n)), None)


# -- HTTP APIs -------------------------------------------------------------------------------


def _post_json(writer: str, url: str, body: Mapping[str, Any], headers: Mapping[str, str], timeout: float) -> Any:
    """POST ``body`` as JSON and read a JSON reply; every failure an ``EnrichError`` without the key."""
    secrets = [v for k, v in headers.items() if k.lower() in ("authorization", "x-api-key")]
    request = urllib.request.Request(
        url,
        data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
        headers={"Content-Type": "application/json", "Accept": "application/json", **headers},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read(MAX_LLM_ANSWER_BYTES + 1)
        if len(raw) > MAX_LLM_ANSWER_BYTES:
            raise EnrichError(writer, f"{url} answered over {MAX_LLM_ANSWER_BYTES >> 20} MiB; check enrich.baseUrl")
        return json.loads(raw)
    except urllib.error.HTTPError as exc:
        raise EnrichError(writer, masked(_http_failure(url, exc), secrets)) from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise EnrichError(writer, f"cannot reach {url} ({reason}); check enrich.baseUrl, or retry later") from None
    except ValueError as exc:
        raise EnrichError(writer, f"{url} did not answer JSON ({exc}); check enrich.baseUrl") from None
    except RecursionError:
        raise EnrichError(writer, f"{url} answered JSON nested too deeply; check enrich.baseUrl") from None


def _http_failure(url: str, exc: urllib.error.HTTPError) -> str:
    try:
        detail = exc.read().decode("utf-8", "replace")[:_SHOWN_OUTPUT]
    except OSError:
        detail = ""
    hint = {
        401: f"set a valid key in {ENRICH_KEY_ENV} (or the provider's usual variable)",
        403: f"set a valid key in {ENRICH_KEY_ENV} (or the provider's usual variable)",
        404: "check enrich.baseUrl and enrich.model",
        429: "rate limited or out of quota: wait, lower enrich.concurrency, or check your plan",
    }.get(exc.code, "the server failed: retry later" if exc.code >= 500 else "check enrich.baseUrl and enrich.model")
    return f"HTTP {exc.code} from {url}{': ' + detail if detail else ''}; {hint}"


class OpenAIChatWriter:
    """An OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint."""

    def __init__(self, base_url: str, model: str, api_key: str | None) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._api_key = api_key
        self.name = f"openai/{model}@{base_url.split('://', 1)[-1].rstrip('/')}"

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIChatWriter:
        return cls(
            settings.enrich_base_url or OPENAI_BASE_URL,
            settings.enrich_model or OPENAI_MODEL,
            _api_key(ENRICH_KEY_ENV, "SKILLPILOT_OPENAI_API_KEY", "OPENAI_API_KEY"),
        )

    def write(self, system: str, prompt: str, timeout: float) -> Completion:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        body = {
            "model": self._model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            "max_tokens": MAX_ANSWER_TOKENS,
        }
        reply = _post_json("openai", self._url, body, headers, timeout)
        try:
            text = reply["choices"][0]["message"]["content"]
            usage = reply.get("usage") or {}
        except (KeyError, IndexError, TypeError, AttributeError):
            raise EnrichError("openai", f"{self._url} answered without choices[0].message.content") from None
        if not isinstance(text, str):
            raise EnrichError("openai", f"{self._url} answered without text (content is {type(text).__name__})")
        return Completion(text, _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")))


class AnthropicWriter:
    """The Anthropic Messages API, ``POST {base_url}/v1/messages``."""

    def __init__(self, base_url: str, model: str, api_key: str | None) -> None:
        self._url = base_url.rstrip("/") + "/v1/messages"
        self._model = model
        self._api_key = api_key
        self.name = f"anthropic/{model}@{base_url.split('://', 1)[-1].rstrip('/')}"

    @classmethod
    def from_settings(cls, settings: Settings) -> AnthropicWriter:
        return cls(
            settings.enrich_base_url or ANTHROPIC_BASE_URL,
            settings.enrich_model or ANTHROPIC_MODEL,
            _api_key(ENRICH_KEY_ENV, "ANTHROPIC_API_KEY"),
        )

    def write(self, system: str, prompt: str, timeout: float) -> Completion:
        if not self._api_key:
            raise EnrichError("anthropic", f"no API key: set {ENRICH_KEY_ENV} or ANTHROPIC_API_KEY")
        headers = {"x-api-key": self._api_key, "anthropic-version": ANTHROPIC_VERSION}
        body = {
            "model": self._model,
            "max_tokens": MAX_ANSWER_TOKENS,
            "system": system,
            "messages": [{"role": "user", "content": prompt}],
        }
        reply = _post_json("anthropic", self._url, body, headers, timeout)
        try:
            blocks = reply["content"]
            text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
            usage = reply.get("usage") or {}
        except (KeyError, TypeError, AttributeError):
            raise EnrichError("anthropic", f"{self._url} answered without content blocks") from None
        return Completion(text, _int(usage.get("input_tokens")), _int(usage.get("output_tokens")))


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


# -- host CLIs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cli:
    """A host CLI: its name for messages, its command, and how to install it."""

    writer: str
    command: str
    install: str


def _binary(cli: _Cli, settings: Settings) -> str:
    configured = settings.enrich_command
    found = shutil.which(configured or cli.command)
    if found is None:
        where = (
            f"enrich.command ({configured!r}) is not an executable" if configured else f"{cli.command!r} is not on PATH"
        )
        raise EnrichError(cli.writer, f"{where}; install it ({cli.install}) or set enrich.command to its path")
    return found


def _workspace(settings: Settings, cli: str) -> Path:
    """The CLI's own folder in the home: where it runs, so no project's settings apply."""
    folder = settings.home / "enrich" / cli
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def _run(
    cli: _Cli, args: Sequence[str], *, stdin: str | None, cwd: Path, env: Mapping[str, str], timeout: float
) -> str:
    """Run a CLI to completion within ``timeout``; its stdout, or ``EnrichError`` with its (masked) output."""
    secrets = environment_secrets(env)
    try:
        proc = subprocess.run(
            list(args),
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            cwd=cwd,
            env=dict(env),
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise EnrichError(cli.writer, f"no answer within {timeout:g} s; raise enrich.timeoutSeconds") from None
    except OSError as exc:
        raise EnrichError(cli.writer, f"cannot run {args[0]} ({exc.strerror or exc})") from None
    if proc.returncode != 0:
        shown = masked((proc.stderr.strip() or proc.stdout.strip())[-_SHOWN_OUTPUT:], secrets)
        raise EnrichError(cli.writer, f"{cli.command} exited {proc.returncode}: {shown or '(no output)'}")
    return proc.stdout


CLAUDE = _Cli("claude", "claude", "npm install -g @anthropic-ai/claude-code")
GEMINI = _Cli("gemini", "gemini", "npm install -g @google/gemini-cli")
CODEX = _Cli("codex", "codex", "npm install -g @openai/codex")


class ClaudeCodeWriter:
    """``claude -p`` with nothing of the user's setup but the login (see the module docstring)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._model = settings.enrich_model
        self.name = f"claude-code/{self._model or 'default'}"

    def write(self, system: str, prompt: str, timeout: float) -> Completion:
        args = [_binary(CLAUDE, self._settings), "-p", "--safe-mode", "--tools", "", "--strict-mcp-config"]
        args += ["--no-session-persistence", "--disable-slash-commands", "--output-format", "json"]
        args += ["--system-prompt", system, *(["--model", self._model] if self._model else [])]
        cwd = _workspace(self._settings, "claude")
        out = _run(CLAUDE, args, stdin=prompt, cwd=cwd, env=os.environ, timeout=timeout)
        try:
            data = json.loads(out)
            text, usage, failed = data["result"], data.get("usage") or {}, bool(data.get("is_error"))
        except (ValueError, KeyError, TypeError, RecursionError):
            raise EnrichError("claude", f"claude -p printed no JSON result: {out[:_SHOWN_OUTPUT]!r}") from None
        if failed or not isinstance(text, str):
            raise EnrichError("claude", f"claude -p failed: {str(text)[:_SHOWN_OUTPUT]}")
        return Completion(text, _int(usage.get("input_tokens")), _int(usage.get("output_tokens")))


# Hooks, tools, skills and MCP servers off: the workspace settings override the user's.
GEMINI_SETTINGS = {
    "hooksConfig": {"enabled": False},
    "tools": {"core": []},
    "skills": {"enabled": False},
    "mcp": {"allowed": ["skillpilot-enrich-none"]},
}


class GeminiWriter:
    """``gemini -p`` in a workspace with hooks, tools, skills and MCP off (see the module docstring)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._model = settings.enrich_model
        self.name = f"gemini-cli/{self._model or 'default'}"

    def write(self, system: str, prompt: str, timeout: float) -> Completion:
        binary = _binary(GEMINI, self._settings)
        cwd = _workspace(self._settings, "gemini")
        (cwd / ".gemini").mkdir(exist_ok=True)
        (cwd / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS, indent=2) + "\n", encoding="utf-8")
        system_file = cwd / "system.md"
        system_file.write_text(system + "\n", encoding="utf-8")
        env = {**os.environ, "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_SYSTEM_MD": str(system_file)}
        args = [binary, "-o", "json", "-e", "none", *(["-m", self._model] if self._model else []), "-p", prompt]
        out = _run(GEMINI, args, stdin=None, cwd=cwd, env=env, timeout=timeout)
        try:
            data = json.loads(out[out.index("{") :])
            text = data["response"]
            models = (data.get("stats") or {}).get("models") or {}
        except (ValueError, KeyError, TypeError, RecursionError):
            raise EnrichError("gemini", f"gemini -p printed no JSON response: {out[:_SHOWN_OUTPUT]!r}") from None
        if not isinstance(text, str):
            raise EnrichError("gemini", f"gemini -p answered no text: {data.get('error')!r}")
        tokens = [m.get("tokens") or {} for m in models.values() if isinstance(m, dict)]
        return Completion(
            text,
            sum(_int(t.get("input")) or 0 for t in tokens) if tokens else None,
            sum(_int(t.get("candidates")) or 0 for t in tokens) if tokens else None,
        )


# What `codex exec` may use: nothing but the model. Features by their `codex features list` names.
CODEX_DISABLED_FEATURES = (
    "hooks",
    "shell_tool",
    "view_image",
    "goals",
    "multi_agent",
    "apps",
    "plugins",
    "image_generation",
)
CODEX_SETTINGS = (
    'web_search="disabled"',
    "tools.experimental_request_user_input.enabled=false",
    "skills.include_instructions=false",
)
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def codex_mcp_servers(environ: Mapping[str, str]) -> list[str]:
    """The MCP servers the user's Codex config (``$CODEX_HOME/config.toml``) declares: each is
    switched off for the run (``-c mcp_servers.<name>.enabled=false``; an empty table would be
    merged with the user's, not replace it)."""
    home = Path(environ.get("CODEX_HOME") or Path(environ.get("HOME", "~")).expanduser() / ".codex")
    try:
        servers = tomllib.loads((home / "config.toml").read_text(encoding="utf-8")).get("mcp_servers") or {}
    except (OSError, ValueError):
        return []
    return [str(name) for name in servers] if isinstance(servers, dict) else []


class CodexWriter:
    """``codex exec --json`` with hooks and every tool off, stdin closed (see the module docstring)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._model = settings.enrich_model
        self.name = f"codex/{self._model or 'default'}"

    def write(self, system: str, prompt: str, timeout: float) -> Completion:
        binary = _binary(CODEX, self._settings)
        cwd = _workspace(self._settings, "codex")
        instructions = cwd / "instructions.md"
        instructions.write_text(system + "\n", encoding="utf-8")
        args = [binary, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--sandbox", "read-only"]
        args += ["--ignore-rules", *(f"--disable={feature}" for feature in CODEX_DISABLED_FEATURES)]
        servers = [
            f"mcp_servers.{name if _BARE_KEY.match(name) else json.dumps(name)}.enabled=false"
            for name in codex_mcp_servers(os.environ)
        ]
        for setting in (*CODEX_SETTINGS, *servers, f"model_instructions_file={json.dumps(str(instructions))}"):
            args += ["-c", setting]
        args += [*(["-m", self._model] if self._model else []), prompt]
        out = _run(CODEX, args, stdin=None, cwd=cwd, env=os.environ, timeout=timeout)
        text: str | None = None
        usage: Mapping[str, Any] = {}
        for line in out.splitlines():
            try:
                event = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(event, dict):
                continue
            item = event["item"] if isinstance(event.get("item"), dict) else {}
            if event.get("type") == "item.completed" and item.get("type") == "agent_message":
                text = str(item.get("text", ""))
            elif event.get("type") == "turn.completed":
                usage = event.get("usage") or {}
            elif event.get("type") in ("turn.failed", "error"):
                problem = event.get("error") or event.get("message")
                raise EnrichError("codex", f"codex exec failed: {str(problem)[:_SHOWN_OUTPUT]}")
        if text is None:
            raise EnrichError("codex", f"codex exec printed no agent message: {out[-_SHOWN_OUTPUT:]!r}")
        return Completion(text, _int(usage.get("input_tokens")), _int(usage.get("output_tokens")))


register_writer("openai", OpenAIChatWriter.from_settings)
register_writer("anthropic", AnthropicWriter.from_settings)
register_writer("claude", ClaudeCodeWriter)
register_writer("gemini", GeminiWriter)
register_writer("codex", CodexWriter)
