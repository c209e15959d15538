"""Hot reload on real folders: a real watchdog observer, a real index, the real `skillpilot watch`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from skillpilot import SkillPilot
from skillpilot.model import IndexReport
from skillpilot.serve import Refresher
from skillpilot.watch import IndexWatcher

from .conftest import write_skill

# Generous: the promise is about 2 s; a loaded CI machine must not turn that into a failure.
WAIT_SECONDS = 20.0
# The fallback poll would take a day: whatever happens within the wait came from watchdog.
DAY_MINUTES = 1440.0


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def routed(pilot: SkillPilot, message: str) -> str | None:
    result = pilot.route(message)
    return result.skill.id if result.skill else None


def test_a_dropped_skill_routes_a_deleted_one_goes_a_broken_one_is_reported(
    isolated_home: Path, tmp_path: Path
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "git-commit", "name: git-commit\ndescription: Commit staged changes to git.")
    pilot = SkillPilot(home=isolated_home, preconditions=False, enable_semantic=False, refresh_interval=DAY_MINUTES)
    reports: list[IndexReport] = []
    with IndexWatcher(pilot.settings, [root], on_report=reports.append) as watcher:
        assert watcher.roots == [root.resolve()]
        wait_until(lambda: bool(reports), "the first round never ran")
        assert [s.id for s in pilot.skills()] == ["git-commit"]
        write_skill(
            root,
            "pdf-merge",
            "name: pdf-merge\ndescription: Merge several PDF files into one document."
            "\nroute:\n  triggers: [merge these pdfs]",
        )
        wait_until(lambda: routed(pilot, "merge these pdfs") == "pdf-merge", "the new skill never routed")
        broken = root / "broken" / "SKILL.md"
        broken.parent.mkdir()
        broken.write_bytes(b"---\nname: broken\ndescription: \xff\xfe\n---\n")
        wait_until(lambda: any(s.path == str(broken) for r in reports for s in r.skipped), "never reported")
        assert sorted(s.id for s in pilot.skills()) == ["git-commit", "pdf-merge"]
        (root / "pdf-merge" / "SKILL.md").unlink()
        (root / "pdf-merge").rmdir()
        wait_until(lambda: [s.id for s in pilot.skills()] == ["git-commit"], "the deleted skill stayed")
        assert routed(pilot, "merge these pdfs") != "pdf-merge"
    pilot.close()


def test_the_service_refresher_watches_the_indexed_folders(isolated_home: Path, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "git-commit", "name: git-commit\ndescription: Commit staged changes to git.")
    pilot = SkillPilot(home=isolated_home, preconditions=False, enable_semantic=False, refresh_interval=DAY_MINUTES)
    pilot.index([root])
    with Refresher(pilot.settings):
        write_skill(root, "zip-archive", "name: zip-archive\ndescription: Pack files into a zip archive.")
        wait_until(lambda: "zip-archive" in {s.id for s in pilot.skills()}, "the refresher missed the skill")
    pilot.close()


def test_watch_command_reports_each_reindex(isolated_home: Path, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "git-commit", "name: git-commit\ndescription: Commit staged changes to git.")
    env = {**os.environ, "SKILLPILOT_HOME": str(isolated_home), "SKILLPILOT_ENABLE_SEMANTIC": "false"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillpilot", "watch", str(root), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert (first["added"], first["total"]) == (1, 1)
        write_skill(root, "zip-archive", "name: zip-archive\ndescription: Pack files into a zip archive.")
        second = json.loads(proc.stdout.readline())
        assert (second["added"], second["total"]) == (1, 2)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT_SECONDS) == 0, proc.stderr.read() if proc.stderr else ""


def test_a_json_tool_catalog_is_watched_alone_not_its_folders_tree(isolated_home: Path, tmp_path: Path) -> None:
    catalog = tmp_path / "catalogs" / "tools.json"
    catalog.parent.mkdir()
    catalog.write_text('[{"name": "zip-tool", "description": "Pack files into a zip archive."}]')
    write_skill(tmp_path / "catalogs" / "unrelated", "other", "name: other\ndescription: Not indexed.")
    pilot = SkillPilot(home=isolated_home, preconditions=False, enable_semantic=False, refresh_interval=DAY_MINUTES)
    pilot.index([catalog])
    reports: list[IndexReport] = []
    # The index's own roots, as the service watches them.
    with IndexWatcher(pilot.settings, on_report=reports.append) as watcher:
        assert watcher.watched == [(catalog.parent.resolve(), False)]
        wait_until(lambda: bool(reports), "the first round never ran")
        catalog.write_text(
            '[{"name": "zip-tool", "description": "Pack files into a zip archive."},'
            ' {"name": "tar-tool", "description": "Pack files into a tar archive."}]'
        )
        wait_until(lambda: "tar-tool" in {s.id for s in pilot.skills()}, "the catalog's change was missed")
    pilot.close()


def test_a_root_indexed_while_the_service_runs_is_watched(isolated_home: Path, tmp_path: Path) -> None:
    first, later = tmp_path / "first", tmp_path / "later"
    write_skill(first, "git-commit", "name: git-commit\ndescription: Commit staged changes to git.")
    write_skill(later, "zip-archive", "name: zip-archive\ndescription: Pack files into a zip archive.")
    pilot = SkillPilot(home=isolated_home, preconditions=False, enable_semantic=False, refresh_interval=DAY_MINUTES)
    pilot.index([first])
    with Refresher(pilot.settings) as refresher:
        # Another process (`skillpilot index later`) adds a root while the service runs.
        other = SkillPilot(home=isolated_home, preconditions=False, enable_semantic=False)
        other.index([later])
        other.close()
        wait_until(lambda: (later.resolve(), True) in refresher.watched, "the new root was never watched")
        write_skill(later, "tar-archive", "name: tar-archive\ndescription: Pack files into a tar archive.")
        wait_until(lambda: "tar-archive" in {s.id for s in pilot.skills()}, "the new root's change was missed")
    pilot.close()
