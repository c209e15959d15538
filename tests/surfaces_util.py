"""Helpers for the agent-surface tests: an indexed router, a real uvicorn server, a hook payload."""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from skillpilot import SkillPilot
from skillpilot.index import open_store
from skillpilot.index.builder import root_id

from .cli_util import CliOutcome, run_cli
from .conftest import EXAMPLES

SKILLS = EXAMPLES / "skills"
SKILL_COUNT = 16


@functools.cache
def example_index(embed_provider: str | None = None) -> Path:
    """The example skills' index file for ``embed_provider`` (default: the bundled models), built
    once per test session (embedding them with real models takes seconds)."""
    folder = Path(tempfile.mkdtemp(prefix="skillpilot-examples-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    pilot = SkillPilot(
        home=folder, preconditions=False, **({"embed_provider": embed_provider} if embed_provider else {})
    )
    pilot.index([SKILLS])
    pilot.close()
    return pilot.settings.index_path


def indexed(home: Path, **overrides: Any) -> SkillPilot:
    """A router over its own copy of the example skills' index, preconditions off so results do
    not depend on which binaries this machine has. ``embed_provider=SPEC`` (``tests.fake_encoder``,
    the suite's fake encoder plugin) for tests that do not assert what a model understands."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(example_index(overrides.get("embed_provider")), home / "index.sqlite")
    return SkillPilot(home=home, preconditions=False, **overrides)


@contextmanager
def uvicorn_on_loopback(app: Any) -> Iterator[str]:
    """Run ``app`` under a real uvicorn on 127.0.0.1 (a free port); yield its base URL."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join()


@contextmanager
def advertised_service(pilot: SkillPilot, app: Any = None) -> Iterator[str]:
    """A real service for ``pilot``'s home (``app``: default ``create_app(pilot)``) on a free
    loopback port, as ``skillpilot serve`` runs one: this process holds ``serve.lock`` and is the
    process ``serve.json`` names, so a hook talks to it. Yields its URL."""
    from skillpilot.serve import ServeInfo, hold_service_lock, remove_serve_file, write_serve_file
    from skillpilot.serve.http import create_app

    home = pilot.settings.home
    lock = hold_service_lock(home)
    try:
        # As serve() does before it writes serve.json: a hook finds the models and catalog loaded.
        pilot.search("warm up")
        with uvicorn_on_loopback(app if app is not None else create_app(pilot)) as url:
            write_serve_file(home, ServeInfo(url=url, pid=os.getpid()))
            try:
                yield url
            finally:
                remove_serve_file(home, os.getpid())
    finally:
        os.close(lock)


def hook_headers(home: Path) -> dict[str, str]:
    """The header a hook event needs (what the hook process sends once the service proved itself)."""
    from skillpilot.adapters.hook_client import HOOK_KEY_HEADER, hook_key
    from skillpilot.serve import home_key

    return {HOOK_KEY_HEADER: hook_key(home_key(home))}


def prompt_payload(prompt: str, cwd: Path) -> str:
    """The JSON Claude Code sends a UserPromptSubmit hook (fields as documented by Anthropic)."""
    return json.dumps(
        {
            "session_id": "3f6c2a9e-5a51-4c1e-9d0b-6e2f1c7a8b90",
            "transcript_path": str(cwd / "transcript.jsonl"),
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    )


def cli(*args: str, home: Path, stdin: str | None = None, **env: str) -> CliOutcome:
    """``skillpilot ARGS`` in this process (:func:`run_cli`), with ``home`` as SKILLPILOT_HOME and
    preconditions off: what a user sees, without a new interpreter per call."""
    return run_cli(*args, home=home, stdin=stdin, SKILLPILOT_PRECONDITIONS="off", **env)


def cli_process(*args: str, home: Path, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m skillpilot ARGS`` as a real process, for tests where the process is the point."""
    environment = {**os.environ, "SKILLPILOT_HOME": str(home), "SKILLPILOT_PRECONDITIONS": "off", **env}
    return subprocess.run(
        [sys.executable, "-m", "skillpilot", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


def wait_until_indexed(skillpilot_home: Path, folder: Path, seconds: float = 120) -> None:
    """Wait for a host session's background indexing of ``folder`` (a project's skills, offered
    by the session's first events): a prompt waits at most ``HOOK_INDEX_WAIT`` for a new root, so
    on a busy machine only a later prompt is sure to route to it."""
    store = open_store(skillpilot_home / "index.sqlite")
    try:
        deadline = time.monotonic() + seconds
        while root_id(folder) not in store.roots():
            assert time.monotonic() < deadline, f"{folder} was never indexed"
            time.sleep(0.2)
    finally:
        store.close()
