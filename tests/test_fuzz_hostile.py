"""Bounded, seeded fuzz runs of the hostile inputs hardening bounds, for CI (``FUZZ_SECONDS`` each,
default 3; ``FUZZ_SEED``, default 0, replays a failure, whose input is in the message):

- hook events sent to a real service (uvicorn on 127.0.0.1) as a host sends them: every event
  name, every field a host sends, with values of any type, length (around each field's bound),
  nesting, awkward text and hostile paths (a FIFO, ``/dev/zero``, a symlink loop, relative
  paths). Each is answered 200 or 422 naming the problem, never 500, and the service stays up;
- frontmatter list fields and names: lists of any length, item type and size, YAML aliases
  repeated past the bounds, names of any length or type with backticks, newlines and control
  characters. Each file is a skill within every bound or one skipped file with a reason;
- MCP messages nested at any depth: each line is handed on (parsing it recurses no deeper than
  ``MAX_JSON_DEPTH``) or answered with a JSON-RPC error, never an exception.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillpilot.limits import HOOK_FIELD_CHARS, MAX_JSON_DEPTH, MAX_LIST_CHARS, MAX_LIST_ITEMS, MAX_NAME_CHARS
from skillpilot.skills import load_skills

from .conftest import write_skill

FUZZ_SECONDS = float(os.environ.get("FUZZ_SECONDS", "3"))
AWKWARD = ["`", "\n", "\r", "\x00", "\x1b[31m", "\u202e", "\ud800", "\udfff", "é", "&a", "*a", "'", '"', "\\"]


def _rng() -> random.Random:
    return random.Random(int(os.environ.get("FUZZ_SEED", "0")))


def _for_a_while(check: Callable[[], None]) -> int:
    """Run ``check`` until ``FUZZ_SECONDS`` have passed; how many runs it made."""
    deadline = time.monotonic() + FUZZ_SECONDS
    runs = 0
    while time.monotonic() < deadline:
        check()
        runs += 1
    return runs


def _text(rng: random.Random, around: int) -> str:
    """Text of a length near ``around`` (either side of it), awkward characters spliced in."""
    length = max(0, around + rng.choice([-1, 0, 1, rng.randint(-around, around)]))
    letters = [rng.choice("abc xyz-_/.") for _ in range(min(length, 64))]
    for _ in range(rng.randint(0, 3)):
        letters.insert(rng.randint(0, len(letters)), rng.choice(AWKWARD))
    text = "".join(letters)
    return (text * (length // max(len(text), 1) + 1))[:length]


def _nested(rng: random.Random, depth: int) -> Any:
    value: Any = rng.choice([None, 1, "x", True, 1.5])
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"k": value}
    return value


# -- hook events inside the service -----------------------------------------------------------------

HOOK_EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStop", "SessionEnd"]


def _hook_value(rng: random.Random, field: str, limit: int, paths: list[str]) -> Any:
    kind = rng.randrange(6)
    if kind == 0:
        return rng.choice([None, 7, 1.5, True, [], {}, ["/etc/passwd"], {"a": "b"}])
    if kind == 1:
        return _nested(rng, rng.randint(1, MAX_JSON_DEPTH + 8))
    if kind == 2 and field in ("cwd", "transcript_path"):
        return rng.choice(paths)
    return _text(rng, rng.choice([limit, rng.randint(0, 300)]))


def _hook_event(rng: random.Random, paths: list[str]) -> dict[str, Any]:
    event: dict[str, Any] = {"hook_event_name": rng.choice(HOOK_EVENTS)}
    for field, limit in HOOK_FIELD_CHARS.items():
        if rng.random() < 0.6:
            *parents, name = field.split(".")
            target = event
            for parent in parents:
                target = target.setdefault(parent, {}) if isinstance(target.get(parent, {}), dict) else {}
            target[name] = _hook_value(rng, field, limit, paths)
    if rng.random() < 0.2:
        event["tool_response"] = _nested(rng, rng.randint(0, MAX_JSON_DEPTH + 4))
    if rng.random() < 0.5 and event["hook_event_name"] in ("PreToolUse", "PostToolUse"):
        event["tool_name"] = "Skill"
    return event


@pytest.mark.fuzz
def test_hook_events_of_any_shape_get_200_or_422(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fastapi")
    from skillpilot import SkillPilot

    from .surfaces_util import advertised_service, hook_headers
    from .test_hardening_serve import send

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    skills = tmp_path / "skills"
    write_skill(skills, "git-commit", "name: git-commit\ndescription: Use when the user wants to commit changes.")
    project = tmp_path / "project"
    looped = project / ".claude" / "skills"
    write_skill(looped, "brew-coffee", "name: brew-coffee\ndescription: Brew coffee.")
    (looped / "loop").symlink_to(".")
    fifo = tmp_path / "transcript.fifo"
    os.mkfifo(fifo)
    paths = [str(project), str(fifo), "/dev/zero", str(tmp_path), "relative/path", str(tmp_path / "missing"), "/"]
    pilot = SkillPilot(home=tmp_path / "home", enable_semantic=False, preconditions=False)
    pilot.index([skills])
    rng = _rng()
    with advertised_service(pilot) as url:
        headers: dict[str, str | bytes] = {**hook_headers(pilot.settings.home)}

        def one_event() -> None:
            event = _hook_event(rng, paths)
            body = json.dumps(event).encode()
            if rng.random() < 0.1:  # damaged bytes on the wire, not JSON any more
                cut = rng.randrange(len(body))
                body = body[:cut] + bytes([rng.randrange(256)]) + body[cut + 1 :]
            status, answer = send(url, "POST", "/hook/claude-code", body, headers)
            assert status in (200, 422), (status, answer, body[:2000])
            if status == 422:
                assert answer["error"]["type"] == "InvalidRequest" and answer["error"]["message"], answer

        runs = _for_a_while(one_event)
        assert send(url, "GET", "/healthz")[0] == 200
        routed = send(url, "POST", "/route", json.dumps({"message": "commit my changes"}).encode())
        assert (routed[0], routed[1]["skill"]["id"]) == (200, "git-commit")
    assert runs


# -- frontmatter list fields and names --------------------------------------------------------------

LIST_SPELLINGS = ["triggers: {v}", "route:\n  prefer_when: {v}", "requires:\n  env: {v}", "requires:\n  bins: {v}"]


def _yaml_item(rng: random.Random, long_items: bool) -> str:
    kind = rng.randrange(5)
    if kind == 0:
        return "*a"
    if kind == 1:
        return json.dumps(_nested(rng, rng.randint(0, 4)))
    if kind == 2:
        return rng.choice(["null", "7", "true", "~", "[]", "{}"])
    # Long items only in short lists: a long list of them would be a file past MAX_SKILL_BYTES,
    # skipped before its frontmatter is read; aliases make the long lists long in characters.
    return json.dumps(_text(rng, rng.choice([8, MAX_LIST_CHARS // 16, MAX_LIST_CHARS]) if long_items else 8))


def _frontmatter(rng: random.Random) -> str:
    name = rng.choice(
        [
            json.dumps(_text(rng, rng.choice([12, MAX_NAME_CHARS, MAX_NAME_CHARS * 40]))),
            "|\n  two\n  lines `x`",
            rng.choice(["7", "[a, b]", "{a: 1}", "null", "*a"]),
        ]
    )
    alias = json.dumps(_text(rng, rng.choice([10, 2000, 50_000])))
    lines = [f"x: &a {alias}", f"name: {name}", "description: Use when fuzzing the frontmatter."]
    for spelling in rng.sample(LIST_SPELLINGS, rng.randint(1, len(LIST_SPELLINGS))):
        count = rng.choice([0, 3, MAX_LIST_ITEMS, MAX_LIST_ITEMS + 1, MAX_LIST_ITEMS * 20])
        items = [_yaml_item(rng, count <= 3) for _ in range(min(count, 40))]
        items = (items * (count // max(len(items), 1) + 1))[:count]
        lines.append(spelling.format(v="[" + ", ".join(items) + "]"))
    return "\n".join(lines)


def _within_bounds(values: tuple[str, ...]) -> bool:
    return len(values) <= MAX_LIST_ITEMS and sum(map(len, values)) <= MAX_LIST_CHARS


@pytest.mark.fuzz
def test_list_fields_and_names_of_any_shape_give_a_bounded_skill_or_a_reason(tmp_path: Path) -> None:
    rng = _rng()
    root = tmp_path / "fuzz"

    def one_file() -> None:
        frontmatter = _frontmatter(rng)
        target = write_skill(root, "skill", frontmatter)
        try:
            loaded = load_skills([root])
            assert len(loaded.skills) + len(loaded.skipped) == 1
            for skill in loaded.skills:
                assert 0 < len(skill.name) <= MAX_NAME_CHARS and "\n" not in skill.name
                lists = (skill.route.triggers, skill.route.prefer_when, skill.requires.env, skill.requires.bins)
                assert all(_within_bounds(v) and all(isinstance(i, str) for i in v) for v in lists)
            for skipped in loaded.skipped:
                assert skipped.reason
        except Exception as exc:
            raise AssertionError(f"{type(exc).__name__}: {exc} for {frontmatter[:2000]!r}") from exc
        target.unlink()

    assert _for_a_while(one_file)


# -- MCP messages nested at any depth ----------------------------------------------------------------


@pytest.mark.fuzz
def test_mcp_lines_nested_at_any_depth_are_handed_on_or_answered() -> None:
    pytest.importorskip("mcp")
    from skillpilot.limits import too_deep
    from skillpilot.serve.stdio import checked

    rng = _rng()

    def one_line() -> None:
        depth = rng.choice([rng.randint(0, MAX_JSON_DEPTH + 2), rng.randint(0, 2000), 100_000])
        where = rng.choice(["params", "arguments", "id", "whole"])
        inner = "[" * depth + "]" * depth if rng.random() < 0.5 else json.dumps(_nested(rng, min(depth, 500)))
        if where == "whole":
            line = inner
        elif where == "id":
            line = '{"jsonrpc": "2.0", "id": ' + inner + ', "method": "ping"}'
        elif where == "params":
            line = '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": ' + inner + "}"
        else:
            line = (
                '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "route", '
                '"arguments": {"message": ' + inner + "}}}"
            )
        try:
            handed_on, error = checked(line)
        except Exception as exc:
            raise AssertionError(f"{type(exc).__name__}: {exc} for depth {depth} in {where}") from exc
        if handed_on is None:
            assert error is not None and error.error.code in (-32600, -32700)
        else:
            assert error is None and not too_deep(json.loads(handed_on))

    assert _for_a_while(one_line)
