"""Shared fixtures: every test gets its own SKILLPILOT_HOME and a clean SKILLPILOT_* env."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
BENCH = REPO.parent / "shared" / "bench"


# Tests needing a real browser, openclaw, Claude Code, PostgreSQL replicas or fuzzing time are slow
# too, so `-m "not slow"` leaves all of them out (pyproject.toml lists the markers).
IMPLY_SLOW = ("browser", "openclaw", "claude_code", "real_cli", "postgres_replicas", "fuzz")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(name) for name in IMPLY_SLOW):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("SKILLPILOT_"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    monkeypatch.setenv("SKILLPILOT_HOME", str(home))
    return home


def serve_processes(under: Path) -> dict[int, str]:
    """pid -> home of every ``skillpilot serve`` process (as the hook and ``service start`` run
    it) whose ``--home`` lies under ``under``."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            words = [w.decode("utf-8", "replace") for w in (entry / "cmdline").read_bytes().split(b"\0")]
        except OSError:
            continue  # not a process, or one that just ended
        if words[1:5] != ["-m", "skillpilot", "serve", "--port"] or "--home" not in words:
            continue
        home = Path(words[words.index("--home") + 1])
        if home.is_relative_to(under):
            found[int(entry.name)] = str(home)
    return found


def stop_left_behind(under: Path, grace_s: float = 10.0) -> dict[int, str]:
    """Stop the serve processes of homes under ``under`` that are still running after
    ``grace_s`` (one being stopped is given that long); those it stopped."""
    deadline = time.monotonic() + grace_s
    while (left := serve_processes(under)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    return left


@pytest.fixture(autouse=True)
def no_service_left_behind(tmp_path: Path) -> Iterator[None]:
    """A test stops every service it caused (a hook starts one for a home without): a serve
    process of a home in the test's temp folder still running afterwards fails the test."""
    yield
    left = stop_left_behind(tmp_path)
    if left:
        pytest.fail(f"the test left {len(left)} `skillpilot serve` processes running (now stopped): {left}")


@pytest.fixture(scope="session", autouse=True)
def no_service_left_behind_by_fixtures(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The same for the session's shared folders (module fixtures' homes)."""
    yield
    left = stop_left_behind(tmp_path_factory.getbasetemp())
    if left:
        pytest.fail(f"the session left {len(left)} `skillpilot serve` processes running (now stopped): {left}")


def write_skill(root: Path, folder: str, frontmatter: str, body: str = "") -> Path:
    """Write ``root/folder/SKILL.md`` with the given frontmatter (without the --- lines)."""
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "---\n" + textwrap.dedent(frontmatter).strip() + "\n---\n" + textwrap.dedent(body)
    path.write_text(text, encoding="utf-8")
    return path


def require_corpus() -> None:
    """Skip a test that reads ``../shared/bench`` when it is not beside the checkout; with
    ``CI=true`` the corpus is required, so its absence fails instead of skipping."""
    if BENCH.is_dir():
        return
    message = f"the shared bench corpus is not at {BENCH} (clone the project beside shared/)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def write_plugin(site: Path, distribution: str, group: str, entry_points: dict[str, str]) -> None:
    """Install a distribution into the folder ``site`` the way pip would leave it (a dist-info with
    its metadata), declaring ``entry_points`` (name -> "module:factory") in ``group``
    (``skillpilot.encoders``, ``skillpilot.retrievers``, ``skillpilot.stores``)."""
    info = site / f"{distribution.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n", encoding="utf-8")
    lines = [f"{name} = {target}" for name, target in entry_points.items()]
    (info / "entry_points.txt").write_text(f"[{group}]\n" + "\n".join(lines) + "\n", encoding="utf-8")


def _install_fake_encoder() -> None:
    # The fake encoder (tests/fake_encoder.py) reaches tests as an installed plugin would.
    site = Path(tempfile.mkdtemp(prefix="skillpilot-test-plugins-"))
    atexit.register(shutil.rmtree, site, ignore_errors=True)
    write_plugin(site, "skillpilot-test-encoders", "skillpilot.encoders", {"trigram-test": "tests.fake_encoder:build"})
    sys.path.append(str(site))


_install_fake_encoder()
