"""The ``mcp``, ``serve`` and ``hook`` commands: SkillPilot where agents run.

    skillpilot mcp [--http PORT]                      MCP server on stdio (or streamable HTTP)
    skillpilot serve [--host H] [--port N] [--token]  resident HTTP service, address in serve.json
    skillpilot hook HOST                              a host's hook (stdin JSON), via the service

Each imports its server framework only when it runs, so the CLI starts fast and works
without the extras; a missing extra is exit 1 with the pip command that installs it. The hook
always exits 0: a hook that fails must not block the user's prompt.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ..config import load_settings
from . import HomeOption, _pilot, _run, err


def mcp(
    http: Annotated[
        int | None,
        typer.Option(
            "--http",
            min=1,
            max=65535,
            metavar="PORT",
            help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.",
        ),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="With --http: the loopback address to listen on.")] = "127.0.0.1",
    home: HomeOption = None,
) -> None:
    """Run the MCP server: tools route, ontoskill, find_skill; resource ontology://schema."""
    from importlib import import_module

    server = _run(lambda: import_module("skillpilot.serve.mcp"))
    # Settings now, so a broken config.yaml is exit 1 with its message; the router is built in
    # the background while the server answers its client (serve.mcp.run).
    settings = _run(lambda: load_settings(home.expanduser() if home else None))

    def ready(url: str) -> None:
        err.print(f"SkillPilot MCP server on {url} (streamable HTTP)", markup=False, soft_wrap=True)

    _run(lambda: server.run(settings, http_port=http, host=host, ready=ready))


def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; other than loopback only with a --token.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port; 0 picks a free one.")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="SKILLPILOT_SERVE_TOKEN",
            help="Require `Authorization: Bearer TOKEN` on every data route.",
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="Also answer requests addressed to this host name (repeatable; loopback names and --host always are).",
        ),
    ] = None,
    home: HomeOption = None,
) -> None:
    """Run the resident HTTP service: warm models, answers in milliseconds, OpenAPI at /docs."""
    from importlib import import_module

    http = _run(lambda: import_module("skillpilot.serve.http"))
    pilot = _run(lambda: _pilot(home, surface="http"))

    def ready(url: str) -> None:
        err.print(
            f"SkillPilot service on {url} (OpenAPI at {url}/docs); address in {pilot.settings.home / 'serve.json'}",
            markup=False,
            soft_wrap=True,
        )

    def login(link: str) -> None:
        err.print(f"Dashboard sign-in (one-time link, 10 minutes): {link}", markup=False, soft_wrap=True)

    _run(
        lambda: http.serve(
            pilot,
            host=host,
            port=port,
            token=token,
            ready=ready,
            login=login,
            allowed_hosts=tuple(allow_host or ()),
        )
    )


def hook(
    host: Annotated[str, typer.Argument(help="The host whose hook this is: claude-code, gemini, codex ...")],
    home: HomeOption = None,
) -> None:
    """A host's hook (any event): forwards its JSON to the service, prints the answer (or nothing).
    `skillpilot setup HOST` installs the faster standard-library form of the same hook."""
    from ..adapters import hook_client

    hook_client.main([host, *(["--home", str(home)] if home else [])], sys.stdin.buffer, sys.stdout)


def register(app: typer.Typer) -> None:
    """Add ``mcp``, ``serve`` and ``hook`` to the ``skillpilot`` app."""
    app.command("mcp")(mcp)
    app.command("serve")(serve)
    app.command("hook")(hook)
