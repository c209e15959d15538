"""The plugin boundary and the facade's contract: settings checked by name, encoders chosen from
the registry, formats registered like third parties, the core working without its edges, BLAS
limited only while routing, load time apart from routing time, flags that work in batch mode."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from threadpoolctl import threadpool_info
from typer.testing import CliRunner

import skillpilot
from skillpilot import SkillPilot
from skillpilot.bench import BenchError as BenchErrorFromBench
from skillpilot.cli import app
from skillpilot.errors import BenchError, ConfigError, FeedbackError, SkillPilotError
from skillpilot.market import Market, SearchFilters
from skillpilot.retrieve.dense import DenseRetriever

from .conftest import EXAMPLES, write_skill
from .fake_encoder import SPEC

EDGES = ("ontoskills", "cli", "serve", "adapters", "bench")


def _skills(root: Path) -> Path:
    write_skill(root, "pdf-merge", "name: pdf-merge\ndescription: Merge several PDF files into one document.")
    write_skill(root, "video-trim", "name: video-trim\ndescription: Cut a video to a time range.")
    return root


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_a_misspelt_override_names_the_key_and_the_closest_ones(isolated_home: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"'hard_treshold' \(in override\): unknown setting; did you mean "
        r"hard_threshold or soft_threshold\?",
    ):
        SkillPilot(home=isolated_home, hard_treshold=0.9)
    settings = SkillPilot(home=isolated_home).settings
    with pytest.raises(ConfigError, match="'enable_semantik'.*did you mean enable_semantic"):
        settings.with_overrides(enable_semantik=False)


def test_a_registered_encoder_is_selectable_and_an_unknown_one_lists_the_registry(
    isolated_home: Path, tmp_path: Path
) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.yaml").write_text(f"embed:\n  provider: {SPEC}\n")
    pilot = SkillPilot(home=isolated_home)
    pilot.index([_skills(tmp_path / "skills")])
    result = pilot.route("join my PDF documents", trace=True)
    assert result.skill is not None and result.skill.id == "pdf-merge"
    assert [s.stage for s in result.trace or ()][1:3] == ["bm25", "dense:trigram-test/1"]
    with pytest.raises(ConfigError, match=f"'bert' must be one of minilm, openai, [^']*{SPEC}"):
        SkillPilot(home=isolated_home, embed_provider="bert")


def test_blas_is_single_threaded_only_while_routing(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _blas_threads()
    pilot = SkillPilot(home=isolated_home, embed_provider=SPEC)
    assert _blas_threads() == before
    seen: list[list[int]] = []
    scores_for = DenseRetriever.scores_for

    def recording(self: DenseRetriever, vector: object) -> object:
        seen.append(_blas_threads())
        return scores_for(self, vector)  # type: ignore[arg-type]

    monkeypatch.setattr(DenseRetriever, "scores_for", recording)
    pilot.index([_skills(tmp_path / "skills")])
    pilot.route("join my PDF documents")
    assert seen and all(threads == [1] * len(before) for threads in seen)
    assert _blas_threads() == before


def test_loading_is_reported_apart_from_routing_time(isolated_home: Path, tmp_path: Path) -> None:
    pilot = SkillPilot(home=isolated_home, enable_semantic=False, log_enabled=False)
    pilot.index([_skills(tmp_path / "skills")])
    cold = pilot.route("merge PDF files")
    warm = pilot.route("merge PDF files")
    assert cold.load_ms > 0 and warm.load_ms == 0.0
    assert cold.latency_ms > 0 and warm.latency_ms > 0
    # The CLI's fresh router loads on its first route and says so apart.
    printed = CliRunner().invoke(app, ["route", "merge PDF files", "--home", str(isolated_home), "--human"])
    assert printed.exit_code == 0, printed.output
    assert " ms loading" in printed.output.splitlines()[0]


def test_route_queries_honours_fail_on_passthrough(isolated_home: Path, tmp_path: Path) -> None:
    SkillPilot(home=isolated_home, enable_semantic=False).index([_skills(tmp_path / "skills")])
    (isolated_home / "config.yaml").write_text("router:\n  enableSemantic: false\n")
    batch = tmp_path / "queries.jsonl"
    batch.write_text('{"id": 1, "query": "merge PDF files"}\n{"id": 2, "query": "what is the weather"}\n')
    runner = CliRunner()
    args = ["route", "--queries", str(batch), "--home", str(isolated_home)]
    plain = runner.invoke(app, args)
    failing = runner.invoke(app, [*args, "--fail-on-passthrough"])
    assert (plain.exit_code, failing.exit_code) == (0, 3)
    decisions = [json.loads(line)["decision"] for line in failing.stdout.splitlines()]
    assert decisions[1] == "passthrough" and len(decisions) == 2
    only_routes = tmp_path / "routes.jsonl"
    only_routes.write_text('{"id": 1, "query": "merge PDF files"}\n')
    assert (
        runner.invoke(
            app, ["route", "--queries", str(only_routes), "--home", str(isolated_home), "--fail-on-passthrough"]
        ).exit_code
        == 0
    )


def test_output_format_in_the_config_sets_the_cli_default(isolated_home: Path, tmp_path: Path) -> None:
    SkillPilot(home=isolated_home, enable_semantic=False).index([_skills(tmp_path / "skills")])
    runner = CliRunner()
    home = ["--home", str(isolated_home)]
    assert not runner.invoke(app, ["stats", *home]).stdout.startswith("{")
    (isolated_home / "config.yaml").write_text("platforms:\n  cli:\n    outputFormat: json\n")
    as_config = runner.invoke(app, ["stats", *home])
    assert as_config.exit_code == 0 and json.loads(as_config.stdout)["skills"] == 2
    human = runner.invoke(app, ["stats", *home, "--human"])
    assert human.exit_code == 0 and not human.stdout.startswith("{")


def test_the_library_works_without_its_edges(tmp_path: Path) -> None:
    package = Path(skillpilot.__file__).parent
    copy = tmp_path / "site" / "skillpilot"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__", *EDGES))
    assert not any((copy / edge).exists() for edge in EDGES)
    script = (
        "import sys, json\n"
        "from skillpilot import SkillPilot\n"
        f"pilot = SkillPilot(home={str(tmp_path / 'home')!r}, enable_semantic=False, log_enabled=False)\n"
        f"report = pilot.index([{str(EXAMPLES / 'skills')!r}])\n"
        "result = pilot.route('commit my changes')\n"
        f"edges = sorted(m for m in sys.modules if m.split('.')[1:2] and m.split('.')[1] in {EDGES!r})\n"
        "print(json.dumps({'total': report.total, 'skill': result.skill.id, 'decision': result.decision,"
        " 'file': __import__('skillpilot').__file__, 'edges': edges}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(copy.parent)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["file"] == str(copy / "__init__.py")
    assert (answer["skill"], answer["decision"], answer["edges"]) == ("git-commit", "hard", [])
    assert answer["total"] == len(list((EXAMPLES / "skills").rglob("SKILL.md")))


def test_errors_for_bad_input_are_project_errors(isolated_home: Path, tmp_path: Path) -> None:
    assert BenchErrorFromBench is BenchError and issubclass(BenchError, SkillPilotError)
    pilot = SkillPilot(home=isolated_home, enable_semantic=False)
    pilot.index([_skills(tmp_path / "skills")])
    with pytest.raises(
        FeedbackError, match=r"feedback kind 'liked': use confirm, correct, ignore \(or confirmed, corrected, ignored\)"
    ):
        pilot.feedback("liked", "merge PDF files", skill="pdf-merge")
    with pytest.raises(SkillPilotError, match="needs wrong="):
        pilot.feedback("corrected", "merge PDF files", skill="pdf-merge")


def test_the_trust_tier_is_one_rule_for_routing_and_the_market(isolated_home: Path, tmp_path: Path) -> None:
    pilot = SkillPilot(home=isolated_home, enable_semantic=False, trust_tiers={"pdf-merge": "official"})
    pilot.index([_skills(tmp_path / "skills")])
    assert "score multiplied by 1.20 (trust tier / preconditions)" in pilot.route("merge PDF files").reasons
    official = Market(pilot).search("merge PDF files", 5, SearchFilters(trust_tiers=("official",)))
    assert [h.skill.id for h in official] == ["pdf-merge"]
    assert official[0].skill.trust_tier == "official"
