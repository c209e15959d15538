"""Example requests route: a message only an example describes reaches its skill, `explain`
names the example that matched, `stats` counts the skills with examples, the dashboard shows
them on a skill's row, `lint` flags a skill without, a running router picks up examples another
process wrote, and an OntoSkills skill's own intents count as its examples (fake encoder, real
SQLite files)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from skillpilot import RouteResult, SkillPilot, StageTrace
from skillpilot.decide import shipped_calibration
from skillpilot.examples import EXAMPLES_FILE
from skillpilot.lint import lint
from skillpilot.retrieve.dense import SECONDARY_PART_WEIGHT
from skillpilot.retrieve.examples import ExampleRetriever

from .cli_util import run_cli
from .conftest import BENCH, require_corpus
from .enrich_util import write_catalog
from .fake_encoder import TrigramEncoder

ENCODER = "trigram-test"
SCANNED = "my scanned letter is only a picture, make the words in it selectable"
REQUESTS = {
    "pdf-tools": [SCANNED, "join these two invoices into one document", "pull the table off page 3 of report.pdf"],
}
OTHER_SKILLS = ("slack-post", "docker-build", "diary")


@pytest.fixture
def pilot(tmp_path: Path, isolated_home: Path) -> SkillPilot:
    pilot = SkillPilot(home=isolated_home, embed_provider=ENCODER, preconditions=False)
    pilot.index([write_catalog(tmp_path / "skills")])
    return pilot


def imported(pilot: SkillPilot, tmp_path: Path) -> None:
    source = tmp_path / "examples.json"
    source.write_text(json.dumps(REQUESTS), encoding="utf-8")
    assert pilot.import_examples(source).skills == ("pdf-tools",)


def test_a_message_only_an_example_describes_routes_to_its_skill_and_explain_names_the_example(
    pilot: SkillPilot, tmp_path: Path, isolated_home: Path
) -> None:
    before = pilot.route(SCANNED)
    assert not (before.skill is not None and before.skill.id == "pdf-tools" and before.decision != "passthrough")
    assert not (isolated_home / EXAMPLES_FILE).exists()  # routing never creates the file
    imported(pilot, tmp_path)
    after = pilot.route(SCANNED, trace=True)
    assert after.skill is not None and after.skill.id == "pdf-tools" and after.decision != "passthrough"
    assert f"closest example request (trigram-test/1): {SCANNED!r}, cosine 1.000" in after.reasons
    assert any(r.startswith("example requests (BM25): rank 1") for r in after.reasons)
    stages = {s.stage: s for s in after.trace or ()}
    examples = stages["example requests (1 of 4 skills have them)"]
    assert f"pdf-tools: {SCANNED!r} (1.000, trigram-test/1)" in examples.notes
    assert "examples:bm25" in stages and "examples:dense:trigram-test/1" in stages


def test_the_example_list_reads_a_skills_examples_together_and_its_meaning_takes_the_closest_one() -> None:
    # One stray example of the docker skill is the message word for word; the Slack skill's
    # examples all say it in other words. The list weighs what a skill's examples share.
    message = "send the weekly status to the team channel"
    requests = [
        ["build the docker image", "tag the docker image and push it", message],
        ["post the weekly status in the team channel", "send the team channel our weekly status"],
        [],
    ]
    encoder = TrigramEncoder()
    retriever = ExampleRetriever(encoder, [encoder.encode_batch(r) if r else np.zeros((0, 512)) for r in requests])
    author = np.array([0.1, 0.2, 0.3], dtype=np.float32)
    listed, merged = retriever.scores_for(encoder.encode_batch([message])[0], author)
    assert listed[1] > listed[0] > 0.3
    assert listed[2] == author[2] and merged[2] == author[2]  # no examples: the author text's score in both
    assert merged[0] == pytest.approx(SECONDARY_PART_WEIGHT)  # the word-for-word example, as a part
    assert retriever.closest(encoder.encode_batch([message])[0], 0) == (2, pytest.approx(1.0))


def test_a_catalog_whose_skills_have_examples_is_ranked_and_judged_by_the_model_fitted_with_examples(
    pilot: SkillPilot, tmp_path: Path
) -> None:
    shipped = shipped_calibration()
    assert shipped.with_examples is not None
    plain, with_examples = shipped.plain, shipped.with_examples
    message = "build the docker image and push it"
    before = stages(pilot.route(message, trace=True))
    assert f"bm25={plain.fusion_weights['bm25']:.2f}" in before["fusion"].notes[0]
    assert not any(name.startswith("example requests") for name in before)
    # One skill of four with examples: the catalog is not what the with-examples model was fitted on.
    imported(pilot, tmp_path)
    some = stages(pilot.route(message, trace=True))
    assert f"bm25={plain.fusion_weights['bm25']:.2f}" in some["fusion"].notes[0]
    assert f"fusion weights and confidence fitted on {plain.fitted_on}" in some["example requests"].notes
    every = {**REQUESTS, **{name: [f"{name} please", f"I need {name} now"] for name in OTHER_SKILLS}}
    source = tmp_path / "every.json"
    source.write_text(json.dumps(every), encoding="utf-8")
    pilot.import_examples(source)
    after = stages(pilot.route(message, trace=True))
    weights = after["fusion"].notes[0]
    assert f"bm25={with_examples.fusion_weights['bm25']:.2f}" in weights
    assert f"examples:bm25={with_examples.fusion_weights['examples:bm25']:.2f}" in weights
    assert f"fusion weights and confidence fitted on {with_examples.fitted_on}" in after["example requests"].notes


def test_a_message_not_every_model_reads_is_fused_with_the_weights_fitted_on_such_messages(
    tmp_path: Path, isolated_home: Path
) -> None:
    # MiniLM reads no Chinese: the multilingual model carries the meaning alone there.
    pilot = SkillPilot(home=isolated_home, preconditions=False)
    pilot.index([write_catalog(tmp_path / "skills")])
    every = {
        "pdf-tools": ["merge these two pdfs", "把这两个 PDF 合并成一个文件"],
        **{name: [f"{name} please", f"I need {name} now"] for name in OTHER_SKILLS},
    }
    source = tmp_path / "every.json"
    source.write_text(json.dumps(every, ensure_ascii=False), encoding="utf-8")
    pilot.import_examples(source)
    with_examples = shipped_calibration().with_examples
    assert with_examples is not None and with_examples.partial_fusion_weights
    chinese = pilot.route("请帮我把这两个 PDF 文件合并", trace=True)
    english = pilot.route("merge the two pdf files for me", trace=True)
    assert chinese.skill is not None and chinese.skill.id == "pdf-tools"
    partial = with_examples.partial_fusion_weights["bm25"]
    assert (
        stages(chinese)["fusion"]
        .notes[0]
        .startswith(f"weights for a message not every model reads: bm25={partial:.2f}")
    )
    assert stages(english)["fusion"].notes[0].startswith(f"weights: bm25={with_examples.fusion_weights['bm25']:.2f}")


def stages(result: RouteResult) -> dict[str, StageTrace]:
    """A route's trace stages by the start of their name (``fusion``, ``example requests``)."""
    return {s.stage.split(":")[0].split(" (")[0]: s for s in result.trace or ()}


def test_a_running_router_picks_up_examples_another_process_wrote(
    pilot: SkillPilot, tmp_path: Path, isolated_home: Path
) -> None:
    pilot.route("merge two pdfs")  # the catalog is loaded and cached
    other = SkillPilot(home=isolated_home, embed_provider=ENCODER)
    imported(other, tmp_path)
    other.close()
    result = pilot.route(SCANNED)
    assert result.skill is not None and result.skill.id == "pdf-tools"
    assert any(r.startswith("closest example request") for r in result.reasons)


def test_stats_lint_and_the_dashboard_show_which_skills_have_examples(
    pilot: SkillPilot, tmp_path: Path, isolated_home: Path
) -> None:
    imported(pilot, tmp_path)
    assert pilot.stats().examples == 1
    text = run_cli("stats", home=isolated_home, SKILLPILOT_EMBED_PROVIDER=ENCODER).stdout
    assert "Example requests: 1 of 4 skills (`skillpilot enrich` writes the rest)" in text
    flagged = {r.id: [f.code for f in r.findings] for r in lint(pilot)}
    assert "no-examples" not in flagged["pdf-tools"]
    assert all("no-examples" in codes for skill, codes in flagged.items() if skill != "pdf-tools")
    pytest.importorskip("fastapi")
    from skillpilot.serve.http import create_app

    from .surfaces_util import uvicorn_on_loopback
    from .test_surfaces_serve import request

    with uvicorn_on_loopback(create_app(pilot)) as url:
        status, listing = request(url, "GET", "/skills?q=pdf")
    (row,) = listing["skills"]
    assert status == 200 and row["examples"] == REQUESTS["pdf-tools"] and row["examples_by"] == "import:examples.json"


def test_an_ontoskills_skills_own_intents_are_its_examples(tmp_path: Path, isolated_home: Path) -> None:
    require_corpus()
    pytest.importorskip("rdflib")
    module = BENCH / "ontoskills" / "registry" / "packages" / "mareasw" / "office" / "office"
    root = tmp_path / "ontologies"
    shutil.copytree(module, root / "office")
    pilot = SkillPilot(home=isolated_home, embed_provider=ENCODER)
    pilot.index([root])
    (office,) = pilot.skills()
    intents = office.skill.metadata["ontoskills"]["intents"]
    own = pilot.example_sets()[office.id]
    assert own.requests == tuple(intents) and (own.source, own.model) == ("skill", "skill")
    assert pilot.stats().examples == 1
    dry = json.loads(
        run_cli(
            "enrich", "--with", "openai", "--dry-run", "--json", home=isolated_home, SKILLPILOT_EMBED_PROVIDER=ENCODER
        ).stdout
    )
    assert (dry["batches"], dry["had_examples"]) == ([], 1)
    result = pilot.route(intents[0])
    assert result.skill is not None and result.skill.id == office.id
