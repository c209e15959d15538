"""Read a JSON tool catalog into one :class:`~skillpilot.model.Skill` per tool.

Input: the path of a ``.json`` file in one of these shapes:

- a list of ``{"name", "description", ...}`` objects (Anthropic tools carry ``input_schema``);
- an MCP ``tools/list`` result, bare (``{"tools": [...]}``) or as a JSON-RPC response
  (``{"result": {"tools": [...]}}``), each tool with ``name``, ``description``, ``inputSchema``;
- OpenAI function specs: ``[{"type": "function", "function": {name, description, parameters}}]``
  or a list of ``{name, description, parameters}``;
- a mapping of tool name to description text (MetaTool's ``plugin_des.json``).

Output: ``(skills, skipped)`` from :func:`parse_tool_catalog`. A file that cannot be read at
all (not UTF-8, not JSON, not one of the shapes) raises
:class:`~skillpilot.errors.SkillParseError` naming the file (and the line of a JSON error);
an entry without a name or description, or repeating an earlier tool's name, is one
``SkippedFile`` naming the file and the entry's index, and the good entries are still returned.

Each skill has ``key`` = ``name`` = the tool name, ``path`` = the catalog file (absolute),
``root`` = its folder, ``source_kind="tool-catalog"``, a ``body`` listing the parameters
(name, type, allowed values, description) so keyword and semantic retrieval can use them, the
parameter schema under ``metadata["input_schema"]`` and ``content_hash`` = SHA-256 of the
entry's canonical JSON, so changing one tool re-indexes only that tool. MCP ``annotations``
with an explicit ``readOnlyHint`` become ``route.side_effects``.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import reprlib
from pathlib import Path
from typing import Any

from ..errors import SkillParseError
from ..limits import MAX_CATALOG_BYTES, MAX_NAME_CHARS
from ..model import RouteHints, SideEffects, Skill, SkippedFile
from ..text import one_line_text

_MAX_PARAMS = 40
_MAX_PARAM_TEXT = 200
_short = reprlib.Repr()
_short.maxstring = 60
_SCHEMA_KEYS = ("inputSchema", "input_schema", "parameters")

_SHAPES = (
    "expected a list of {name, description} objects, an MCP tools/list result "
    '({"tools": [...]}), OpenAI function specs, or a {name: description} mapping'
)


def parse_tool_catalog(path: Path) -> tuple[list[Skill], list[SkippedFile]]:
    """The tools in the catalog at ``path`` and the entries that were skipped, with why."""
    path = Path(path)
    data = _load_json(path)
    entries = _entries(path, data)
    file = Path(os.path.abspath(path))
    skills: list[Skill] = []
    skipped: list[SkippedFile] = []
    first_at: dict[str, int] = {}
    for index, entry in enumerate(entries):
        if isinstance(entry, dict) and entry.get("type") == "function" and isinstance(entry.get("function"), dict):
            entry = entry["function"]
        problem = _problem(entry)
        if problem is None and entry["name"].strip() in first_at:
            problem = f"repeats the tool name {entry['name'].strip()!r} of entry {first_at[entry['name'].strip()]}"
        if problem is not None:
            skipped.append(SkippedFile(str(path), f"entry {index}{_label(entry)} {problem}; skipped"))
            continue
        name = one_line_text(entry["name"].strip())
        first_at[entry["name"].strip()] = index
        schema = next((entry[k] for k in _SCHEMA_KEYS if isinstance(entry.get(k), dict)), None)
        metadata: dict[str, Any] = {}
        if schema is not None:
            metadata["input_schema"] = schema
        if isinstance(entry.get("annotations"), dict):
            metadata["annotations"] = entry["annotations"]
        canonical = json.dumps(entry, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        skills.append(
            Skill(
                key=name,
                name=name,
                description=entry["description"].strip(),
                body=_describe_parameters(schema),
                path=str(file),
                root=str(file.parent),
                source_kind="tool-catalog",
                route=RouteHints(side_effects=_side_effects(entry.get("annotations"))),
                metadata=metadata,
                content_hash="sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest(),
            )
        )
    return skills, skipped


def _load_json(path: Path) -> Any:
    try:
        size = os.stat(path).st_size
        if size > MAX_CATALOG_BYTES:
            raise SkillParseError(
                path,
                f"is {size / 1024 / 1024:.1f} MiB; tool catalogs over {MAX_CATALOG_BYTES >> 20} MiB are not read",
            )
        with open(path, "rb") as handle:
            raw = handle.read(MAX_CATALOG_BYTES + 1)
    except IsADirectoryError:
        raise SkillParseError(path, "is a folder, not a JSON tool catalog") from None
    except OSError as exc:
        reason = (
            "cannot be read: permission denied (check the file's owner and mode)"
            if exc.errno in (errno.EACCES, errno.EPERM)
            else f"cannot be read: {exc.strerror or exc}"
        )
        raise SkillParseError(path, reason) from exc
    except ValueError:  # os.stat refuses paths with NUL bytes this way
        raise SkillParseError(path, "is not a valid path") from None
    if len(raw) > MAX_CATALOG_BYTES:
        raise SkillParseError(path, f"is over {MAX_CATALOG_BYTES >> 20} MiB; tool catalogs that large are not read")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkillParseError(path, f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    if not text.strip():
        raise SkillParseError(path, f"the file is empty: {_SHAPES}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SkillParseError(path, f"is not valid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    except RecursionError:
        raise SkillParseError(path, "is not a tool catalog: its JSON is nested too deeply") from None


def _entries(path: Path, data: Any) -> list[Any]:
    if isinstance(data, list):
        return data
    if not isinstance(data, dict):
        raise SkillParseError(path, f"is not a tool catalog: {_SHAPES}")
    if isinstance(data.get("error"), dict) and "result" not in data:
        message = data["error"].get("message", "no message")
        raise SkillParseError(path, f"is a JSON-RPC error response ({message!s}), not a tools/list result")
    container = data["result"] if isinstance(data.get("result"), dict) else data
    if "tools" in container:
        tools = container["tools"]
        if not isinstance(tools, list):
            raise SkillParseError(path, f'"tools" must be a list, not {type(tools).__name__}')
        return tools
    if data and all(isinstance(v, str) for v in data.values()):
        return [{"name": name, "description": text} for name, text in data.items()]
    raise SkillParseError(path, f"is not a tool catalog: {_SHAPES}")


def _problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return f"is a {type(entry).__name__}, not an object with a name and a description"
    if not isinstance(entry.get("name"), str) or not entry["name"].strip():
        return "has no name"
    if len(entry["name"]) > MAX_NAME_CHARS:
        return f"has a name of {len(entry['name']):,} characters (at most {MAX_NAME_CHARS} are read)"
    if not isinstance(entry.get("description"), str) or not entry["description"].strip():
        return "has no description"
    return None


def _label(entry: Any) -> str:
    if isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry["name"].strip():
        return f" ({_short.repr(entry['name'].strip())})"
    return ""


def _describe_parameters(schema: dict[str, Any] | None) -> str:
    """``Parameters:`` then one line per top-level property, as a reader would want them."""
    if schema is None or not isinstance(schema.get("properties"), dict):
        return ""
    required = schema.get("required")
    required_names = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    lines = ["Parameters:"]
    for name, spec in list(schema["properties"].items())[:_MAX_PARAMS]:
        spec = spec if isinstance(spec, dict) else {}
        facts = [str(spec["type"])] if isinstance(spec.get("type"), str) else []
        if name in required_names:
            facts.append("required")
        if isinstance(spec.get("enum"), list):
            facts.append("one of " + ", ".join(str(v) for v in spec["enum"][:10]))
        line = f"- {name}" + (f" ({'; '.join(facts)})" if facts else "")
        text = spec.get("description")
        if isinstance(text, str) and text.strip():
            line += ": " + " ".join(text.split())[:_MAX_PARAM_TEXT]
        lines.append(line)
    return "\n".join(lines) if len(lines) > 1 else ""


def _side_effects(annotations: Any) -> SideEffects | None:
    """MCP tool annotations (spec 2025-03-26) as a side-effect class, when they say enough."""
    if not isinstance(annotations, dict) or not isinstance(annotations.get("readOnlyHint"), bool):
        return None
    # The spec's default for openWorldHint is true: a tool reaches outside unless it says not.
    open_world = annotations.get("openWorldHint", True) is not False
    if annotations["readOnlyHint"]:
        return "network" if open_world else "read-only"
    return "write-remote" if open_world else "write-local"
