"""Installing OntoSkills packages from a registry served over real HTTP on 127.0.0.1.

The registry is built per test from the copied OntoSkills files (index.json, both manifests, the
hello and office modules). The office package lists four sub-skill modules that were not copied
(see the bench README), so installing it fails half-way: the all-or-nothing case comes for free.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from skillpilot import SkillPilot
from skillpilot.errors import RegistryError
from skillpilot.ontoskills.registry import Registry, install, installed, uninstall

from .cli_util import CliOutcome, run_cli
from .conftest import BENCH, require_corpus

pytest.importorskip("rdflib")

COPIED = BENCH / "ontoskills" / "registry"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        """Keep test output clean: the server would log every request to stderr."""


@pytest.fixture()
def registry_dir(tmp_path: Path) -> Path:
    require_corpus()
    root = tmp_path / "registry"
    shutil.copytree(COPIED / "packages", root / "packages")
    shutil.copy(COPIED / "index.json", root / "index.json")
    return root


@pytest.fixture()
def served(registry_dir: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(registry_dir))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _edit_json(path: Path, change: Any) -> None:
    data = json.loads(path.read_text("utf-8"))
    change(data)
    path.write_text(json.dumps(data), "utf-8")


def _greeting(registry_dir: Path) -> Path:
    return registry_dir / "packages" / "mareasw" / "greeting" / "package.json"


def _state(home: Path) -> list[str]:
    """Everything install leaves in the state folder besides the lock (should be nothing)."""
    folder = home / "state"
    return sorted(p.name for p in folder.iterdir() if p.name != "registry.lock.json") if folder.exists() else []


def test_install_over_http_then_route_list_and_uninstall(served: str, isolated_home: Path) -> None:
    package = install(Registry(served), "mareasw/greeting", isolated_home)
    root = isolated_home / "ontologies" / "author" / "mareasw" / "greeting"
    assert (package.package_id, package.version, package.trust_tier) == (
        "mareasw/greeting",
        "0.1.0",
        "verified",
    )
    assert package.install_root == str(root)
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == [
        "hello/ontoskill.ttl",
        "package.json",
    ]
    assert (root / "package.json").read_bytes() == _greeting(COPIED).read_bytes()
    lock = json.loads((isolated_home / "state" / "registry.lock.json").read_text("utf-8"))
    [skill] = lock["packages"]["mareasw/greeting"]["skills"]
    assert skill == {
        "skill_id": "hello",
        "module_path": str(root / "hello" / "ontoskill.ttl"),
        "aliases": ["greeting", "ciao"],
        "enabled": False,
        "default_enabled": False,
    }
    assert [p.package_id for p in installed(isolated_home)] == ["mareasw/greeting"]
    assert _state(isolated_home) == []

    pilot = SkillPilot(home=isolated_home, enable_semantic=False, preconditions=False)
    pilot.index([isolated_home / "ontologies"])
    result = pilot.route("say hello to everyone")
    assert result.skill is not None and result.skill.key == "mareasw/greeting/hello"
    assert pilot.get("hello").skill.trust_tier == "verified"

    removed = uninstall("greeting", isolated_home)
    assert removed.package_id == "mareasw/greeting"
    assert not root.exists() and installed(isolated_home) == []
    with pytest.raises(RegistryError, match="is not installed; installed packages: none"):
        uninstall("greeting", isolated_home)


def test_a_failing_install_leaves_nothing_behind(served: str, isolated_home: Path) -> None:
    install(Registry(served), "greeting", isolated_home)
    before = (isolated_home / "state" / "registry.lock.json").read_bytes()
    with pytest.raises(RegistryError, match=r"office/public/docx/ontoskill\.ttl: HTTP 404"):
        install(Registry(served), "office", isolated_home)
    assert not (isolated_home / "ontologies" / "author" / "mareasw" / "office").exists()
    assert (isolated_home / "state" / "registry.lock.json").read_bytes() == before
    assert _state(isolated_home) == []


def test_checksums_are_checked_when_the_registry_gives_them(
    served: str, registry_dir: Path, isolated_home: Path
) -> None:
    manifest = _greeting(registry_dir)
    module = manifest.parent / "hello" / "ontoskill.ttl"
    right = hashlib.sha256(module.read_bytes()).hexdigest()
    _edit_json(manifest, lambda m: m.update(checksums={"hello/ontoskill.ttl": "sha256:" + "0" * 64}))
    with pytest.raises(RegistryError, match=f"checksum mismatch: expected sha256 {'0' * 64}, got {right}"):
        install(Registry(served), "greeting", isolated_home)
    assert not (isolated_home / "ontologies" / "author" / "mareasw").exists()

    _edit_json(manifest, lambda m: m.update(checksums={"hello/ontoskill.ttl": "sha256:" + right}))
    digest = hashlib.sha256(manifest.read_bytes()).hexdigest()

    def pin(index: dict[str, Any]) -> None:
        index["packages"][1]["checksum"] = f"sha256:{digest}"

    _edit_json(registry_dir / "index.json", pin)
    assert install(Registry(served), "greeting", isolated_home).package_id == "mareasw/greeting"
    manifest.write_bytes(manifest.read_bytes() + b" ")  # the manifest changed after it was pinned
    with pytest.raises(RegistryError, match="package.json: checksum mismatch"):
        install(Registry(served), "greeting", isolated_home)
    assert (isolated_home / "ontologies" / "author" / "mareasw" / "greeting" / "hello").is_dir()


@pytest.mark.parametrize("path", ["../../escaped.ttl", "/etc/passwd", "hello/../../x.ttl", "a\\..\\b.ttl", ""])
def test_paths_leaving_the_package_are_refused(path: str, served: str, registry_dir: Path, isolated_home: Path) -> None:
    _edit_json(_greeting(registry_dir), lambda m: m["modules"].append(path))
    with pytest.raises(RegistryError, match="refusing the package path"):
        install(Registry(served), "greeting", isolated_home)
    assert not (isolated_home / "ontologies").exists()
    assert not (isolated_home.parent / "escaped.ttl").exists()


def test_a_folder_registry_refuses_symlinks_out_of_it(registry_dir: Path, isolated_home: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.ttl"
    secret.write_text("secret", "utf-8")
    module = _greeting(registry_dir).parent / "hello" / "ontoskill.ttl"
    module.unlink()
    module.symlink_to(secret)
    with pytest.raises(RegistryError, match="leads outside the registry"):
        install(Registry(str(registry_dir)), "greeting", isolated_home)


def test_reinstall_replaces_the_package_and_embeddings_come_with_the_flag(
    served: str, registry_dir: Path, isolated_home: Path
) -> None:
    install(Registry(served), "greeting", isolated_home)
    root = isolated_home / "ontologies" / "author" / "mareasw" / "greeting"
    (root / "hello" / "stale.txt").write_text("left over", "utf-8")
    intents = {"model": "sentence-transformers/all-MiniLM-L6-v2", "dimension": 384, "intents": []}
    (_greeting(registry_dir).parent / "hello" / "intents.json").write_text(json.dumps(intents), "utf-8")
    _edit_json(_greeting(registry_dir), lambda m: m.update(version="0.2.0", embedding_files=["hello/intents.json"]))
    assert install(Registry(served), "greeting", isolated_home).version == "0.2.0"
    assert not (root / "hello" / "stale.txt").exists()  # swapped, not merged
    assert not (root / "hello" / "intents.json").exists()  # only with --with-embeddings
    install(Registry(served), "greeting", isolated_home, with_embeddings=True)
    assert json.loads((root / "hello" / "intents.json").read_text("utf-8")) == intents
    system = isolated_home / "ontologies" / "system" / "embeddings"
    assert sorted(p.name for p in system.iterdir()) == ["model.onnx", "tokenizer.json"]
    assert _state(isolated_home) == []


def test_unknown_and_ambiguous_packages(served: str, registry_dir: Path, isolated_home: Path) -> None:
    with pytest.raises(RegistryError, match="no package 'nope'; it lists: mareasw/greeting, mareasw/office"):
        install(Registry(served), "nope", isolated_home)

    def twin(index: dict[str, Any]) -> None:
        index["packages"].append({**index["packages"][1], "package_id": "other/greeting"})

    _edit_json(registry_dir / "index.json", twin)
    with pytest.raises(RegistryError, match="'greeting' is ambiguous: name one of mareasw/greeting, other/greeting"):
        install(Registry(served), "greeting", isolated_home)
    with pytest.raises(RegistryError, match="declares 'mareasw/greeting', but the index lists it as 'other/greeting'"):
        install(Registry(served), "other/greeting", isolated_home)


def test_cli_install_route_list_uninstall(served: str, isolated_home: Path) -> None:
    env = {"SKILLPILOT_ENABLE_SEMANTIC": "false", "SKILLPILOT_PRECONDITIONS": "off", "SKILLPILOT_REGISTRY": served}

    def cli(*args: str, **changes: str | None) -> CliOutcome:
        return run_cli(*args, home=isolated_home, **{**env, **changes})

    done = cli("install", "mareasw/greeting", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["installed"]["package_id"], data["index"]["total"]) == ("mareasw/greeting", 1)
    routed = json.loads(cli("route", "say hello", "--json").stdout)
    assert routed["skill"]["key"] == "mareasw/greeting/hello"
    listed = json.loads(cli("list", "--installed", "--json").stdout)
    assert [p["package_id"] for p in listed] == ["mareasw/greeting"]
    available = json.loads(cli("list", "--registry", served, "--json").stdout)
    assert [p["package_id"] for p in available] == ["mareasw/office", "mareasw/greeting"]
    failed = cli("install", "office")
    assert failed.returncode == 1 and "HTTP 404" in failed.stderr and failed.stdout == ""
    gone = cli("uninstall", "mareasw/greeting", "--json")
    assert gone.returncode == 0 and json.loads(gone.stdout)["index"]["total"] == 0
    assert cli("uninstall", "mareasw/greeting").returncode == 1
    no_registry = cli("install", "x", SKILLPILOT_REGISTRY=None)
    assert no_registry.returncode == 1 and "give --registry" in no_registry.stderr
