"""Registries stay in their lane: an HTTP registry (a real server on 127.0.0.1) may only point at
http(s) files on its own host, redirects included; installed files are never more readable than
their source nor than 0644. Each registry is written by the test (no corpus needed)."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from skillpilot.errors import RegistryError
from skillpilot.ontoskills import registry as registry_module
from skillpilot.ontoskills.registry import Registry, install

MODULE = "@prefix oc: <https://ontoskills.sh/ontology#> .\n"


def _write_registry(root: Path, manifest_ref: str) -> None:
    package = root / "packages" / "acme" / "tools"
    (package / "hello").mkdir(parents=True)
    (package / "hello" / "ontoskill.ttl").write_text(MODULE)
    manifest = {"package_id": "acme/tools", "version": "1.0.0", "modules": ["hello/ontoskill.ttl"]}
    (package / "package.json").write_text(json.dumps(manifest))
    index = {"packages": [{"package_id": "acme/tools", "trust_tier": "community", "manifest_url": manifest_ref}]}
    (root / "index.json").write_text(json.dumps(index))


@pytest.fixture()
def http_registry(tmp_path: Path) -> Iterator[tuple[Path, str, dict[str, str]]]:
    """A registry folder served over HTTP; ``redirects`` maps a request path to a Location."""
    root = tmp_path / "registry"
    redirects: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            if self.path in redirects:
                self.send_response(302)
                self.send_header("Location", redirects[self.path])
                self.end_headers()
                return
            file = root / self.path.lstrip("/")
            if not file.is_file():
                self.send_error(404)
                return
            data = file.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}", redirects
    finally:
        server.shutdown()
        server.server_close()


def _installed_files(home: Path) -> list[Path]:
    return sorted(p for p in (home / "ontologies").rglob("*") if p.is_file()) if (home / "ontologies").exists() else []


def test_an_http_registry_cannot_name_a_local_file(
    http_registry: tuple[Path, str, dict[str, str]], tmp_path: Path
) -> None:
    root, url, _ = http_registry
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"package_id": "acme/tools", "modules": []}))
    _write_registry(root, secret.as_uri())
    home = tmp_path / "home"
    with pytest.raises(RegistryError, match=r"must be http\(s\) URLs"):
        install(Registry(url + "/"), "acme/tools", home)
    assert _installed_files(home) == []


def test_an_http_registry_cannot_name_another_host(
    http_registry: tuple[Path, str, dict[str, str]], tmp_path: Path
) -> None:
    root, url, _ = http_registry
    port = url.rsplit(":", 1)[1]
    # Same server, other name: still another origin as far as the registry's references go.
    _write_registry(root, f"http://localhost:{port}/packages/acme/tools/package.json")
    home = tmp_path / "home"
    with pytest.raises(RegistryError, match=r"not on the registry's own host 127\.0\.0\.1"):
        install(Registry(url + "/"), "acme/tools", home)
    assert _installed_files(home) == []


def test_a_redirect_to_another_scheme_or_host_is_refused(
    http_registry: tuple[Path, str, dict[str, str]], tmp_path: Path
) -> None:
    root, url, redirects = http_registry
    _write_registry(root, "packages/acme/tools/package.json")
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0\n")
    redirects["/packages/acme/tools/hello/ontoskill.ttl"] = secret.as_uri()
    home = tmp_path / "home"
    with pytest.raises(RegistryError, match="file:///.* is not allowed"):
        install(Registry(url + "/"), "acme/tools", home)
    port = url.rsplit(":", 1)[1]
    redirects["/packages/acme/tools/hello/ontoskill.ttl"] = f"http://localhost:{port}/packages/acme/tools/hello/x"
    with pytest.raises(RegistryError, match="refusing the redirect .* not on the registry's own host"):
        install(Registry(url + "/"), "acme/tools", home)
    assert _installed_files(home) == []
    # A redirect inside the registry's own host is followed.
    redirects["/packages/acme/tools/hello/ontoskill.ttl"] = url + "/packages/acme/tools/hello/moved.ttl"
    (root / "packages/acme/tools/hello/moved.ttl").write_text(MODULE)
    install(Registry(url + "/"), "acme/tools", home)
    assert [p.name for p in _installed_files(home)] == ["ontoskill.ttl", "package.json"]


def test_installed_files_are_never_more_readable_than_their_source(tmp_path: Path) -> None:
    root = tmp_path / "registry"
    _write_registry(root, "packages/acme/tools/package.json")
    module = root / "packages/acme/tools/hello/ontoskill.ttl"
    os.chmod(module, 0o600)
    os.chmod(root / "packages/acme/tools/package.json", 0o666)
    home = tmp_path / "home"
    install(Registry(str(root)), "acme/tools", home)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in _installed_files(home)}
    assert modes == {"ontoskill.ttl": 0o600, "package.json": 0o644}


def test_files_downloaded_over_http_are_0644(http_registry: tuple[Path, str, dict[str, str]], tmp_path: Path) -> None:
    root, url, _ = http_registry
    _write_registry(root, "packages/acme/tools/package.json")
    home = tmp_path / "home"
    old = os.umask(0)
    try:
        install(Registry(url + "/"), "acme/tools", home)
    finally:
        os.umask(old)
    assert {stat.S_IMODE(p.stat().st_mode) for p in _installed_files(home)} == {0o644}


def _add_entry(root: Path, entry: dict[str, Any]) -> None:
    index = json.loads((root / "index.json").read_text())
    index["packages"].insert(0, entry)
    (root / "index.json").write_text(json.dumps(index))


def test_one_bad_index_entry_does_not_block_the_registry(tmp_path: Path) -> None:
    root = tmp_path / "registry"
    _write_registry(root, "packages/acme/tools/package.json")
    _add_entry(root, {"package_id": "evil/escape", "manifest_path": "../../outside/package.json"})
    home = tmp_path / "home"
    install(Registry(str(root)), "acme/tools", home)
    assert [p.name for p in _installed_files(home)] == ["ontoskill.ttl", "package.json"]
    # The bad entry itself is named with its reason, not reported as missing.
    with pytest.raises(
        RegistryError, match=r"'evil/escape' cannot be installed from it: .*it could leave the registry"
    ):
        install(Registry(str(root)), "escape", home)


def test_an_index_nested_deeper_than_the_parser_goes_is_a_registry_error(tmp_path: Path) -> None:
    root = tmp_path / "registry"
    _write_registry(root, "packages/acme/tools/package.json")
    (root / "index.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(RegistryError, match="index.json: its JSON is nested too deeply"):
        install(Registry(str(root)), "acme/tools", tmp_path / "home")


@pytest.mark.parametrize(("field", "value"), [("modules", 5), ("skills", "x"), ("modules", [5])])
def test_a_manifest_field_of_the_wrong_type_is_a_registry_error(field: str, value: Any, tmp_path: Path) -> None:
    root = tmp_path / "registry"
    _write_registry(root, "packages/acme/tools/package.json")
    manifest_file = root / "packages/acme/tools/package.json"
    manifest = json.loads(manifest_file.read_text())
    manifest[field] = value
    manifest_file.write_text(json.dumps(manifest))
    home = tmp_path / "home"
    with pytest.raises(RegistryError, match=f"{field} must be a list|a path must be text"):
        install(Registry(str(root)), "acme/tools", home)
    assert _installed_files(home) == []


def test_a_package_over_the_total_cap_is_refused(
    http_registry: tuple[Path, str, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, url, _ = http_registry
    _write_registry(root, "packages/acme/tools/package.json")
    package = root / "packages/acme/tools"
    names = [f"m{i}/ontoskill.ttl" for i in range(4)]
    for name in names:
        (package / name).parent.mkdir()
        (package / name).write_text(MODULE + "# " + "x" * 1000 + "\n")
    manifest = json.loads((package / "package.json").read_text())
    manifest["modules"] = names
    (package / "package.json").write_text(json.dumps(manifest))
    # Each file is under the per-file cap; together they are over the package's.
    monkeypatch.setattr(registry_module, "MAX_PACKAGE_BYTES", 3000)
    home = tmp_path / "home"
    with pytest.raises(RegistryError, match="is over .* bytes .*package caps"):
        install(Registry(url + "/"), "acme/tools", home)
    assert _installed_files(home) == []


def test_a_registry_that_drips_bytes_is_stopped_by_the_package_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Dripping(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_response(200)
            self.end_headers()
            # One byte at a time, each well inside the per-read timeout, never ending.
            try:
                while True:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                return

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Dripping)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(registry_module, "PACKAGE_SECONDS", 0.5)
    home = tmp_path / "home"
    try:
        with pytest.raises(RegistryError, match="the install took over .* s; stopped"):
            install(Registry(f"http://127.0.0.1:{server.server_address[1]}/"), "acme/tools", home)
    finally:
        server.shutdown()
        server.server_close()
    assert _installed_files(home) == []


@pytest.mark.parametrize(("umask", "file_mode", "folder_mode"), [(0o000, 0o644, 0o755), (0o077, 0o600, 0o700)])
def test_install_respects_the_umask_and_makes_a_new_home_private(
    umask: int, file_mode: int, folder_mode: int, tmp_path: Path
) -> None:
    root = tmp_path / "registry"
    _write_registry(root, "packages/acme/tools/package.json")
    os.chmod(root / "packages/acme/tools/hello/ontoskill.ttl", 0o666)
    home = tmp_path / "home"
    old = os.umask(umask)
    try:
        install(Registry(str(root)), "acme/tools", home)
    finally:
        os.umask(old)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in _installed_files(home)} == {file_mode}
    folders = {stat.S_IMODE(p.stat().st_mode) for p in (home / "ontologies").rglob("*") if p.is_dir()}
    assert folders == {folder_mode}
