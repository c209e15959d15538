"""Reference pages of the documentation site, generated from the code they describe.

    cli_page()     every ``skillpilot`` command (the Typer/Click tree ``--help`` prints): usage,
                   help, arguments and options with their defaults and environment variables
    config_page()  every ``config.yaml`` key (``config.OPTIONS``), its ``SKILLPILOT_*`` variable,
                   type and default (``config.Settings``)
    http_page()    the service's routes, from the OpenAPI document its FastAPI app serves
    mcp_page()     the MCP server's tools (their input schemas) and resources

Each returns Markdown. ``PAGES`` maps a page's path in the site to its builder; the MkDocs hook
(``docs/hooks/reference.py``) adds them when the site is built, so a new command, setting, route
or tool is documented the day it exists and no page is copied by hand. The HTTP and MCP pages
need the ``server`` and ``mcp`` extras (the ``docs`` extra brings both); they build their apps
around a SkillPilot on an empty temporary home, which loads no model.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import typer.main

from ..config import OPTIONS, Settings, env_name

# The options every command shares, documented once at the top of the CLI page.
SHARED_OPTIONS = ("--home", "--json", "--store")
# A token long enough for the service's check: with one, the app declares its sign-in routes too.
_REFERENCE_TOKEN = "reference-page-token-0123456789"


def cell(text: str) -> str:
    """``text`` as one Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(cell(c) for c in row) + " |" for row in rows)
    return lines


def _code(text: str) -> str:
    """``text`` as inline code, fenced with enough backticks for any it holds."""
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}" if fence == "`" else f"{fence} {text} {fence}"


# -- CLI ----------------------------------------------------------------------------------------
def commands(command: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command of the ``skillpilot`` tree by its path (``("feedback", "confirm")``), groups
    before their commands, in the order ``--help`` lists them."""
    command = command if command is not None else typer.main.get_command(_cli_app())
    yield path, command
    children = getattr(command, "commands", None) or {}
    for name in list(children):
        child = children[name]
        if not getattr(child, "hidden", False):
            yield from commands(child, (*path, name))


def _cli_app() -> typer.Typer:
    from . import app

    return app


def _usage(path: tuple[str, ...], command: Any) -> str:
    context = command.make_context(" ".join(("skillpilot", *path)), [], resilient_parsing=True)
    return str(command.get_usage(context)).removeprefix("Usage: ")


def _spellings(param: Any) -> str:
    names = [*param.opts, *param.secondary_opts]
    return ", ".join(_code(n) for n in names) if param.param_type_name == "option" else _code(param.name.upper())


def _type_of(param: Any) -> str:
    if getattr(param, "is_flag", False):
        return "flag"
    annotation = param.type_descriptor.annotation
    kind = getattr(annotation, "__name__", None) or str(annotation)
    text = {"str": "text", "int": "integer", "float": "number", "Path": "path"}.get(kind, kind)
    if str(annotation).startswith("list["):
        inner = str(annotation).removeprefix("list[").removesuffix("]").rsplit(".", 1)[-1]
        text = {"str": "text", "Path": "path"}.get(inner, inner) + ", repeatable"
    return text


def _default_of(param: Any) -> str:
    default = param.default
    if default is None or param.required:
        return ""
    if getattr(param, "is_flag", False):
        if not param.secondary_opts:
            return "off" if default is False else "on"
        return str(param.opts[0] if default else param.secondary_opts[0])
    return " ".join(map(str, default)) if isinstance(default, list | tuple) else str(default)


def _param_rows(params: Sequence[Any]) -> list[list[str]]:
    rows = []
    for param in params:
        if getattr(param, "hidden", False):
            continue
        about = param.help or ""
        if param.required:
            about = f"Required. {about}"
        if param.envvar:
            about += f" Environment: {_code(str(param.envvar))}."
        default = _default_of(param)
        rows.append([_spellings(param), _type_of(param), _code(default) if default else "", about])
    return rows


def _summary(command: Any) -> str:
    return (command.help or "").strip().split("\n\n")[0]


def cli_page() -> str:
    """The CLI reference: a table of every command, then each command's usage and parameters."""
    tree = list(commands())
    root = tree[0][1]
    runnable = [(p, c) for p, c in tree if p and not getattr(c, "commands", None)]
    without = {
        option: [" ".join(p) for p, c in runnable if not any(option in (*x.opts, *x.secondary_opts) for x in c.params)]
        for option in ("--json", "--home")
    }
    lines = [
        "# CLI reference",
        "",
        "Generated from the `skillpilot` command tree when the site is built (the same text "
        "`skillpilot COMMAND --help` prints), so every command and option is here.",
        "",
        "Output: `--json` prints JSON on stdout only (logs, warnings and progress bars go to stderr); "
        "`--human` prints text (the default is `platforms.cli.outputFormat` in config.yaml). "
        "`--home` names the index and config folder (default `$SKILLPILOT_HOME`, else `~/.skillpilot`). "
        "Exit codes: 0 done (a pass-through is a result too), 1 an error (the message names the "
        "file or option and what to do), 2 a usage error, 3 a pass-through with `--fail-on-passthrough`, "
        "4 a lint warning or error with `lint --strict`.",
        "",
        f"Commands without `--json`: {', '.join(_code(c) for c in without['--json']) or 'none'}. "
        f"Commands without `--home`: {', '.join(_code(c) for c in without['--home']) or 'none'}.",
        "",
        f"`skillpilot {_usage((), root).split(' ', 1)[1]}`",
        "",
        *_table(["option", "type", "default", "what it does"], _param_rows(root.params)),
        "",
        "## Commands",
        "",
        *_table(
            ["command", "what it does"],
            [[f"[{_code(' '.join(('skillpilot', *p)))}](#{_anchor(p)})", _summary(c)] for p, c in tree if p],
        ),
    ]
    for path, command in tree[1:]:
        lines += ["", f"## skillpilot {' '.join(path)}", "", textwrap.dedent(command.help or "").strip(), ""]
        lines += ["```text", _usage(path, command), "```"]
        children = getattr(command, "commands", None)
        if children:
            lines += ["", "Commands: " + ", ".join(f"[{_code(n)}](#{_anchor((*path, n))})" for n in children) + "."]
        rows = _param_rows(command.params)
        if rows:
            lines += ["", *_table(["parameter", "type", "default", "what it does"], rows)]
    return "\n".join(lines) + "\n"


def _anchor(path: tuple[str, ...]) -> str:
    """The heading id MkDocs' toc extension gives ``## skillpilot <path>``."""
    return "-".join(("skillpilot", *path))


# -- config.yaml --------------------------------------------------------------------------------
def config_page() -> str:
    """Every config.yaml key with its environment variable, type and default."""
    defaults = Settings(home=Path("~/.skillpilot"))
    kinds = {f.name: str(f.type) for f in fields(Settings)}
    readable = {
        "bool": "true / false",
        "float": "number",
        "int": "integer",
        "str": "text",
        "tuple[str, ...]": "list of text",
        "dict[str, str]": "mapping",
    }
    lines = [
        "# config.yaml reference",
        "",
        "Generated from the settings schema (`skillpilot.config.OPTIONS` and `Settings`) when the site is built.",
        "",
        "Settings are resolved once, highest first: command-line options, then `SKILLPILOT_*` environment "
        "variables, then `$SKILLPILOT_HOME/config.yaml`, then the defaults below. "
        "`skillpilot config init` writes a commented file holding every key at its default; "
        "`skillpilot config show` prints the resolved values and where each came from. "
        "A misspelt key, a value of the wrong type or outside its allowed values is an error naming the key "
        "as you wrote it and what is allowed. In environment variables a list is separated by the path "
        "separator (`:`) and a mapping written `a=b,c=d`.",
    ]
    sections: dict[str, list[list[str]]] = {}
    for option in OPTIONS:
        section = option.key.split(".")[0] if "." in option.key else "top level"
        value = getattr(defaults, option.field)
        shown = json.dumps(list(value) if isinstance(value, tuple) else value, ensure_ascii=False)
        sections.setdefault(section, []).append(
            [
                _code(option.key),
                _code(env_name(option.field)),
                readable.get(kinds[option.field], kinds[option.field]),
                _code(shown),
                option.help,
            ]
        )
    for section, rows in sections.items():
        lines += ["", f"## {section}", "", *_table(["key", "environment", "type", "default", "meaning"], rows)]
    return "\n".join(lines) + "\n"


# -- HTTP ---------------------------------------------------------------------------------------
def _with_scratch_pilot(use: Callable[[Any], str]) -> str:
    from ..router import SkillPilot

    with tempfile.TemporaryDirectory(prefix="skillpilot-reference-") as scratch:
        return use(SkillPilot(home=Path(scratch)))


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document ``skillpilot serve`` answers at ``/openapi.json`` (with a token, so
    that the sign-in routes are declared too)."""
    from ..serve.http import create_app

    found: dict[str, Any] = {}

    def build(pilot: Any) -> str:
        found.update(create_app(pilot, token=_REFERENCE_TOKEN).openapi())
        return ""

    _with_scratch_pilot(build)
    return found


def _schema_type(schema: Mapping[str, Any], components: Mapping[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        kinds = [_schema_type(s, components) for s in schema["anyOf"] if s.get("type") != "null"]
        return " or ".join(kinds)
    if "enum" in schema:
        return " / ".join(json.dumps(v) for v in schema["enum"])
    if schema.get("type") == "array":
        return f"list of {_schema_type(schema.get('items', {}), components)}"
    return str(schema.get("type", "any"))


def _limits(schema: Mapping[str, Any]) -> str:
    words = {
        "minimum": ">=",
        "maximum": "<=",
        "exclusiveMinimum": ">",
        "exclusiveMaximum": "<",
        "minLength": "length >=",
        "maxLength": "length <=",
    }
    parts = [f"{word} {schema[key]}" for key, word in words.items() if key in schema]
    for variant in schema.get("anyOf", ()):
        parts.extend(f"{word} {variant[key]}" for key, word in words.items() if key in variant)
    return ", ".join(parts)


def _field_rows(schema: Mapping[str, Any], components: Mapping[str, Any]) -> list[list[str]]:
    required = set(schema.get("required", ()))
    rows = []
    for name, spec in schema.get("properties", {}).items():
        about = " ".join(x for x in (spec.get("description", ""), _limits(spec)) if x)
        default = json.dumps(spec["default"]) if "default" in spec else ""
        rows.append(
            [
                _code(name),
                _schema_type(spec, components),
                "yes" if name in required else "",
                _code(default) if default else "",
                about,
            ]
        )
    return rows


def http_page() -> str:
    """Every route of the resident service, from its OpenAPI document."""
    document = openapi_document()
    components = document.get("components", {}).get("schemas", {})
    lines = [
        "# HTTP API reference",
        "",
        f"Generated from the OpenAPI document of `skillpilot serve` (version {document['info']['version']}) "
        "when the site is built. A running service serves the same document at `/openapi.json` and "
        "renders it at `/docs`, offline.",
        "",
        "With a token (`--token` or `SKILLPILOT_SERVE_TOKEN`) every route but `/healthz` needs "
        "`Authorization: Bearer <token>` (or the browser session cookie). Every error is "
        '`{"error": {"type", "message"}}`.',
    ]
    index_rows = []
    sections: list[str] = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            title = f"{method.upper()} {path}"
            index_rows.append([f"[{_code(title)}](#{_http_anchor(method, path)})", operation.get("summary", "")])
            sections += ["", f"## {method.upper()} `{path}`", ""]
            if operation.get("description"):
                sections += [textwrap.dedent(operation["description"]).strip(), ""]
            params = [p for p in operation.get("parameters", ()) if p["name"].lower() != "authorization"]
            if params:
                rows = [
                    [
                        _code(p["name"]),
                        p["in"],
                        _schema_type(p.get("schema", {}), components),
                        "yes" if p.get("required") else "",
                        _code(json.dumps(p["schema"]["default"])) if "default" in p.get("schema", {}) else "",
                        " ".join(x for x in (p.get("description", ""), _limits(p.get("schema", {}))) if x),
                    ]
                    for p in params
                ]
                sections += [*_table(["parameter", "in", "type", "required", "default", "meaning"], rows), ""]
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body is not None:
                resolved = components.get(_schema_type(body, components), body)
                rows = _field_rows(resolved, components)
                if rows:
                    sections += ["JSON body:", "", *_table(["field", "type", "required", "default", "meaning"], rows)]
                else:
                    sections += ["JSON body: any JSON object."]
                sections.append("")
            codes = ", ".join(
                f"{code} {cell(answer.get('description', ''))}" for code, answer in operation["responses"].items()
            )
            sections.append(f"Answers: {codes}.")
    lines += ["", "## Routes", "", *_table(["route", "summary"], index_rows), *sections]
    return "\n".join(lines) + "\n"


def _http_anchor(method: str, path: str) -> str:
    """The heading id MkDocs' toc extension gives ``## POST `/route```."""
    words = "".join(ch if ch.isalnum() or ch in " -_" else "" for ch in f"{method} {path}".lower())
    return "-".join(words.split())


# -- MCP ----------------------------------------------------------------------------------------
def mcp_tools() -> tuple[list[Any], list[Any]]:
    """The tools and resources ``skillpilot mcp`` lists (the SDK's ``Tool`` / ``Resource``)."""
    from ..serve.mcp import build_server

    found: list[tuple[list[Any], list[Any]]] = []

    async def listing(server: Any) -> tuple[list[Any], list[Any]]:
        return list(await server.list_tools()), list(await server.list_resources())

    def build(pilot: Any) -> str:
        found.append(asyncio.run(listing(build_server(pilot))))
        return ""

    _with_scratch_pilot(build)
    return found[0]


def mcp_page() -> str:
    """Every MCP tool with its arguments (from its input schema), then the resources."""
    tools, resources = mcp_tools()
    lines = [
        "# MCP tools reference",
        "",
        "Generated from the tools `skillpilot mcp` lists (their input schemas) when the site is built. "
        "Each answer carries `structuredContent` and a text block for the model; bad arguments give an "
        "`isError` result with `structuredContent.error = {code, message, argument?, allowed?}`.",
        "",
        *_table(["tool", "what it does"], [[f"[{_code(t.name)}](#{t.name})", t.description or ""] for t in tools]),
    ]
    for tool in tools:
        lines += ["", f"## {tool.name}", "", tool.description or "", ""]
        rows = _field_rows(tool.input_schema, {})
        lines += _table(["argument", "type", "required", "default", "meaning"], rows) if rows else ["No arguments."]
    lines += ["", "## Resources", ""]
    lines += _table(
        ["uri", "name", "type", "what it holds"],
        [[_code(str(r.uri)), r.name, r.mime_type or "", r.description or ""] for r in resources],
    )
    return "\n".join(lines) + "\n"


# Site path -> the builder of its Markdown.
PAGES: dict[str, Callable[[], str]] = {
    "reference/cli.md": cli_page,
    "reference/config.md": config_page,
    "reference/http.md": http_page,
    "reference/mcp.md": mcp_page,
}
