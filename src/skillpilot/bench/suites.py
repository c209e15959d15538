"""What a benchmark run reads: a skill catalog and labelled queries, grouped as suites.

Input: a skills folder (``SKILL.md`` files) or a JSON tool catalog, and JSON Lines query files
``{"id", "query", "expected": [keys], "kind", "lang"}``. Output: a :class:`Suite` holding a
:class:`Catalog` (what to index, plus each entry's key, name and description for the baselines)
and its :class:`Query` tuple.

Guarantees:
- a key is the skill folder's path relative to the catalog root (a tool's name for a catalog);
- every expected key of every query is in the catalog, or loading fails with the query's line;
- the shared suites (``real``, ``conflicts``, ``metatool``) are read from the shared data folder
  by path, never copied; the MetaTool sample is drawn with a seeded RNG, so a seed and a limit
  always give the same queries.
"""

from __future__ import annotations

import csv
import json
import os
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import BenchError as BenchError  # re-exported: it was defined here

KINDS = ("direct", "paraphrase", "conflict", "multilingual", "out_of_scope")
SUITES = ("real", "conflicts", "metatool")
DEFAULT_METATOOL_LIMIT = 2000
# MetaTool's authors removed every query that names its tool, so the whole set is paraphrases.
METATOOL_KIND = "paraphrase"

_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
_FIELD_LINE = re.compile(r"^(name|description)[ \t]*:[ \t]*(.*?)[ \t]*$", re.M)


@dataclass(frozen=True)
class Query:
    """One labelled user message; ``expected == ()`` means the right decision is pass-through."""

    id: str
    query: str
    expected: tuple[str, ...]
    kind: str
    lang: str

    @property
    def in_scope(self) -> bool:
        return bool(self.expected)


@dataclass(frozen=True)
class CatalogEntry:
    """What a baseline sees of one skill: its key, name and description."""

    key: str
    name: str
    description: str


@dataclass(frozen=True)
class Catalog:
    """A skills folder or JSON tool catalog (``root``, what SkillPilot indexes) and its entries."""

    root: Path
    entries: tuple[CatalogEntry, ...]

    def keys(self) -> frozenset[str]:
        return frozenset(e.key for e in self.entries)


@dataclass(frozen=True)
class Suite:
    """A catalog and the queries asked against it."""

    name: str
    catalog: Catalog
    queries: tuple[Query, ...]
    query_files: tuple[str, ...]


def default_data_dir() -> Path:
    """The shared benchmark data: ``$SKILLPILOT_BENCH_DATA``, else ``../shared/bench`` from here."""
    env = os.environ.get("SKILLPILOT_BENCH_DATA")
    if env:
        return Path(env).expanduser()
    # The project's checkout sits beside shared/ (the data is used by path, never copied).
    return (Path.cwd() / ".." / "shared" / "bench").resolve()


def _str_field(path: Path, line: int, row: dict[str, Any], name: str) -> str:
    value = row.get(name)
    if not isinstance(value, str) or not value.strip():
        raise BenchError(f"line {line} of {path}: {name!r} must be a non-empty string")
    return value


def load_queries(path: Path) -> list[Query]:
    """Read one JSON Lines query file; blank lines are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BenchError(f"{path}: cannot read the query file ({exc.strerror})") from exc
    queries: list[Query] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise BenchError(f"line {number} of {path}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise BenchError(f"line {number} of {path}: each line must be a JSON object")
        expected = row.get("expected")
        if not isinstance(expected, list) or not all(isinstance(k, str) for k in expected):
            raise BenchError(f"line {number} of {path}: 'expected' must be a list of skill keys")
        kind = _str_field(path, number, row, "kind")
        if kind not in KINDS:
            raise BenchError(f"line {number} of {path}: kind {kind!r} is not one of {', '.join(KINDS)}")
        if (kind == "out_of_scope") != (not expected):
            raise BenchError(f"line {number} of {path}: out_of_scope queries, and only they, have expected []")
        queries.append(
            Query(
                id=_str_field(path, number, row, "id"),
                query=_str_field(path, number, row, "query"),
                expected=tuple(expected),
                kind=kind,
                lang=_str_field(path, number, row, "lang"),
            )
        )
    return queries


def _frontmatter_fields(path: Path) -> tuple[str, str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    match = _FRONTMATTER.match(text)
    if match is None:
        raise BenchError(f"{path}: no '---' frontmatter with a name and a description")
    block = match.group(1)
    try:
        data = yaml.safe_load(block)
    except yaml.YAMLError:
        # Published skills carry unquoted "a: b" inside descriptions, which YAML rejects; an
        # agent reads such a line as plain text, so the baselines do the same.
        data = {key: value.strip("'\"") for key, value in _FIELD_LINE.findall(block)}
    if not isinstance(data, dict):
        raise BenchError(f"{path}: the frontmatter is not a mapping")
    name, description = data.get("name"), data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise BenchError(f"{path}: the frontmatter has no description")
    return (str(name) if name else path.parent.name), " ".join(description.split())


def load_catalog(root: Path) -> Catalog:
    """Read a skills folder (every ``SKILL.md`` below it) or a JSON catalog ``[{name, description}]``."""
    root = root.expanduser().resolve()
    if root.is_file():
        try:
            rows = json.loads(root.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise BenchError(f"{root}: not a readable JSON tool catalog ({exc})") from exc
        if not isinstance(rows, list) or not all(
            isinstance(r, dict) and isinstance(r.get("name"), str) and isinstance(r.get("description"), str)
            for r in rows
        ):
            raise BenchError(f"{root}: a tool catalog is a JSON list of {{name, description}} objects")
        entries = [CatalogEntry(r["name"], r["name"], " ".join(r["description"].split())) for r in rows]
    elif root.is_dir():
        entries = []
        for skill_md in sorted(root.rglob("SKILL.md")):
            name, description = _frontmatter_fields(skill_md)
            entries.append(CatalogEntry(skill_md.parent.relative_to(root).as_posix(), name, description))
    else:
        raise BenchError(f"{root}: no such skills folder or tool catalog")
    if not entries:
        raise BenchError(f"{root}: no skills found")
    return Catalog(root=root, entries=tuple(entries))


def make_suite(name: str, catalog: Catalog, query_files: Sequence[Path]) -> Suite:
    """Load the query files and check every expected key against the catalog."""
    queries: list[Query] = []
    for path in query_files:
        queries.extend(load_queries(path))
    return _checked(name, catalog, queries, tuple(str(p) for p in query_files))


def _checked(name: str, catalog: Catalog, queries: Iterable[Query], files: tuple[str, ...]) -> Suite:
    keys = catalog.keys()
    seen: set[str] = set()
    kept = tuple(queries)
    for q in kept:
        if q.id in seen:
            raise BenchError(f"suite {name!r}: query id {q.id!r} appears twice")
        seen.add(q.id)
        missing = [k for k in q.expected if k not in keys]
        if missing:
            raise BenchError(
                f"suite {name!r}: query {q.id!r} expects {', '.join(missing)}, which is not in "
                f"{catalog.root}; keys are folder paths relative to the catalog root"
            )
    if not kept:
        raise BenchError(f"suite {name!r}: no queries")
    return Suite(name=name, catalog=catalog, queries=kept, query_files=files)


def _require(path: Path) -> Path:
    if not path.exists():
        raise BenchError(f"{path} is missing: point --data (or SKILLPILOT_BENCH_DATA) at the shared bench folder")
    return path


def shared_suite(name: str, data_dir: Path, workdir: Path, limit: int, seed: int) -> Suite:
    """One of the shared-data suites; ``workdir`` receives the MetaTool catalog JSON.

    ``limit`` and ``seed`` only apply to ``metatool`` (``limit`` 0 keeps all 20,614 queries).
    """
    if name == "real":
        return make_suite(
            name,
            load_catalog(_require(data_dir / "skills")),
            [_require(data_dir / "queries" / "real-dev.jsonl")],
        )
    if name == "conflicts":
        return make_suite(
            name,
            load_catalog(_require(data_dir / "conflicts")),
            [_require(data_dir / "conflicts" / "queries.jsonl")],
        )
    if name == "metatool":
        return _metatool(data_dir / "metatool" / "dataset", workdir, limit, seed)
    raise BenchError(f"unknown suite {name!r}; choose one of {', '.join(SUITES)} or all")


def _metatool(dataset: Path, workdir: Path, limit: int, seed: int) -> Suite:
    tools_path = _require(dataset / "plugin_des.json")
    csv_path = _require(dataset / "data" / "all_clean_data.csv")
    tools: dict[str, str] = json.loads(tools_path.read_text(encoding="utf-8"))
    catalog_path = workdir / "metatool-tools.json"
    catalog_path.write_text(
        json.dumps([{"name": n, "description": d} for n, d in tools.items()], ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    with csv_path.open(encoding="utf-8", newline="") as handle:
        rows = [(row["Query"], row["Tool"]) for row in csv.DictReader(handle)]
    picked: Sequence[int] = range(len(rows))
    if 0 < limit < len(rows):
        picked = sorted(random.Random(seed).sample(range(len(rows)), limit))
    queries = [
        Query(id=f"mt{i:05d}", query=rows[i][0], expected=(rows[i][1],), kind=METATOOL_KIND, lang="en") for i in picked
    ]
    return _checked("metatool", load_catalog(catalog_path), queries, (str(csv_path),))
