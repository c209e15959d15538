"""Clear errors and private files for the SQLite stores: a full disk (a real file-size limit in a
real process) is a StoreError saying what to do and leaves the previous index whole; a corrupt
routing log never stops routing; index, log and feedback files are 0600 in a 0700 home."""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from skillpilot import SkillPilot, sqlitefile
from skillpilot.errors import StoreError

from .conftest import write_skill
from .surfaces_util import cli

KEYWORD_ONLY = {"SKILLPILOT_ENABLE_SEMANTIC": "false"}


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
    assert str(home / "log.sqlite") in warning and "the routing log is damaged" in warning
    assert f"move it aside (`mv {home / 'log.sqlite'} {home / 'log.sqlite'}.damaged`" in warning
    assert "delete" not in warning


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


@pytest.mark.parametrize("first", ["serve.key", "serve.lock", "serve.json"])
def test_a_home_the_service_makes_first_is_private_whatever_the_umask(tmp_path: Path, first: str) -> None:
    from skillpilot.serve import ServeInfo, hold_service_lock, home_key, write_serve_file

    home = tmp_path / "new-home"
    old = os.umask(0)
    try:
        if first == "serve.key":
            home_key(home)
        elif first == "serve.lock":
            os.close(hold_service_lock(home))
        else:
            write_serve_file(home, ServeInfo(url="http://127.0.0.1:1", pid=os.getpid()))
    finally:
        os.umask(old)
    # Made 0777 under umask 000 (0755 under the usual 022) when the service was the first to need it.
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


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


# -- advice that never destroys data: damaged, emptied, deleted, locked, full ------------------------


def _indexed_home(tmp_path: Path) -> tuple[Path, Path]:
    home, root = tmp_path / "home", _catalog(tmp_path / "skills")
    pilot = _pilot(home)
    pilot.index([root])
    pilot.close()
    return home, root


def test_a_damaged_index_is_rebuilt_by_reindex_with_its_roots_and_kept_aside(tmp_path: Path) -> None:
    home, root = _indexed_home(tmp_path)
    garbage = b"garbage" * 1000
    (home / "index.sqlite").write_bytes(garbage)
    routed = cli("route", "commit my changes", home=home, **KEYWORD_ONLY)
    assert routed.returncode == 1
    assert (
        "the index is damaged (file is not a database); your skill folders are untouched: run `skillpilot reindex`"
        in (routed.stderr)
    )
    assert "delete" not in routed.stderr
    rebuilt = cli("reindex", "--json", home=home, **KEYWORD_ONLY)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert (json.loads(rebuilt.stdout)["roots"], json.loads(rebuilt.stdout)["added"]) == ([str(root)], 2)
    (aside,) = home.glob("index.sqlite.damaged-*")
    assert aside.read_bytes() == garbage
    assert _pilot(home).route("commit my changes").skill.id == "git-commit"  # type: ignore[union-attr]


@pytest.mark.parametrize("loss", ["emptied", "deleted"])
def test_an_emptied_or_deleted_index_keeps_its_roots(tmp_path: Path, loss: str) -> None:
    home, root = _indexed_home(tmp_path)
    if loss == "emptied":
        (home / "index.sqlite").write_bytes(b"")
    else:
        for path in home.glob("index.sqlite*"):
            path.unlink()
    routed = cli("route", "commit my changes", home=home, **KEYWORD_ONLY)
    # Not silently an empty index: it says the folders are back and how to index them again.
    assert "its 1 skill folders are back" in routed.stderr and "run `skillpilot reindex`" in routed.stderr
    rebuilt = cli("reindex", "--json", home=home, **KEYWORD_ONLY)
    assert json.loads(rebuilt.stdout)["roots"] == [str(root)]
    assert _pilot(home).route("commit my changes").skill.id == "git-commit"  # type: ignore[union-attr]


def test_a_locked_index_says_so_and_that_nothing_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, root = _indexed_home(tmp_path)
    monkeypatch.setattr(sqlitefile, "BUSY_SECONDS", 0.2)
    writer = sqlite3.connect(home / "index.sqlite", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError) as raised:
            _pilot(home).index([root])
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert raised.value.problem == "locked"
    assert "the index is locked by another process writing it (database is locked)" in str(raised.value)
    assert "nothing was changed" in str(raised.value)


@contextmanager
def _small_disk(tmp_path: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted inside ``tmp_path`` (root only: skipped where mounting is not allowed)."""
    if sys.platform != "linux" or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs Linux")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.decode().strip()})")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(disk: Path) -> None:
    """Fill ``disk`` to its last byte (unbuffered, smaller and smaller writes): room left over
    made whether a small write succeeded depend on the sizes of the files already there."""
    with open(disk / "filler", "wb", buffering=0) as handle:
        chunk = 65536
        while chunk:
            try:
                handle.write(b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                chunk //= 2


def test_read_only_commands_work_on_a_full_disk_and_writes_say_it_is_full(tmp_path: Path) -> None:
    with _small_disk(tmp_path) as disk:
        home, root = disk / "home", _catalog(tmp_path / "skills")
        assert cli("index", str(root), home=home, **KEYWORD_ONLY).returncode == 0
        assert cli("route", "commit my changes", home=home, **KEYWORD_ONLY).returncode == 0
        _fill(disk)
        # Before: every command said "disk I/O error; delete the file and run `skillpilot reindex`".
        reads = {
            "route": cli("route", "commit my changes", "--json", home=home, **KEYWORD_ONLY),
            "search": cli("search", "commit", "--json", home=home, **KEYWORD_ONLY),
            "stats": cli("stats", "--json", home=home, **KEYWORD_ONLY),
            "log": cli("log", home=home, **KEYWORD_ONLY),
            "feedback list": cli("feedback", "list", home=home, **KEYWORD_ONLY),
        }
        for command, outcome in reads.items():
            assert outcome.returncode == 0, (command, outcome.stderr)
            assert "delete" not in outcome.stderr, (command, outcome.stderr)
        assert json.loads(reads["route"].stdout)["skill"]["id"] == "git-commit"
        assert json.loads(reads["stats"].stdout)["skills"] == 2
        # A refresh with nothing new writes nothing and succeeds (it failed when the disk had no
        # room left for the WAL); a new skill must be written.
        assert cli("index", str(root), home=home, **KEYWORD_ONLY).returncode == 0
        description = "name: pdf-fill\ndescription: Use when the user wants to fill in a PDF form."
        write_skill(root, "pdf-fill", description, "word " * 150_000)
        writes = {
            "index": cli("index", str(root), home=home, **KEYWORD_ONLY),
            "feedback": cli("feedback", "confirm", "-q", "commit my changes", "--skill", "git-commit", home=home),
        }
        for command, outcome in writes.items():
            assert outcome.returncode == 1, (command, outcome.stderr)
            assert "the disk is full or the file too large" in outcome.stderr, (command, outcome.stderr)
            assert "free some space" in outcome.stderr and "nothing was changed" in outcome.stderr
        (disk / "filler").unlink()
        # Room again: everything works, nothing was lost.
        assert cli("feedback", "confirm", "-q", "commit my changes", "--skill", "git-commit", home=home).returncode == 0
        assert cli("index", str(root), home=home, **KEYWORD_ONLY).returncode == 0
        assert sorted(s.id for s in _pilot(home).skills()) == ["git-commit", "image-resize", "pdf-fill"]
