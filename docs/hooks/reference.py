"""MkDocs hook (mkdocs.yml ``hooks``): adds to the site the pages generated from the code
(``skillpilot.cli.reference.PAGES``: CLI, config.yaml, HTTP, MCP) and the repository files it
shows as they are (CONTRIBUTING.md, benchmarks/README.md and the benchmark charts), so none of
them is copied into docs/ by hand. A shown file's links are written for the repository (on
GitHub they work as they are); in the site each points at the page that shows its target."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

from skillpilot.cli.reference import PAGES

REPO = Path(__file__).resolve().parents[2]
# Site path -> the repository file shown there unchanged.
SHOWN = {"contributing.md": "CONTRIBUTING.md", "benchmarks/tables.md": "benchmarks/README.md"}
CHARTS = "benchmarks/results"
# A Markdown link or image target: ](target) or ](target#anchor).
LINK = re.compile(r"\]\((?![a-z]+:|#)([^)\s#]+)(#[^)\s]*)?\)")


def on_files(files: Files, config: Any) -> Files:
    for uri, build in PAGES.items():
        files.append(File.generated(config, uri, content=build()))
    for uri, source in SHOWN.items():
        files.append(File.generated(config, uri, abs_src_path=str(REPO / source)))
    for chart in sorted((REPO / CHARTS).glob("*.png")):
        files.append(File.generated(config, f"{CHARTS}/{chart.name}", abs_src_path=str(chart)))
    return files


def site_path(repository_path: str) -> str | None:
    """Where the site shows a repository file: docs/ as itself, a shown file at its page, the
    charts beside the benchmark page; None for anything the site does not show."""
    if repository_path.startswith("docs/"):
        return repository_path.removeprefix("docs/")
    shown = {source: uri for uri, source in SHOWN.items()}
    if repository_path in shown:
        return shown[repository_path]
    return repository_path if repository_path.startswith(f"{CHARTS}/") else None


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    source = SHOWN.get(page.file.src_uri)
    if source is None:
        return markdown

    def relink(match: re.Match[str]) -> str:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(source), match.group(1)))
        shown = site_path(target)
        if shown is None:
            return match.group(0)
        relative = posixpath.relpath(shown, posixpath.dirname(page.file.src_uri) or ".")
        return f"]({relative}{match.group(2) or ''})"

    return LINK.sub(relink, markdown)
