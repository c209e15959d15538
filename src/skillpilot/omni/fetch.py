"""Parallel fetch: every chosen source at once, each within its own timeout, failures retried.

Input: sources by name, the question, ``top_k`` and a :class:`FetchPolicy` (per-source timeouts,
the whole call's timeout, retries; from ``Settings``). Output: one
:class:`~skillpilot.omni.model.SourceOutcome` per source, in the order the sources were given.

Guarantees:
- every source runs in its own thread, all started together, so the call takes as long as the
  slowest source that answers in time, not the sum;
- a source's deadline is its own timeout from its start, and never later than the whole call's
  deadline. A source still running then is ``timeout``: skipped, its late answer discarded. Python
  cannot stop a thread, so it is left to finish on its own; it is a daemon thread, so it never
  holds up the process's exit (a ``ThreadPoolExecutor`` would join it at exit);
- a source raising :class:`~skillpilot.errors.SourceUnavailableError` is ``unavailable`` (nothing
  to search there), any other exception is ``error``; neither stops the others;
- retry (the seed's ``retry: 1``, "整体重试一次（超时路除外）"): the sources that ended in
  ``error`` run again, together, up to ``retry`` more times while the call's deadline allows.
  Timed-out sources are not retried -- a slow source would only be slow again and use up the
  call's time --, nor unavailable ones, and sources that answered keep their answer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass

from ..config import Settings
from ..errors import SkillPilotError, SourceUnavailableError
from .model import OmniItem, SourceName, SourceOutcome
from .sources import Source

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FetchPolicy:
    """Timeouts in seconds: per source, and for the whole call (retries included)."""

    timeouts: Mapping[SourceName, float]
    overall: float
    retry: int

    @classmethod
    def from_settings(cls, settings: Settings) -> FetchPolicy:
        return cls(
            timeouts={
                "attachment": settings.omni_attachment_timeout_ms / 1000,
                "knowledge": settings.omni_knowledge_timeout_ms / 1000,
                "graph": settings.omni_graph_timeout_ms / 1000,
            },
            overall=settings.omni_timeout_ms / 1000,
            retry=settings.omni_retry,
        )


def _start(source: Source, query: str, top_k: int) -> Future[list[OmniItem]]:
    future: Future[list[OmniItem]] = Future()

    def run() -> None:
        future.set_running_or_notify_cancel()
        try:
            future.set_result(source.fetch(query, top_k))
        except Exception as exc:  # a source's failure is reported in its outcome, never raised
            future.set_exception(exc)

    threading.Thread(target=run, name=f"omni-{source.name}", daemon=True).start()
    return future


def _outcome(name: SourceName, future: Future[list[OmniItem]], top_k: int, elapsed_ms: float) -> SourceOutcome:
    error = future.exception()
    if error is None:
        return SourceOutcome(name, "ok", tuple(future.result()[:top_k]), elapsed_ms=elapsed_ms)
    if isinstance(error, SourceUnavailableError):
        return SourceOutcome(name, "unavailable", message=error.reason, elapsed_ms=elapsed_ms)
    message = str(error) if isinstance(error, SkillPilotError) else f"{type(error).__name__}: {error}"
    return SourceOutcome(name, "error", message=message, elapsed_ms=elapsed_ms)


def _round(
    sources: Mapping[SourceName, Source], query: str, top_k: int, policy: FetchPolicy, call_deadline: float
) -> dict[SourceName, SourceOutcome]:
    """Run ``sources`` in parallel once; each outcome is decided by its own deadline."""
    started = time.monotonic()
    futures = {name: _start(source, query, top_k) for name, source in sources.items()}
    deadlines = {name: min(started + policy.timeouts[name], call_deadline) for name in sources}
    finished: dict[SourceName, float] = {}
    waiting = set(futures)
    while waiting:
        nearest = min(deadlines[name] for name in waiting)
        wait(
            [futures[name] for name in waiting],
            timeout=max(0.0, nearest - time.monotonic()),
            return_when=FIRST_COMPLETED,
        )
        now = time.monotonic()
        for name in list(waiting):
            if futures[name].done():
                finished[name] = now
                waiting.discard(name)
            elif now >= deadlines[name]:
                waiting.discard(name)
    outcomes = {}
    for name, future in futures.items():
        if name in finished:
            outcomes[name] = _outcome(name, future, top_k, (finished[name] - started) * 1000)
        else:
            allowed = (deadlines[name] - started) * 1000
            outcomes[name] = SourceOutcome(
                name, "timeout", message=f"no answer within {allowed:.0f} ms; skipped", elapsed_ms=allowed
            )
    return outcomes


def fetch_all(sources: Mapping[SourceName, Source], query: str, top_k: int, policy: FetchPolicy) -> list[SourceOutcome]:
    """Ask every source (module docstring); never raises for a source's failure."""
    call_deadline = time.monotonic() + policy.overall
    outcomes: dict[SourceName, SourceOutcome] = {}
    attempts = dict.fromkeys(sources, 0)
    pending = list(sources)
    while pending:
        for name, outcome in _round({n: sources[n] for n in pending}, query, top_k, policy, call_deadline).items():
            attempts[name] += 1
            outcomes[name] = SourceOutcome(
                outcome.source,
                outcome.status,
                outcome.items,
                outcome.message,
                attempts[name],
                outcome.elapsed_ms,
            )
            logger.info(
                "omni source %s: %s after %.0f ms (attempt %d) %s",
                name,
                outcome.status,
                outcome.elapsed_ms,
                attempts[name],
                outcome.message,
            )
        pending = [
            name
            for name in pending
            if outcomes[name].status == "error" and attempts[name] <= policy.retry and time.monotonic() < call_deadline
        ]
    return [outcomes[name] for name in sources]
