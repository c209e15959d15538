"""A re-index skips SKILL.md files whose size and mtime are as last indexed, and still sees every
add, edit (even one keeping the size), touch, delete and rename."""

from __future__ import annotations

import os
from pathlib import Path

from skillpilot import SkillPilot
from skillpilot.model import IndexReport

from .conftest import write_skill

HOUR_NS = 3600 * 10**9


def _age(root: Path) -> None:
    """Date every SKILL.md an hour back, so the index trusts its stat (fresh files are re-read)."""
    for path in root.rglob("SKILL.md"):
        mtime = path.stat().st_mtime_ns - HOUR_NS
        os.utime(path, ns=(mtime, mtime))


def _counts(report: IndexReport) -> tuple[int, int, int, int]:
    return report.added, report.updated, report.unchanged, report.removed


def _descriptions(pilot: SkillPilot) -> dict[str, str]:
    return {s.skill.key: s.skill.description for s in pilot.store.load()}


def test_a_reindex_sees_every_change_while_skipping_unchanged_files(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "chat", "name: chat\ndescription: Post a message to a team chat channel.")
    write_skill(root, "weather", "name: weather\ndescription: Current weather for any city.")
    write_skill(root, "notes", "name: notes\ndescription: Keep short notes in a notebook.")
    _age(root)
    pilot = SkillPilot(home=tmp_path / "home", enable_semantic=False, log_enabled=False)
    assert _counts(pilot.index([root])) == (3, 0, 0, 0)
    assert _counts(pilot.index([root])) == (0, 0, 3, 0)
    assert set(pilot.store.file_stats(pilot.store.roots()[0])) == {"chat", "weather", "notes"}

    # An edit that keeps the size and moves the mtime by the least step there is.
    chat = root / "chat" / "SKILL.md"
    before = chat.stat()
    chat.write_text(chat.read_text().replace("team", "crew"), encoding="utf-8")
    os.utime(chat, ns=(before.st_mtime_ns + 1, before.st_mtime_ns + 1))
    assert chat.stat().st_size == before.st_size
    assert _counts(pilot.index([root])) == (0, 1, 2, 0)
    assert "crew" in _descriptions(pilot)["chat"]

    (root / "weather" / "SKILL.md").touch()
    assert _counts(pilot.index([root])) == (0, 0, 3, 0)

    (root / "notes").rename(root / "notebook")
    write_skill(root, "todo", "name: todo\ndescription: Track a list of things to do.")
    assert _counts(pilot.index([root])) == (2, 0, 2, 1)
    assert set(_descriptions(pilot)) == {"chat", "weather", "notebook", "todo"}

    (root / "todo" / "SKILL.md").unlink()
    assert _counts(pilot.index([root])) == (0, 0, 3, 1)


def test_a_file_written_just_now_is_read_again_even_with_the_same_size(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    path = write_skill(root, "chat", "name: chat\ndescription: Post a message to a team chat channel.")
    pilot = SkillPilot(home=tmp_path / "home", enable_semantic=False, log_enabled=False)
    pilot.index([root])
    stat = path.stat()
    path.write_text(path.read_text().replace("team", "crew"), encoding="utf-8")
    # Within the clock's resolution an edit can keep the mtime: a fresh file's stat is never trusted.
    os.utime(path, ns=(stat.st_mtime_ns, stat.st_mtime_ns))
    assert _counts(pilot.index([root])) == (0, 1, 0, 0)
    assert "crew" in _descriptions(pilot)["chat"]


def test_a_broken_file_is_reported_on_every_reindex(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    path = write_skill(root, "chat", "name: chat\ndescription: Post a message to a team chat channel.")
    _age(root)
    pilot = SkillPilot(home=tmp_path / "home", enable_semantic=False, log_enabled=False)
    pilot.index([root])
    path.write_text("no frontmatter at all\n", encoding="utf-8")
    _age(root)
    for _ in range(2):
        report = pilot.index([root])
        assert [Path(s.path).parent.name for s in report.skipped] == ["chat"]
        assert report.removed == 0
