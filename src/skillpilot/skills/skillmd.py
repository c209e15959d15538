"""Read one ``SKILL.md`` file into a :class:`~skillpilot.model.Skill`.

Input: the path of a ``SKILL.md`` and the root folder it was found under.
Output: a ``Skill`` (:func:`parse_skill_md`), or a ``Skill`` plus the warnings about fields that
were present but unusable (:func:`read_skill_md`).

Guarantees:

- anything that cannot be read as a skill raises :class:`~skillpilot.errors.SkillParseError`
  naming the file (and the line when it is known) and what to do; never any other exception;
- files over ``MAX_SKILL_BYTES`` (1 MiB) are refused without being read whole;
- UTF-8 (with or without a byte-order mark) and UTF-16 (with one, or without: every other byte
  NUL) are read; anything else is refused naming the first byte that is not UTF-8;
- a field that is present but invalid (``priority: 42``, an unknown ``side_effects``) never
  costs the skill: the default is used and a warning names the file, line and field;
- frontmatter that strict YAML rejects only because a one-line value holds an unquoted ``: ``
  (``description: Use when: ...``, common in hand-written skills) is read leniently, key by key,
  with a warning; a block that still cannot be read fails with its line number;
- ``key`` is the skill folder relative to ``root`` (POSIX), ``path`` the folder as reached under
  ``root`` (symlinks not resolved), ``content_hash`` the SHA-256 of the file's bytes;
- ``metadata`` is the frontmatter's raw ``metadata`` mapping made JSON-safe (dates become ISO
  strings), so a store can save it as JSON.

Frontmatter fields read (everything else is ignored): ``name`` (default: the folder name),
``description`` (required), ``route: {triggers, priority, prefer_when, side_effects}`` (a
top-level ``triggers:`` list is read as ``route.triggers`` when ``route`` has none),
``requires: {env, bins, os}``, ``metadata`` (a mapping or a JSON string; OpenClaw-style
``requires``/``os``/``primaryEnv``, at its top or under ``openclaw``/``clawdbot``/``clawdis``/
``moltbot``, are added to the skill's requirements), ``trust_tier``, ``private`` /
``visibility: private``.
"""

from __future__ import annotations

import codecs
import datetime as dt
import errno
import hashlib
import json
import logging
import math
import os
import re
import reprlib
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from ..errors import SkillParseError
from ..limits import (
    MAX_LIST_CHARS,
    MAX_LIST_ITEMS,
    MAX_METADATA_CHARS,
    MAX_METADATA_DEPTH,
    MAX_METADATA_NODES,
    MAX_NAME_CHARS,
    MAX_SKILL_BYTES,
)
from ..model import SIDE_EFFECTS, TRUST_TIERS, Requirements, RouteHints, SideEffects, Skill, TrustTier
from ..text import one_line_text

log = logging.getLogger(__name__)

# libyaml's loader is ~10x faster than the pure-Python one; both refuse arbitrary objects.
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_KEY_LINE = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*))?$")
_ROUTE_FIELDS = ("triggers", "priority", "prefer_when", "side_effects")
_AGENT_BLOCKS = ("openclaw", "clawdbot", "clawdis", "moltbot")
# OpenClaw writes Node's process.platform names, which are also Python's sys.platform names.
_OS_ALIASES = {"macos": "darwin", "mac": "darwin", "osx": "darwin", "windows": "win32", "win": "win32"}

# What a `private:` may say for a public skill; anything else is private.
_PUBLIC_FLAGS = ("false", "no", "off", "0")

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60


def read_skill_md(path: Path, root: Path) -> tuple[Skill, tuple[str, ...]]:
    """The skill in ``path`` and the warnings about fields that were ignored or defaulted."""
    path = Path(path)
    folder = Path(os.path.abspath(path)).parent
    abs_root = Path(os.path.abspath(root))
    key = skill_key(path, root)
    raw = _read_bytes(path)
    text = _decode(path, raw)
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        raise SkillParseError(
            path,
            "no frontmatter: start the file with a `---` line, then `name:` and `description:` "
            "lines, then another `---` line",
            line=1,
        )
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise SkillParseError(path, "the frontmatter is never closed: add a `---` line after it", line=1)
    fields = _Fields(path, lines[1:end])
    data = fields.load()
    body = "\n".join(lines[end + 1 :]).strip()

    description = fields.description(data)
    name = fields.name(data.get("name"))
    metadata = fields.metadata(data.get("metadata"))
    skill = Skill(
        key=key,
        name=name or folder.name,
        description=description,
        body=body,
        path=str(folder),
        root=str(abs_root),
        source_kind="skill-md",
        route=fields.route(data.get("route"), data.get("triggers")),
        requires=fields.requirements(data.get("requires"), metadata),
        trust_tier=fields.trust_tier(data.get("trust_tier")),
        private=fields.private(data),
        metadata=metadata,
        content_hash="sha256:" + hashlib.sha256(raw).hexdigest(),
    )
    return skill, tuple(fields.warnings)


def parse_skill_md(path: Path, root: Path) -> Skill:
    """The skill in ``path``; warnings about ignored fields go to this module's logger."""
    skill, warnings = read_skill_md(path, root)
    for warning in warnings:
        log.warning("%s", warning)
    return skill


def skill_key(path: Path, root: Path) -> str:
    """The key of the skill whose SKILL.md is ``path``, found under ``root``, without reading it."""
    return _key_of(Path(path), Path(os.path.abspath(path)).parent, Path(os.path.abspath(root)))


def _key_of(path: Path, folder: Path, root: Path) -> str:
    if folder == root:
        return root.name or root.as_posix()
    try:
        return folder.relative_to(root).as_posix()
    except ValueError:
        raise SkillParseError(path, f"is not inside the root folder {root}") from None


def _read_bytes(path: Path) -> bytes:
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise SkillParseError(path, "is a folder, not a file: a skill's SKILL.md must be a text file")
        if not stat.S_ISREG(info.st_mode):
            # Opening a FIFO would block forever; a device could be endless.
            raise SkillParseError(path, "is not a regular file (a device, pipe or socket?)")
        if info.st_size > MAX_SKILL_BYTES:
            raise SkillParseError(path, _too_big(info.st_size))
        with open(path, "rb") as handle:
            raw = handle.read(MAX_SKILL_BYTES + 1)
    except OSError as exc:
        raise SkillParseError(path, _os_reason(path, exc)) from exc
    except ValueError:  # os.stat refuses paths with NUL bytes this way
        raise SkillParseError(path, "is not a valid path") from None
    if len(raw) > MAX_SKILL_BYTES:
        raise SkillParseError(path, _too_big(len(raw)))
    return raw


def _too_big(size: int) -> str:
    return (
        f"is {size / 1024 / 1024:.1f} MiB; SKILL.md files over {MAX_SKILL_BYTES // 1024 // 1024} MiB "
        "are not read (move long reference material into other files in the skill folder)"
    )


def _os_reason(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "is a symlink loop (it points, through other links, back to itself)"
    if exc.errno == errno.ENOENT:
        if os.path.islink(path):
            return f"is a broken symlink (to {os.readlink(path)}, which does not exist)"
        return "does not exist"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "cannot be read: permission denied (check the file's owner and mode)"
    return f"cannot be read: {exc.strerror or exc}"


def _utf16(raw: bytes) -> str | None:
    """The codec of UTF-16 text, with a byte-order mark or without (Windows editors write it):
    NUL bytes at odd offsets only, at least one code unit in four (Latin text in UTF-16 LE:
    the frontmatter's keys alone pass), or at even offsets only (UTF-16 BE)."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    sample = raw[:4096]
    if len(sample) < 4 or len(sample) % 2:
        return None
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    half = len(sample) // 2
    if odd >= half / 4 and even == 0:
        return "utf-16-le"
    if even >= half / 4 and odd == 0:
        return "utf-16-be"
    return None


def _decode(path: Path, raw: bytes) -> str:
    if not raw.strip():
        raise SkillParseError(path, "the file is empty: a SKILL.md needs a frontmatter with a description")
    try:
        codec = _utf16(raw)
        text = raw.decode(codec or "utf-8-sig")
    except UnicodeDecodeError as exc:
        if codec is not None:
            raise SkillParseError(path, f"is damaged {codec.upper()} text: save it as UTF-8") from None
        line = raw.count(b"\n", 0, exc.start) + 1
        raise SkillParseError(
            path,
            f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}): save it as UTF-8",
            line=line,
        ) from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise SkillParseError(path, "contains NUL characters: is this a binary file?", line=line)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _yaml_load(text: str) -> Any:
    """``yaml.load`` with every failure as ``YAMLError``.

    PyYAML also raises ValueError for impossible dates (``2024-13-45``), RecursionError for deep
    nesting and others for odd tags; a skill file must never crash the loader with them.
    """
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - CSafeLoader / SafeLoader only
    except yaml.YAMLError:
        raise
    except Exception as exc:  # noqa: BLE001 - see docstring
        raise yaml.YAMLError(f"{type(exc).__name__}: {exc}") from exc


def _problem(exc: yaml.YAMLError) -> tuple[str, int | None]:
    """A one-line description of a YAML error and its 0-based line, when PyYAML knows it.

    The context mark (where the unclosed ``[`` or the key began) points nearer the mistake than
    the problem mark (where the parser gave up), so it is preferred.
    """
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.context_mark or exc.problem_mark
        return (exc.problem or exc.context or "invalid YAML"), (mark.line if mark else None)
    return str(exc).splitlines()[0] if str(exc) else "invalid YAML", None


class _Fields:
    """The frontmatter of one file, read field by field with warnings for unusable values."""

    def __init__(self, path: Path, lines: list[str]) -> None:
        self.path = path
        self.lines = lines
        self.warnings: list[str] = []
        self.raw_metadata: dict[Any, Any] = {}

    # -- where things are ---------------------------------------------------------------------

    def line_of(self, dotted: str) -> int | None:
        """File line of ``route.priority``-style fields (frontmatter starts on file line 2)."""
        start = 0
        found = None
        for depth, part in enumerate(dotted.split(".")):
            indent = "" if depth == 0 else r"[ \t]+(?:-[ \t]+)?"
            pattern = re.compile(rf"^{indent}['\"]?{re.escape(part)}['\"]?[ \t]*:")
            found = next((i for i in range(start, len(self.lines)) if pattern.match(self.lines[i])), None)
            if found is None:
                return None
            start = found + 1
        return None if found is None else found + 2

    def where(self, dotted: str) -> str:
        line = self.line_of(dotted)
        return f"line {line} of {self.path}" if line else str(self.path)

    def warn(self, dotted: str, problem: str) -> None:
        self.warnings.append(f"{self.where(dotted)}: {dotted} {problem}")

    # -- the mapping ----------------------------------------------------------------------------

    def load(self) -> dict[str, Any]:
        text = "\n".join(self.lines)
        try:
            data = _yaml_load(text)
        except yaml.YAMLError as exc:
            problem, line = _problem(exc)
            return self._lenient(problem, None if line is None else line + 2)
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise SkillParseError(
                self.path,
                f"the frontmatter must be `key: value` lines, not a {_kind(data)}",
                line=2,
            )
        return {str(k): v for k, v in data.items()}

    def _lenient(self, problem: str, line: int | None) -> dict[str, Any]:
        """Read each top-level key on its own, taking a failing one-line value as plain text."""
        chunks: list[tuple[int, list[str]]] = []
        for i, text in enumerate(self.lines):
            continues = text[:1] in (" ", "\t") or text.startswith("-") or not text.strip()
            if continues or text.startswith("#"):
                if chunks:
                    chunks[-1][1].append(text)
                elif text.strip() and not text.startswith("#"):
                    raise SkillParseError(self.path, f"the frontmatter is not valid YAML: {problem}", line=i + 2)
                continue
            chunks.append((i, [text]))
        data: dict[str, Any] = {}
        plain_text = False
        for start, block in chunks:
            match = _KEY_LINE.match(block[0])
            if match is None:
                raise SkillParseError(
                    self.path,
                    f"the frontmatter is not valid YAML ({problem}) and this line is not `key: value`",
                    line=start + 2,
                )
            try:
                value = _yaml_load("\n".join(block))
            except yaml.YAMLError as exc:
                inline = (match.group(2) or "").strip()
                more = [t.strip() for t in block[1:] if t.strip() and not t.lstrip().startswith("#")]
                # Only a value begun on the key line can be plain text (continued on indented
                # lines, as YAML folds them); a failing nested block is a real error.
                plain = bool(inline) and (not more or inline[0] not in "\"'[{|>&*!")
                flush_left = [t for t in block[1:] if t.strip() and t[:1] not in (" ", "\t", "#")]
                chunk_problem, chunk_line = _problem(exc)
                if not plain or flush_left:
                    raise SkillParseError(
                        self.path,
                        f"the frontmatter is not valid YAML: {chunk_problem}",
                        line=start + 2 + (chunk_line or 0),
                    ) from None
                data[match.group(1)] = " ".join([_unquote(inline), *more]) if more else _unquote(inline)
                plain_text = True
                self.warnings.append(
                    f"line {start + 2} of {self.path}: {match.group(1)} is not valid YAML "
                    f"({chunk_problem}); read it as plain text: quote the value if it contains ': '"
                )
                continue
            if isinstance(value, dict):
                data.update({str(k): v for k, v in value.items()})
            else:
                raise SkillParseError(self.path, f"the frontmatter is not valid YAML: {problem}", line=line)
        if not plain_text:
            where = f"line {line} of {self.path}" if line else str(self.path)
            self.warnings.append(
                f"{where}: the frontmatter is not valid YAML as a whole ({problem}); read it key by key"
            )
        return data

    # -- fields ---------------------------------------------------------------------------------

    def text(self, field: str, value: Any) -> str:
        """A scalar as stripped text; a list or mapping warns and gives ``""``."""
        if value is None:
            return ""
        if isinstance(value, (str, int, float, bool, dt.date)):
            return str(value).strip()
        self.warn(field, f"must be text, not a {_kind(value)}; ignored")
        return ""

    def name(self, value: Any) -> str:
        """The name as one line: a name is an id the agent types and SkillPilot quotes to the
        model, so line breaks and control characters in it become spaces (with a warning)."""
        name = self.text("name", value)
        if len(name) > MAX_NAME_CHARS:
            raise SkillParseError(
                self.path,
                f"name is {len(name):,} characters; names over {MAX_NAME_CHARS} are not read "
                "(a name is a short id such as `git-commit`: put the rest in the description)",
                line=self.line_of("name"),
            )
        one_line = one_line_text(name)
        if one_line != name:
            self.warn("name", f"holds line breaks or control characters; read as {one_line!r}")
        return one_line

    def description(self, data: dict[str, Any]) -> str:
        value = data.get("description")
        if isinstance(value, (list, dict)):
            raise SkillParseError(
                self.path, f"description must be text, not a {_kind(value)}", line=self.line_of("description")
            )
        text = "" if value is None else str(value).strip()
        indented = self._indented_key("description")
        if not text and indented is not None:
            line, how = indented
            raise SkillParseError(
                self.path,
                f"`description:` is indented with {how}, so YAML reads it as part of the line "
                "before: start the line with `description:`",
                line=line,
            )
        if not text:
            raise SkillParseError(
                self.path,
                "description is missing: add `description: ...` to the frontmatter",
                line=self.line_of("description"),
            )
        return text

    def _indented_key(self, key: str) -> tuple[int, str] | None:
        """File line and indentation ("a tab", "spaces") of an indented ``key:`` line, if any."""
        pattern = re.compile(rf"^([ \t]+){re.escape(key)}[ \t]*:")
        for i, line in enumerate(self.lines):
            match = pattern.match(line)
            # Under a `metadata:`-style block opener the indentation is meant.
            if match and not (i and self.lines[i - 1].rstrip().endswith(":")):
                return i + 2, "a tab" if "\t" in match.group(1) else "spaces"
        return None

    def str_list(self, field: str, value: Any) -> tuple[str, ...]:
        """A list of scalars (or one scalar) as a tuple of non-empty strings."""
        if value is None:
            return ()
        items: list[Any] | tuple[Any, ...]
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            items = [value]
        elif isinstance(value, (list, tuple)):
            items = value
        else:
            self.warn(field, f"must be a list of text, not a {_kind(value)}; ignored")
            return ()
        if len(items) > MAX_LIST_ITEMS:
            raise self._too_long(field, f"has {len(items):,} items; lists over {MAX_LIST_ITEMS} items are not read")
        out: list[str] = []
        chars = 0
        for item in items:
            if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                # Counted before anything is copied: aliases make one long value appear many times.
                chars += len(item) if isinstance(item, str) else 0
                if chars > MAX_LIST_CHARS:
                    raise self._too_long(field, f"holds over {MAX_LIST_CHARS:,} characters; longer lists are not read")
                if text := str(item).strip():
                    out.append(text)
            elif item is not None:
                self.warn(field, f"has an item that is not text ({_short.repr(item)}); it was dropped")
        return tuple(out)

    def _too_long(self, field: str, problem: str) -> SkillParseError:
        return SkillParseError(
            self.path,
            f"{field} {problem} (YAML aliases repeating one value?): shorten it",
            line=self.line_of(field),
        )

    def route(self, value: Any, top_triggers: Any) -> RouteHints:
        route: dict[Any, Any] = {}
        if isinstance(value, dict):
            route = value
        elif value is not None:
            self.warn("route", f"must be a mapping (triggers, priority, ...), not a {_kind(value)}; ignored")
        for unknown in sorted(str(k) for k in route if k not in _ROUTE_FIELDS):
            self.warn(f"route.{unknown}", f"is not a route field ({', '.join(_ROUTE_FIELDS)}); ignored")
        triggers = self.str_list("route.triggers", route.get("triggers"))
        if not triggers and "triggers" not in route:
            triggers = self.str_list("triggers", top_triggers)
        return RouteHints(
            triggers=triggers,
            priority=self.priority(route.get("priority")),
            prefer_when=self.str_list("route.prefer_when", route.get("prefer_when")),
            side_effects=self.side_effects(route.get("side_effects")),
        )

    def priority(self, value: Any) -> int:
        default = RouteHints().priority
        if value is None:
            return default
        number: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and value.strip().isdecimal():  # isdigit() admits "²"
            number = int(value.strip())
        if number is None or not 1 <= number <= 10:
            self.warn(
                "route.priority",
                f"is {_short.repr(value)}, expected a whole number from 1 to 10; using {default}",
            )
            return default
        return number

    def side_effects(self, value: Any) -> SideEffects | None:
        if value is None:
            return None
        wanted = str(value).strip().lower().replace("_", "-") if isinstance(value, str) else None
        for allowed in SIDE_EFFECTS:
            if wanted == allowed:
                return allowed
        self.warn(
            "route.side_effects",
            f"is {_short.repr(value)}, expected one of {', '.join(SIDE_EFFECTS)}; inferring it from the text",
        )
        return None

    def trust_tier(self, value: Any) -> TrustTier:
        if value is None:
            return "local"
        wanted = str(value).strip().lower() if isinstance(value, str) else None
        for allowed in TRUST_TIERS:
            if wanted == allowed:
                return allowed
        self.warn("trust_tier", f"is {_short.repr(value)}, expected one of {', '.join(TRUST_TIERS)}; using local")
        return "local"

    def private(self, data: dict[str, Any]) -> bool:
        """Whether any of ``private``, ``visibility`` and their ``metadata`` forms makes the skill
        private. Fails closed: a ``private`` other than false/no/off/0, or a ``visibility`` other
        than public, is private (with a warning unless it is plainly true or private)."""
        # The mapping as written, not the bounded copy: a metadata block too big to keep still
        # makes its skill private.
        raw_metadata = self.raw_metadata
        found = [
            self._private_flag(field, block[key])
            for field, block, key in (
                ("private", data, "private"),
                ("visibility", data, "visibility"),
                ("metadata.private", raw_metadata, "private"),
                ("metadata.visibility", raw_metadata, "visibility"),
            )
            if key in block
        ]
        return any(found)

    def _private_flag(self, field: str, value: Any) -> bool:
        if field.endswith("visibility"):
            wanted = value.strip().lower() if isinstance(value, str) else None
            if wanted not in ("public", "private"):
                self.warn(field, f"is {_short.repr(value)}, expected public or private; the skill is private")
            return wanted != "public"
        if isinstance(value, bool):
            return value
        if isinstance(value, (str, int)) and str(value).strip().lower() in _PUBLIC_FLAGS:
            return False
        self.warn(field, f"is {_short.repr(value)}, expected true or false; the skill is private")
        return True

    def requirements(self, value: Any, metadata: dict[str, Any]) -> Requirements:
        env: list[str] = []
        bins: list[str] = []
        systems: list[str] = []

        def take(block: Any, prefix: str) -> None:
            if block is None:
                return
            if not isinstance(block, dict):
                self.warn(prefix, f"must be a mapping (env, bins, os), not a {_kind(block)}; ignored")
                return
            env.extend(self.str_list(f"{prefix}.env", block.get("env")))
            bins.extend(self.str_list(f"{prefix}.bins", block.get("bins")))
            systems.extend(self.str_list(f"{prefix}.os", block.get("os")))

        take(value, "requires")
        blocks = [("metadata", metadata)] + [
            (f"metadata.{name}", metadata[name]) for name in _AGENT_BLOCKS if isinstance(metadata.get(name), dict)
        ]
        for prefix, block in blocks:
            take(block.get("requires"), f"{prefix}.requires")
            systems.extend(self.str_list(f"{prefix}.os", block.get("os")))
            env.extend(self.str_list(f"{prefix}.primaryEnv", block.get("primaryEnv")))
        return Requirements(
            env=_unique(env),
            bins=_unique(bins),
            os=_unique(_OS_ALIASES.get(s.lower(), s.lower()) for s in systems),
        )

    def metadata(self, value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                self.warn("metadata", "is text but not a JSON object; ignored")
                return {}
        if not isinstance(value, dict):
            self.warn("metadata", f"must be a mapping, not a {_kind(value)}; ignored")
            return {}
        self.raw_metadata = value
        try:
            safe = _json_safe(value, [MAX_METADATA_NODES, MAX_METADATA_CHARS], 0)
        except _TooBig:
            self.warn("metadata", "is too large or too deeply nested (YAML aliases?); ignored")
            return {}
        assert isinstance(safe, dict)
        return safe


class _TooBig(Exception):
    pass


def _json_safe(value: Any, budget: list[int], depth: int) -> Any:
    """A copy of ``value`` that ``json.dumps`` accepts; raises ``_TooBig`` past the bounds
    (``budget``: values and characters left)."""
    budget[0] -= 1
    if isinstance(value, str):
        budget[1] -= len(value)
    if budget[0] < 0 or budget[1] < 0 or depth > MAX_METADATA_DEPTH:
        raise _TooBig
    if isinstance(value, dict):
        budget[1] -= sum(len(k) for k in value if isinstance(k, str))
        return {str(k): _json_safe(v, budget, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_json_safe(v, budget, depth + 1) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no NaN / Infinity
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, (list, tuple, set)):
        return "list"
    return type(value).__name__
