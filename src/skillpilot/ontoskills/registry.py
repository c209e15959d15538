"""OntoSkills registries: list, install and uninstall packages under ``$SKILLPILOT_HOME``.

Input: a registry, given as a folder or an ``http(s)://`` URL (of its ``index.json``, or of the
folder holding it), and a package reference (``author/package``, or just ``package`` when only
one author has it). ``index.json`` lists ``{"packages": [{package_id, trust_tier,
manifest_path | manifest_url, checksum?}]}``; a manifest path is relative to the index, module
paths are relative to the manifest (OntoSkills' layout, old and current).

Output: ``<home>/ontologies/author/<author>/<package>/`` holding ``package.json`` (its bytes as
published) and every module at its package-relative path (``<skill>/ontoskill.ttl``), plus with
``with_embeddings`` the manifest's ``embedding_files`` (``intents.json``) and, once,
``<home>/ontologies/system/embeddings/{model.onnx, tokenizer.json}`` (exported from the bundled
MiniLM: nothing is downloaded but the registry's own files). ``<home>/state/registry.lock.json``
records each package in OntoSkills' lock shape, which OntoMCP reads for tiers and aliases too.

Guarantees:

- checksums are checked when the registry gives them: an index entry's ``checksum`` is the
  SHA-256 of the manifest's bytes, a manifest's ``checksums`` maps package-relative paths to
  the SHA-256 of those files (``"sha256:<hex>"`` or bare hex). A mismatch aborts the install.
  (OntoSkills' own manifest field ``checksum`` has no defined meaning upstream, and no registry
  sets it, so it is not checked.)
- a path that could leave the package (absolute, ``..``, backslash, drive) is refused, and so
  is a folder-registry file that is a symlink out of the registry;
- an HTTP registry's references stay in its lane: ``http(s)`` on the registry's own host and
  port only; any other scheme (``file:``, ``ftp:`` ...) or host, named or redirected to, is
  refused with the reference in the error;
- installed files are never more readable than their source, nor than 0644 (a registry's
  0600 file stays 0600; a download is 0644), nor than the umask allows; folders likewise (0755
  at most); a home this creates is 0700;
- nothing is half-installed: files are fetched and checked in ``<home>/state/``, then the folder
  is moved into place with one rename (a reinstall swaps the old folder out the same way);
- bounded (``skillpilot.limits``): each file ``MAX_REGISTRY_FILE_BYTES`` (64 MiB), a package
  ``MAX_PACKAGE_FILES`` files and ``MAX_PACKAGE_BYTES`` (256 MiB) in all, each read waits at
  most ``REGISTRY_READ_TIMEOUT`` (30 s) and a whole install takes at most ``PACKAGE_SECONDS``
  (300 s, checked between reads);
- one unusable entry of ``index.json`` (a path out of the registry, another host) is skipped
  with a warning, and named with its reason if asked for; a manifest whose fields are not what
  OntoSkills writes (``"modules": 5``) is a ``RegistryError`` naming the field.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import RegistryError
from ..limits import (
    MAX_PACKAGE_BYTES,
    MAX_PACKAGE_FILES,
    MAX_REGISTRY_FILE_BYTES,
    PACKAGE_SECONDS,
    REGISTRY_READ_TIMEOUT,
)
from ..model import TrustTier
from ..sqlitefile import FOLDER_MODE
from . import vocab
from .export import export_embeddings
from .files import safe_relative, write_json_atomic
from .reader import LOCK_PATH, MANIFEST_FILE

log = logging.getLogger(__name__)

INDEX_FILE = "index.json"
INSTALLED_FILE_MODE = 0o644
INSTALLED_FOLDER_MODE = 0o755
# Installed packages stay on disk whatever happens to the lock: it only lists them.
_LOCK_ADVICE = (
    "; fix it, or move it aside (`mv registry.lock.json registry.lock.json.damaged`) and install the "
    "packages again to list them (their files stay where they are)"
)
_HEX = re.compile(r"^(?:sha256:)?([0-9a-fA-F]{64})$")


@dataclass(frozen=True)
class RegistryPackage:
    """One ``index.json`` entry, its manifest location resolved."""

    package_id: str
    manifest: str
    trust_tier: str | None
    checksum: str | None


@dataclass(frozen=True)
class InstalledPackage:
    """One package of the install lock."""

    package_id: str
    version: str
    trust_tier: str
    install_root: str
    installed_at: str
    source: str | None
    registry: str | None
    skills: tuple[str, ...]


class Registry:
    """A registry read from a folder or over HTTP(S); every fetch is capped and checked."""

    def __init__(self, location: str) -> None:
        self.location = location
        # Entries of the index that could not be used, by package id: why.
        self.refused: dict[str, str] = {}
        # When the install under way must end (``PACKAGE_SECONDS``); None outside an install.
        self.deadline: float | None = None
        self.remote = urllib.parse.urlparse(location).scheme in ("http", "https")
        if self.remote:
            self.index = location if location.endswith(".json") else location.rstrip("/") + "/" + INDEX_FILE
        else:
            path = Path(location).expanduser()
            self.index = str(path / INDEX_FILE if path.is_dir() else path)

    def packages(self) -> list[RegistryPackage]:
        """Every package the index lists (entries without an id or manifest are skipped)."""
        data = _json(self.fetch(self.index), self.index)
        entries = data.get("packages") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise RegistryError(self.index, 'not a registry index: expected {"packages": [...]}')
        packages = []
        self.refused = {}
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("package_id"), str):
                continue
            reference = entry.get("manifest_path") or entry.get("manifest_url")
            if not isinstance(reference, str):
                continue
            try:
                manifest = self.resolve(self.index, reference)
            except RegistryError as exc:
                # One bad entry must not hide the registry's other packages.
                log.warning("%s: skipping the entry of %s: %s", self.index, entry["package_id"], exc.reason)
                self.refused[entry["package_id"]] = str(exc)
                continue
            packages.append(
                RegistryPackage(
                    package_id=entry["package_id"],
                    manifest=manifest,
                    trust_tier=entry.get("trust_tier") if isinstance(entry.get("trust_tier"), str) else None,
                    checksum=entry.get("checksum") if isinstance(entry.get("checksum"), str) else None,
                )
            )
        return packages

    def find(self, reference: str) -> RegistryPackage:
        """The package ``reference`` names: an exact id (any case), else a unique package name."""
        packages = self.packages()
        wanted = reference.strip().lower()
        exact = [p for p in packages if p.package_id.lower() == wanted]
        named = [p for p in packages if p.package_id.lower().rsplit("/", 1)[-1] == wanted]
        found = exact or named
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            choices = ", ".join(sorted(p.package_id for p in found))
            raise RegistryError(self.location, f"{reference!r} is ambiguous: name one of {choices}")
        for package, why in self.refused.items():
            if wanted in (package.lower(), package.lower().rsplit("/", 1)[-1]):
                raise RegistryError(self.location, f"{package!r} cannot be installed from it: {why}")
        known = ", ".join(sorted(p.package_id for p in packages)) or "none"
        raise RegistryError(self.location, f"no package {reference!r}; it lists: {known}")

    def resolve(self, base: str, reference: str) -> str:
        """``reference`` (relative to the file ``base``) as a URL or path inside this registry."""
        if self.remote:
            url = urllib.parse.urljoin(base, reference)
            _same_site(self.index, url, f"refusing {reference!r} (named by {base})")
            return url
        relative = safe_relative(reference.removeprefix("./"))
        if relative is None:
            raise RegistryError(base, f"refusing the path {reference!r}: it could leave the registry")
        return str(Path(base).parent / relative)

    def fetch(self, location: str, limit: int = MAX_REGISTRY_FILE_BYTES) -> bytes:
        """The bytes at ``location`` (a URL of this registry, or a file inside its folder)."""
        if self.remote:
            _same_site(self.index, location, f"refusing {location!r}")
            return _download(location, limit, self.index, self.deadline)
        path = Path(location)
        root = Path(self.index).parent.resolve()
        try:
            real = path.resolve(strict=True)
        except OSError as exc:
            raise RegistryError(location, f"cannot be read: {exc.strerror or exc}") from exc
        if not real.is_relative_to(root):
            raise RegistryError(location, f"refusing to read it: it leads outside the registry ({real})")
        if real.stat().st_size > limit:
            raise RegistryError(location, _over(limit))
        return real.read_bytes()

    def mode(self, location: str) -> int:
        """The permission bits an installed copy of ``location`` gets: its source's, at most 0644,
        and no more than the umask allows."""
        source = INSTALLED_FILE_MODE if self.remote else os.stat(Path(location).resolve()).st_mode
        return source & INSTALLED_FILE_MODE & ~_umask()


def _same_site(registry: str, url: str, refusal: str) -> None:
    """Refuse ``url`` unless it is http(s) on the host and port of the registry's ``registry`` URL."""
    home, there = urllib.parse.urlsplit(registry), urllib.parse.urlsplit(url)
    if there.scheme not in ("http", "https"):
        raise RegistryError(registry, f"{refusal}: an HTTP registry's files must be http(s) URLs")
    if there.netloc.lower() != home.netloc.lower():
        raise RegistryError(
            registry, f"{refusal}: it is on {there.netloc}, not on the registry's own host {home.netloc}"
        )


def _umask() -> int:
    """The process's umask (reading it means setting it: set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _over(limit: int) -> str:
    return f"is over {limit:,} bytes (what is left of the file and package caps); refusing it"


def _make_folders(folder: Path) -> None:
    """``folder`` and its missing parents, each 0755 at most (``mkdir(parents=True)`` would give
    the parents the default 0777 less the umask)."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(mode=INSTALLED_FOLDER_MODE, exist_ok=True)


def _write_file(path: Path, data: bytes, mode: int) -> None:
    _make_folders(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(path, mode)  # os.open's mode only applies to a new file, and through the umask


def ontologies_root(home: Path) -> Path:
    """Where installed packages live (OntoSkills' ``~/.ontoskills/ontologies``)."""
    return Path(home) / "ontologies"


def lock_path(home: Path) -> Path:
    return Path(home) / LOCK_PATH


def install(registry: Registry, reference: str, home: Path, *, with_embeddings: bool = False) -> InstalledPackage:
    """Install (or reinstall) one package from ``registry``; see the module docstring."""
    registry.deadline = time.monotonic() + PACKAGE_SECONDS
    try:
        return _install(registry, reference, home, with_embeddings)
    finally:
        registry.deadline = None


def _install(registry: Registry, reference: str, home: Path, with_embeddings: bool) -> InstalledPackage:
    entry = registry.find(reference)
    manifest_bytes = registry.fetch(entry.manifest)
    _check(entry.checksum, manifest_bytes, entry.manifest)
    manifest = _json(manifest_bytes, entry.manifest)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("package_id"), str):
        raise RegistryError(entry.manifest, "not an OntoSkills package.json (no package_id)")
    package_id = manifest["package_id"]
    if package_id.lower() != entry.package_id.lower():
        raise RegistryError(entry.manifest, f"declares {package_id!r}, but the index lists it as {entry.package_id!r}")
    target_relative = _package_folder(package_id)
    files = _package_files(manifest, entry.manifest, with_embeddings)
    listed = manifest.get("checksums")
    checksums: dict[str, Any] = listed if isinstance(listed, dict) else {}
    state = _state_folder(home)
    staging = Path(tempfile.mkdtemp(prefix="install-", dir=state))
    total = len(manifest_bytes)
    try:
        # mkdtemp makes the folder private (0700); it becomes the package folder.
        os.chmod(staging, INSTALLED_FOLDER_MODE & ~_umask())
        for relative in files:
            location = registry.resolve(entry.manifest, str(relative))
            data = registry.fetch(location, min(MAX_REGISTRY_FILE_BYTES, MAX_PACKAGE_BYTES - total))
            total += len(data)
            _check(checksums.get(str(relative)), data, location)
            _write_file(staging / relative, data, registry.mode(location))
        _write_file(staging / MANIFEST_FILE, manifest_bytes, registry.mode(entry.manifest))
        target = ontologies_root(home) / target_relative
        _move_into_place(staging, target, state)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if with_embeddings:
        _ensure_model(home)
    tier = vocab.trust_tier(entry.trust_tier or manifest.get("trust_tier"))
    record = _lock_record(manifest, entry, registry, target, tier)
    lock = _read_lock(home)
    lock["packages"][package_id] = record
    write_json_atomic(lock_path(home), lock)
    return _installed(record)


def uninstall(reference: str, home: Path) -> InstalledPackage:
    """Remove an installed package (by id, or unique package name) and its lock entry."""
    lock = _read_lock(home)
    wanted = reference.strip().lower()
    ids = [p for p in lock["packages"] if p.lower() == wanted] or [
        p for p in lock["packages"] if p.lower().rsplit("/", 1)[-1] == wanted
    ]
    if len(ids) != 1:
        known = ", ".join(sorted(lock["packages"])) or "none"
        reason = "is ambiguous" if ids else "is not installed"
        raise RegistryError(reference, f"{reason}; installed packages: {known}")
    record = lock["packages"].pop(ids[0])
    target = ontologies_root(home) / _package_folder(ids[0])
    if target.exists():
        state = _state_folder(home)
        # One rename makes the package vanish at once; deleting the files comes after.
        trash = Path(tempfile.mkdtemp(prefix="uninstall-", dir=state))
        target.rename(trash / "package")
        shutil.rmtree(trash, ignore_errors=True)
        if target.parent.is_dir() and not any(target.parent.iterdir()):
            target.parent.rmdir()
    write_json_atomic(lock_path(home), lock)
    return _installed(record)


def installed(home: Path) -> list[InstalledPackage]:
    """The installed packages, by id."""
    lock = _read_lock(home)
    return [_installed(lock["packages"][p]) for p in sorted(lock["packages"])]


def _state_folder(home: Path) -> Path:
    """``<home>/state``, made if needed; a home made here is private (0700), as every store's is."""
    if not Path(home).exists():
        Path(home).mkdir(mode=FOLDER_MODE, parents=True)
    state = lock_path(home).parent
    state.mkdir(mode=INSTALLED_FOLDER_MODE, exist_ok=True)
    return state


def _package_folder(package_id: str) -> PurePosixPath:
    relative = safe_relative(package_id)
    if relative is None or len(relative.parts) != 2:
        raise RegistryError(package_id, "a package id must be 'author/package' (two plain names)")
    return PurePosixPath("author") / relative


def _package_files(manifest: dict[str, Any], source: str, with_embeddings: bool) -> list[PurePosixPath]:
    """Every file the manifest names, each checked to stay inside the package."""
    fields = ("modules", "skills", *(["embedding_files"] if with_embeddings else []))
    for field in fields:
        if not isinstance(manifest.get(field) or [], list):
            raise RegistryError(source, f"{field} must be a list, not {type(manifest[field]).__name__}")
    names: list[object] = list(manifest.get("modules") or [])
    names += [s.get("path") for s in manifest.get("skills") or [] if isinstance(s, dict)]
    if with_embeddings:
        names += list(manifest.get("embedding_files") or [])
    if len(names) > MAX_PACKAGE_FILES:
        raise RegistryError(source, f"names {len(names):,} files; packages of over {MAX_PACKAGE_FILES:,} are refused")
    files: list[PurePosixPath] = []
    for name in dict.fromkeys(n for n in names if n is not None):
        if not isinstance(name, str):
            raise RegistryError(source, f"refusing the package path {name!r}: a path must be text")
        relative = safe_relative(name)
        if relative is None or relative.name == MANIFEST_FILE:
            raise RegistryError(source, f"refusing the package path {name!r}: it could leave the package folder")
        files.append(relative)
    return files


def _move_into_place(staging: Path, target: Path, state: Path) -> None:
    """Rename ``staging`` to ``target``; an existing ``target`` is swapped out, not merged into."""
    _make_folders(target.parent)
    if not target.exists():
        staging.rename(target)
        return
    trash = Path(tempfile.mkdtemp(prefix="replaced-", dir=state))
    target.rename(trash / "package")
    try:
        staging.rename(target)
    except OSError:
        (trash / "package").rename(target)
        raise
    finally:
        shutil.rmtree(trash, ignore_errors=True)


def _ensure_model(home: Path) -> None:
    folder = ontologies_root(home) / "system" / "embeddings"
    if not ((folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file()):
        export_embeddings(folder)


def _lock_record(
    manifest: dict[str, Any], entry: RegistryPackage, registry: Registry, target: Path, tier: TrustTier
) -> dict[str, Any]:
    """OntoSkills' ``InstalledPackageState`` (plus ``registry``: where it came from)."""
    skills = [s for s in manifest.get("skills") or [] if isinstance(s, dict) and isinstance(s.get("id"), str)]
    return {
        "package_id": manifest["package_id"],
        "version": str(manifest.get("version") or ""),
        "trust_tier": tier,
        "source": manifest.get("source") if isinstance(manifest.get("source"), str) else None,
        "source_kind": "ontology",
        "installed_at": dt.datetime.now(dt.UTC).isoformat(),
        "install_root": str(target),
        "manifest_path": str(target / MANIFEST_FILE),
        "registry": registry.location,
        "skills": [
            {
                "skill_id": s["id"],
                "module_path": str(target / str(s.get("path") or "")),
                "aliases": [a for a in s.get("aliases") or [] if isinstance(a, str)],
                "enabled": bool(s.get("default_enabled", False)),
                "default_enabled": bool(s.get("default_enabled", False)),
            }
            for s in skills
        ],
    }


def _installed(record: dict[str, Any]) -> InstalledPackage:
    return InstalledPackage(
        package_id=str(record.get("package_id")),
        version=str(record.get("version") or ""),
        trust_tier=str(record.get("trust_tier") or ""),
        install_root=str(record.get("install_root") or ""),
        installed_at=str(record.get("installed_at") or ""),
        source=record.get("source"),
        registry=record.get("registry"),
        skills=tuple(str(s.get("skill_id")) for s in record.get("skills") or [] if isinstance(s, dict)),
    )


def _read_lock(home: Path) -> dict[str, Any]:
    path = lock_path(home)
    if not path.is_file():
        return {"packages": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RegistryError(path, f"the install lock is unreadable ({exc}){_LOCK_ADVICE}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("packages"), dict):
        raise RegistryError(path, f'the install lock is not {{"packages": {{...}}}}{_LOCK_ADVICE}')
    return data


def _check(expected: object, data: bytes, location: str) -> None:
    if expected is None:
        return
    match = _HEX.match(expected) if isinstance(expected, str) else None
    if match is None:
        raise RegistryError(location, f"the registry gives an unreadable checksum {expected!r} (want sha256:<hex>)")
    actual = hashlib.sha256(data).hexdigest()
    if actual != match.group(1).lower():
        raise RegistryError(location, f"checksum mismatch: expected sha256 {match.group(1).lower()}, got {actual}")


def _json(data: bytes, location: str) -> Any:
    try:
        return json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RegistryError(location, f"is not valid JSON: {exc}") from exc
    except RecursionError:
        raise RegistryError(location, "its JSON is nested too deeply") from None


class _SameSiteRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to http(s) on the registry's own host."""

    def __init__(self, registry: str) -> None:
        self.registry = registry

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        _same_site(self.registry, newurl, f"refusing the redirect from {req.full_url} to {newurl!r}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _download(url: str, limit: int, registry: str, deadline: float | None = None) -> bytes:
    """At most ``limit`` bytes from ``url``; past ``deadline`` (``time.monotonic()``) the read
    stops (checked after each read, which waits at most ``REGISTRY_READ_TIMEOUT``)."""
    request = urllib.request.Request(url, headers={"User-Agent": "skillpilot"})
    opener = urllib.request.build_opener(_SameSiteRedirects(registry))
    try:
        with opener.open(request, timeout=REGISTRY_READ_TIMEOUT) as response:
            data = bytearray()
            while chunk := response.read1(65536):
                data += chunk
                if len(data) > limit:
                    break
                if deadline is not None and time.monotonic() > deadline:
                    raise RegistryError(
                        url, f"the install took over {PACKAGE_SECONDS:.0f} s; stopped (nothing installed)"
                    )
    except urllib.error.HTTPError as exc:
        raise RegistryError(url, f"HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RegistryError(url, f"cannot be fetched: {reason}") from exc
    if len(data) > limit:
        raise RegistryError(url, _over(limit))
    return bytes(data)
