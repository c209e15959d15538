"""The dashboard end to end: a real service on 127.0.0.1, Debian's headless Chromium via Playwright."""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path

import pytest

from skillpilot.serve.http import create_app

from .surfaces_util import SKILL_COUNT, indexed, uvicorn_on_loopback
from .test_surfaces_serve import request

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# CI installs chromium (.ci/run) and playwright (the dev extra): there a missing browser is a
# failure, elsewhere a skip.
needs_browser = pytest.mark.skipif(
    os.environ.get("CI") != "true" and not (CHROMIUM.exists() and find_spec("playwright")),
    reason="needs Debian's chromium (apt-get install chromium) and playwright",
)


def test_json_routes_the_dashboard_reads(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home")
    pilot.route("commit my changes")
    with uvicorn_on_loopback(create_app(pilot)) as url:
        status, listing = request(url, "GET", "/skills")
        assert status == 200 and len(listing["skills"]) == SKILL_COUNT
        status, log = request(url, "GET", "/log?decision=hard&surface=library")
        assert status == 200 and [e["skill_id"] for e in log["entries"]] == ["git-commit"]
        assert request(url, "GET", "/log?since=yesterday")[0] == 400
        assert request(url, "GET", "/feedback") == (200, {"signals": []})


@pytest.mark.browser
@needs_browser
def test_try_a_message_shows_the_winner_and_its_score_bars(tmp_path: Path) -> None:
    from playwright import sync_api

    assert CHROMIUM.exists(), "CI must install chromium (apt-get install chromium)"
    shots = tmp_path / "screenshots"
    shots.mkdir()
    pilot = indexed(tmp_path / "home")
    with uvicorn_on_loopback(create_app(pilot)) as url, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(url + "/")
            page.wait_for_selector("#skill-rows tr")
            assert page.locator("#skill-rows tr").count() == SKILL_COUNT
            page.screenshot(path=str(shots / "catalog.png"), full_page=True)
            page.fill("#skill-search", "commit")
            assert "git-commit" in page.locator("#skill-rows").inner_text()
            page.fill("#try-input", "commit my changes")
            page.click("#try-form button")
            page.wait_for_selector("#try-winner")
            assert page.locator("#try-winner").inner_text() == "git-commit"
            assert page.locator("#try-result .bar").count() > 0
            page.wait_for_selector("#log-rows tr")
            assert "git-commit" in page.locator("#log-rows").inner_text()
            assert page.locator("#decisions-svg rect").count() == 3
            page.screenshot(path=str(shots / "try.png"), full_page=True)
        finally:
            browser.close()
    assert sorted(p.name for p in shots.iterdir()) == ["catalog.png", "try.png"]
