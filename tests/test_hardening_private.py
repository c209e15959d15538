"""Private stays private, by construction: a secret planted in private skills' bodies appears in no
output of any surface (library, CLI, HTTP, MCP) and in no file the index or the exports write;
a private skill is routed and found on its public fields only.

The routers are keyword-only (no model loads: fast); dense retrieval cannot see the body either,
since the loader hands every later stage a private skill without it (asserted directly)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from skillpilot import SkillPilot
from skillpilot.fingerprint import fingerprint
from skillpilot.retrieve.dense import embedding_texts
from skillpilot.skills import load_skills

from .conftest import write_skill
from .surfaces_util import cli

SECRET = "quokkaflux"
# The body says what the skill is for in every way the fingerprint, lint and compile read:
# a "use when" sentence, triggers-like bullets, keywords.
PRIVATE_BODY = f"""
Use when the user mentions {SECRET} or the {SECRET} rotation.

- rotate the {SECRET} keys every night
- run `{SECRET}-cli unlock --all`
"""


@pytest.fixture()
def catalog(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(
        root,
        "vault-keys",
        "name: vault-keys\ndescription: Manage the team vault keys and rotate credentials safely.\nprivate: true",
        PRIVATE_BODY,
    )
    write_skill(
        root,
        "ops-runbook",
        "name: ops-runbook\ndescription: Use when the on-call engineer follows the incident runbook.\n"
        "visibility: private\nroute:\n  triggers: [open the runbook]",
        PRIVATE_BODY,
    )
    write_skill(
        root,
        "git-commit",
        "name: git-commit\ndescription: Use when the user wants to commit staged changes to git.",
        "Run `git commit` with a clear message.\n",
    )
    return root


@pytest.fixture()
def pilot(catalog: Path, tmp_path: Path) -> SkillPilot:
    router = SkillPilot(home=tmp_path / "home", enable_semantic=False, preconditions=False)
    router.index([catalog])
    return router


def _leaks(*outputs: Any) -> list[str]:
    return [str(o)[:200] for o in outputs if SECRET in (o if isinstance(o, str) else json.dumps(o, default=str))]


def _files_with_secret(folder: Path) -> list[str]:
    """Files holding the secret, the routing log aside (it keeps the messages the tests typed)."""
    return [
        str(p)
        for p in folder.rglob("*")
        if p.is_file() and not p.name.startswith("log.sqlite") and SECRET.encode() in p.read_bytes()
    ]


def test_the_loader_hands_on_no_private_body(catalog: Path) -> None:
    loaded = {s.name: s for s in load_skills([catalog]).skills}
    for name in ("vault-keys", "ops-runbook"):
        skill = loaded[name]
        assert skill.private and skill.body == ""
        texts = embedding_texts(skill, fingerprint(skill))
        assert not _leaks(texts, fingerprint(skill))
        assert "body is empty" not in " ".join(i.message for i in fingerprint(skill).quality_issues)
    assert loaded["git-commit"].body.startswith("Run `git commit`")


def test_library_routes_and_finds_private_skills_on_public_fields_only(pilot: SkillPilot) -> None:
    # A guessed secret confirms nothing (these answers echo the message, so they are not grepped).
    for message in (SECRET, f"the {SECRET}", f"{SECRET}-cli unlock --all"):
        routed = pilot.route(message)
        assert (routed.decision, routed.skill) == ("passthrough", None), message
        assert [h.id for h in pilot.search(message)] == []
    # What the rest of the body says is not found either.
    assert not _leaks(pilot.route("rotate the keys every night", trace=True).to_dict())
    # Its public fields still route to it.
    assert pilot.route("open the runbook").skill.id == "ops-runbook"  # type: ignore[union-attr]
    assert pilot.search("rotate vault credentials")[0].id == "vault-keys"
    details = [(s.skill, s.fingerprint) for s in pilot.skills()]
    assert not _leaks(details, pilot.stats().to_dict())
    assert _files_with_secret(pilot.settings.home) == []


def test_cli_outputs_and_exports_hold_no_secret(pilot: SkillPilot, catalog: Path, tmp_path: Path) -> None:
    home = pilot.settings.home

    def run(*args: str) -> str:
        result = cli(*args, home=home, SKILLPILOT_ENABLE_SEMANTIC="false")
        assert result.returncode in (0, 1), (args, result.stderr)
        return result.stdout + result.stderr

    guessed = run("route", SECRET, "--json")
    assert json.loads(guessed)["skill"] is None
    assert json.loads(run("search", SECRET, "--json")) == []
    out = tmp_path / "compiled"
    commands = [
        ["route", "open the runbook", "--trace", "--json"],
        ["explain", "rotate the keys every night", "--json"],
        ["search", "rotate the keys", "--json"],
        ["stats", "--json"],
        ["lint", "--json"],
        ["lint", str(catalog), "--json"],
        ["conflicts", "--json"],
        ["compile", "--input", str(catalog), "--output", str(out), "--package", "acme/private"],
    ]
    for args in commands:
        assert SECRET not in run(*args), args
    assert _files_with_secret(out) == [] and any(out.rglob("ontoskill.ttl")) and any(out.rglob("intents.json"))
    assert _files_with_secret(home) == []


def test_http_outputs_hold_no_secret(pilot: SkillPilot) -> None:
    pytest.importorskip("fastapi")
    from skillpilot.serve.http import create_app

    from .surfaces_util import uvicorn_on_loopback
    from .test_hardening_serve import send

    with uvicorn_on_loopback(create_app(pilot)) as url:
        answers = [
            send(url, "GET", "/skills/vault-keys"),
            send(url, "GET", "/skills/ops-runbook"),
            send(url, "POST", "/route", json.dumps({"message": "open the runbook", "trace": True}).encode()),
            send(url, "POST", "/explain", json.dumps({"message": "rotate the keys every night"}).encode()),
            send(url, "POST", "/search", json.dumps({"query": "rotate vault credentials"}).encode()),
            send(url, "POST", "/lint", json.dumps({"skill": "vault-keys"}).encode()),
            send(url, "POST", "/lint", json.dumps({"skill": "ops-runbook"}).encode()),
            send(url, "GET", "/conflicts"),
            send(url, "GET", "/stats"),
        ]
        guessed = send(url, "POST", "/route", json.dumps({"message": SECRET}).encode())[1]
        found = send(url, "POST", "/search", json.dumps({"query": SECRET}).encode())[1]
    assert [status for status, _ in answers] == [200] * len(answers)
    detail = answers[0][1]
    assert (detail["private"], "body" in detail, detail["intents"]) == (True, False, [])
    assert not _leaks(*[answer for _, answer in answers])
    assert (guessed["skill"], found["results"]) == (None, [])


def test_mcp_outputs_hold_no_secret(pilot: SkillPilot) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from skillpilot.serve.mcp import build_server

    calls = [
        ("ontoskill", {"q": "vault-keys"}),
        ("ontoskill", {"q": "ops-runbook"}),
        ("ontoskill", {"q": "rotate the keys every night"}),
        ("route", {"message": "open the runbook"}),
        ("find_skill", {"intent": "rotate vault credentials", "scope": "installed"}),
        ("find_skill", {"intent": "", "scope": "installed"}),
        ("lint_skill", {"skill": "vault-keys"}),
        ("lint_skill", {"skill": "ops-runbook"}),
    ]
    guesses = [
        ("ontoskill", {"q": SECRET}),
        ("route", {"message": SECRET}),
        ("find_skill", {"intent": SECRET, "scope": "installed"}),
    ]

    async def session() -> list[Any]:
        async with Client(build_server(pilot)) as client:
            return [await client.call_tool(tool, arguments) for tool, arguments in calls + guesses]

    answers = anyio.run(session)
    assert [a.is_error for a in answers] == [False] * len(answers)
    shown, guessed = answers[: len(calls)], [a.structured_content for a in answers[len(calls) :]]
    assert not _leaks(*[a.structured_content for a in shown], *[a.content[0].text for a in shown])
    assert (guessed[0]["results"], guessed[1]["skill"], guessed[2]["results"]) == ([], None, [])


# Privacy fails closed: only these say "public"; every other value of private, metadata.private
# or visibility (a string "true", an unknown visibility, a typo) makes the skill private.
PRIVATE_SPELLINGS = [
    'private: "true"',
    "private: yes",
    "private: maybe",
    "private: 1",
    "private:",
    "visibility: internal",
    "visibility: Private",
    'visibility: ""',
    "metadata:\n  private: true",
    'metadata:\n  private: "on"',
    "metadata: '{\"private\": true}'",
    "metadata:\n  visibility: team",
]
PUBLIC_SPELLINGS = [
    "private: false",
    "private: no",
    "private: off",
    "private: 0",
    'private: "False"',
    'private: "no"',
    "visibility: public",
    "visibility: PUBLIC",
    "metadata:\n  private: false",
    "",
]


@pytest.mark.parametrize("spelling", PRIVATE_SPELLINGS)
def test_any_other_privacy_value_makes_the_skill_private(tmp_path: Path, spelling: str) -> None:
    write_skill(tmp_path, "vault", f"name: vault\ndescription: Rotate the vault keys.\n{spelling}", PRIVATE_BODY)
    loaded = load_skills([tmp_path])
    (skill,) = loaded.skills
    assert (skill.private, skill.body) == (True, "")
    plainly = spelling.endswith(("true", "Private", "yes", "1", "'{\"private\": true}'"))
    assert plainly or any("the skill is private" in w for w in loaded.warnings), loaded.warnings


@pytest.mark.parametrize("spelling", PUBLIC_SPELLINGS)
def test_only_false_no_off_0_or_public_keep_a_skill_public(tmp_path: Path, spelling: str) -> None:
    write_skill(tmp_path, "notes", f"name: notes\ndescription: Keep meeting notes.\n{spelling}", "Write notes.")
    loaded = load_skills([tmp_path])
    (skill,) = loaded.skills
    assert (skill.private, skill.body, loaded.warnings) == (False, "Write notes.", ())
