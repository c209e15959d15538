"""The ``service``, ``setup`` and ``doctor`` commands: SkillPilot installed where a user keeps it.

    skillpilot service start|stop|status|restart [--port N]   the home's resident service
    skillpilot service install [--kind systemd|launchd]        a user unit that runs it at login
    skillpilot setup HOST [--project DIR] [--uninstall]        the hooks in a host's own files
    skillpilot doctor [HOST] [--project DIR]                   index, service, hooks, offered skills

HOST is a registered host (:mod:`skillpilot.adapters.hosts`): claude-code, gemini, codex, openclaw.

Every command takes ``--json`` (JSON on stdout) and ``--home``; errors exit 1.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer

from ..config import Settings, default_home, load_settings
from ..model import IndexReport
from . import HomeOption, JsonOption, _fail, _pilot, _print_json, _run, out

service_app = typer.Typer(help="Run the resident service in the background (one per home).", no_args_is_help=True)
ProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project", help="A project folder: its hook file (.claude/settings.json ...) instead of the user's."
    ),
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


HostArgument = Annotated[str, typer.Argument(help="The agent host: claude-code, gemini, codex or openclaw.")]


def _host(name: str) -> Any:
    from ..adapters.hosts import get_host

    return _run(lambda: get_host(name))


def setup(
    host: HostArgument,
    project: ProjectOption = None,
    uninstall: Annotated[bool, typer.Option("--uninstall", help="Remove SkillPilot's hooks only.")] = False,
    no_start: Annotated[
        bool, typer.Option("--no-start", help="Do not start the service now (the next session's hook starts it).")
    ] = False,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Merge SkillPilot's hooks into the host's own hook file (backed up first) and start the
    service, or take them out (and stop the service when no host set up still uses it)."""
    chosen = _host(host)
    if chosen.setup is None:
        raise _fail(f"{chosen.title} installs SkillPilot its own way (see the README)")
    where = project.absolute() if project else None
    folder = _home(home)
    if uninstall:
        report = _run(lambda: chosen.setup.uninstall(where))
        report["indexed"] = None
        report["service"] = _stop_unused_service(folder, where)
    else:
        roots = _library_roots(chosen, _run(lambda: load_settings(folder)))
        report = _run(lambda: chosen.setup.install(folder, where, roots))
        indexed = _run(lambda: _index_user_skills(chosen, folder))
        report["indexed"] = asdict(indexed) if indexed else None
        report["service"] = None if no_start else _start_service(folder)
    if as_json:
        _print_json({**report, "uninstalled": uninstall})
        return
    _print_setup(chosen, report, uninstall)


def _library_roots(host: Any, settings: Settings) -> tuple[str, ...]:
    """The host's library roots (library mode) as absolute paths, as setup grants them."""
    return tuple(str(Path(r).expanduser().absolute()) for r in host.library_roots(settings))


def _start_service(home: Path) -> dict[str, Any]:
    """Start the home's service (the first prompt of the next session is routed, not the one
    after the models load); its status and whether this started it."""
    from ..serve import service

    current, started = _run(lambda: service.start(home))
    return {**current.to_dict(), "started": started}


def _stop_unused_service(home: Path, project: Path | None) -> dict[str, Any]:
    """Stop the home's service unless a host set up (the user's files, or ``project``'s) still
    uses it; what was done and which hosts keep it."""
    from ..adapters.hosts import available_hosts, get_host
    from ..serve import service

    users = []
    for name in available_hosts():
        setup = get_host(name).setup
        scopes = {None, project}
        if setup is not None and any(str(home) in setup.served_homes(scope) for scope in scopes):
            users.append(name)
    stopped = None if users else _run(lambda: service.stop(home))
    return {"stopped": stopped is not None, "pid": stopped, "kept_for": users}


def _print_setup(chosen: Any, report: dict[str, Any], uninstall: bool) -> None:
    indexed = report.get("indexed")
    if indexed:
        out.print(f"indexed {indexed['total']} skills from {', '.join(indexed['roots'])}", soft_wrap=True)
    path = report["path"]
    if not report["changed"]:
        out.print(f"{path}: already {'without' if uninstall else 'with'} SkillPilot's hooks", soft_wrap=True)
    elif uninstall:
        out.print(f"removed SkillPilot's hooks from {path} (backup {report['backup']})", soft_wrap=True)
    else:
        backup = f" (backup {report['backup']})" if report["backup"] else ""
        out.print(f"added SkillPilot's hooks ({', '.join(report['events'])}) to {path}{backup}", soft_wrap=True)
    if report.get("granted"):
        out.print(f"{chosen.title} may read the library roots: {', '.join(report['granted'])}", soft_wrap=True)
    trust = report.get("trust")
    if trust:
        recorded = f"recorded trust for {len(trust['recorded'])} hooks" if trust["recorded"] else ""
        out.print("; ".join(t for t in (recorded, trust["note"]) if t), soft_wrap=True)
    state = report["service"]
    if uninstall:
        if state["kept_for"]:
            out.print(f"the service keeps running, still used by {', '.join(state['kept_for'])}", soft_wrap=True)
        else:
            stopped = f"stopped the service (pid {state['pid']})" if state["stopped"] else "no service was running"
            out.print(f"{stopped}: no host set up in this home uses it", soft_wrap=True)
    elif state is None:
        out.print(f"the service starts with the next {chosen.title} session", soft_wrap=True)
    else:
        verb = "started the service" if state["started"] else "the service already runs"
        out.print(f"{verb}: pid {state['pid']} at {state['url']}", soft_wrap=True)
    if not uninstall:
        out.print(f"`skillpilot doctor {chosen.name}` checks it all", soft_wrap=True)


def _index_user_skills(host: Any, home: Path) -> IndexReport | None:
    """Index the user's skill folders the host offers when the index does not hold them yet, so
    that the first session's service has them (it would otherwise index them on the first prompt)."""
    from ..index.builder import root_id

    folders = [Path(r.path) for r in host.skill_roots(None)]
    if not folders:
        return None
    pilot = _pilot(home)
    try:
        known = set(pilot.store.roots())
        todo = [f for f in folders if root_id(f) not in known]
        return pilot.index(todo) if todo else None
    finally:
        pilot.close()


def doctor(
    host: Annotated[
        str | None, typer.Argument(help="One host (claude-code, gemini, codex, openclaw); default: every host set up.")
    ] = None,
    project: ProjectOption = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """What each host gets: index and skill count, service and latency, hooks, offered skills."""
    from ..adapters import in_library
    from ..adapters.hosts import available_hosts, get_host
    from ..adapters.hosts.hooks import skill_names
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
    where = project.absolute() if project else None
    cwd = where or Path.cwd().absolute()
    hosts = [_host(host)] if host else [get_host(n) for n in available_hosts()]
    settings = _run(lambda: load_settings(folder))
    report["hosts"] = {}
    for chosen in hosts:
        setup = chosen.setup
        library = _library_roots(chosen, settings)
        checks = _run(lambda: setup.checks(where, library)) if setup is not None else []  # noqa: B023 (called at once)
        if host is None and not any(c.data.get("events") for c in checks):
            continue  # not set up for this host
        roots = chosen.skill_roots(cwd)
        names = skill_names(skills, chosen, roots)
        # Library mode: the host lists none of these, the hook hands each over by its SKILL.md.
        from_library = [s for s in skills if s.id not in names and library and in_library(s.skill.path, library)]
        report["hosts"][chosen.name] = {
            "title": chosen.title,
            "checks": [{"ok": c.ok, "text": c.text, **c.data} for c in checks],
            "offered": {
                "roots": [r.path for r in roots],
                "skills": sorted(names.values()),
                "library_roots": list(library),
                "library_skills": len(from_library),
            },
        }
    # A host is served when one scope has every hook (the user's covers every project).
    served = [
        h
        for h in report["hosts"].values()
        if any(c["ok"] for c in h["checks"] if "scope" in c) and all(c["ok"] for c in h["checks"] if "scope" not in c)
    ]
    offers = all(h["offered"]["skills"] or h["offered"]["library_skills"] for h in served)
    report["ok"] = bool(skills and state["running"] and served and offers)
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
        line(False, "no service runs: `skillpilot service start` (or open a session of your agent)")
    if not report["hosts"]:
        line(False, "no host is set up: `skillpilot setup claude-code` (or gemini, codex)")
    for host in report["hosts"].values():
        for check in host["checks"]:
            line(check["ok"], f"{host['title']}: {check['text']}")
        offered = host["offered"]["skills"]
        shown = ", ".join(offered[:12]) + (f" … (+{len(offered) - 12})" if len(offered) > 12 else "")
        library = host["offered"]["library_skills"]
        line(bool(offered or library), f"{host['title']} is offered {len(offered)} indexed skills: {shown or 'none'}")
        if host["offered"]["library_roots"]:
            roots = ", ".join(host["offered"]["library_roots"])
            line(bool(library), f"{host['title']} is handed {library} library skills by SKILL.md path, from {roots}")


def register(app: typer.Typer) -> None:
    """Add ``service``, ``setup`` and ``doctor`` to the ``skillpilot`` app."""
    app.add_typer(service_app, name="service")
    app.command("setup")(setup)
    app.command("doctor")(doctor)
