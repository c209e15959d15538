"""The ``docs`` command: the documentation site, built from a SkillPilot checkout and served
offline.

    skillpilot docs [--port 8767] [--host 127.0.0.1] [--source DIR] [--rebuild] [--no-serve]

Which checkout: ``--source``, else the one this package runs from (an editable install), else
the current folder; a checkout is a folder with ``mkdocs.yml`` and ``docs/``. The site is built
with MkDocs (the ``docs`` extra) into ``$SKILLPILOT_HOME/site`` the first time and again when one
of its sources changed (the checkout's pages, ``mkdocs.yml``, the files the site shows, or the
installed package, whose code the reference pages are generated from), then served by the
standard library's HTTP server until Ctrl-C. Without MkDocs an existing site is served as it
is; without either the command says how to get one. The site loads nothing from the network.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from ..config import load_settings
from ..errors import MissingExtraError
from . import HomeOption, _fail, _run, err, out

DEFAULT_PORT = 8767
PACKAGE = Path(__file__).resolve().parents[1]
# The site's sources besides docs/ and mkdocs.yml: what the pages show from the repository.
SHOWN_FILES = ("CONTRIBUTING.md", "benchmarks/README.md")
SHOWN_GLOBS = ("benchmarks/results/*.png",)
# Written into a built site: the fingerprint of the sources it was built from.
STAMP = ".skillpilot-sources"


def find_checkout(source: Path | None) -> Path | None:
    """The checkout to build from: ``source`` (which must be one), else this package's own, else
    the current folder; None when neither is one."""
    if source is not None:
        if not _is_checkout(source):
            raise _fail(f"{source}: not a SkillPilot checkout (no mkdocs.yml and docs/ there)")
        return source.resolve()
    candidates = (PACKAGE.parents[1], Path.cwd())
    return next((c for c in candidates if _is_checkout(c)), None)


def _is_checkout(folder: Path) -> bool:
    return (folder / "mkdocs.yml").is_file() and (folder / "docs").is_dir()


def sources_fingerprint(checkout: Path) -> str:
    """A digest of every file the site is made from (path, size, modification time)."""
    files = [
        checkout / "mkdocs.yml",
        *sorted((checkout / "docs").rglob("*")),
        *(checkout / name for name in SHOWN_FILES),
        *(path for pattern in SHOWN_GLOBS for path in sorted(checkout.glob(pattern))),
        *sorted(PACKAGE.rglob("*.py")),
    ]
    digest = hashlib.sha256()
    for path in files:
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def is_current(site: Path, fingerprint: str) -> bool:
    stamp = site / STAMP
    return stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == fingerprint


def build_site(checkout: Path, site: Path, fingerprint: str) -> None:
    """Build the checkout's site into ``site``: into a folder beside it first, then swapped in, so
    a failed build leaves the previous site whole."""
    try:
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
        from mkdocs.exceptions import MkDocsException
    except ImportError as exc:
        raise MissingExtraError("docs", "`skillpilot docs`", exc.name or "mkdocs") from exc
    # Material's notice about MkDocs 2 says nothing about SkillPilot's pages.
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    site.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".site-", dir=site.parent))
    try:
        # Not strict: a page a user edited with a broken link still reads; CI builds strictly.
        build(load_config(str(checkout / "mkdocs.yml"), site_dir=str(staging), strict=False))
        (staging / STAMP).write_text(fingerprint + "\n", encoding="utf-8")
    except MkDocsException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise _fail(f"building the documentation from {checkout} failed: {exc}") from exc
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    previous = site.with_name(site.name + ".previous")
    shutil.rmtree(previous, ignore_errors=True)
    if site.exists():
        site.rename(previous)
    staging.rename(site)
    shutil.rmtree(previous, ignore_errors=True)


def ready_site(site: Path, source: Path | None, rebuild: bool) -> Path:
    """``site``, built or rebuilt first when it is missing, out of date or ``rebuild`` asks."""
    checkout = find_checkout(source)
    if checkout is None:
        if site.is_dir() and not rebuild:
            return site
        raise _fail(
            "the documentation is built from a SkillPilot checkout (the folder with mkdocs.yml and docs/): "
            "run `skillpilot docs --source /path/to/skillpilot` with `pip install 'skillpilot[docs]'`"
        )
    fingerprint = sources_fingerprint(checkout)
    if is_current(site, fingerprint) and not rebuild:
        return site
    try:
        import mkdocs  # noqa: F401
    except ImportError as exc:
        if site.is_dir() and not rebuild:
            err.print(
                f"warning: serving the site built earlier in {site}; its sources changed since "
                "(`pip install 'skillpilot[docs]'` rebuilds it)",
                markup=False,
                soft_wrap=True,
            )
            return site
        raise MissingExtraError("docs", "`skillpilot docs`", "mkdocs") from exc
    err.print(f"building the documentation from {checkout} into {site} ...", markup=False, soft_wrap=True)
    build_site(checkout, site, fingerprint)
    return site


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site's files; no line per request on the terminal."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        pass


def register(app: typer.Typer) -> None:
    @app.command("docs")
    def docs(
        port: Annotated[
            int, typer.Option("--port", min=0, max=65535, help="Port to serve on; 0 picks a free one.")
        ] = DEFAULT_PORT,
        host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
        source: Annotated[
            Path | None,
            typer.Option("--source", help="The SkillPilot checkout to build from (the folder with mkdocs.yml)."),
        ] = None,
        rebuild: Annotated[bool, typer.Option("--rebuild", help="Build the site even when it is up to date.")] = False,
        no_serve: Annotated[
            bool, typer.Option("--no-serve", help="Build the site if needed, print its folder and exit.")
        ] = False,
        home: HomeOption = None,
    ) -> None:
        """Build the documentation site (once, with MkDocs) and serve it offline at http://127.0.0.1:8767/."""
        settings = _run(lambda: load_settings(home))
        site = _run(lambda: ready_site(settings.home / "site", source, rebuild))
        if no_serve:
            out.print(str(site), markup=False, soft_wrap=True)
            return
        handler = functools.partial(_QuietHandler, directory=str(site))
        try:
            server = http.server.ThreadingHTTPServer((host, port), handler)
        except OSError as exc:
            raise _fail(f"cannot listen on {host}:{port}: {exc.strerror}; pick another with --port") from exc
        bound_port = server.server_address[1]
        err.print(
            f"SkillPilot documentation on http://{host}:{bound_port}/ (from {site}); Ctrl-C stops",
            markup=False,
            soft_wrap=True,
        )
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
