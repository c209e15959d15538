"""`SkillPilot.route(roots=...)` and `POST /route {"roots"}`: the choice limited to some skill folders."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from skillpilot import SkillPilot
from skillpilot.serve.http import create_app

from .conftest import write_skill
from .surfaces_util import SKILLS, indexed, uvicorn_on_loopback


def test_route_only_over_the_given_roots(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home", log_enabled=False)
    other = tmp_path / "other-host"
    write_skill(
        other,
        "commit-wizard",
        "name: commit-wizard\ndescription: Write git commit messages with emoji for another agent host. Use to "
        "commit changes.",
    )
    pilot.index([other])

    def without_latency(roots: list[str] | None) -> dict[str, object]:
        answer = pilot.route("commit my changes", roots=roots).to_dict()
        del answer["latency_ms"], answer["load_ms"]
        return answer

    # Every root named: the same decision as no limit at all.
    assert without_latency([str(SKILLS), str(other)]) == without_latency(None)
    only_other = pilot.route("commit my changes", roots=[str(other)])
    assert only_other.skill is not None and only_other.skill.id == "commit-wizard"
    assert only_other.alternatives == ()
    only_examples = pilot.route("commit my changes", roots=[str(SKILLS)])
    assert only_examples.skill is not None and only_examples.skill.id == "git-commit"
    assert all(a.id != "commit-wizard" for a in only_examples.alternatives)
    nowhere = pilot.route("commit my changes", roots=[str(tmp_path / "nothing-here")])
    assert (nowhere.decision, nowhere.skill, nowhere.method) == ("passthrough", None, "no-match")
    assert nowhere.reasons == (f"no skill can be under {tmp_path / 'nothing-here'}: no such file or folder",)
    not_indexed = tmp_path / "not-indexed"
    write_skill(not_indexed, "lunch", "name: lunch\ndescription: Order lunch for the team.")
    unindexed = pilot.route("order lunch", roots=[str(not_indexed)])
    assert unindexed.reasons == (
        f"no indexed skill is under {not_indexed}: index it first (`skillpilot index FOLDER`)",
    )
    empty = SkillPilot(home=tmp_path / "empty-home", embed_provider="trigram-test").route("commit my changes")
    assert empty.reasons == ("the index holds no skills: index a folder of them first (`skillpilot index FOLDER`)",)


def test_the_fast_path_ignores_trigger_phrases_outside_the_roots(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home", log_enabled=False)
    other = tmp_path / "other-host"
    write_skill(other, "lunch", "name: lunch\ndescription: Order lunch for the team.\ntriggers: [commit my changes]")
    pilot.index([other])
    result = pilot.route("commit my changes", roots=[str(SKILLS)])
    assert result.skill is not None and result.skill.id == "git-commit"


def test_http_route_accepts_roots(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home", log_enabled=False)
    with uvicorn_on_loopback(create_app(pilot)) as url:

        def route(body: dict[str, object]) -> dict[str, object]:
            request = urllib.request.Request(
                url + "/route", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
            )
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            answer: dict[str, object] = json.loads(opener.open(request, timeout=30).read())
            return answer

        assert route({"message": "commit my changes", "roots": [str(SKILLS)]})["decision"] == "hard"
        assert route({"message": "commit my changes", "roots": [str(tmp_path)]})["decision"] == "passthrough"
