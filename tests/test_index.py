"""The index: incremental, atomic, durable, never loses a working skill."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skillpilot import SkillPilot
from skillpilot.index import sqlite as sqlite_store

from .conftest import write_skill


def keyword_pilot(home: Path) -> SkillPilot:
    return SkillPilot(home=home, enable_semantic=False, preconditions=False)


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "github", "name: github\ndescription: Open pull requests and file issues on GitHub.")
    write_skill(root, "slack", "name: slack\ndescription: Send a message to a Slack channel.")
    write_skill(root, "tools/pdf", "name: pdf\ndescription: Extract text and tables from PDF files.")
    return root


def test_index_is_incremental(root: Path, isolated_home: Path) -> None:
    pilot = keyword_pilot(isolated_home)
    first = pilot.index([root])
    assert (first.added, first.updated, first.unchanged, first.removed, first.total) == (3, 0, 0, 0, 3)
    again = pilot.index([root])
    assert (again.added, again.updated, again.unchanged, again.removed) == (0, 0, 3, 0)
    write_skill(root, "slack", "name: slack\ndescription: Send a message or a file to a Slack channel.")
    (root / "tools" / "pdf" / "SKILL.md").unlink()
    third = pilot.index([root])
    assert (third.added, third.updated, third.unchanged, third.removed, third.total) == (0, 1, 1, 1, 2)
    assert sorted(s.key for s in pilot.skills()) == ["github", "slack"]
    assert isolated_home.joinpath("index.sqlite").is_file()


def test_keys_are_folder_paths_and_ids_are_names(root: Path, isolated_home: Path) -> None:
    pilot = keyword_pilot(isolated_home)
    pilot.index([root])
    pdf = pilot.get("pdf")
    assert pdf.key == "tools/pdf"
    assert pdf.skill.path == str(root / "tools" / "pdf")
    assert pilot.get("tools/pdf").id == "pdf"


def test_same_name_in_two_folders_keeps_both_with_qualified_ids(root: Path, isolated_home: Path) -> None:
    write_skill(root, "vendor/github", "name: github\ndescription: A vendored GitHub helper for enterprise.")
    pilot = keyword_pilot(isolated_home)
    report = pilot.index([root])
    assert report.total == 4
    ids = sorted(s.id for s in pilot.skills())
    assert ids == ["github", "pdf", "slack", "vendor/github"]
    assert pilot.get("vendor/github").skill.description.startswith("A vendored")


def test_broken_file_keeps_previous_version(root: Path, isolated_home: Path) -> None:
    pilot = keyword_pilot(isolated_home)
    pilot.index([root])
    (root / "slack" / "SKILL.md").write_text("---\nname: slack\n---\nno description\n", encoding="utf-8")
    report = pilot.index([root])
    assert [Path(s.path).parent.name for s in report.skipped] == ["slack"]
    assert "description" in report.skipped[0].reason
    assert any("kept the previously indexed version" in w for w in report.warnings)
    assert pilot.get("slack").skill.description == "Send a message to a Slack channel."


def test_replace_drops_roots_not_named(root: Path, tmp_path: Path, isolated_home: Path) -> None:
    other = tmp_path / "other"
    write_skill(other, "docker", "name: docker\ndescription: Build and run Docker containers.")
    pilot = keyword_pilot(isolated_home)
    pilot.index([root])
    pilot.index([other])
    assert len(pilot.skills()) == 4
    pilot.index([other], replace=True)
    assert [s.id for s in pilot.skills()] == ["docker"]


def test_reindex_refreshes_every_known_root(root: Path, tmp_path: Path, isolated_home: Path) -> None:
    other = tmp_path / "other"
    write_skill(other, "docker", "name: docker\ndescription: Build and run Docker containers.")
    pilot = keyword_pilot(isolated_home)
    pilot.index([root, other])
    write_skill(other, "compose", "name: compose\ndescription: Run multi-container apps with compose.")
    report = pilot.reindex()
    assert (report.added, report.unchanged, report.total) == (1, 4, 5)


def test_interrupt_mid_write_leaves_previous_index(
    root: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pilot = keyword_pilot(isolated_home)
    pilot.index([root])
    for n in range(5):
        write_skill(root, f"extra{n}", f"name: extra{n}\ndescription: Extra skill number {n} for testing.")
    calls = {"n": 0}
    real = sqlite_store.skill_to_json

    def interrupted(skill):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(skill)

    monkeypatch.setattr(sqlite_store, "skill_to_json", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pilot.index([root])
    monkeypatch.undo()
    fresh = keyword_pilot(isolated_home)
    assert sorted(s.id for s in fresh.skills()) == ["github", "pdf", "slack"]
    assert fresh.route("send a message to the team slack channel").skill.id == "slack"


def test_process_killed_mid_write_leaves_previous_index(root: Path, isolated_home: Path) -> None:
    keyword_pilot(isolated_home).index([root])
    for n in range(5):
        write_skill(root, f"extra{n}", f"name: extra{n}\ndescription: Extra skill number {n} for testing.")
    script = textwrap.dedent(
        f"""
        import os
        from skillpilot import SkillPilot
        from skillpilot.index import sqlite as store
        real = store.skill_to_json
        calls = [0]
        def crash(skill):
            calls[0] += 1
            if calls[0] == 3:
                os._exit(9)  # like SIGKILL: no cleanup, no rollback by Python
            return real(skill)
        store.skill_to_json = crash
        SkillPilot(home={str(isolated_home)!r}, enable_semantic=False).index([{str(root)!r}])
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    fresh = keyword_pilot(isolated_home)
    assert sorted(s.id for s in fresh.skills()) == ["github", "pdf", "slack"]
    report = fresh.index([root])
    assert (report.added, report.total) == (5, 8)
