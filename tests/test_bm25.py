"""BM25: scores against bm25s's Lucene variant on real skill descriptions, fusion's top-k of them
against a naive sort, and the user-visible behaviour of BM25Retriever on real SKILL.md files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import pytest
import yaml

from skillpilot.fuse import top_order
from skillpilot.model import BM25, Fingerprint, IndexedSkill, Requirements, RouteHints, Skill
from skillpilot.retrieve import Retriever
from skillpilot.retrieve.bm25 import DEFAULT_B, DEFAULT_K1, BM25Index, BM25Retriever, skill_terms
from skillpilot.text import Query, mostly_cjk, tokenize

from .conftest import require_corpus

BENCH = Path(__file__).resolve().parents[1].parent / "shared" / "bench"
CATALOG = BENCH / "skills"
CONFLICTS = BENCH / "conflicts"


def catalog_entries() -> list[dict[str, Any]]:
    require_corpus()
    entries: list[dict[str, Any]] = json.loads((CATALOG / "index.json").read_text(encoding="utf-8"))
    return entries


def sample_descriptions() -> list[str]:
    """30 real descriptions, every 10th catalog entry, so every source repository is in."""
    return [entry["description"] for entry in catalog_entries()[::10]]


def indexed(folder: Path, root: Path, fingerprint: Fingerprint | None = None) -> IndexedSkill:
    """A real SKILL.md as an IndexedSkill (a test-local reader: the loader is another stage)."""
    _, front, body = (folder / "SKILL.md").read_text(encoding="utf-8").split("---\n", 2)
    meta = yaml.safe_load(front)
    route = meta.get("route", {})
    hints = RouteHints(
        triggers=tuple(route.get("triggers", ())),
        prefer_when=tuple(route.get("prefer_when", ())),
        side_effects=route.get("side_effects"),
    )
    skill = Skill(
        key=folder.relative_to(root).as_posix(),
        name=meta["name"],
        description=meta["description"],
        body=body,
        path=str(folder),
        root=str(root),
        route=hints,
    )
    fingerprint = fingerprint or Fingerprint(
        intent_patterns=(),
        keywords=(),
        side_effects=hints.side_effects or "read-only",
        side_effects_declared=hints.side_effects is not None,
        preconditions=Requirements(),
    )
    return IndexedSkill(id=skill.key, skill=skill, fingerprint=fingerprint, indexed_at=0.0)


def conflict_catalog() -> list[IndexedSkill]:
    require_corpus()
    return [indexed(folder, CONFLICTS) for folder in sorted(CONFLICTS.iterdir()) if folder.is_dir()]


def naive_top(scores: np.ndarray, k: int) -> list[int]:
    """The positions of the ``k`` best scores > 0, by a full sort (ties: lower position first)."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return [i for i in order if scores[i] > 0][:k]


def found(scores: np.ndarray, k: int) -> list[int]:
    """What fusion takes as a keyword list's best ``k`` (``top_order``), matches only."""
    return [int(i) for i in top_order(scores, k) if scores[i] > 0]


def ranked(retriever: BM25Retriever, query: str, k: int) -> list[int]:
    return found(retriever.scores(Query.of(query)), k)


QUERIES = [
    # real dev-set messages, plus one that repeats a term and one with a term no document has
    "turn this markdown report into a word document with the images embedded",
    "review my pull request for security problems",
    "generate a diagram of our architecture in draw.io",
    "write a changelog from the git history since the last release",
    "find bugs in this diff",
    "art art generative art",
    "zzyzx terraform",
]


@pytest.mark.parametrize("query", QUERIES)
def test_scores_equal_bm25s_lucene(query: str) -> None:
    # bm25s "lucene" is exactly our variant: IDF ln(1 + (N - df + 0.5)/(df + 0.5)), numerator tf
    # without (k1 + 1), and every query-token occurrence summed. rank_bm25.BM25Okapi is not
    # (Robertson IDF with an epsilon floor, (k1 + 1) numerator), so it cannot be compared exactly.
    corpus = [tokenize(text) for text in sample_descriptions()]
    reference = bm25s.BM25(method="lucene", k1=DEFAULT_K1, b=DEFAULT_B, dtype="float64")
    reference.index(corpus, show_progress=False)
    ours = BM25Index(corpus)

    terms = tokenize(query)
    expected = reference.get_scores(terms)
    got = ours.scores(terms)

    assert got.shape == (30,)
    assert np.count_nonzero(expected) > 0
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert found(got, 30) == naive_top(expected, 30)


def test_repeated_query_term_counts_each_time() -> None:
    index = BM25Index([tokenize(text) for text in sample_descriptions()])
    once = index.scores(["art"])
    np.testing.assert_allclose(index.scores(["art", "art"]), 2 * once, rtol=0, atol=1e-12)
    # Only algorithmic-art (position 0) says "art", five times.
    assert np.flatnonzero(once).tolist() == [0]


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 100])
def test_top_k_equals_naive_full_sort_including_ties(k: int) -> None:
    descriptions = sample_descriptions()
    # Entries 3 and 30 are the same text: equal scores, and the lower position must win the tie.
    corpus = [tokenize(text) for text in [*descriptions, descriptions[3]]]
    index = BM25Index(corpus)
    for query in ["skill", "review code pull request", "data analysis python"]:
        terms = tokenize(query)
        scores = index.scores(terms)
        assert found(scores, k) == naive_top(scores, k)
    assert index.scores(tokenize("skill"))[3] == index.scores(tokenize("skill"))[30]


def test_unknown_terms_and_empty_documents_score_nothing() -> None:
    index = BM25Index([tokenize(text) for text in sample_descriptions()])
    assert not index.scores(["zzyzx"]).any() and not index.scores([]).any()
    assert BM25Index([]).scores(["pdf"]).tolist() == []
    assert BM25Index([[], []]).scores(["pdf"]).tolist() == [0.0, 0.0]


def test_stemming_matches_inflected_query() -> None:
    index = BM25Index([tokenize("open a pull request"), tokenize("close the issue")])
    assert tokenize("opening pull requests") == ["open", "pull", "request"]
    np.testing.assert_array_equal(
        index.scores(tokenize("opening pull requests")), index.scores(tokenize("open a pull request"))
    )

    # In the real conflict catalog, the github skill's body says "open, review or merge a pull request".
    catalog = conflict_catalog()
    assert catalog[ranked(BM25Retriever(catalog), "opening pull requests", 3)[0]].key == "github"


def test_chinese_query_matches_chinese_text() -> None:
    # research-grants is the one real catalog skill with Chinese (traditional) text in its body.
    entries = catalog_entries()
    target = next(i for i, e in enumerate(entries) if e["id"] == "k-dense-scientific-skills/research-grants")
    docs = []
    for entry in entries[:40] + [entries[target]]:
        text = (CATALOG / entry["source"] / entry["dir"] / "SKILL.md").read_text(encoding="utf-8")
        docs.append(tokenize(text))
    index = BM25Index(docs)

    # simplified: 可行性 is shared, 創新 is not
    assert found(index.scores(tokenize("评估可行性和创新性")), 5) == [40]
    assert found(index.scores(tokenize("可行性")), 5)[0] == 40


@pytest.mark.parametrize("query", ["", "   ", "what is it that you would do?", "!!!"])
def test_empty_or_stop_word_query_returns_nothing(query: str) -> None:
    retriever: Retriever = BM25Retriever(conflict_catalog())
    assert not retriever.scores(Query.of(query)).any()


def test_retriever_ranks_real_conflict_catalog() -> None:
    catalog = conflict_catalog()
    retriever = BM25Retriever(catalog)
    assert retriever.id == BM25 and str(retriever.id) == "bm25"

    def keys(query: str, k: int) -> list[str]:
        return [catalog[i].key for i in ranked(retriever, query, k)]

    assert keys("rerun the failed job in CI", 5) == ["github-actions", "slack-notifier"]
    # Only docker and docker-compose say "docker" (kubernetes does not), the focused one first.
    assert keys("docker", 20) == ["docker", "docker-compose"]
    assert keys("post in slack", 2) == ["slack", "slack-advanced"]


def test_skill_terms_fields_trigger_weight_and_body_cut() -> None:
    skill = Skill(
        key="docker-compose",
        name="docker_compose-up",
        description="Start the stack.",
        body="Containers everywhere. Restart policies",
        path="/skills/docker-compose",
        root="/skills",
        route=RouteHints(triggers=("bring the stack up",)),
    )
    fingerprint = Fingerprint(
        intent_patterns=("start services",),
        keywords=("yaml",),
        side_effects="write-local",
        side_effects_declared=False,
        preconditions=Requirements(),
    )
    item = IndexedSkill(id="docker-compose", skill=skill, fingerprint=fingerprint, indexed_at=0.0)

    # "Restart" is cut at character 27 ("Containers everywhere. Res"): the half word is dropped.
    assert skill_terms(item, trigger_weight=2, body_chars=26) == [
        "docker", "compos", "start", "stack", "start", "servic", "yaml",
        "bring", "stack", "bring", "stack", "contain", "everywher",
    ]  # fmt: skip
    assert skill_terms(item, trigger_weight=0, body_chars=0) == [
        "docker", "compos", "start", "stack", "start", "servic", "yaml",
    ]  # fmt: skip
    assert skill_terms(item).count("bring") == 3
    assert skill_terms(item)[-4:] == ["contain", "everywher", "restart", "polici"]
    with pytest.raises(ValueError):
        skill_terms(item, trigger_weight=-1)


def test_trigger_weight_lifts_trigger_phrase_hits() -> None:
    catalog = conflict_catalog()
    # "post in slack" is the slack skill's trigger; slack-notifier's description also says Slack.
    weighted = BM25Retriever(catalog).scores(Query.of("post in slack"))
    flat = BM25Retriever(catalog, trigger_weight=1).scores(Query.of("post in slack"))
    slack = next(i for i, s in enumerate(catalog) if s.key == "slack")
    assert found(weighted, 2)[0] == slack
    assert weighted[slack] > flat[slack]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("帮我把视频剪短", True),
        ("把这个 README 翻译成中文", True),
        ("translate 这个 file into English", False),
        ("", False),
    ],
)
def test_mostly_cjk_counts_letters_not_characters(text: str, expected: bool) -> None:
    assert mostly_cjk(text) is expected
