"""Intent classification: which sources a question needs.

Input: a question. Output: a :class:`~skillpilot.omni.model.Classification` -- one of ATTACHMENT,
KNOWLEDGE, GRAPH, MIXED, UNKNOWN, its confidence, and each source's weight for the fusion.

Two layers, as the seed plans them (v1.0 keyword rules, v1.1 an embedding classifier):

- **Keywords** (the fast layer): the seed's Chinese keyword lists verbatim, plus their English
  counterparts, matched longest first without overlaps (so ``文档里`` counts for attachments and not
  also as ``文档`` for the knowledge base). Alone -- when semantic matching is off -- no hit is
  UNKNOWN, one source hit is that source, hits for two or more sources are MIXED.
- **Embeddings**: the question's similarity to each class's example questions (the mean of the
  ``top_n`` best cosines, averaged over SkillPilot's configured encoders) for the three sources
  and OTHER (small talk and questions with no source in view, which map to UNKNOWN). Each source
  with a keyword hit gets ``keyword_bonus`` added; a softmax with ``temperature`` turns the four
  evidences into probabilities. OTHER winning is UNKNOWN; a second source within ``co_active``
  of the best one's probability (or, with ``keyword_active``, with a keyword hit of its own)
  makes the question MIXED, with every source weighted by ``exp(gap / weight_temperature)``, its
  evidence's gap to the best source's (a softer scale than the decision's: a weight should say
  how much less a source is trusted, not only that it lost).

The example questions (``intent_examples.jsonl`` beside this module) and the parameters below
are fitted by leave-one-out over those examples only (``benchmarks/omni_fit.py``); the labelled
evaluation set (``benchmarks/omni_intents.jsonl``, ``benchmarks/omni_eval.py``) is never used
to fit anything.
"""

from __future__ import annotations

import json
import re
import threading
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Literal

import numpy as np

from ..encoders import Encoder
from ..text import cap_query
from .model import SOURCE_NAMES, Classification, Intent, SourceName

ExampleClass = Literal["ATTACHMENT", "KNOWLEDGE", "GRAPH", "OTHER", "MIXED"]
# The classes that have example questions to compare with; MIXED examples only test the fit.
PROTOTYPE_CLASSES: tuple[ExampleClass, ...] = ("ATTACHMENT", "KNOWLEDGE", "GRAPH", "OTHER")
INTENT_OF: dict[SourceName, Intent] = {"attachment": "ATTACHMENT", "knowledge": "KNOWLEDGE", "graph": "GRAPH"}
CLASS_OF: dict[SourceName, ExampleClass] = {
    "attachment": "ATTACHMENT",
    "knowledge": "KNOWLEDGE",
    "graph": "GRAPH",
}

# The seed's keyword rules, unchanged.
SEED_KEYWORDS: dict[SourceName, tuple[str, ...]] = {
    "attachment": ("附件", "文件", "上传", "文档里", "这份", "这个文件"),
    "knowledge": ("怎么配置", "怎么部署", "参数", "文档", "官方", "规范", "步骤", "如何"),
    "graph": ("关系", "图谱", "实体", "谁参与", "连接", "关联", "邻居", "一跳", "路径"),
}
# The same rules in English, one regex per seed keyword (word-bounded, on lower-cased text).
ENGLISH_KEYWORDS: dict[SourceName, tuple[str, ...]] = {
    "attachment": (
        r"attach(?:ment|ments|ed)?",
        r"files?",
        r"upload(?:s|ed|ing)?",
        r"in the (?:document|doc|pdf)",
        r"this (?:document|doc|report|pdf|spreadsheet|contract|memo)",
    ),
    "knowledge": (
        r"how (?:do|can|should) (?:i|we|you) (?:configure|set up)|how to (?:configure|set up)",
        r"how (?:do|can|should) (?:i|we|you) deploy|how to deploy",
        r"param(?:eter)?s?",
        r"documentation|docs?",
        r"official(?:ly)?",
        r"standards?|guidelines?|conventions?|polic(?:y|ies)",
        r"steps?",
        r"how (?:do|can|should) (?:i|we)|how to",
    ),
    "graph": (
        r"relationships?|relations?|related",
        r"(?:knowledge )?graph",
        r"entit(?:y|ies)",
        r"who (?:was |were |is |are )?(?:involved|participated|worked on)",
        r"connect(?:s|ed|ion|ions)?",
        r"link(?:s|ed)?|associat(?:ed|ion)",
        r"neighbou?rs?",
        r"(?:one|1|two|2)[- ]hops?|hops?",
        r"paths?",
    ),
}

_ENGLISH = {
    source: [re.compile(rf"\b(?:{pattern})\b") for pattern in patterns] for source, patterns in ENGLISH_KEYWORDS.items()
}
_BY_LENGTH = sorted(
    ((keyword, source) for source, keywords in SEED_KEYWORDS.items() for keyword in keywords),
    key=lambda pair: -len(pair[0]),
)


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", cap_query(text)).lower()


def keyword_hits(query: str) -> dict[SourceName, tuple[str, ...]]:
    """Per source, the keywords found in ``query`` in the order they occur (claimed longest
    first, non-overlapping); sources without a hit are left out."""
    text = _normal(query)
    taken = [False] * len(text)
    hits: dict[SourceName, list[tuple[int, str]]] = {}

    def claim(start: int, end: int, source: SourceName, keyword: str) -> None:
        if not any(taken[start:end]):
            taken[start:end] = [True] * (end - start)
            hits.setdefault(source, []).append((start, keyword))

    for keyword, source in _BY_LENGTH:
        for match in re.finditer(re.escape(keyword), text):
            claim(match.start(), match.end(), source, keyword)
    spans = [(m, source) for source, regexes in _ENGLISH.items() for r in regexes for m in r.finditer(text)]
    for match, source in sorted(spans, key=lambda s: -(s[0].end() - s[0].start())):
        claim(match.start(), match.end(), source, match.group(0))
    return {source: tuple(k for _, k in sorted(hits[source])) for source in SOURCE_NAMES if source in hits}


@dataclass(frozen=True)
class ClassifierParams:
    """The embedding layer's knobs (module docstring); defaults from ``benchmarks/omni_fit.py``."""

    # Leave-one-out accuracy 88.3 % on the 120 examples with the default encoders
    # (minilm+use-multilingual); keyword rules alone: 70.0 %.
    temperature: float = 0.02
    keyword_bonus: float = 0.1
    co_active: float = 0.6
    top_n: int = 3
    keyword_active: bool = True
    # Not fitted (leave-one-out scores intents, not weights): the fusion weight of a MIXED
    # question's sources, exp(evidence gap / this), so a gap of 0.1 leaves a source ~37 %.
    weight_temperature: float = 0.1


DEFAULT_PARAMS = ClassifierParams()


@dataclass(frozen=True)
class Example:
    """One example question and its class."""

    intent: ExampleClass
    query: str


def load_examples() -> list[Example]:
    """The bundled example questions (``intent_examples.jsonl``), in file order."""
    text = resources.files(__package__).joinpath("intent_examples.jsonl").read_text(encoding="utf-8")
    return [Example(**json.loads(line)) for line in text.splitlines() if line.strip()]


class ExampleBank:
    """The example questions of the prototype classes, embedded once by every encoder."""

    def __init__(self, encoders: Sequence[Encoder], examples: Sequence[Example]) -> None:
        self.encoders = list(encoders)
        self.examples = [e for e in examples if e.intent in PROTOTYPE_CLASSES]
        self.labels = np.array([PROTOTYPE_CLASSES.index(e.intent) for e in self.examples])
        texts = [e.query for e in self.examples]
        self.matrices = [encoder.encode_batch(texts) for encoder in self.encoders]

    def encode(self, queries: Sequence[str]) -> list[np.ndarray]:
        """Query vectors per encoder, ``(len(queries), dim)`` each."""
        capped = [cap_query(q) for q in queries]
        return [encoder.encode_batch(capped) for encoder in self.encoders]

    def similarities(
        self, vectors: Sequence[np.ndarray], top_n: int, leave_out: int | None = None
    ) -> dict[ExampleClass, float]:
        """Per prototype class, the mean of the ``top_n`` best cosines to its examples, averaged
        over encoders. ``vectors`` holds one query's vector per encoder; ``leave_out`` ignores one
        example (the query itself, when fitting by leave-one-out)."""
        totals = np.zeros(len(PROTOTYPE_CLASSES))
        for matrix, vector in zip(self.matrices, vectors, strict=True):
            cosines = matrix @ vector
            if leave_out is not None:
                cosines[leave_out] = -np.inf
            for c in range(len(PROTOTYPE_CLASSES)):
                best = np.sort(cosines[self.labels == c])[::-1][:top_n]
                totals[c] += float(best[np.isfinite(best)].mean())
        return {name: float(totals[c] / len(self.matrices)) for c, name in enumerate(PROTOTYPE_CLASSES)}


def decide(
    hits: Mapping[SourceName, Sequence[str]],
    similarities: Mapping[ExampleClass, float] | None,
    params: ClassifierParams = DEFAULT_PARAMS,
) -> Classification:
    """The intent from keyword hits and (when an encoder is configured) class similarities."""
    found = {s: tuple(hits[s]) for s in SOURCE_NAMES if hits.get(s)}
    if similarities is None:
        if not found:
            return Classification("UNKNOWN", 0.0, dict.fromkeys(SOURCE_NAMES, 1.0), found, "keyword")
        if len(found) == 1:
            (source,) = found
            return Classification(INTENT_OF[source], 1.0, {source: 1.0}, found, "keyword")
        # Add-one smoothing: MIXED asks every source, and one without a hit still deserves some say.
        most = max(len(h) for h in found.values())
        weights = {s: (len(found.get(s, ())) + 1) / (most + 1) for s in SOURCE_NAMES}
        return Classification("MIXED", 1.0, weights, found, "keyword")

    evidence = np.array(
        [similarities[CLASS_OF[s]] + (params.keyword_bonus if s in found else 0.0) for s in SOURCE_NAMES]
        + [similarities["OTHER"]]
    )
    # Softmax over the three sources and OTHER; subtracting the max keeps exp() finite.
    exp = np.exp((evidence - evidence.max()) / params.temperature)
    probability = exp / exp.sum()
    method = "keyword+embedding" if found else "embedding"
    if int(np.argmax(probability)) == len(SOURCE_NAMES):
        return Classification("UNKNOWN", float(probability[-1]), dict.fromkeys(SOURCE_NAMES, 1.0), found, method)
    sources = probability[: len(SOURCE_NAMES)]
    best = float(sources.max())
    active = [
        s
        for i, s in enumerate(SOURCE_NAMES)
        if sources[i] / best >= params.co_active or (params.keyword_active and s in found)
    ]
    if len(active) > 1:
        gap = evidence[: len(SOURCE_NAMES)] - evidence[: len(SOURCE_NAMES)].max()
        weights = {s: float(np.exp(gap[i] / params.weight_temperature)) for i, s in enumerate(SOURCE_NAMES)}
        confidence = float(sum(sources[SOURCE_NAMES.index(s)] for s in active))
        return Classification("MIXED", confidence, weights, found, method)
    (source,) = active
    return Classification(INTENT_OF[source], best, {source: 1.0}, found, method)


class IntentClassifier:
    """Keyword rules, plus the embedding layer when ``encoders`` is not empty."""

    def __init__(
        self,
        encoders: Sequence[Encoder] = (),
        params: ClassifierParams = DEFAULT_PARAMS,
        examples: Sequence[Example] | None = None,
    ) -> None:
        self.params = params
        self.bank = ExampleBank(encoders, load_examples() if examples is None else examples) if encoders else None

    def classify(self, query: str) -> Classification:
        hits = keyword_hits(query)
        if self.bank is None:
            return decide(hits, None, self.params)
        vectors = [v[0] for v in self.bank.encode([query])]
        return decide(hits, self.bank.similarities(vectors, self.params.top_n), self.params)


_CACHE: dict[tuple[str, ...], IntentClassifier] = {}
_LOCK = threading.Lock()


def shared_classifier(encoders: Sequence[Encoder]) -> IntentClassifier:
    """One classifier per set of encoders per process: embedding the examples costs a few
    hundred milliseconds, which a long-lived server should pay once."""
    key = tuple(encoder.name for encoder in encoders)
    with _LOCK:
        classifier = _CACHE.get(key)
        if classifier is None:
            classifier = _CACHE[key] = IntentClassifier(encoders)
        return classifier
