"""OntoSkills interop on the real copied files: read every generation, index, route, compile, export."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from skillpilot import SkillPilot
from skillpilot.encoders import get_encoder
from skillpilot.encoders.onnx import OnnxEncoder
from skillpilot.ontoskills import vocab
from skillpilot.ontoskills.compile import CompileReport, compile_skills
from skillpilot.ontoskills.export import export_embeddings
from skillpilot.ontoskills.reader import read_records
from skillpilot.ontoskills.writer import validate

from .cli_util import CliOutcome, run_cli
from .conftest import BENCH, EXAMPLES, require_corpus, write_skill

pytest.importorskip("rdflib")
pytest.importorskip("pyshacl")

ONTO = BENCH / "ontoskills"
REGISTRY = ONTO / "registry"
SHAPES = REGISTRY / "ontology" / "f15690a" / "core" / "specs" / "ontoskills.shacl.ttl"
HELLO = REGISTRY / "packages" / "mareasw" / "greeting" / "hello" / "ontoskill.ttl"
OFFICE = REGISTRY / "packages" / "mareasw" / "office" / "office" / "ontoskill.ttl"
OLD_OFFICE = REGISTRY / "compiled-tree" / "01e38e7" / "ontoskills" / "office" / "ontoskill.ttl"


@pytest.mark.parametrize(
    ("module", "namespace", "identifier", "skill_type", "intents"),
    [
        (HELLO, vocab.NAMESPACES[1], "hello", "executable", 2),
        (OFFICE, vocab.NAMESPACES[1], "office", "declarative", 7),
        (OLD_OFFICE, vocab.NAMESPACES[2], "office", "declarative", 6),
    ],
)
def test_every_copied_module_reads_in_its_namespace(
    module: Path, namespace: str, identifier: str, skill_type: str, intents: int
) -> None:
    require_corpus()
    [record] = read_records(module)
    assert (record.namespace, record.identifier, record.skill_type) == (namespace, identifier, skill_type)
    assert len(record.intents) == intents
    assert record.knowledge and all(k.directive for k in record.knowledge)


def test_a_module_of_each_generation_reads_fully() -> None:
    require_corpus()
    [hello] = read_records(HELLO)
    assert hello.iri == "oc:skill_hello"
    assert hello.payload is not None and hello.payload.executor == "shell" and hello.payload.timeout == 5000
    [old] = read_records(OLD_OFFICE)
    assert old.depends_on == ("docx", "pdf", "pptx", "xlsx")  # old literal ids
    assert old.requires_state == ("oc:EnvironmentReady", "oc:SystemAuthenticated")
    assert ("Tool", "soffice", True) in old.requirements
    assert old.genus == "Meta-skill"
    assert {k.kind for k in old.knowledge} >= {"AntiPattern", "PreFlightCheck", "Idempotency"}


def test_registry_tree_indexes_and_routes_all_three_generations(isolated_home: Path) -> None:
    require_corpus()
    pilot = SkillPilot(home=isolated_home, enable_semantic=False, preconditions=False)
    report = pilot.index([REGISTRY])
    assert (report.total, report.skipped) == (3, ())
    by_key = {s.key: s for s in pilot.skills()}
    assert sorted(by_key) == [
        "compiled-tree/01e38e7/ontoskills/office",
        "mareasw/greeting/hello",
        "mareasw/office/office",
    ]
    hello = by_key["mareasw/greeting/hello"].skill
    assert (hello.name, hello.trust_tier, hello.description) == ("hello", "verified", "Simple greeting skill")
    assert hello.route.triggers == ("greet the user", "say hello")
    assert hello.route.prefer_when == ("greeting", "ciao")  # manifest aliases
    assert hello.metadata["ontoskills"]["qualified_id"] == "mareasw/greeting/hello"
    old = by_key["compiled-tree/01e38e7/ontoskills/office"].skill
    assert (old.trust_tier, old.metadata["ontoskills"]["qualified_id"]) == ("local", "local/office")
    assert old.metadata["related"] == ["docx", "pdf", "pptx", "xlsx"]
    assert old.requires.bins == ("node", "python3")  # required tools only, optional ones dropped
    for message, key in [
        ("please say hello to the new user", "mareasw/greeting/hello"),
        ("I need to edit word documents", "mareasw/office/office"),
        ("manage office documents for me", "compiled-tree/01e38e7/ontoskills/office"),
    ]:
        result = pilot.route(message)
        assert result.skill is not None and result.skill.key == key, message


def test_unreadable_modules_are_skipped_with_the_reason(isolated_home: Path, tmp_path: Path) -> None:
    require_corpus()
    root = tmp_path / "tree"
    (root / "broken").mkdir(parents=True)
    (root / "broken" / "ontoskill.ttl").write_text(
        '@prefix oc: <https://ontoskills.sh/ontology#> .\noc:x a oc:Skill ; oc:y "a" "b" .\n', "utf-8"
    )
    (root / "anonymous").mkdir()
    (root / "anonymous" / "ontoskill.ttl").write_text(
        '@prefix oc: <https://ontoskills.sh/ontology#> .\noc:skill_x a oc:Skill ; oc:resolvesIntent "do x" .\n',
        "utf-8",
    )
    shutil.copytree(HELLO.parent, root / "hello")
    report = SkillPilot(home=isolated_home, enable_semantic=False).index([root])
    assert report.total == 1
    reasons = {Path(s.path).parent.name: s.reason for s in report.skipped}
    assert reasons["broken"] == "line 2: is not valid Turtle: expected '.' or '}' or ']' at end of statement"
    assert reasons["anonymous"] == "skill oc:skill_x has no dcterms:identifier (its id)"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CompileReport]:
    """The example skills, one skill without intents and the copied registry, compiled once."""
    require_corpus()
    source = tmp_path_factory.mktemp("source")
    shutil.copytree(EXAMPLES / "skills", source / "examples")
    write_skill(source / "examples", "vague", "name: vague\ndescription: Does several different things.")
    out = tmp_path_factory.mktemp("out")
    from skillpilot.config import load_settings

    encoder = get_encoder("minilm", load_settings(tmp_path_factory.mktemp("home")))
    report = compile_skills([source / "examples", REGISTRY], out, encoder=encoder, shapes=SHAPES)
    return out, report


def test_compile_writes_modules_that_conform_to_the_shapes(compiled: tuple[Path, CompileReport]) -> None:
    out, report = compiled
    modules = sorted(out.rglob("ontoskill.ttl"))
    assert len(modules) == 19  # 16 examples + 3 OntoSkills modules; "vague" has no intents
    assert not report.skipped
    assert any("'vague' has no intents" in w for w in report.warnings)
    import rdflib

    for module in modules:
        conforms, text = validate(rdflib.Graph().parse(module), SHAPES)
        assert conforms, text
    # Older generations are migrated: current namespace, knowledge and payload kept.
    [hello] = read_records(out / "mareasw" / "greeting" / "hello" / "ontoskill.ttl")
    assert (hello.namespace, hello.skill_type, len(hello.knowledge)) == (vocab.CURRENT_NS, "executable", 1)
    [commit] = read_records(out / "git-commit" / "ontoskill.ttl")
    assert commit.iri == "oc:skill_local_git_commit" and commit.nature == "Tool"
    assert commit.intents and commit.description


def test_compile_writes_intents_json_in_ontoskills_format(compiled: tuple[Path, CompileReport]) -> None:
    out, _ = compiled
    data = json.loads((out / "mareasw" / "greeting" / "hello" / "intents.json").read_text("utf-8"))
    assert list(data) == ["model", "dimension", "intents"]
    assert (data["model"], data["dimension"]) == ("sentence-transformers/all-MiniLM-L6-v2", 384)
    assert [e["intent"] for e in data["intents"]] == ["greet the user", "say hello"]
    for entry in data["intents"]:
        assert list(entry) == ["intent", "embedding", "skills"] and entry["skills"] == ["hello"]
        assert len(entry["embedding"]) == 384
        assert abs(np.linalg.norm(entry["embedding"]) - 1.0) < 1e-6
    assert not (out / "vague").exists()


def test_the_index_uses_precomputed_intent_vectors(compiled: tuple[Path, CompileReport], tmp_path: Path) -> None:
    out, _ = compiled
    tree = tmp_path / "tree"
    shutil.copytree(out, tree)
    (tree / "translate-text" / "intents.json").unlink()  # this one must be embedded
    pilot = SkillPilot(home=tmp_path / "home", embed_provider="minilm", preconditions=False)
    assert pilot.index([tree]).total == 19
    [space] = [k for k in _spaces(pilot) if k.startswith("all-MiniLM-L6-v2")]
    stored = pilot.store.vectors(space)
    root = str(tree.absolute())
    entries = json.loads((tree / "git-commit" / "intents.json").read_text("utf-8"))["intents"]
    rows = np.array([e["embedding"] for e in entries], dtype=np.float32)
    centroid = rows.mean(axis=0) / np.linalg.norm(rows.mean(axis=0))
    assert np.allclose(stored[(root, "git-commit")], np.vstack([centroid, rows]), atol=1e-6)
    # Without intents.json the skill gets the usual parts: name + description first.
    encoder = get_encoder("minilm", pilot.settings)
    translate = pilot.get("translate-text").skill
    expected = encoder.encode_batch([f"translate text: {translate.description}"])[0]
    assert float(stored[(root, "translate-text")][0] @ expected) > 0.999
    result = pilot.route("commit my staged changes with a good message")
    assert result.skill is not None and result.skill.id == "git-commit"


def _spaces(pilot: SkillPilot) -> list[str]:
    import sqlite3

    with sqlite3.connect(pilot.settings.index_path) as db:
        return [row[0] for row in db.execute("SELECT DISTINCT encoder FROM vectors")]


def test_exported_embeddings_are_a_working_encoder(tmp_path: Path) -> None:
    model, tokenizer = export_embeddings(tmp_path / "embeddings")
    assert Path(model.path).name == "model.onnx" and Path(tokenizer.path).name == "tokenizer.json"
    assert model.bytes > 10_000_000 and oct(os.stat(model.path).st_mode & 0o777) == "0o644"
    folder = OnnxEncoder(tmp_path / "embeddings")
    from skillpilot.config import load_settings

    bundled = get_encoder("minilm", load_settings(tmp_path))
    text = ["create a pdf document"]
    assert folder.dim == 384
    # The export is the shipped file; SkillPilot routes with its integer-kernel copy (see encoders.onnx).
    assert float(folder.encode_batch(text)[0] @ bundled.encode_batch(text)[0]) > 0.98


def _cli(*args: str, home: Path) -> CliOutcome:
    return run_cli(*args, home=home, SKILLPILOT_ENABLE_SEMANTIC="false")


def test_cli_compile_json_and_usage_errors(isolated_home: Path, tmp_path: Path) -> None:
    require_corpus()
    proc = _cli(
        "compile",
        "-i",
        str(REGISTRY),
        "-o",
        str(tmp_path / "out"),
        "--package",
        "me/demo",
        "--no-embeddings",
        "--shacl",
        str(SHAPES),
        "--json",
        home=isolated_home,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert sorted(c["qualified_id"] for c in report["compiled"]) == ["me/demo/hello", "me/demo/office"]
    assert [s["reason"] for s in report["skipped"]] == [
        "id 'office' is already used in me/demo by compiled-tree/01e38e7/ontoskills/office"
    ]
    manifest = json.loads((tmp_path / "out" / "package.json").read_text("utf-8"))
    assert (manifest["package_id"], manifest["embedding_files"]) == ("me/demo", [])
    assert manifest["modules"] == [
        "compiled-tree/01e38e7/ontoskills/office/ontoskill.ttl",
        "mareasw/greeting/hello/ontoskill.ttl",
    ]
    bad = _cli("compile", "-i", str(REGISTRY), "-o", str(tmp_path / "x"), "--package", "nope", home=isolated_home)
    assert bad.returncode == 2 and "author/package" in bad.stderr
    missing = _cli(
        "compile",
        "-i",
        str(REGISTRY),
        "-o",
        str(tmp_path / "y"),
        "--no-embeddings",
        "--shacl",
        str(tmp_path / "none.ttl"),
        home=isolated_home,
    )
    assert missing.returncode == 1 and "none.ttl" in missing.stderr
