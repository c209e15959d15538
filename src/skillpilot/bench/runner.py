"""Run methods over a suite: build each one, warm it up, time every query, keep every answer.

Input: a :class:`~skillpilot.bench.suites.Suite`, method names (or ready :class:`Method`
objects) and :class:`MethodOptions`. Output: a :class:`SuiteRun` with one :class:`MethodResult`
per method, holding its build time, peak RSS and a :class:`Prediction` per query.

Guarantees:
- queries run one at a time on one thread, in file order, after ``WARMUP`` fixed messages that
  are not in any query set (so caches keyed on a query's text gain nothing);
- latency is wall-clock ``perf_counter`` around ``rank`` alone, build time around ``build``;
- with ``isolate`` each named method runs in its own spawned process, with every ``SKILLPILOT_*``
  variable removed and a fresh temporary home, so one method's models and caches never inflate
  another's peak RSS (``ru_maxrss`` of that process) and no user config leaks in. In-process
  runs report no peak RSS, since the process-wide peak would mix methods.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import resource
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from multiprocessing.queues import Queue
from typing import Any

from ..errors import BenchError
from .methods import Method, MethodOptions, Ranking, make_method
from .metrics import Prediction
from .suites import Catalog, Query, Suite
from .tokens import TokenCounter, prompt_text

WARMUP = (
    "warm-up: open a pull request for my branch",
    "warm-up: 帮我把这个文件转换成 PDF",
    "warm-up: what is the weather like tomorrow",
)

# Called once per finished step (the build, then each query).
Tick = Callable[[], None]
# Given a label and a step count, returns the tick for that task.
ProgressFactory = Callable[[str, int], Tick]


@dataclass(frozen=True)
class MethodRun:
    """What running one method produced, before tokens are counted."""

    name: str
    config: dict[str, Any]
    build_seconds: float
    peak_rss_mb: float | None
    rankings: tuple[Ranking, ...]
    latencies_ms: tuple[float, ...]


@dataclass(frozen=True)
class MethodResult:
    name: str
    config: dict[str, Any]
    build_seconds: float
    peak_rss_mb: float | None
    isolated: bool
    predictions: tuple[Prediction, ...]


@dataclass(frozen=True)
class SuiteRun:
    suite: Suite
    full_prompt_tokens: int
    methods: tuple[MethodResult, ...]


def run_method(method: Method, catalog: Catalog, queries: Sequence[Query], tick: Tick | None = None) -> MethodRun:
    """Build ``method``, warm it up, then rank every query once, timing each call."""
    started = time.perf_counter()
    method.build(catalog, queries)
    build_seconds = time.perf_counter() - started
    if tick:
        tick()
    for i, text in enumerate(WARMUP):
        method.rank(Query(id=f"warmup-{i}", query=text, expected=(), kind="direct", lang="en"))
    rankings: list[Ranking] = []
    latencies: list[float] = []
    for query in queries:
        started = time.perf_counter()
        ranking = method.rank(query)
        latencies.append((time.perf_counter() - started) * 1000)
        rankings.append(ranking)
        if tick:
            tick()
    return MethodRun(
        name=method.name,
        config=dict(method.config),
        build_seconds=build_seconds,
        peak_rss_mb=None,
        rankings=tuple(rankings),
        latencies_ms=tuple(latencies),
    )


def peak_rss_mb() -> float:
    # Linux reports ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(inbox: Queue[Any], outbox: Queue[Any]) -> None:
    for key in [k for k in os.environ if k.startswith("SKILLPILOT_")]:
        del os.environ[key]
    # The child shares the parent's stdout, which carries --json: a library's stray print must
    # not end up in the document.
    sys.stdout = sys.stderr
    try:
        name, options, catalog, queries = inbox.get()
        run = run_method(make_method(name, options), catalog, queries, lambda: outbox.put(("tick", None)))
        outbox.put(("done", replace(run, peak_rss_mb=peak_rss_mb())))
    except Exception as exc:  # handed to the parent, which raises it as a BenchError
        outbox.put(("error", f"{type(exc).__name__}: {exc}"))


def run_isolated(
    name: str, options: MethodOptions, catalog: Catalog, queries: Sequence[Query], tick: Tick | None = None
) -> MethodRun:
    """``run_method`` in a fresh spawned process; its peak RSS is that process's."""
    ctx = multiprocessing.get_context("spawn")
    inbox: Queue[Any] = ctx.Queue()
    channel: Queue[Any] = ctx.Queue()
    # The job goes through a queue, not the process arguments: spawn writes its arguments into a
    # pipe whose read end the parent holds until the write ends, so a child that dies while
    # starting (say, an import error) would block a large write, and the parent, for ever.
    process = ctx.Process(target=_child, args=(inbox, channel), name=f"bench-{name}")
    process.start()
    inbox.put((name, options, catalog, tuple(queries)))
    # A child that never reads its job must not keep the parent waiting at exit either.
    inbox.cancel_join_thread()
    try:
        while True:
            try:
                kind, payload = channel.get(timeout=0.5)
            except queue.Empty:
                if process.is_alive():
                    continue
                # The child may have flushed its last message just before exiting.
                try:
                    kind, payload = channel.get(timeout=1.0)
                except queue.Empty:
                    raise BenchError(
                        f"method {name!r} stopped (exit code {process.exitcode}) before it finished"
                    ) from None
            if kind == "tick":
                if tick:
                    tick()
            elif kind == "done":
                assert isinstance(payload, MethodRun)
                return payload
            else:
                raise BenchError(f"method {name!r} failed: {payload}")
    finally:
        process.join(timeout=30)
        if process.is_alive():
            process.kill()
            process.join()


def run_suite(
    suite: Suite,
    methods: Sequence[str | Method],
    options: MethodOptions,
    counter: TokenCounter,
    isolate: bool = True,
    progress: ProgressFactory | None = None,
) -> SuiteRun:
    """Run every method on ``suite``; a name runs isolated when ``isolate``, an object in-process."""
    by_key = {e.key: e for e in suite.catalog.entries}
    token_cache: dict[tuple[str, ...], int] = {}

    def injected_tokens(keys: tuple[str, ...]) -> int:
        if keys not in token_cache:
            token_cache[keys] = counter.count(prompt_text(by_key[k] for k in keys))
        return token_cache[keys]

    results: list[MethodResult] = []
    for method in methods:
        label = method if isinstance(method, str) else method.name
        tick = progress(f"{suite.name} · {label}", len(suite.queries) + 1) if progress else None
        isolated = isolate and isinstance(method, str)
        if isinstance(method, str):
            run = (
                run_isolated(method, options, suite.catalog, suite.queries, tick)
                if isolate
                else run_method(make_method(method, options), suite.catalog, suite.queries, tick)
            )
        else:
            run = run_method(method, suite.catalog, suite.queries, tick)
        predictions = tuple(
            Prediction(
                id=q.id,
                kind=q.kind,
                expected=q.expected,
                keys=r.keys,
                passthrough=r.passthrough,
                injected=r.injected,
                injected_tokens=injected_tokens(r.injected),
                latency_ms=lat,
            )
            for q, r, lat in zip(suite.queries, run.rankings, run.latencies_ms, strict=True)
        )
        results.append(MethodResult(run.name, run.config, run.build_seconds, run.peak_rss_mb, isolated, predictions))
    return SuiteRun(suite, counter.count(prompt_text(suite.catalog.entries)), tuple(results))
