"""The ``service``, ``setup`` and ``doctor`` commands: SkillPilot installed where a user keeps it.

    skillpilot service start|stop|status|restart [--port N]   the home's resident service
    skillpilot service install [--kind systemd|launchd]        a user unit that runs it at login
    skillpilot setup claude-code [--project DIR] [--uninstall] the hooks in Claude Code's settings
    skillpilot doctor [--project DIR]                          index, service, hooks, offered skills

Every command takes ``--json`` (JSON on stdout) and ``--home``; errors exit 1.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer

from ..config import default_home
from ..model import IndexReport
from . import HomeOption, JsonOption, _pilot, _print_json, _run, out

service_app = typer.Typer(help="Run the resident service in the background (one per home).", no_args_is_help=True)
setup_app = typer.Typer(help="Install SkillPilot into an agent host.", no_args_is_help=True)
ProjectOption = Annotated[
    Path | None,
    typer.Option("--project", help="A project folder: its .claude/settings.json instead of the user's."),
]


def _home(home: Path | None) -> Path:
    return (home or default_home()).expanduser().absolute()


def _print_status(data: dict[str, Any], as_json: bool, verb: str = "") -> None:
    if as_json:
        _print_json(data)
        return
    if data["running"]:
        p50 = f"{data['route_p50_ms']:.1f} ms" if data["route_p50_ms"] is not None else "no routes yet"
        out.print(
            f"{verb}service pid {data['pid']} at {data['url']}: up {data['uptime_s']:.0f} s, "
            f"{data['skills']} skills (index generation {data['generation']}), route p50 {p50} "
            f"over {data['recent_routes']} recent routes",
            soft_wrap=True,
        )
    elif data["starting"]:
        out.print(f"{verb}service pid {data['pid']} is starting (loading the models)", soft_wrap=True)
    else:
        out.print(f"no service runs for {data['home']}", soft_wrap=True)


@service_app.command("start")
def service_start(
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port; 0 picks a free one.")] = 0,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Start the service in the background and wait until it answers; a running one is left alone."""
    from ..serve import service

    current, started = _run(lambda: service.start(_home(home), port=port))
    _print_status({**current.to_dict(), "started": started}, as_json, "started " if started else "already running: ")


@service_app.command("stop")
def service_stop(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """Stop the service; serve.json is removed."""
    from ..serve import service

    pid = _run(lambda: service.stop(_home(home)))
    if as_json:
        _print_json({"stopped": pid is not None, "pid": pid})
    else:
        out.print(f"stopped service pid {pid}" if pid else "no service was running")


@service_app.command("restart")
def service_restart(
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port; 0 picks a free one.")] = 0,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Stop the service (if it runs) and start a new one."""
    from ..serve import service

    folder = _home(home)
    stopped = _run(lambda: service.stop(folder))
    current, _ = _run(lambda: service.start(folder, port=port))
    _print_status({**current.to_dict(), "stopped": stopped}, as_json, "restarted: ")


@service_app.command("status")
def service_status(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """pid, URL, uptime, index generation, skill count and p50 of the recent routes; exits 1 when no
    service answers (none runs, or it is still loading), as `systemctl is-active` would."""
    from ..serve import service

    state = service.status(_home(home)).to_dict()
    _print_status(state, as_json)
    if not state["running"]:
        raise typer.Exit(1)


@service_app.command("install")
def service_install(
    kind: Annotated[
        str | None, typer.Option("--kind", help="systemd (Linux) or launchd (macOS) [default: this system's].")
    ] = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write a user unit that runs the service at login; prints how to enable it."""
    from ..serve import service

    chosen = kind or service.default_unit_kind()
    if chosen not in ("systemd", "launchd"):
        raise typer.BadParameter("use systemd or launchd", param_hint="--kind")
    unit_kind: service.UnitKind = "launchd" if chosen == "launchd" else "systemd"
    path = service.install_unit(unit_kind, _home(home))
    enable = service.enable_hint(unit_kind, path)
    if as_json:
        _print_json({"kind": unit_kind, "path": str(path), "enable": enable})
    else:
        out.print(f"wrote {path}\nenable it with: {enable}", soft_wrap=True)


@setup_app.command("claude-code")
def setup_claude_code(
    project: ProjectOption = None,
    uninstall: Annotated[bool, typer.Option("--uninstall", help="Remove SkillPilot's hooks only.")] = False,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Merge SkillPilot's hooks (SessionStart, UserPromptSubmit, PostToolUse on Skill, Stop) into settings.json."""
    from ..adapters import claude_code_setup as setup

    path = setup.settings_path(project.absolute() if project else None)
    report = _run(lambda: setup.uninstall(path) if uninstall else setup.install(path, _home(home)))
    indexed = None if uninstall else _run(lambda: _index_user_skills(_home(home)))
    if as_json:
        _print_json({**asdict(report), "uninstalled": uninstall, "indexed": asdict(indexed) if indexed else None})
        return
    if indexed is not None:
        out.print(f"indexed {indexed.total} skills from {indexed.roots[0]}", soft_wrap=True)
    if not report.changed:
        out.print(f"{path}: already {'without' if uninstall else 'with'} SkillPilot's hooks", soft_wrap=True)
    elif uninstall:
        out.print(f"removed SkillPilot's hooks from {path} (backup {report.backup})", soft_wrap=True)
    else:
        backup = f" (backup {report.backup})" if report.backup else ""
        out.print(
            f"added SkillPilot's hooks ({', '.join(report.events)}) to {path}{backup}\n"
            "the service starts with the next Claude Code session; `skillpilot doctor` checks it all",
            soft_wrap=True,
        )


def _index_user_skills(home: Path) -> IndexReport | None:
    """Index Claude Code's user skills when the index does not hold them yet, so that the first
    session's service has them (it would otherwise index them on the first prompt)."""
    from ..adapters.claude_code import claude_home
    from ..index.builder import root_id

    folder = claude_home() / "skills"
    if not folder.is_dir():
        return None
    pilot = _pilot(home)
    try:
        if root_id(folder) in pilot.store.roots():
            return None
        return pilot.index([folder])
    finally:
        pilot.close()


def doctor(project: ProjectOption = None, home: HomeOption = None, as_json: JsonOption = False) -> None:
    """What Claude Code gets: index and skill count, service and latency, hooks, offered skills."""
    from ..adapters import claude_code, claude_code_setup
    from ..index import assign_ids, open_store
    from ..serve import read_serve_file, service
    from ..serve.client import get_json

    folder = _home(home)
    report: dict[str, Any] = {"home": str(folder)}
    index_path = folder / "index.sqlite"
    skills = []
    if index_path.exists():
        store = open_store(index_path)
        try:
            skills = assign_ids(store.load())
        finally:
            store.close()
    report["index"] = {"path": str(index_path), "present": index_path.exists(), "skills": len(skills)}
    state = service.status(folder).to_dict()
    info = read_serve_file(folder)
    if state["running"] and info is not None:
        started = time.perf_counter()
        get_json(info, "/healthz", 2.0)
        state["round_trip_ms"] = round((time.perf_counter() - started) * 1000, 1)
    report["service"] = state
    hooks = {}
    for scope, where in (("user", None), ("project", project)):
        if scope == "project" and where is None:
            continue
        path = claude_code_setup.settings_path(where.absolute() if where else None)
        commands = claude_code_setup.installed_commands(path)
        problems = {claude_code_setup.command_problem(c) for cs in commands.values() for c in cs}
        hooks[scope] = {
            "settings": str(path),
            "events": sorted(commands),
            "missing": [e for e, _ in claude_code_setup.EVENTS if e not in commands],
            "problems": sorted(p for p in problems if p),
        }
    report["hooks"] = hooks
    cwd = (project or Path.cwd()).absolute()
    roots = claude_code.offered_roots(cwd)
    names = claude_code.skill_names(skills, roots)
    report["offered"] = {"roots": [r.path for r in roots], "skills": sorted(names.values())}
    report["ok"] = bool(
        skills and state["running"] and any(not h["missing"] and not h["problems"] for h in hooks.values()) and names
    )
    if as_json:
        _print_json(report)
        return
    _print_doctor(report)


def _print_doctor(report: dict[str, Any]) -> None:
    def line(ok: bool, text: str) -> None:
        out.print(f"{'ok  ' if ok else 'FIX '} {text}", soft_wrap=True, markup=False)

    index = report["index"]
    line(
        index["skills"] > 0,
        f"index {index['path']}: {index['skills']} skills"
        if index["present"]
        else f"no index at {index['path']}: run `skillpilot index`",
    )
    state = report["service"]
    if state["running"]:
        p50 = state["route_p50_ms"]
        line(
            True,
            f"service pid {state['pid']} at {state['url']}: round trip {state['round_trip_ms']} ms, "
            f"route p50 {p50 if p50 is not None else '-'} ms",
        )
    else:
        line(False, "no service runs: `skillpilot service start` (or open a Claude Code session)")
    for scope, hooks in report["hooks"].items():
        ok = not hooks["missing"] and not hooks["problems"]
        detail = "; ".join(hooks["problems"]) or (
            f"missing {', '.join(hooks['missing'])}"
            if hooks["missing"]
            else "SessionStart, UserPromptSubmit, PostToolUse(Skill), Stop"
        )
        line(ok, f"{scope} hooks in {hooks['settings']}: {detail}")
    offered = report["offered"]["skills"]
    shown = ", ".join(offered[:12]) + (f" … (+{len(offered) - 12})" if len(offered) > 12 else "")
    line(bool(offered), f"Claude Code is offered {len(offered)} indexed skills: {shown or 'none'}")


def register(app: typer.Typer) -> None:
    """Add ``service``, ``setup`` and ``doctor`` to the ``skillpilot`` app."""
    app.add_typer(service_app, name="service")
    app.add_typer(setup_app, name="setup")
    app.command("doctor")(doctor)
