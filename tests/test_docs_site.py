"""The documentation site: reference pages generated from the code name every command, option,
setting, route and tool; `skillpilot docs` builds the site once and serves it over HTTP; no page
loads anything from the network."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
import typer.main

from skillpilot.cli import app, docs_cmd, reference
from skillpilot.config import OPTIONS, env_name

from .cli_util import run_cli
from .conftest import REPO


def _section(page: str, heading: str) -> str:
    """The text of ``page`` under ``heading`` up to the next heading of its level."""
    level = heading.split(" ", 1)[0]
    start = page.index(f"\n{heading}\n")
    end = page.find(f"\n{level} ", start + len(heading) + 2)
    return page[start : end if end != -1 else None]


def _command_paths(command: object = None, path: tuple[str, ...] = ()) -> dict[str, object]:
    command = command or typer.main.get_command(app)
    found = {" ".join(path): command} if path else {}
    children = getattr(command, "commands", None) or {}
    for name in list(children):
        found.update(_command_paths(children[name], (*path, name)))
    return found


def test_the_cli_page_has_every_command_with_every_option() -> None:
    page = reference.cli_page()
    paths = _command_paths()
    assert {"route", "feedback confirm", "config init", "docs"} <= set(paths)
    for path, command in paths.items():
        section = _section(page, f"## skillpilot {path}")
        for param in command.params:  # type: ignore[attr-defined]
            if param.param_type_name == "option":
                for spelling in (*param.opts, *param.secondary_opts):
                    assert f"`{spelling}`" in section, f"`skillpilot {path}`: {spelling} is not on the page"
            else:
                assert f"`{param.name.upper()}`" in section


def test_the_cli_page_says_which_commands_lack_json() -> None:
    line = next(s for s in reference.cli_page().splitlines() if s.startswith("Commands without `--json`"))
    assert "`serve`" in line and "`mcp`" in line and "`route`" not in line


def test_the_config_page_has_every_key_with_its_variable_and_default() -> None:
    page = reference.config_page()
    for option in OPTIONS:
        row = next(line for line in page.splitlines() if line.startswith(f"| `{option.key}` |"))
        assert f"`{env_name(option.field)}`" in row
    hard = next(line for line in page.splitlines() if line.startswith("| `router.hardRouteThreshold` |"))
    assert "`0.8`" in hard and "number" in hard


def test_the_http_page_has_every_route_the_service_declares() -> None:
    document = reference.openapi_document()
    page = reference.http_page()
    assert "/route" in document["paths"] and "/feedback/{signal_id}" in document["paths"]
    for path, operations in document["paths"].items():
        for method in operations:
            assert f"## {method.upper()} `{path}`" in page
    route = _section(page, "## POST `/route`")
    assert "| `message` | string | yes |" in route


def test_the_mcp_page_has_every_tool_and_argument() -> None:
    tools, resources = reference.mcp_tools()
    page = reference.mcp_page()
    assert {"route", "ontoskill", "find_skill"} <= {t.name for t in tools}
    for tool in tools:
        section = _section(page, f"## {tool.name}")
        for argument in tool.input_schema.get("properties", {}):
            assert f"| `{argument}` |" in section
    assert "`ontology://schema`" in page and resources


def test_a_table_cell_keeps_pipes_and_stays_on_one_line() -> None:
    assert reference.cell("on|off\n  default") == "on\\|off default"


# -- building and serving -------------------------------------------------------------------------
def test_the_fingerprint_changes_when_a_page_does(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n", encoding="utf-8")
    page = tmp_path / "docs" / "index.md"
    page.write_text("# one\n", encoding="utf-8")
    before = docs_cmd.sources_fingerprint(tmp_path)
    assert docs_cmd.sources_fingerprint(tmp_path) == before
    page.write_text("# one, edited\n", encoding="utf-8")
    assert docs_cmd.sources_fingerprint(tmp_path) != before


def test_a_folder_that_is_no_checkout_is_refused(tmp_path: Path) -> None:
    proc = run_cli("docs", "--no-serve", "--source", str(tmp_path), home=tmp_path / "home")
    assert proc.returncode == 1
    assert "not a SkillPilot checkout (no mkdocs.yml and docs/ there)" in proc.stderr


def test_without_a_checkout_or_a_site_it_says_how_to_get_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docs_cmd, "PACKAGE", tmp_path / "site-packages" / "skillpilot")
    monkeypatch.chdir(tmp_path)
    proc = run_cli("docs", "--no-serve", home=tmp_path / "home")
    assert proc.returncode == 1
    assert "run `skillpilot docs --source /path/to/skillpilot`" in proc.stderr


def _shown(name: str, value: int | float) -> str:
    """How the security model's table writes a bound: bytes in MiB, seconds with "s", counts with commas."""
    if name.endswith("_BYTES"):
        return f"`{name}` {int(value) >> 20} MiB"
    if isinstance(value, float):
        return f"`{name}` {value:g} s"
    return f"`{name}` {value:,}"


def test_the_security_page_shows_every_bound_with_its_value() -> None:
    from skillpilot import limits

    model = (REPO / "docs" / "security.md").read_text(encoding="utf-8")
    bounds = {
        name: value
        for name, value in vars(limits).items()
        if name.isupper() and not name.startswith("DEFAULT_") and isinstance(value, (int, float))
    }
    assert "MAX_LIST_ITEMS" in bounds and "PACKAGE_SECONDS" in bounds
    missing = [
        _shown(name, value)
        for name, value in bounds.items()
        if name not in ("MIN_TOP_K", "MAX_TOP_K") and _shown(name, value) not in model
    ]
    missing += [f"`{f}` {n:,}" for f, n in limits.HOOK_FIELD_CHARS.items() if f"`{f}` {n:,}" not in model]
    if f"`MIN_TOP_K`-`MAX_TOP_K` {limits.MIN_TOP_K}-{limits.MAX_TOP_K}" not in model:
        missing.append("MIN_TOP_K-MAX_TOP_K")
    assert missing == []


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`skillpilot docs --port 0` on a fresh home: the URL it serves and the site folder."""
    pytest.importorskip("mkdocs")
    home = tmp_path_factory.mktemp("docs-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLPILOT_")}
    command = [sys.executable, "-m", "skillpilot", "docs", "--port", "0", "--source", str(REPO), "--home", str(home)]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        lines = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            lines.append(line)
            found = re.search(r"documentation on (http://127\.0\.0\.1:\d+/)", line)
            if found:
                yield found.group(1), home / "site"
                break
            if not line and proc.poll() is not None:
                pytest.fail("skillpilot docs exited: " + "".join(lines))
        else:
            pytest.fail("skillpilot docs did not start serving: " + "".join(lines))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


@pytest.mark.slow
def test_the_site_is_served_over_http(served: tuple[str, Path]) -> None:
    url, _ = served
    status, home_page = _get(url)
    assert status == 200 and "<title>SkillPilot</title>" in home_page
    status, cli = _get(url + "reference/cli/")
    assert status == 200 and "skillpilot route" in cli and "--fail-on-passthrough" in cli
    status, http = _get(url + "reference/http/")
    assert status == 200 and "/feedback/{signal_id}" in http
    assert _get(url + "no-such-page/")[0] == 404


@pytest.mark.slow
def test_a_second_run_serves_the_site_it_built(served: tuple[str, Path]) -> None:
    _, site = served
    home = site.parent
    proc = subprocess.run(
        [sys.executable, "-m", "skillpilot", "docs", "--no-serve", "--source", str(REPO), "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(site)
    assert "building" not in proc.stderr


class _Resources(HTMLParser):
    """Every URL a page makes the browser fetch by itself (not the links a reader may follow)."""

    FETCHED = {"script": "src", "img": "src", "iframe": "src", "source": "src", "audio": "src", "video": "src"}

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.classes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.classes.extend((values.get("class") or "").split())
        if tag in self.FETCHED and values.get(self.FETCHED[tag]):
            self.urls.append(values[self.FETCHED[tag]] or "")
        if tag == "link" and values.get("href"):
            self.urls.append(values["href"] or "")
        if values.get("style"):
            self.urls.extend(re.findall(r"url\(\s*['\"]?([^'\")]+)", values["style"] or ""))


EXTERNAL = re.compile(r"^(https?:)?//", re.I)


@pytest.mark.slow
def test_no_page_loads_anything_from_the_network(served: tuple[str, Path]) -> None:
    _, site = served
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        parser = _Resources()
        parser.feed(page.read_text(encoding="utf-8"))
        assert [u for u in parser.urls if EXTERNAL.match(u)] == [], page
        # The theme's script fetches from outside only for these: a diagram (mermaid from a CDN) and
        # the repository widget (a forge's API). No page may have them.
        assert not {"mermaid", "md-source"} & set(parser.classes), page
    for sheet in site.rglob("*.css"):
        text = sheet.read_text(encoding="utf-8")
        assert not re.findall(r"url\(\s*['\"]?(?:https?:)?//|@import\s+['\"]?(?:url\()?\s*['\"]?https?:", text), sheet
