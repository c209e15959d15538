"""Find and read every skill under a set of roots.

Input: roots, each a folder (searched recursively for files named exactly ``SKILL.md`` or a
registered format's file name, such as OntoSkills' ``ontoskill.ttl``; never for JSON), a
``.json`` tool catalog, a single ``SKILL.md`` file (its folder is the root) or a single file of
a registered format (``.ttl``). Formats are read by their loader (:mod:`.loaders`).
Output: a :class:`LoadResult` with the skills, the files that were skipped and why, and the
warnings about fields that were ignored.

Guarantees:

- one unreadable file is one ``SkippedFile`` naming it and the reason; every other skill loads
  (a file past a bound of :mod:`skillpilot.limits` is one of those);
- any bytes in: a skill under a folder whose name is not valid UTF-8 is skipped with a reason
  (its path could not be stored or shown as it is); lone surrogates in what a file says become
  U+FFFD; every text that comes out encodes as UTF-8;
- a private skill comes out without its body: the instructions are never fingerprinted,
  embedded, keyword-indexed, linted or compiled, so nothing derived from them can reach an
  output (its name, description, triggers and requirements are its public fields);
- a root that does not exist is one ``SkippedFile`` and the other roots go on;
- directory symlinks are followed, each real folder at most once per root: a symlink back to a
  folder above it is reported as a loop and never walked, so nothing hangs or repeats;
- one real ``SKILL.md`` gives one skill, whichever paths lead to it: the copy reached without
  symlinks wins, then the earlier root, then the shorter key;
- skills come out in root order, then by key; two skills with the same ``name`` both stay;
- version-control, dependency and cache folders (``.git``, ``node_modules``, ``.venv`` ...) are
  not searched;
- with ``reuse`` (key -> ``(size, mtime_ns)`` of a SKILL.md as last read), a SKILL.md whose stat
  still matches is not read: its key is in ``reused`` and it gives no skill. ``file_stats`` has
  the stat of every SKILL.md read or reused, except files changed in the last seconds (an edit
  within the clock's resolution could keep both size and mtime, so those are read next time too);
- ``progress(done, total)`` is called once with ``done=0`` when the files are known, then after
  each file is read.
"""

from __future__ import annotations

import errno
import logging
import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from ..errors import SkillParseError
from ..model import Skill, SkippedFile
from ..text import clean_text
from .catalog import parse_tool_catalog
from .loaders import Loader, loader_for_file, loader_for_root
from .skillmd import read_skill_md, skill_key

log = logging.getLogger(__name__)
T = TypeVar("T")

SKILL_FILE = "SKILL.md"
_PRUNED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
# A file modified this recently may still change within its mtime's resolution: not trusted.
_SETTLED_NS = 2_000_000_000

FileStat = tuple[int, int]


@dataclass(frozen=True)
class LoadResult:
    """Everything one load found: skills, files it could not read, and field warnings; with
    ``reuse``, the keys of the SKILL.md files left unread and every SKILL.md's (size, mtime_ns)."""

    skills: tuple[Skill, ...]
    skipped: tuple[SkippedFile, ...]
    warnings: tuple[str, ...]
    reused: tuple[str, ...] = ()
    file_stats: dict[str, FileStat] = field(default_factory=dict)


@dataclass(frozen=True)
class _Found:
    """A file to read: ``root`` is the folder keys are relative to."""

    file: Path
    root: Path
    root_rank: int
    via_symlink: bool
    is_catalog: bool = False
    # A registered format's file (``skills.loaders``); None for a SKILL.md or a catalog.
    loader: Loader | None = None


def load_skills(
    roots: Sequence[Path],
    progress: Callable[[int, int], None] | None = None,
    reuse: Mapping[str, FileStat] | None = None,
) -> LoadResult:
    """Read every skill under ``roots``; see the module docstring for what is guaranteed."""
    settled_before = time.time_ns() - _SETTLED_NS
    reused: list[str] = []
    file_stats: dict[str, FileStat] = {}
    skipped: list[SkippedFile] = []
    found: list[_Found] = []
    links: list[tuple[int, Path, deque[Path], set[tuple[int, int]]]] = []
    for rank, given in enumerate(roots):
        root = Path(given).expanduser()
        if os.path.isdir(root):
            pending: deque[Path] = deque()
            seen: set[tuple[int, int]] = set()
            _walk(root, root, rank, False, seen, pending, found, skipped)
            links.append((rank, root, pending, seen))
        elif os.path.isfile(root) and root.suffix.lower() == ".json":
            found.append(_Found(root, root.parent, rank, False, is_catalog=True))
        elif os.path.isfile(root) and root.name == SKILL_FILE:
            found.append(_Found(root, root.parent, rank, False))
        elif os.path.isfile(root) and (loader := loader_for_root(root)) is not None:
            found.append(_Found(root, root.parent, rank, False, loader=loader))
        elif os.path.islink(root) and not os.path.exists(root):
            skipped.append(
                SkippedFile(str(root), "is a broken symlink or a symlink loop: the folder cannot be reached")
            )
        elif not os.path.exists(root):
            skipped.append(SkippedFile(str(root), "folder does not exist"))
        else:
            skipped.append(SkippedFile(str(root), "is not a folder, a SKILL.md, a .json tool catalog or a .ttl module"))
    # Symlinked folders are walked only after every root's own tree, so a skill that a root
    # holds directly keeps that root's key even when another root links to it.
    for rank, root, pending, seen in links:
        while pending:
            _follow(pending.popleft(), root, rank, seen, pending, found, skipped)

    files = _deduplicated(found)
    total = len(files)
    if progress:
        progress(0, total)
    skills: list[tuple[int, Skill]] = []
    warnings: list[str] = []
    for done, item in enumerate(files, start=1):
        try:
            if clean_text(str(item.file)) != str(item.file):
                raise SkillParseError(
                    item.file,
                    "the path is not valid UTF-8 (shown with \ufffd): rename the folder to index this skill",
                )
            if item.is_catalog:
                tools, bad = parse_tool_catalog(item.file)
                skills.extend((item.root_rank, tool) for tool in tools)
                skipped.extend(bad)
            elif item.loader is not None:
                modules, notes = item.loader.read(item.file, item.root)
                skills.extend((item.root_rank, module) for module in modules)
                warnings.extend(notes)
            else:
                key, stat = _settled_stat(item, settled_before)
                if reuse is not None and stat is not None and reuse.get(key) == stat:
                    reused.append(key)
                else:
                    skill, notes = read_skill_md(item.file, item.root)
                    skills.append((item.root_rank, skill))
                    warnings.extend(notes)
                # Only a file that read as a skill is trusted: a broken one is read (and reported) again.
                if stat is not None:
                    file_stats[key] = stat
        except SkillParseError as exc:
            reason = f"line {exc.line}: {exc.reason}" if exc.line is not None else exc.reason
            skipped.append(SkippedFile(str(item.file), reason))
        except MemoryError:
            # The field bounds keep every file far below this; should one still get here, it is
            # one skipped file, not the run (what it allocated is freed with the exception).
            skipped.append(SkippedFile(str(item.file), "reading it needs more memory than this process may use"))
        if progress:
            progress(done, total)
    skills.sort(key=lambda ranked: (ranked[0], ranked[1].key))
    warnings.extend(_key_clashes([skill for _, skill in skills]))
    log.debug("loaded %d skills, skipped %d files", len(skills), len(skipped))
    return LoadResult(
        tuple(_public_only(_cleaned(skill)) for _, skill in skills),
        tuple(_cleaned(s) for s in skipped),
        tuple(clean_text(w) for w in warnings),
        tuple(reused),
        file_stats,
    )


def _settled_stat(item: _Found, settled_before: int) -> tuple[str, FileStat | None]:
    """The key of a SKILL.md and its (size, mtime_ns), None if it cannot be trusted to tell a change."""
    key = skill_key(item.file, item.root)
    try:
        info = os.stat(item.file)
    except OSError:
        return key, None
    return key, (info.st_size, info.st_mtime_ns) if info.st_mtime_ns < settled_before else None


def _public_only(skill: Skill) -> Skill:
    return replace(skill, body="") if skill.private else skill


def _cleaned(value: T) -> T:
    """``value`` with every string in it made UTF-8-safe (``clean_text``); the parser bounds
    metadata trees, so the walk is finite."""
    cleaned: Any
    if isinstance(value, str):
        cleaned = clean_text(value)
    elif isinstance(value, tuple | list):
        cleaned = type(value)(_cleaned(v) for v in value)
    elif isinstance(value, dict):
        cleaned = {clean_text(str(k)): _cleaned(v) for k, v in value.items()}
    elif is_dataclass(value) and not isinstance(value, type):
        cleaned = replace(value, **{f.name: _cleaned(getattr(value, f.name)) for f in fields(value)})
    else:
        cleaned = value
    return cleaned  # type: ignore[no-any-return]


def _walk(
    start: Path,
    root: Path,
    rank: int,
    via_symlink: bool,
    seen: set[tuple[int, int]],
    pending: deque[Path],
    found: list[_Found],
    skipped: list[SkippedFile],
    budget: _Budget | None = None,
) -> None:
    """Collect SKILL.md files under ``start`` without following symlinks (queued in ``pending``);
    each folder entry looked at costs one of ``budget``."""
    try:
        info = os.stat(start)
    except OSError:
        return
    seen.add((info.st_dev, info.st_ino))
    stack = [start]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                # Sorted, so which of two links to one folder is followed does not vary.
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            skipped.append(SkippedFile(str(folder), f"cannot list this folder: {exc.strerror or exc}"))
            continue
        if budget is not None:
            budget.spend(len(entries))
        for entry in entries:
            loader = loader_for_file(entry.name)
            if entry.name == SKILL_FILE or loader is not None:
                # Even a broken or folder-shaped SKILL.md is read, so its problem is reported.
                linked = via_symlink or entry.is_symlink()
                found.append(_Found(Path(entry.path), root, rank, linked, loader=loader))
                continue
            if entry.name in _PRUNED:
                continue
            try:
                if entry.is_symlink():
                    if entry.is_dir():
                        pending.append(Path(entry.path))
                    continue
                if not entry.is_dir(follow_symlinks=False):
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    skipped.append(
                        SkippedFile(entry.path, "is a symlink loop (it points, through other links, back to itself)")
                    )
                continue
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                stack.append(Path(entry.path))


def _follow(
    link: Path,
    root: Path,
    rank: int,
    seen: set[tuple[int, int]],
    pending: deque[Path],
    found: list[_Found],
    skipped: list[SkippedFile],
    budget: _Budget | None = None,
) -> None:
    """Walk the folder a symlink points to, unless it contains the link or was already walked."""
    try:
        info = os.stat(link)
    except OSError:
        return
    target = os.path.realpath(link)
    if Path(os.path.realpath(link.parent)).is_relative_to(target):
        # Even when the target is above the root (never walked), following it would walk the
        # root again from higher up: a link to "/" must not mean "search the disk".
        message = f"is a symlink loop: it points back to {target}, a folder that contains it"
        skipped.append(SkippedFile(str(link), message))
    elif (info.st_dev, info.st_ino) in seen:
        log.debug("%s leads to %s, which was already searched", link, target)
    else:
        _walk(link, root, rank, True, seen, pending, found, skipped, budget)


class TooManyEntries(Exception):
    """A walk that would look at more folder entries than it was given (:func:`skill_files`)."""


class _Budget:
    def __init__(self, entries: int) -> None:
        self.left = entries

    def spend(self, entries: int) -> None:
        self.left -= entries
        if self.left < 0:
            raise TooManyEntries


def skill_files(root: Path, max_entries: int) -> tuple[str, ...]:
    """The files :func:`load_skills` would read under the folder ``root`` (SKILL.md and
    registered formats; symlinks followed as it follows them, each real folder once), found
    without reading any. Raises :class:`TooManyEntries` rather than look at more than
    ``max_entries`` folder entries: a bounded walk for callers that take a root from a request."""
    found: list[_Found] = []
    skipped: list[SkippedFile] = []
    pending: deque[Path] = deque()
    seen: set[tuple[int, int]] = set()
    budget = _Budget(max_entries)
    _walk(root, root, 0, False, seen, pending, found, skipped, budget)
    while pending:
        _follow(pending.popleft(), root, 0, seen, pending, found, skipped, budget)
    return tuple(sorted(str(item.file) for item in _deduplicated(found)))


def _deduplicated(found: list[_Found]) -> list[_Found]:
    """One entry per real file, preferring a symlink-free path, then the earlier root."""
    best: dict[str, _Found] = {}
    for item in found:
        real = os.path.realpath(item.file)
        current = best.get(real)
        if current is None or _preference(item) < _preference(current):
            best[real] = item
    return sorted(best.values(), key=_preference)


def _preference(item: _Found) -> tuple[bool, int, int, str]:
    relative = os.path.relpath(item.file, item.root)
    return (item.via_symlink, item.root_rank, relative.count(os.sep), relative)


def _key_clashes(skills: list[Skill]) -> list[str]:
    by_key: dict[str, list[Skill]] = {}
    for skill in skills:
        by_key.setdefault(skill.key, []).append(skill)
    return [
        f"key {key!r} is used by {len(group)} skills ({', '.join(s.path for s in group)}); all are kept"
        for key, group in by_key.items()
        if len(group) > 1
    ]
