"""MkDocs hook (mkdocs.yml ``hooks``): adds to the site the pages generated from the code
(``skillpilot.cli.reference.PAGES``: CLI, config.yaml, HTTP, MCP) and the repository files it
shows as they are (CONTRIBUTING.md, benchmarks/README.md and the benchmark charts), so none of
them is copied into docs/ by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

from skillpilot.cli.reference import PAGES

REPO = Path(__file__).resolve().parents[2]
# Site path -> the repository file shown there unchanged.
SHOWN = {"contributing.md": "CONTRIBUTING.md", "benchmarks/tables.md": "benchmarks/README.md"}


def on_files(files: Files, config: Any) -> Files:
    for uri, build in PAGES.items():
        files.append(File.generated(config, uri, content=build()))
    for uri, source in SHOWN.items():
        files.append(File.generated(config, uri, abs_src_path=str(REPO / source)))
    for chart in sorted((REPO / "benchmarks" / "results").glob("*.png")):
        files.append(File.generated(config, f"benchmarks/results/{chart.name}", abs_src_path=str(chart)))
    return files
