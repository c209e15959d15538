"""Every flag of ``skillpilot route`` works in batch mode (``--queries``) as it does for one
message: ``--trace``, ``--preconditions``, ``--fail-on-passthrough``, ``--json`` / ``--human``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillpilot import SkillPilot

from .cli_util import run_cli
from .conftest import write_skill


@pytest.fixture
def home(isolated_home: Path, tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "pdf-merge", "name: pdf-merge\ndescription: Merge several PDF files into one document.")
    write_skill(
        root,
        "video-trim",
        "name: video-trim\ndescription: Cut a video to a time range.\nrequires:\n  env: [SKILLPILOT_TEST_NO_SUCH_VAR]",
    )
    SkillPilot(home=isolated_home, enable_semantic=False).index([root])
    (isolated_home / "config.yaml").write_text("router:\n  enableSemantic: false\n", encoding="utf-8")
    return isolated_home


def _batch(tmp_path: Path, *queries: str) -> str:
    path = tmp_path / "queries.jsonl"
    path.write_text("".join(json.dumps({"id": i, "query": q}) + "\n" for i, q in enumerate(queries, 1)))
    return str(path)


def _one(home: Path, message: str, *flags: str) -> dict[str, object]:
    outcome = run_cli("route", message, "--json", *flags, home=home)
    assert outcome.returncode == 0, outcome.stderr
    result: dict[str, object] = json.loads(outcome.stdout)
    return result


def test_trace_and_preconditions_in_batch_equal_one_message_routes(home: Path, tmp_path: Path) -> None:
    queries = ("merge PDF files", "trim this video to the first minute")
    for flags in ((), ("--trace",), ("--preconditions", "off"), ("--trace", "--preconditions", "on")):
        batch = run_cli("route", "--queries", _batch(tmp_path, *queries), *flags, home=home)
        assert batch.returncode == 0, batch.stderr
        lines = [json.loads(line) for line in batch.stdout.splitlines()]
        assert [line.pop("id") for line in lines] == [1, 2]
        singles = [_one(home, q, *flags) for q in queries]
        for line, single in zip(lines, singles, strict=True):
            for timing in ("latency_ms", "load_ms"):
                del line[timing], single[timing]
            assert line == single, flags
        assert ("trace" in lines[0]) == ("--trace" in flags)
    # The precondition flag reaches batch routes: the missing variable is named only when on.
    unmet = {
        flag: json.loads(
            run_cli("route", "--queries", _batch(tmp_path, queries[1]), "--preconditions", flag, home=home).stdout
        )["unmet_preconditions"]
        for flag in ("on", "off")
    }
    assert unmet == {"on": ["env SKILLPILOT_TEST_NO_SUCH_VAR is not set"], "off": []}


def test_human_batch_prints_each_route_as_text_and_json_stays_the_default(home: Path, tmp_path: Path) -> None:
    batch = _batch(tmp_path, "merge PDF files", "what is the weather")
    text = run_cli("route", "--queries", batch, "--human", "--trace", "--fail-on-passthrough", home=home)
    assert text.returncode == 3
    lines = text.stdout.splitlines()
    assert lines[0] == "1: merge PDF files"
    assert lines[1].split()[:2] in (["hard", "pdf-merge"], ["soft", "pdf-merge"])
    assert "2: what is the weather" in lines
    assert any(line.startswith("Query: ") for line in lines)  # the trace, as for one message
    assert not any(line.startswith("{") for line in lines)
    default = run_cli("route", "--queries", batch, home=home)
    assert [json.loads(line)["id"] for line in default.stdout.splitlines()] == [1, 2]
    explicit = run_cli("route", "--queries", batch, "--json", home=home)
    assert [json.loads(line)["id"] for line in explicit.stdout.splitlines()] == [1, 2]
