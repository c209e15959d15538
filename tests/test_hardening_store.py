"""Clear errors and private files for the SQLite stores: a full disk (a real file-size limit in a
real process) is a StoreError saying what to do and leaves the previous index whole; a corrupt
routing log never stops routing; index, log and feedback files are 0600 in a 0700 home."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skillpilot import SkillPilot
from skillpilot.errors import StoreError

from .conftest import write_skill


def _catalog(root: Path) -> Path:
    write_skill(root, "git-commit", "name: git-commit\ndescription: Use when the user wants to commit changes.")
    write_skill(root, "image-resize", "name: image-resize\ndescription: Use when the user wants to resize an image.")
    return root


def _pilot(home: Path) -> SkillPilot:
    return SkillPilot(home=home, enable_semantic=False, preconditions=False)


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_full_disk_is_a_store_error_and_the_previous_index_stays(tmp_path: Path) -> None:
    home, root = tmp_path / "home", _catalog(tmp_path / "skills")
    pilot = _pilot(home)
    pilot.index([root])
    pilot.close()
    # A new skill far larger than the room left: the write cannot fit.
    write_skill(root, "big", "name: big\ndescription: Use when the user wants a big report.", "word " * 200_000)
    limit = sum(p.stat().st_size for p in home.iterdir()) + 64 * 1024
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        sys.argv = ["skillpilot", "index", {str(root)!r}]
        from skillpilot.cli import main
        main()
        """
    )
    env = {**os.environ, "SKILLPILOT_HOME": str(home), "SKILLPILOT_ENABLE_SEMANTIC": "false"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "the disk is full or the file too large" in result.stderr
    assert "free some space" in result.stderr and "nothing was changed" in result.stderr
    after = _pilot(home)
    assert sorted(s.id for s in after.skills()) == ["git-commit", "image-resize"]
    assert after.route("commit my changes").skill.id == "git-commit"  # type: ignore[union-attr]


def test_a_corrupt_routing_log_never_stops_routing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    home, root = tmp_path / "home", _catalog(tmp_path / "skills")
    pilot = _pilot(home)
    pilot.index([root])
    (home / "log.sqlite").write_bytes(b"this is not a database " * 400)
    with caplog.at_level(logging.WARNING):
        routed = pilot.route("commit my changes")
    assert routed.skill is not None and routed.skill.id == "git-commit"
    warning = " ".join(r.getMessage() for r in caplog.records)
    assert str(home / "log.sqlite") in warning and "delete the file" in warning


def test_a_corrupt_index_is_a_store_error_that_says_what_to_do(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "index.sqlite").write_bytes(b"garbage" * 1000)
    with pytest.raises(StoreError, match="delete the file and run `skillpilot reindex`"):
        _pilot(home).skills()


def test_store_files_are_private_in_a_private_home(tmp_path: Path) -> None:
    home, root = tmp_path / "home", _catalog(tmp_path / "skills")
    pilot = _pilot(home)
    pilot.index([root])
    pilot.route("commit my changes")
    pilot.feedback("confirmed", "commit my changes", skill="git-commit")
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    files = {p.name: stat.S_IMODE(p.stat().st_mode) for p in home.iterdir() if p.name.endswith(("sqlite", "-wal"))}
    assert {"index.sqlite", "log.sqlite", "feedback.sqlite"} <= set(files)
    assert set(files.values()) == {0o600}, files


def test_a_failing_read_is_a_store_error_too(tmp_path: Path) -> None:
    home, root = tmp_path / "home", _catalog(tmp_path / "skills")
    pilot = _pilot(home)
    pilot.index([root])
    # Another process damages the open index (here: drops the skills table).
    sqlite3.connect(home / "index.sqlite").execute("DROP TABLE skills").connection.commit()
    with pytest.raises(StoreError, match=r"index\.sqlite: index error \(no such table: skills\)"):
        pilot.store.load()
    with pytest.raises(StoreError):
        pilot.store.count()
