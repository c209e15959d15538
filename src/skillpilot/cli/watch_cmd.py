"""The ``watch`` command: keep the index in step with skill folders until interrupted.

    skillpilot watch [PATH...] [--json]

Each re-index is reported on stderr (with ``--json``: one ``IndexReport`` JSON object per line
on stdout). Ctrl-C (or SIGTERM) stops it with exit 0.
"""

from __future__ import annotations

import json
import signal
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from ..model import IndexReport
from ..watch import IndexWatcher
from . import HomeOption, JsonOption, _pilot, _print_index_report, _run, err, out


def watch(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Skill folders or JSON tool catalogs to watch [default: the index's folders]."),
    ] = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Watch skill folders and re-index what changes (watchdog; index.refreshInterval as a poll)."""
    settings = _run(lambda: _pilot(home)).settings
    lock = threading.Lock()

    def report(result: IndexReport) -> None:
        with lock:
            if as_json:
                # One line per report and flushed: a reader sees each re-index as it happens.
                out.file.write(json.dumps(asdict(result), ensure_ascii=False) + "\n")
                out.file.flush()
            else:
                _print_index_report(result, as_json=False)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    watcher = IndexWatcher(settings, paths or (), on_report=report)
    _run(watcher.start)
    if not as_json:
        err.print(f"watching {', '.join(map(str, watcher.roots))} (Ctrl-C stops)", markup=False, soft_wrap=True)
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        watcher.stop()


def register(app: typer.Typer) -> None:
    app.command("watch")(watch)
