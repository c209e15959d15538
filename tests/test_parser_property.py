"""parse_skill_md on generated files: it returns a Skill or raises SkillParseError, nothing else."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillpilot.errors import SkillParseError
from skillpilot.model import Skill
from skillpilot.skills import parse_skill_md

# Pieces that make YAML parsers and our lenient reader take unusual paths.
YAMLISH = st.sampled_from(
    [
        "name",
        "description",
        "route",
        "requires",
        "metadata",
        "priority",
        "side_effects",
        "triggers",
        "private",
        "visibility",
        "trust_tier",
        "env",
        "bins",
        "os",
        "openclaw",
        ":",
        ": ",
        " ",
        "  ",
        "\t",
        "\n",
        "\n  ",
        "\n- ",
        "- ",
        "---",
        "...",
        "#",
        "'",
        '"',
        "[",
        "]",
        "{",
        "}",
        ",",
        "|",
        ">",
        "&a",
        "*a",
        "!!python/object:os.system",
        "!!binary",
        "? ",
        "%YAML 1.2",
        "2024-13-45",
        "1e999",
        ".nan",
        "~",
        "null",
        "yes",
        "\\",
        "\x00",
        "\ufeff",
        "é",
        "中文",
        "Use when: ",
        '{"clawdis": {"requires": {"bins": ["x"]}}}',
    ]
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=40), st.dates())
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=12), st.integers()), inner, max_size=4),
    ),
    max_leaves=12,
)
KEYS = st.one_of(
    st.sampled_from(
        [
            "name",
            "description",
            "route",
            "requires",
            "metadata",
            "triggers",
            "private",
            "visibility",
            "trust_tier",
        ]
    ),
    st.text(max_size=10),
)
ROUTE = st.fixed_dictionaries(
    {},
    optional={
        "triggers": VALUES,
        "priority": VALUES,
        "prefer_when": VALUES,
        "side_effects": VALUES,
    },
)


def _check(path: Path, root: Path) -> None:
    try:
        skill = parse_skill_md(path, root)
    except SkillParseError as exc:
        assert exc.path == str(path)
        assert exc.reason
    else:
        assert isinstance(skill, Skill)
        assert skill.description.strip()
        assert skill.key == "skill"
        assert 1 <= skill.route.priority <= 10


@pytest.fixture(scope="module")
def skill_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("prop")
    (root / "skill").mkdir()
    return root / "skill" / "SKILL.md", root


FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.fuzz
@FAST
@given(frontmatter=st.lists(YAMLISH | st.text(max_size=8), max_size=40).map("".join), body=st.text(max_size=80))
def test_yamlish_frontmatter(skill_file: tuple[Path, Path], frontmatter: str, body: str) -> None:
    path, root = skill_file
    path.write_text(f"---\n{frontmatter}\n---\n{body}", encoding="utf-8", errors="surrogatepass")
    _check(path, root)


@pytest.mark.fuzz
@FAST
@given(data=st.binary(max_size=300), framed=st.booleans())
def test_random_bytes(skill_file: tuple[Path, Path], data: bytes, framed: bool) -> None:
    path, root = skill_file
    path.write_bytes(b"---\n" + data + b"\n---\n" if framed else data)
    _check(path, root)


@pytest.mark.fuzz
@FAST
@given(
    mapping=st.dictionaries(KEYS, VALUES, max_size=6),
    description=st.one_of(st.none(), VALUES, st.text(min_size=1, max_size=60)),
    route=st.one_of(st.none(), ROUTE, VALUES),
)
def test_mappings_dumped_as_yaml(
    skill_file: tuple[Path, Path], mapping: dict[Any, Any], description: Any, route: Any
) -> None:
    path, root = skill_file
    data = dict(mapping)
    if description is not None:
        data["description"] = description
    if route is not None:
        data["route"] = route
    text = yaml.safe_dump(data, allow_unicode=True, default_flow_style=None)
    path.write_text(f"---\n{text}---\nbody\n", encoding="utf-8", errors="surrogatepass")
    _check(path, root)


def test_a_generated_valid_mapping_round_trips(skill_file: tuple[Path, Path]) -> None:
    """The generators above reach the success path too: a dumped mapping reads back as written."""
    path, root = skill_file
    data = {"name": "gen", "description": "Does things: many", "metadata": {"when": dt.date(2026, 1, 2)}}
    path.write_text(f"---\n{yaml.safe_dump(data)}---\n", encoding="utf-8")
    skill = parse_skill_md(path, root)
    assert (skill.name, skill.description, skill.metadata) == (
        "gen",
        "Does things: many",
        {"when": "2026-01-02"},
    )
