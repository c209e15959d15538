"""OntoSkills commands: publish skills in its format, and install its packages.

    skillpilot compile -i SKILLS [-i ...] -o OUT [--shacl SHAPES] [--package AUTHOR/PKG] [--no-embeddings]
    skillpilot export-embeddings --output-dir DIR
    skillpilot install PACKAGE --registry FOLDER|URL [--with-embeddings] [--no-index]
    skillpilot uninstall PACKAGE [--no-index]
    skillpilot list [--installed | --registry FOLDER|URL]

Installed packages go to ``$SKILLPILOT_HOME/ontologies/author/<author>/<package>/`` and that folder
is (re)indexed after an install or uninstall, so the next route sees them. Same conventions as the
rest of the CLI: results on stdout (JSON with ``--json``), messages on stderr, exit 1 on an error.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ..encoders import get_encoder
from ..model import TRUST_TIERS, IndexReport
from ..ontoskills import registry as registries
from ..ontoskills import vocab
from ..ontoskills.compile import compile_skills
from ..ontoskills.export import export_embeddings
from ..router import SkillPilot
from . import HomeOption, JsonOption, _fail, _pilot, _print_index_report, _print_json, _run, err, out

RegistryOption = Annotated[
    str | None,
    typer.Option(
        "--registry",
        envvar="SKILLPILOT_REGISTRY",
        help="Registry folder or http(s) URL (of index.json or its folder) [env SKILLPILOT_REGISTRY].",
    ),
]
NoIndexOption = Annotated[
    bool, typer.Option("--no-index", help="Do not refresh the index's ontologies folder afterwards.")
]


def compile_command(
    inputs: Annotated[
        list[Path],
        typer.Option("--input", "-i", help="Skill folder, tool catalog or OntoSkills tree (repeatable)."),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder to write <skill>/ontoskill.ttl into.")],
    shacl: Annotated[
        Path | None,
        typer.Option("--shacl", help="SHACL shapes (OntoSkills' ontoskills.shacl.ttl) to validate with."),
    ] = None,
    package: Annotated[
        str | None,
        typer.Option("--package", help="Also write package.json for this package id (author/package)."),
    ] = None,
    trust_tier: Annotated[str, typer.Option("--trust-tier", help="The package.json trust tier.")] = "community",
    no_embeddings: Annotated[
        bool, typer.Option("--no-embeddings", help="Write no intents.json (no model is loaded).")
    ] = False,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write each skill as an OntoSkills module (ontoskill.ttl) with its intents.json (all-MiniLM-L6-v2)."""
    if trust_tier not in TRUST_TIERS:
        raise typer.BadParameter(f"use one of {', '.join(TRUST_TIERS)}", param_hint="--trust-tier")
    if package is not None and len(package.split("/")) != 2:
        raise typer.BadParameter("use author/package", param_hint="--package")
    pilot = _run(lambda: _pilot(home))
    # OntoSkills reads MiniLM vectors, whatever model SkillPilot routes with.
    encoder = None if no_embeddings else _run(lambda: get_encoder("minilm", pilot.settings))
    report = _run(
        lambda: compile_skills(
            inputs,
            output,
            encoder=encoder,
            shapes=shacl,
            package_id=package,
            trust_tier=vocab.trust_tier(trust_tier),
        )
    )
    if as_json:
        _print_json(asdict(report))
    else:
        with_intents = sum(1 for c in report.compiled if c.intents_json)
        err.print(
            f"compiled [bold]{len(report.compiled)}[/bold] skills into {report.output} "
            f"({with_intents} with intents.json), {len(report.skipped)} skipped",
            markup=True,
        )
    for skipped in report.skipped if not as_json else ():
        line = f"  [yellow]skipped[/yellow] {escape(skipped.path)}: {escape(skipped.reason)}"
        err.print(line, markup=True, soft_wrap=True)
    for warning in report.warnings:
        err.print(f"  [yellow]warning[/yellow] {escape(warning)}", markup=True, soft_wrap=True)


def export_embeddings_command(
    output_dir: Annotated[Path, typer.Option("--output-dir", help="Folder for model.onnx + tokenizer.json.")],
    as_json: JsonOption = False,
) -> None:
    """Write all-MiniLM-L6-v2 as model.onnx + tokenizer.json (OntoSkills' layout; an embed.provider)."""
    files = _run(lambda: export_embeddings(output_dir))
    if as_json:
        _print_json({"model": asdict(files[0]), "tokenizer": asdict(files[1])})
        return
    for file in files:
        out.print(f"{file.path}  {file.bytes:,} bytes  sha256 {file.sha256}", markup=False, soft_wrap=True)


def install(
    package: Annotated[str, typer.Argument(help="Package id (author/package) or a unique package name.")],
    registry: RegistryOption = None,
    with_embeddings: Annotated[
        bool, typer.Option("--with-embeddings", help="Also install intents.json files and the query model.")
    ] = False,
    no_index: NoIndexOption = False,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Install an OntoSkills package from a registry (checksums checked, installed atomically)."""
    source = _registry(registry)
    pilot = _run(lambda: _pilot(home))
    done = _run(lambda: registries.install(source, package, pilot.settings.home, with_embeddings=with_embeddings))
    report = None if no_index else _reindex(pilot)
    if as_json:
        _print_json({"installed": asdict(done), "index": asdict(report) if report else None})
        return
    err.print(
        f"installed {done.package_id} {done.version} ({done.trust_tier}, {len(done.skills)} skills) "
        f"into {done.install_root}",
        markup=False,
        soft_wrap=True,
    )
    if report:
        _print_index_report(report, as_json=False)


def uninstall(
    package: Annotated[str, typer.Argument(help="Installed package id or unique package name.")],
    no_index: NoIndexOption = False,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove an installed OntoSkills package."""
    pilot = _run(lambda: _pilot(home))
    done = _run(lambda: registries.uninstall(package, pilot.settings.home))
    report = None if no_index else _reindex(pilot)
    if as_json:
        _print_json({"uninstalled": asdict(done), "index": asdict(report) if report else None})
        return
    err.print(f"uninstalled {done.package_id} from {done.install_root}", markup=False, soft_wrap=True)
    if report:
        _print_index_report(report, as_json=False)


def list_command(
    installed: Annotated[bool, typer.Option("--installed", help="Installed packages (the default).")] = False,
    registry: Annotated[
        str | None, typer.Option("--registry", help="List this registry's packages instead (folder or URL).")
    ] = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """List installed OntoSkills packages, or a registry's packages."""
    if installed and registry:
        raise typer.BadParameter("give --installed or --registry, not both")
    if registry:
        available = _run(_registry(registry).packages)
        if as_json:
            _print_json([asdict(p) for p in available])
            return
        table = Table("package", "tier", box=None)
        for entry in available:
            table.add_row(entry.package_id, entry.trust_tier or "")
        out.print(table)
        return
    pilot = _run(lambda: _pilot(home))
    packages = _run(lambda: registries.installed(pilot.settings.home))
    if as_json:
        _print_json([asdict(p) for p in packages])
        return
    if not packages:
        err.print("no OntoSkills package is installed", markup=False)
        return
    table = Table("package", "version", "tier", "skills", box=None)
    for package in packages:
        table.add_row(package.package_id, package.version, package.trust_tier, ", ".join(package.skills))
    out.print(table)


def _registry(location: str | None) -> registries.Registry:
    if not location:
        raise _fail("no registry: give --registry FOLDER|URL or set SKILLPILOT_REGISTRY")
    return registries.Registry(location)


def _reindex(pilot: SkillPilot) -> IndexReport:
    root = registries.ontologies_root(pilot.settings.home)
    root.mkdir(parents=True, exist_ok=True)
    return _run(lambda: pilot.index([root]))


def register(app: typer.Typer) -> None:
    """Add ``compile``, ``export-embeddings``, ``install``, ``uninstall`` and ``list`` to the app."""
    app.command("compile")(compile_command)
    app.command("export-embeddings")(export_embeddings_command)
    app.command("install")(install)
    app.command("uninstall")(uninstall)
    app.command("list")(list_command)
