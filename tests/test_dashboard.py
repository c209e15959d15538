"""The dashboard end to end: a real service on 127.0.0.1, Debian's headless Chromium via Playwright.

The 294-skill test (the bench catalog) checks the page's geometry as a user sees it: the first
screen at 1400x900 holds the try box, the decision mix, the percentiles and the newest routes;
the whole page is at most three screens tall; nothing overflows sideways at 800 px; Chinese and
Japanese text is drawn in a CJK font. Set ``DASHBOARD_SCREENSHOTS=DIR`` to keep its screenshots.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.serve.http import create_app  # noqa: E402

from .conftest import BENCH, require_corpus  # noqa: E402
from .surfaces_util import SKILL_COUNT, indexed, uvicorn_on_loopback  # noqa: E402
from .test_surfaces_serve import post  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREEN = {"width": 1400, "height": 900}
NARROW = {"width": 800, "height": 900}
# The tabs besides the catalog, and the rows each shows (one page at most).
PANELS = (("log", "#log-rows tr"), ("conflicts", "#conflict-list > div"), ("feedback", "#feedback-rows tr"))
# CI installs chromium (.ci/run) and playwright (the dev extra): there a missing browser is a
# failure, elsewhere a skip.
needs_browser = pytest.mark.skipif(
    os.environ.get("CI") != "true" and not (CHROMIUM.exists() and find_spec("playwright")),
    reason="needs Debian's chromium (apt-get install chromium) and playwright",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright import sync_api

    assert CHROMIUM.exists(), "CI must install chromium (apt-get install chromium)"
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def box(page: Any, selector: str) -> dict[str, float]:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not shown"
    return dict(found)


def page_size(page: Any) -> tuple[int, int]:
    return page.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")


@pytest.mark.browser
@needs_browser
def test_try_box_tells_a_pick_from_a_pass_through_and_records_feedback(tmp_path: Path, browser: Any) -> None:
    pilot = indexed(tmp_path / "home")
    egg = "how long do I boil an egg"
    expected = pilot.route(egg)
    assert expected.decision == "passthrough" and expected.skill is not None
    guess = expected.skill.id
    meant = "git-commit" if guess != "git-commit" else "changelog-writer"
    with uvicorn_on_loopback(create_app(pilot)) as url:
        page = browser.new_page(viewport=SCREEN)
        page.goto(url + "/")
        page.wait_for_selector("#catalog-rows tr")
        assert page.locator("#count-catalog").inner_text() == f"({SKILL_COUNT})"
        page.fill("#try-input", "commit my changes")
        page.click("#try-form button")
        page.wait_for_selector("#try-winner")
        assert page.locator("#try-winner").inner_text() == "git-commit"
        assert "hard" in page.locator("#try-verdict").inner_text()
        page.click("#feedback-confirm")
        page.wait_for_selector("#feedback-status:has-text('recorded')")

        page.fill("#try-input", egg)
        page.click("#try-form button")
        page.wait_for_selector("#try-verdict:has-text('pass-through')")
        # A pass-through names no winner: its best guess is marked as one, and no bar shows a
        # skill that scored nothing.
        assert page.locator("#try-winner").count() == 0
        assert page.locator("#try-guess").inner_text().startswith(f"best guess, not used: {guess}")
        scores = [float(s) for s in page.locator("#try-bars .bar-row > span.num").all_inner_texts()]
        assert all(s > 0 for s in scores)
        assert page.locator("#try-bars .fill.passthrough").count() == len(scores)
        page.fill("#feedback-right", meant)
        page.click("#feedback-wrong")
        page.wait_for_selector("#feedback-status:has-text('recorded')")
        assert egg in page.locator("#newest-rows tr").first.inner_text()
        page.close()
    # The try box's routes are the dashboard's own in the log, apart from the other surfaces.
    assert [(e.surface, e.query) for e in pilot.log_entries(limit=2)[0]] == [
        ("dashboard", egg),
        ("dashboard", "commit my changes"),
    ]
    signals = pilot.feedback_signals()
    assert [(s.kind, s.query, s.skill, s.wrong) for s in signals] == [
        ("confirmed", "commit my changes", "git-commit", None),
        ("corrected", egg, meant, guess),
    ]


@pytest.mark.browser
@needs_browser
def test_badges_stay_in_their_cells_and_an_empty_message_clears_the_result(tmp_path: Path, browser: Any) -> None:
    pilot = indexed(tmp_path / "home")
    with uvicorn_on_loopback(create_app(pilot)) as url:
        post(url, "/route", {"message": "how long do I boil an egg"})
        page = browser.new_page(viewport=SCREEN)
        page.goto(url + "/")
        page.wait_for_selector("#newest-rows tr")
        page.click(".tabs button[data-tab='log']")
        page.wait_for_selector("#log-rows tr")
        for rows in ("#newest-rows", "#log-rows"):
            tag = box(page, f"{rows} .tag.passthrough")
            cell = page.locator(f"{rows} .tag.passthrough").first.locator("xpath=..").bounding_box()
            assert cell is not None and tag["x"] + tag["width"] <= cell["x"] + cell["width"] + 0.5, (rows, tag, cell)
        page.fill("#try-input", "commit my changes")
        page.click("#try-form button")
        page.wait_for_selector("#try-winner")
        page.fill("#try-input", "   ")
        page.click("#try-form button")
        page.wait_for_selector("#try-empty")
        assert page.locator("#try-winner").count() == 0
        assert page.locator("#try-empty").inner_text() == "type a message to route it"
        page.close()


@pytest.mark.browser
@needs_browser
def test_docs_render_with_no_network(tmp_path: Path, browser: Any) -> None:
    pilot = indexed(tmp_path / "home")
    elsewhere: list[str] = []
    with uvicorn_on_loopback(create_app(pilot)) as url:
        context = browser.new_context()

        def offline(route: Any) -> None:
            if route.request.url.startswith(url):
                route.continue_()
            else:
                elsewhere.append(route.request.url)
                route.abort()

        context.route("**/*", offline)
        page = context.new_page()
        page.goto(url + "/docs")
        page.wait_for_selector(".swagger-ui .opblock")
        assert page.locator(".swagger-ui .opblock").count() >= 10
        assert "/route" in page.locator(".swagger-ui").inner_text()
        context.close()
    assert elsewhere == []


@pytest.mark.browser
@needs_browser
def test_a_one_time_link_signs_the_browser_in_and_leaves_no_token_in_the_url(tmp_path: Path, browser: Any) -> None:
    token = "browser-s3cret"
    pilot = indexed(tmp_path / "home")
    with uvicorn_on_loopback(create_app(pilot, token=token)) as url:
        link = post(url, "/login/link", {}, Authorization=f"Bearer {token}")[1]["url"]
        context = browser.new_context()
        page = context.new_page()
        page.goto(url + "/")
        page.wait_for_selector("#summary a[href='/login']")  # signed out: a sign-in link, no data
        page.goto(url + link)
        page.wait_for_selector("#catalog-rows tr")
        assert page.url == url + "/"
        assert page.evaluate("document.cookie") == ""  # HttpOnly: page scripts never see it
        page.fill("#try-input", "commit my changes")
        page.click("#try-form button")
        page.wait_for_selector("#feedback-confirm")
        page.click("#feedback-confirm")  # a cookie POST from our own origin
        page.wait_for_selector("#feedback-status:has-text('recorded')")
        context.close()
    assert [s.skill for s in pilot.feedback_signals()] == ["git-commit"]


@pytest.fixture(scope="module")
def bench_pilot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SkillPilot]:
    require_corpus()
    pilot = SkillPilot(home=tmp_path_factory.mktemp("bench-home"), preconditions=False)
    pilot.index([BENCH / "skills"])
    yield pilot
    pilot.close()


@pytest.mark.browser
@needs_browser
@pytest.mark.slow
def test_first_screen_and_page_geometry_on_the_294_skill_index(
    bench_pilot: SkillPilot, browser: Any, tmp_path: Path
) -> None:
    queries = [json.loads(line)["query"] for line in (BENCH / "queries" / "real-dev.jsonl").open(encoding="utf-8")]
    chinese, japanese = "帮我把这个PDF转成Word文档", "このPDFをWordに変換して"
    with uvicorn_on_loopback(create_app(bench_pilot)) as url:
        for n, message in enumerate([*queries[:30], japanese, chinese]):
            post(url, "/route", {"message": message, "surface": ("http", "hook", "mcp")[n % 3]})
        shots = tmp_path / "screenshots"
        shots.mkdir()
        sizes = {}
        for viewport in (SCREEN, NARROW):
            page = browser.new_page(viewport=viewport)
            page.goto(url + "/")
            page.wait_for_selector("#catalog-rows tr")
            page.wait_for_selector("#newest-rows tr")
            page.fill("#try-input", "summarise this pdf for me")
            page.click("#try-form button")
            page.wait_for_selector("#try-verdict")
            width, height = page_size(page)
            sizes[viewport["width"]] = (width, height)
            assert width <= viewport["width"], f"horizontal overflow at {viewport['width']} px: {width}"
            assert height <= 3 * viewport["height"], f"page is {height} px tall at {viewport['width']} px"
            if viewport is SCREEN:
                for part in ("#try-form", "#try-verdict", "#mix-bar", "#percentiles tbody tr", "#newest-rows tr"):
                    where = box(page, part)
                    assert where["y"] + where["height"] <= SCREEN["height"], f"{part} is below the first screen"
                assert page.locator("#catalog-rows tr").count() == 20
                assert page.locator("#catalog-pager").inner_text().startswith("1–20 of 294")
                assert page.locator("#latency-svg .y-tick").count() >= 3
                assert page.locator("#latency-svg .x-tick").count() >= 3
                assert page.locator("#latency-svg path").count() == 3  # p50, p95, p99
                assert_cjk_font(page, chinese)
                assert_cjk_font(page, japanese)
                # Every panel is one click away, each paged.
                for tab, rows in PANELS:
                    page.click(f".tabs button[data-tab='{tab}']")
                    page.wait_for_selector(f"[data-panel='{tab}']:not([hidden]) {rows}")
                    assert page.locator(rows).count() <= 20
                    assert page_size(page)[1] <= 3 * SCREEN["height"]
                page.click(".tabs button[data-tab='catalog']")
                page.click("#catalog-pager button:has-text('next')")
                page.wait_for_selector("#catalog-pager:has-text('21–40 of 294')")
            page.screenshot(path=str(shots / f"dashboard-{viewport['width']}.png"))
            page.close()
    keep = os.environ.get("DASHBOARD_SCREENSHOTS")
    if keep:
        shutil.copytree(shots, keep, dirs_exist_ok=True)
    print("page sizes (width, height) by viewport width:", sizes)


def assert_cjk_font(page: Any, text: str) -> None:
    """The newest-routes cell showing ``text`` is drawn in a CJK font, not tofu or a fallback."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    cells = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "#newest-rows td .clamp"})["nodeIds"]
    fonts = []
    for node in cells:
        html = cdp.send("DOM.getOuterHTML", {"nodeId": node})["outerHTML"]
        if text in html:
            fonts = [f["familyName"] for f in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]]
    assert any("CJK" in f or "Noto Sans JP" in f or "Noto Sans SC" in f for f in fonts), (text, fonts)
