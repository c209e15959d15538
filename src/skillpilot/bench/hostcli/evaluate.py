"""``skillpilot eval host``: the proof in the host. Does the model's request carry the right skill?

Input: a host (claude-code, gemini, codex), a folder of skill folders (what the user keeps in the
host's own skill folder), and messages with the skills that should answer them (JSONL:
``{"query": ..., "expected": [skill names]}``; an empty list is out of scope). Output: one row
per message and run, and a summary.

Each message is sent to the real host CLI twice, offline against this package's scripted model
endpoint, in a throwaway HOME whose user skill folder is the given folder: once without
SkillPilot, once with ``skillpilot setup HOST`` and a running service. From the first model
request it reads what the model would see: the host's own listing (name and description) and
SkillPilot's context. A request *carries the right skill* when an expected skill is named by
SkillPilot's context (which gives its description) or listed by the host with its description;
for an out-of-scope message the run with SkillPilot is right when the context adds nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ...adapters.hosts import get_host
from ...errors import ConfigError
from ...router import SkillPilot
from . import Recorded, claude_code, codex, gemini, text_reply

# Host -> the user skill folder below HOME the eval links the skills into, and the variables
# that would point the host elsewhere (unset for the run).
USER_SKILLS = {"claude-code": ".claude/skills", "gemini": ".gemini/skills", "codex": ".agents/skills"}
HOST_VARIABLES = ("CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "CODEX_HOME")


@dataclass(frozen=True)
class Message:
    query: str
    expected: tuple[str, ...]


@dataclass(frozen=True)
class Row:
    """What one run of one message sent the model."""

    query: str
    expected: tuple[str, ...]
    skillpilot: bool
    listed: bool  # an expected skill is in the host's listing with its description
    named: bool  # SkillPilot's context names an expected skill
    context_named: str | None  # the first skill the context names
    listing_chars: int
    context_chars: int

    @property
    def carries(self) -> bool:
        if not self.expected:
            return self.context_named is None
        return self.named or self.listed


@dataclass(frozen=True)
class Driver:
    """One host's offline CLI: how to serve, run, and read a request."""

    serve: Callable[[], Any]
    environment: Callable[[Path, Any, str], dict[str, str]]
    run: Callable[[Path, str, Path, dict[str, str]], Any]
    listing: Callable[[Recorded], dict[str, str | None]]
    listing_chars: Callable[[Recorded], int]
    context: Callable[[Recorded], str | None]


def _claude_serve() -> Any:
    return claude_code.scripted_api(lambda _request: claude_code.text_reply("Done."))


def _claude_environment(home: Path, api: Any, path: str) -> dict[str, str]:
    return {**claude_code.claude_env(home, api), "PATH": path}


def _claude_run(binary: Path, prompt: str, cwd: Path, env: dict[str, str]) -> Any:
    return claude_code.run_claude(binary, prompt, cwd, env)


DRIVERS: dict[str, Driver] = {
    "claude-code": Driver(
        _claude_serve,
        _claude_environment,
        _claude_run,
        claude_code.skill_listing,
        claude_code.listing_chars,
        claude_code.hook_context,
    ),
    "gemini": Driver(
        lambda: gemini.serve(lambda _request: text_reply("Done.")),
        gemini.environment,
        gemini.run,
        gemini.listing,
        gemini.listing_chars,
        gemini.context,
    ),
    "codex": Driver(
        lambda: codex.serve(lambda _request: text_reply("Done.")),
        codex.environment,
        codex.run,
        codex.listing,
        codex.listing_chars,
        codex.context,
    ),
}


def load_messages(path: Path) -> list[Message]:
    """The messages of a JSONL file (``query``, ``expected``: a list of skill names)."""
    messages = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            messages.append(Message(str(row["query"]), tuple(str(e) for e in row.get("expected") or ())))
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError("--queries", f"line {number} of {path}: expected {{query, expected}} ({exc})") from exc
    return messages


def _named(context: str | None) -> list[str]:
    """The skills a context names, in order (between backticks)."""
    if not context:
        return []
    parts = context.split("`")
    return [parts[i] for i in range(1, len(parts), 2)]


def _row(message: Message, skillpilot: bool, request: Recorded, driver: Driver) -> Row:
    listing = driver.listing(request)
    context = driver.context(request) if skillpilot else None
    named = _named(context)
    return Row(
        query=message.query,
        expected=message.expected,
        skillpilot=skillpilot,
        listed=any(listing.get(name) for name in message.expected),
        named=any(name in message.expected for name in named),
        context_named=named[0] if named else None,
        listing_chars=driver.listing_chars(request),
        context_chars=len(context or ""),
    )


@contextmanager
def _user_environment(home: Path, path: str) -> Iterator[None]:
    """This process (and the service it starts) sees the throwaway HOME as the user's."""
    saved = {name: os.environ.get(name) for name in ("HOME", "PATH", *HOST_VARIABLES)}
    os.environ["HOME"] = str(home)
    os.environ["PATH"] = path
    for name in HOST_VARIABLES:
        os.environ.pop(name, None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def evaluate(
    host: str,
    cli: Path,
    skills: Path,
    messages: Sequence[Message],
    work: Path,
    path: str,
    progress: Callable[[Row], None] | None = None,
) -> list[Row]:
    """Every message without SkillPilot, then with it (see the module docstring)."""
    from ...serve import read_serve_file, service
    from ...serve.client import route_via_service

    driver = DRIVERS.get(host)
    if driver is None:
        raise ConfigError("host", f"eval host drives {', '.join(DRIVERS)}, not {host!r}")
    home, skillpilot_home, cwd = work / "home", work / "skillpilot", work / "project"
    cwd.mkdir(parents=True)
    user_skills = home / USER_SKILLS[host]
    user_skills.parent.mkdir(parents=True)
    user_skills.symlink_to(skills.absolute(), target_is_directory=True)
    pilot = SkillPilot(home=skillpilot_home)
    pilot.index([user_skills])
    pilot.close()
    setup = get_host(host).setup
    assert setup is not None  # every host with a driver has one
    rows: list[Row] = []
    with _user_environment(home, path), driver.serve() as api:
        env = {**driver.environment(home, api, path), "SKILLPILOT_HOME": str(skillpilot_home)}
        for with_skillpilot in (False, True):
            if with_skillpilot:
                setup.install(skillpilot_home, None)
                # Every folder the host offers indexed first (as `skillpilot setup` does for the
                # user's): the host's own folders (Codex's .system skills) appear on its first run.
                pilot = SkillPilot(home=skillpilot_home)
                pilot.index([r.path for r in get_host(host).skill_roots(cwd)])
                pilot.close()
                service.start(skillpilot_home)
                # A service a user keeps running is warm; the hook gives up on one slower than 2 s.
                info = read_serve_file(skillpilot_home)
                assert info is not None
                route_via_service(info, "warm up", timeout=120)
            try:
                for message in messages:
                    api.requests.clear()
                    driver.run(cli, message.query, cwd, env)
                    row = _row(message, with_skillpilot, api.model_requests()[0], driver)
                    rows.append(row)
                    if progress is not None:
                        progress(row)
            finally:
                if with_skillpilot:
                    service.stop(skillpilot_home)
                    setup.uninstall(None)
    shutil.rmtree(cwd, ignore_errors=True)
    return rows


def summary(rows: Sequence[Row]) -> dict[str, Any]:
    """Per run (without / with SkillPilot): how often the request carried the right skill, in
    scope and out of it, and the mean characters of listing and context per request."""
    result: dict[str, Any] = {}
    for with_skillpilot in (False, True):
        run = [r for r in rows if r.skillpilot is with_skillpilot]
        in_scope = [r for r in run if r.expected]
        out = [r for r in run if not r.expected]
        result["with" if with_skillpilot else "without"] = {
            "messages": len(run),
            "in_scope_carried": sum(r.carries for r in in_scope),
            "in_scope": len(in_scope),
            "named_by_skillpilot": sum(r.named for r in in_scope),
            "listed_by_host": sum(r.listed for r in in_scope),
            "out_of_scope_quiet": sum(r.carries for r in out),
            "out_of_scope": len(out),
            "listing_chars": round(statistics.mean(r.listing_chars for r in run), 1) if run else 0,
            "context_chars": round(statistics.mean(r.context_chars for r in run), 1) if run else 0,
        }
    return result


def row_dict(row: Row) -> dict[str, Any]:
    return {**asdict(row), "carries": row.carries}
