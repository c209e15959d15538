"""Registries stay in their lane: an HTTP registry (a real server on 127.0.0.1) may only point at
http(s) files on its own host, redirects included; installed files are never more readable than
their source nor than 0644. Each registry is written by the test (no corpus needed)."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from skillpilot.errors import RegistryError
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
