"""Shared fixtures: every test gets its own SKILLPILOT_HOME and a clean SKILLPILOT_* env."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import textwrap
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
