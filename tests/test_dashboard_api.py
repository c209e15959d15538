"""The JSON routes the dashboard reads, on a real service on 127.0.0.1: listings paged on the
server, routing-time percentiles by surface from the real routing log, and the offline /docs."""

from __future__ import annotations

import http.client
import sqlite3
import time
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

pytest.importorskip("fastapi")

from skillpilot.serve.http import create_app  # noqa: E402

from .surfaces_util import SKILL_COUNT, indexed, uvicorn_on_loopback  # noqa: E402
from .test_surfaces_serve import post, request  # noqa: E402


def get_text(url: str, path: str) -> tuple[int, str, str]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.getheader("content-type") or "", response.read().decode("utf-8")
    finally:
        connection.close()


def test_skills_page_on_the_server_with_filters_and_a_total(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home")
    every = sorted(s.id for s in pilot.skills())
    with uvicorn_on_loopback(create_app(pilot)) as url:
        first = request(url, "GET", "/skills?offset=0&limit=5")[1]
        rest = request(url, "GET", "/skills?offset=5&limit=100")[1]
        assert (first["total"], first["count"], len(first["skills"])) == (SKILL_COUNT, SKILL_COUNT, 5)
        assert sorted(s["id"] for s in first["skills"] + rest["skills"]) == every
        found = request(url, "GET", "/skills?q=COMMIT")[1]
        assert [s["id"] for s in found["skills"]] == ["changelog-writer", "git-commit"] and found["total"] == 2
        assert found["count"] == SKILL_COUNT
        assert request(url, "GET", "/skills?tier=nonesuch")[1]["total"] == 0
        assert request(url, "GET", "/skills?limit=0")[0] == 422


def test_log_pages_newest_first_with_filters_and_a_total(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home")
    messages = [f"commit my changes, take {n}" for n in range(7)]
    with uvicorn_on_loopback(create_app(pilot)) as url:
        for n, message in enumerate(messages):
            post(url, "/route", {"message": message, "surface": "hook" if n % 2 else "http"})
        post(url, "/route", {"message": "how long do I boil an egg"})
        page = request(url, "GET", "/log?offset=1&limit=3")[1]
        assert page["total"] == 8 and page["surfaces"] == ["hook", "http"]
        assert [e["query"] for e in page["entries"]] == messages[::-1][:3]
        hooks = request(url, "GET", "/log?surface=hook&decision=hard&q=TAKE")[1]
        assert [e["query"] for e in hooks["entries"]] == [messages[5], messages[3], messages[1]]
        assert hooks["total"] == 3
        assert request(url, "GET", "/log?since=yesterday")[0] == 400
        status, refused = request(url, "GET", "/log?decision=maybe")
        assert status == 422
        assert "decision" in refused["error"]["message"] and "'passthrough'" in refused["error"]["message"]


def test_activity_gives_routing_time_percentiles_by_surface_over_the_window(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home")
    with uvicorn_on_loopback(create_app(pilot)) as url:
        for n in range(12):
            post(url, "/route", {"message": f"commit my changes {n}", "surface": "hook" if n % 3 else "http"})
        # A decision from two hours ago is in the day's window and not in the hour's.
        post(url, "/route", {"message": "trim my video", "surface": "old"})
        with sqlite3.connect(pilot.settings.log_path) as db:
            db.execute("UPDATE decisions SET at = ? WHERE surface = 'old'", (time.time() - 7200,))
            times = {
                surface: [ms for (ms,) in db.execute("SELECT latency_ms FROM decisions WHERE surface = ?", (surface,))]
                for surface in ("hook", "http")
            }
        status, hour = request(url, "GET", "/activity?window=hour")
        day = request(url, "GET", "/activity?window=day")[1]
    assert status == 200
    assert [s["surface"] for s in hour["surfaces"]] == ["hook", "http"]
    assert [s["surface"] for s in day["surfaces"]] == ["hook", "http", "old"]
    assert sum(hour["decisions"].values()) == 12 and sum(day["decisions"].values()) == 13
    for surface in hour["surfaces"]:
        expected = np.percentile(times[surface["surface"]], [50, 95, 99])
        assert surface["count"] == len(times[surface["surface"]])
        assert [surface["p50"], surface["p95"], surface["p99"]] == pytest.approx(expected, abs=1e-3)
        assert len(surface["buckets"]) == 12 and sum(b["count"] for b in surface["buckets"]) == surface["count"]
        # Every route just happened: all in the newest 5-minute slice.
        assert surface["buckets"][-1]["count"] == surface["count"]
    assert len(day["surfaces"][0]["buckets"]) == 24 and day["bucket_seconds"] == 3600
    assert hour["thresholds"] == {"hard": pilot.settings.hard_threshold, "soft": pilot.settings.soft_threshold}


def test_feedback_history_is_paged_newest_first(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home")
    with uvicorn_on_loopback(create_app(pilot)) as url:
        for n in range(3):
            post(url, "/feedback", {"kind": "confirm", "query": f"commit my changes {n}", "skill": "git-commit"})
        page = request(url, "GET", "/feedback?limit=2")[1]
    assert page["total"] == 3
    assert [s["query"] for s in page["signals"]] == ["commit my changes 2", "commit my changes 1"]


def test_docs_page_loads_swagger_ui_from_the_service_itself(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home")
    with uvicorn_on_loopback(create_app(pilot)) as url:
        status, kind, page = get_text(url, "/docs")
        assert status == 200 and kind.startswith("text/html")
        assert "cdn." not in page and "https://" not in page
        for asset in ("/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"):
            assert asset in page
            status, _, body = get_text(url, asset)
            assert status == 200 and len(body) > 10_000
        assert get_text(url, "/redoc")[0] == 404
