"""MetaTool top-1 of fusion variants in seconds, from score lists computed once (issue 20 item 6).

    python benchmarks/fusion_eval.py --cache DIR [--limit N] [--weights FILE]

Encoding 20,614 MetaTool queries with both models takes ~15 minutes on the 2-core machine;
scoring a fusion over stored score lists takes about a minute. The first run routes every
query's retrievers through the library (``rank.score``: fast path, BM25, both dense models, as a
route does) and keeps each retriever's list, plus semantic-router's view of the same query (the
mean of the two models' cosines to each tool's description alone, as ``bench``'s
``semantic-router`` method embeds it), in ``DIR/metatool-<limit>.npz``; later runs read it.

Reports hit@1 over the queries for: the shipped fusion (``fuse`` with ``calibration.json``'s
weights; no conflict resolution, which MetaTool's catalog does not trigger in the golden sample),
each retriever alone, the plain sum of the dense cosines, and semantic-router. ``--weights``
adds a fusion with other weights (a JSON object like ``calibration.json``'s ``fusion_weights``).
MetaTool is an out-of-domain check: weights are fitted on the development suites
(``calibrate.py``), never on these queries.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from skillpilot import SkillPilot
from skillpilot.bench.suites import default_data_dir, shared_suite
from skillpilot.decide import shipped_calibration
from skillpilot.fuse import fuse
from skillpilot.model import FAST, RetrieverId
from skillpilot.retrieve.dense import single_threaded_blas

SEED = 0


def build(cache: Path, limit: int) -> Path:
    """Every query's score lists (and which retrievers answered it), the tools' multipliers and
    the expected tool, saved as one ``.npz``."""
    path = cache / f"metatool-{limit}.npz"
    if path.exists():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        suite = shared_suite("metatool", default_data_dir(), Path(tmp), limit, SEED)
        pilot = SkillPilot(home=Path(tmp) / "home", store="", preconditions=False, feedback_enabled=False)
        pilot.index([suite.catalog.root], replace=True)
        keys = [s.key for s in pilot.skills()]
        descriptions = {e.key: e.description for e in suite.catalog.entries}
        described = {e.name: np.asarray(e.encode_batch([descriptions[k] for k in keys])) for e in pilot.encoders}
        size, count = len(keys), len(suite.queries)
        lists: dict[str, np.ndarray] = {}
        answered: dict[str, np.ndarray] = {}
        semantic_router = np.zeros((count, size), dtype=np.float32)
        multipliers = np.ones(size)
        with single_threaded_blas():
            for n, query in enumerate(suite.queries):
                ranking = pilot.ranking(query.query)
                scores = ranking.scores
                # No redirects or feedback here: every query's are the catalog's trust multipliers.
                multipliers = ranking.multipliers
                for name, values in scores.lists.items():
                    lists.setdefault(str(name), np.zeros((count, size), dtype=np.float32))[n] = values
                    answered.setdefault(str(name), np.zeros(count, dtype=bool))[n] = True
                vectors = scores.query_vectors
                semantic_router[n] = sum(described[e] @ vectors[e] for e in vectors) / max(1, len(vectors))
        expected = np.array([keys.index(q.expected[0]) for q in suite.queries])
        arrays: dict[str, np.ndarray] = {
            "names": np.array(sorted(lists)),
            "expected": expected,
            "multipliers": multipliers,
            "semantic_router": semantic_router,
            **{f"list:{k}": v for k, v in lists.items()},
            **{f"answered:{k}": v for k, v in answered.items()},
        }
        np.savez(path, **arrays)  # type: ignore[arg-type]  # numpy stubs read a key as allow_pickle
    return path


def retriever(label: str) -> RetrieverId:
    """The retriever a stored label (``str(RetrieverId)``) names."""
    kind, _, model = label.partition(":")
    return RetrieverId(kind, model)  # type: ignore[arg-type]


def fused_hit_at_1(data: np.lib.npyio.NpzFile, weights: dict[str, float]) -> float:
    names = [str(n) for n in data["names"]]
    retrievers = {n: retriever(n) for n in names}
    columns = {n: data[f"list:{n}"] for n in names}
    answered = {n: data[f"answered:{n}"] for n in names}
    expected, multipliers = data["expected"], data["multipliers"]
    hits = 0
    for i, gold in enumerate(expected.tolist()):
        lists = {retrievers[n]: columns[n][i] for n in names if answered[n][i]}
        candidates = fuse(lists, weights, multipliers)
        hits += bool(candidates) and candidates[0].index == gold
    return hits / len(expected)


def report(path: Path, extra_weights: dict[str, float] | None) -> dict[str, float]:
    data = np.load(path)
    names = [str(n) for n in data["names"]]
    expected = data["expected"]

    def hit(matrix: np.ndarray) -> float:
        return round(float((matrix.argmax(axis=1) == expected).mean()), 4)

    dense = [n for n in names if retriever(n).is_dense]
    result = {
        "queries": int(len(expected)),
        "fusion (shipped weights)": round(fused_hit_at_1(data, dict(shipped_calibration().plain.fusion_weights)), 4),
        # The fast path's list is zero but for trigger-phrase hits: not a ranking of its own.
        **{f"{n} alone": hit(data[f"list:{n}"]) for n in names if n != str(FAST)},
        "dense cosines summed": hit(sum(data[f"list:{n}"] for n in dense)),
        "semantic-router (description-only mean cosine)": hit(data["semantic_router"]),
    }
    if extra_weights is not None:
        result["fusion (--weights)"] = round(fused_hit_at_1(data, extra_weights), 4)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="folder for the stored score lists")
    parser.add_argument("--limit", type=int, default=0, help="MetaTool queries to sample (0: all 20,614)")
    parser.add_argument("--weights", type=Path, help="JSON fusion weights to compare with the shipped ones")
    args = parser.parse_args()
    weights = json.loads(args.weights.read_text(encoding="utf-8")) if args.weights else None
    print(json.dumps(report(build(args.cache, args.limit), weights), indent=2))


if __name__ == "__main__":
    main()
