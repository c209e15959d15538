"""Long jobs of the resident HTTP service, run off the routing path, as one FastAPI ``APIRouter``:

    POST   /jobs/lint  {"path"?}  -> 202 {job}: lint the whole index, or the skills under a path
                                     inside the skill roots (as ``skillpilot lint``)
    GET    /jobs                  -> {"jobs": [job]}, newest first
    GET    /jobs/{id}             -> {job}: {"id", "kind", "status" (running, done, failed,
                                     cancelled), "done", "total", "started", "finished",
                                     "result" (when done), "error" (when failed)}
    DELETE /jobs/{id}             -> {job}: asks a running job to stop (after its current skill)

A job runs on its own thread with its own ``SkillPilot`` (its own store connection, its own
models), so it never takes the serving router's lock: routes answer while it runs, sharing only
the CPU. Linting one installed skill stays ``POST /lint`` (quick); these are the long ones. The
newest ``KEEP_JOBS`` jobs are kept, in memory: a restart forgets them.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter
from fastapi.params import Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from ..config import Settings
from ..limits import MAX_ID_CHARS
from ..router import SkillPilot
from . import SharedPilot, calls
from .guard import error_response

KEEP_JOBS = 20
JobStatus = Literal["running", "done", "failed", "cancelled"]
Progress = Callable[[int, int], None]


class Cancelled(Exception):
    """Raised inside a job's work by its progress callback once the job was asked to stop."""


@dataclass
class Job:
    """One job's state; its worker thread writes it, requests read snapshots of it."""

    id: str
    kind: str
    status: JobStatus = "running"
    done: int = 0
    total: int | None = None
    started: float = field(default_factory=time.time)
    finished: float | None = None
    result: dict[str, Any] | None = None
    error: str | None = None
    stop: threading.Event = field(default_factory=threading.Event, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status,
            "done": self.done,
            "total": self.total,
            "started": self.started,
            "finished": self.finished,
            "result": self.result,
            "error": self.error,
        }


class Jobs:
    """The service's jobs: each on a daemon thread, the newest ``keep`` remembered."""

    def __init__(self, keep: int = KEEP_JOBS) -> None:
        self._keep = keep
        self._jobs: dict[str, Job] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def start(self, kind: str, work: Callable[[Progress], dict[str, Any]]) -> Job:
        """Run ``work(progress)`` in the background; it reports ``progress(done, total)``."""
        with self._lock:
            job = Job(id=f"{kind}-{next(self._ids)}", kind=kind)
            self._jobs[job.id] = job
            for old in list(self._jobs)[: max(0, len(self._jobs) - self._keep)]:
                if self._jobs[old].status != "running":
                    del self._jobs[old]

        def progress(done: int, total: int) -> None:
            job.done, job.total = done, total
            if job.stop.is_set():
                raise Cancelled

        def run() -> None:
            try:
                job.result = work(progress)
                job.status = "done"
            except Cancelled:
                job.status = "cancelled"
            except Exception as exc:  # a job's failure is its result, reported to whoever asks
                job.error = f"{type(exc).__name__}: {exc}"
                job.status = "failed"
            finally:
                job.finished = time.time()

        threading.Thread(target=run, name=f"skillpilot-job-{job.id}", daemon=True).start()
        return job

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def all(self) -> list[Job]:
        return list(self._jobs.values())[::-1]


class LintJobRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="A skill folder inside the skill roots; none: the whole index.",
    )


def router_for(shared: SharedPilot, dependencies: Sequence[Depends] = ()) -> APIRouter:
    """The job routes for the app's pilot, behind ``dependencies`` (the app's token check)."""
    router = APIRouter(dependencies=list(dependencies))
    jobs = Jobs()

    def unknown(job_id: str) -> JSONResponse:
        message = f"no job {job_id!r}: GET /jobs lists the jobs this service remembers"
        return error_response(404, "JobNotFound", message)

    @router.post("/jobs/lint", status_code=202)
    def lint_job(body: LintJobRequest) -> Any:
        settings = shared.pilot.settings
        if body.path is not None:
            try:
                calls.servable_path(Path(body.path).expanduser(), shared(lambda p: p.store.roots()))
            except ValueError as exc:
                return error_response(400, "InvalidRequest", str(exc))
        return jobs.start("lint", lambda progress: _lint(settings, body.path, progress)).to_dict()

    @router.get("/jobs")
    def list_jobs() -> dict[str, Any]:
        return {"jobs": [j.to_dict() for j in jobs.all()]}

    @router.get("/jobs/{job_id}", response_model=None)
    def job(job_id: str) -> dict[str, Any] | JSONResponse:
        found = jobs.get(job_id)
        return found.to_dict() if found else unknown(job_id)

    @router.delete("/jobs/{job_id}", response_model=None)
    def cancel(job_id: str) -> dict[str, Any] | JSONResponse:
        found = jobs.get(job_id)
        if found is None:
            return unknown(job_id)
        found.stop.set()
        return found.to_dict()

    return router


def _lint(settings: Settings, path: str | None, progress: Progress) -> dict[str, Any]:
    if path is not None:
        return calls.lint_path(settings, Path(path), progress)
    checker = SkillPilot(settings=calls.lint_settings(settings))
    try:
        return calls.lint_index(checker, progress)
    finally:
        checker.close()
