"""Long jobs of the resident service (POST /jobs/lint) on a real uvicorn on 127.0.0.1: they report
progress, finish with the lint report, can be stopped, and never make routes wait behind them."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.serve.http import create_app  # noqa: E402

from .fake_encoder import SPEC  # noqa: E402
from .surfaces_util import SKILL_COUNT, SKILLS, indexed, uvicorn_on_loopback  # noqa: E402
from .test_surfaces_serve import POLL_SECONDS, post, request  # noqa: E402

ROUTES = 8


def wait_for(url: str, job_id: str, done: Any) -> dict[str, Any]:
    """Poll the job until ``done(job)``; reaching POLL_SECONDS is a failure, not a measurement."""
    deadline = time.monotonic() + POLL_SECONDS
    while time.monotonic() < deadline:
        job = request(url, "GET", f"/jobs/{job_id}")[1]
        if done(job):
            return dict(job)
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} never reached the state asked for: {job}")


def timed_routes(url: str, label: str) -> list[float]:
    times = []
    for n in range(ROUTES):
        started = time.perf_counter()
        status, routed = post(url, "/route", {"message": f"commit my changes ({label} {n})"})
        times.append(time.perf_counter() - started)
        assert (status, routed["skill"]["id"]) == (200, "git-commit")
    return times


@pytest.fixture()
def pilot(tmp_path: Path) -> SkillPilot:
    # Its skill root (the path lint's boundary) is SKILLS, where the examples were indexed from;
    # the fake encoder: these tests are about jobs, not about what a model understands.
    return indexed(tmp_path / "home", embed_provider=SPEC)


@pytest.fixture()
def modelled_pilot(tmp_path: Path) -> SkillPilot:
    # The default models: a lint job over them lasts longer than a few routes, which is what
    # shows that the routes did not queue behind it (on the fake encoder the job can end first).
    return indexed(tmp_path / "home")


def test_routes_do_not_wait_behind_a_running_lint_job(modelled_pilot: SkillPilot) -> None:
    pilot = modelled_pilot
    with uvicorn_on_loopback(create_app(pilot)) as url:
        before = timed_routes(url, "before")
        status, job = post(url, "/jobs/lint", {})
        assert (status, job["status"], job["kind"]) == (202, "running", "lint")
        # Wait until the job is linting skills (its models loaded), then route beside it.
        running = wait_for(url, job["id"], lambda j: j["done"] >= 1 or j["status"] != "running")
        assert running["status"] == "running" and running["total"] == SKILL_COUNT
        during = timed_routes(url, "during")
        after_routes = request(url, "GET", f"/jobs/{job['id']}")[1]
        # Had a route queued behind the job, the job would be over before that route returned.
        assert after_routes["status"] == "running", after_routes
        # Beside a job the routes share the CPU, so they may be slower, never job-sized.
        assert statistics.median(during) < 10 * statistics.median(before), (before, during)
        finished = wait_for(url, job["id"], lambda j: j["status"] != "running")
        listed = request(url, "GET", "/jobs")[1]["jobs"]
    assert finished["status"] == "done", finished
    assert (finished["done"], finished["total"]) == (SKILL_COUNT, SKILL_COUNT)
    assert sorted(r["id"] for r in finished["result"]["skills"]) == sorted(s.id for s in pilot.skills())
    assert finished["result"]["failing"] == sum(r["failing"] for r in finished["result"]["skills"])
    assert [j["id"] for j in listed] == [job["id"]]


def test_a_job_can_be_stopped_and_paths_stay_inside_the_skill_roots(pilot: SkillPilot, tmp_path: Path) -> None:
    with uvicorn_on_loopback(create_app(pilot)) as url:
        status, refused = post(url, "/jobs/lint", {"path": str(tmp_path)})
        assert status == 400 and "outside the skill roots" in refused["error"]["message"]
        assert request(url, "GET", "/jobs/lint-99")[0] == 404
        whole = post(url, "/jobs/lint", {})[1]
        assert request(url, "DELETE", f"/jobs/{whole['id']}")[0] == 200
        stopped = wait_for(url, whole["id"], lambda j: j["status"] != "running")
        one = post(url, "/jobs/lint", {"path": str(SKILLS / "git-commit")})[1]
        linted = wait_for(url, one["id"], lambda j: j["status"] != "running")
    # Asked to stop while loading, it stops after its first skill.
    assert (stopped["status"], stopped["done"], stopped["result"]) == ("cancelled", 1, None)
    assert linted["status"] == "done", linted
    assert [r["id"] for r in linted["result"]["skills"]] == ["git-commit"]
