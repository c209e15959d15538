"""Loading skills: real SKILL.md folders and JSON tool catalogs in tmp_path, plus the bench set."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from skillpilot.errors import SkillParseError
from skillpilot.model import Requirements, RouteHints
from skillpilot.skills import LoadResult, load_skills, parse_skill_md, parse_tool_catalog

from .conftest import require_corpus

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO.parent / "shared" / "bench"

GOOD = "---\nname: good\ndescription: Summarise a CSV file with pandas.\n---\n# Good\nBody.\n"


def write(root: Path, folder: str, text: str | bytes) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def skill_md(name: str, description: str, extra: str = "", body: str = "Body.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"


# -- one SKILL.md ---------------------------------------------------------------------------------


def test_parse_reads_every_field_of_a_full_skill(tmp_path: Path) -> None:
    text = skill_md(
        "github",
        "Work with GitHub issues and pull requests.",
        "route:\n  triggers: [open a PR, create issue]\n  priority: 8\n  prefer_when:\n    - repository\n"
        "  side_effects: write-remote\nrequires:\n  env: [GITHUB_TOKEN]\n  bins: gh\n  os: [macOS, linux]\n"
        "trust_tier: official\nprivate: true\n",
        body="# GitHub\n\nUse when the user wants a PR.",
    )
    path = write(tmp_path / "skills", "tools/github", text)

    skill = parse_skill_md(path, tmp_path / "skills")

    assert skill.key == "tools/github"
    assert skill.name == "github"
    assert skill.description == "Work with GitHub issues and pull requests."
    assert skill.body == "# GitHub\n\nUse when the user wants a PR."
    assert skill.path == str(tmp_path / "skills" / "tools" / "github")
    assert skill.root == str(tmp_path / "skills")
    assert skill.source_kind == "skill-md"
    assert skill.route == RouteHints(("open a PR", "create issue"), 8, ("repository",), "write-remote")
    assert skill.requires == Requirements(env=("GITHUB_TOKEN",), bins=("gh",), os=("darwin", "linux"))
    assert skill.trust_tier == "official"
    assert skill.private is True
    assert skill.content_hash == "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_skill_md_directly_in_the_root_is_keyed_by_the_root_folder_name(tmp_path: Path) -> None:
    root = tmp_path / "pdf-tools"
    path = write(tmp_path, "pdf-tools", GOOD)
    assert parse_skill_md(path, root).key == "pdf-tools"
    assert [s.key for s in load_skills([root]).skills] == ["pdf-tools"]
    assert [s.key for s in load_skills([path]).skills] == ["pdf-tools"]


def test_missing_name_falls_back_to_the_folder_name(tmp_path: Path) -> None:
    path = write(tmp_path, "csv-stats", "---\ndescription: Describe a CSV file's columns.\n---\n")
    assert parse_skill_md(path, tmp_path).name == "csv-stats"


def test_visibility_private_marks_the_skill_private(tmp_path: Path) -> None:
    path = write(tmp_path, "x", skill_md("x", "Internal deploy helper for our cluster.", "visibility: private\n"))
    assert parse_skill_md(path, tmp_path).private is True


def test_top_level_triggers_list_is_read_as_route_triggers(tmp_path: Path) -> None:
    path = write(tmp_path, "qms", skill_md("qms", "ISO 13485 quality work.", "triggers:\n  - ISO 13485\n  - CAPA\n"))
    assert parse_skill_md(path, tmp_path).route.triggers == ("ISO 13485", "CAPA")


def test_openclaw_metadata_json_string_becomes_requirements(tmp_path: Path) -> None:
    meta = '{"clawdbot":{"emoji":"📝","os":["darwin"],"requires":{"bins":["memo"],"env":["MEMO_KEY"]}}}'
    path = write(tmp_path, "notes", skill_md("notes", "Manage Apple Notes via memo.", f"metadata: {meta}\n"))

    skill = parse_skill_md(path, tmp_path)

    assert skill.requires == Requirements(env=("MEMO_KEY",), bins=("memo",), os=("darwin",))
    assert skill.metadata == json.loads(meta)


def test_openclaw_metadata_mapping_is_merged_with_requires_and_kept_json_safe(tmp_path: Path) -> None:
    extra = (
        "requires:\n  bins: [uv]\nmetadata:\n  updated: 2026-03-06\n  openclaw:\n"
        "    primaryEnv: OPENROUTER_API_KEY\n    requires:\n      bins: [uv, curl]\n"
    )
    path = write(tmp_path, "img", skill_md("img", "Generate images with OpenRouter models.", extra))

    skill = parse_skill_md(path, tmp_path)

    assert skill.requires == Requirements(env=("OPENROUTER_API_KEY",), bins=("uv", "curl"))
    assert skill.metadata["updated"] == "2026-03-06"
    assert json.loads(json.dumps(skill.metadata)) == skill.metadata


def test_unquoted_colon_in_description_is_read_leniently_with_a_warning(tmp_path: Path) -> None:
    text = skill_md("discord", "Use when you need Discord: send messages, react, run polls.", "license: MIT\n")
    write(tmp_path, "discord", text)

    result = load_skills([tmp_path])

    assert [s.description for s in result.skills] == ["Use when you need Discord: send messages, react, run polls."]
    assert result.skipped == ()
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith(
        f"line 3 of {tmp_path / 'discord' / 'SKILL.md'}: description is not valid YAML"
    )


def test_unquoted_colon_value_continued_on_indented_lines_is_folded(tmp_path: Path) -> None:
    write(tmp_path, "d", "---\nname: d\ndescription: Use when: the user\n  asks for a thing: any thing\n---\n")
    assert [s.description for s in load_skills([tmp_path]).skills] == ["Use when: the user asks for a thing: any thing"]


@pytest.mark.parametrize(
    ("frontmatter", "line", "reason"),
    [
        ("name: x\nnot a key line\ndescription: y\n", 3, "this line is not `key: value`"),
        ("name: x\ndescription: y\nroute:\n  triggers: [a, b\n  priority: 3\n", 5, "not valid YAML"),
        ("- a\n- b\n", 2, "must be `key: value` lines, not a list"),
    ],
)
def test_unreadable_frontmatter_raises_with_the_line(tmp_path: Path, frontmatter: str, line: int, reason: str) -> None:
    path = write(tmp_path, "x", f"---\n{frontmatter}---\nbody\n")
    with pytest.raises(SkillParseError) as caught:
        parse_skill_md(path, tmp_path)
    assert caught.value.line == line
    assert reason in caught.value.reason
    assert str(caught.value).startswith(f"line {line} of {path}: ")


@pytest.mark.parametrize(
    ("extra", "warning"),
    [
        (
            "route:\n  priority: 42\n",
            "line 5 of {path}: route.priority is 42, expected a whole number from 1 to 10; using 5",
        ),
        (
            "route:\n  side_effects: dangerous\n",
            "line 5 of {path}: route.side_effects is 'dangerous', expected one of",
        ),
        ("route:\n  prority: 3\n", "line 5 of {path}: route.prority is not a route field"),
        ("route: [a]\n", "line 4 of {path}: route must be a mapping"),
        ("trust_tier: galaxy\n", "line 4 of {path}: trust_tier is 'galaxy', expected one of local, official"),
        ("requires:\n  env: {a: 1}\n", "line 5 of {path}: requires.env must be a list of text"),
        ("metadata: '{not json'\n", "line 4 of {path}: metadata is text but not a JSON object; ignored"),
    ],
)
def test_invalid_field_values_warn_and_use_the_default(tmp_path: Path, extra: str, warning: str) -> None:
    path = write(tmp_path, "s", skill_md("s", "Send a weekly report by email.", extra))

    result = load_skills([tmp_path])

    assert len(result.skills) == 1
    skill = result.skills[0]
    assert (skill.route.priority, skill.trust_tier, skill.private, skill.requires.env) == (
        5,
        "local",
        False,
        (),
    )
    assert skill.route.side_effects is None
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith(warning.format(path=path))


# -- bad files: one SkippedFile each, the good skill beside it still loads --------------------------


def _non_utf8(root: Path) -> None:
    write(root, "bad", b"---\nname: bad\ndescription: caf\xe9\n---\n")


def _self_loop(root: Path) -> None:
    (root / "bad").mkdir()
    (root / "bad" / "SKILL.md").symlink_to("SKILL.md")


def _folder(root: Path) -> None:
    (root / "bad" / "SKILL.md").mkdir(parents=True)


def _broken_link(root: Path) -> None:
    (root / "bad").mkdir()
    (root / "bad" / "SKILL.md").symlink_to(root / "nowhere.md")


def _huge(root: Path) -> None:
    write(root, "bad", "---\nname: bad\ndescription: big\n---\n" + "x" * (10 * 1024 * 1024))


BAD_FILES: dict[str, tuple[Callable[[Path], object], str]] = {
    "invalid yaml": (
        lambda r: write(r, "bad", "---\nname: bad\ndescription: [unclosed\n  more: x\n---\n"),
        "line 3: the frontmatter is not valid YAML",
    ),
    "missing description": (
        lambda r: write(r, "bad", "---\nname: bad\n---\nbody\n"),
        "description is missing: add `description: ...` to the frontmatter",
    ),
    "empty description": (
        lambda r: write(r, "bad", "---\nname: bad\ndescription: '  '\n---\n"),
        "line 3: description is missing: add `description: ...` to the frontmatter",
    ),
    "empty file": (lambda r: write(r, "bad", ""), "the file is empty"),
    "no frontmatter": (lambda r: write(r, "bad", "# Just markdown\n"), "line 1: no frontmatter"),
    "unclosed frontmatter": (
        lambda r: write(r, "bad", "---\nname: bad\ndescription: x\n"),
        "line 1: the frontmatter is never closed",
    ),
    "non-utf8": (_non_utf8, "line 3: is not UTF-8 text (byte 0xe9 at offset 30): save it as UTF-8"),
    "10 MB file": (_huge, "is 10.0 MiB; SKILL.md files over 1 MiB are not read"),
    "symlink loop": (_self_loop, "is a symlink loop"),
    "SKILL.md is a folder": (_folder, "is a folder, not a file"),
    "broken symlink": (_broken_link, "is a broken symlink"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_file_is_skipped_with_one_clear_reason(tmp_path: Path, case: str) -> None:
    make, reason = BAD_FILES[case]
    root = tmp_path / "skills"
    write(root, "good", GOOD)
    make(root)

    result = load_skills([root])

    assert [s.key for s in result.skills] == ["good"]
    assert len(result.skipped) == 1
    assert result.skipped[0].path == str(root / "bad" / "SKILL.md")
    assert result.skipped[0].reason.startswith(reason), result.skipped[0].reason


def test_a_root_that_does_not_exist_is_skipped_and_the_others_load(tmp_path: Path) -> None:
    write(tmp_path / "skills", "good", GOOD)
    missing = tmp_path / "nope"

    result = load_skills([missing, tmp_path / "skills"])

    assert [s.key for s in result.skills] == ["good"]
    assert [(s.path, s.reason) for s in result.skipped] == [(str(missing), "folder does not exist")]


def _load_as_nobody(folder: Path) -> dict[str, list[list[str]]]:
    """load_skills(folder) where file modes really apply: as root, in a child that drops to nobody.

    The child starts inside ``folder`` because pytest's tmp folders above it are root-only.
    """
    if os.geteuid() != 0:
        result = load_skills([folder])
        return {
            "skills": [[s.key] for s in result.skills],
            "skipped": [[s.path, s.reason] for s in result.skipped],
        }
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            os.close(read_end)
            os.chdir(folder)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            child = load_skills([Path(".")])
            payload = {
                "skills": [[s.key] for s in child.skills],
                "skipped": [[str(folder / s.path), s.reason] for s in child.skipped],
            }
            with os.fdopen(write_end, "w") as out:
                json.dump(payload, out)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        text = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the unprivileged loader crashed"
    data: dict[str, list[list[str]]] = json.loads(text)
    return data


def test_an_unreadable_file_is_skipped_for_real(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root, "good", GOOD)
    bad = write(root, "locked", GOOD.replace("good", "locked"))
    bad.chmod(0)

    result = _load_as_nobody(root)

    assert result["skills"] == [["good"]]
    assert result["skipped"] == [[str(bad), "cannot be read: permission denied (check the file's owner and mode)"]]


def test_symlink_loop_folder_is_reported_and_never_repeats(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root, "good", GOOD)
    (root / "good" / "again").symlink_to(root, target_is_directory=True)

    result = load_skills([root])

    assert [s.key for s in result.skills] == ["good"]
    assert [(s.path, s.reason) for s in result.skipped] == [
        (
            str(root / "good" / "again"),
            f"is a symlink loop: it points back to {root}, a folder that contains it",
        )
    ]


def test_directory_symlinks_are_followed_and_deduplicated_by_real_path(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    elsewhere = tmp_path / "elsewhere"
    write(root, "real/pdf", skill_md("pdf", "Fill and merge PDF files."))
    write(elsewhere, "csv", skill_md("csv", "Summarise CSV files."))
    (root / "a-alias").symlink_to(root / "real", target_is_directory=True)  # sorts before real/
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    (root / "linked-twice").symlink_to(elsewhere, target_is_directory=True)

    result = load_skills([root])

    assert [(s.key, s.path) for s in result.skills] == [
        ("linked/csv", str(root / "linked" / "csv")),
        ("real/pdf", str(root / "real" / "pdf")),
    ]
    assert result.skipped == ()


def test_a_skill_two_roots_reach_keeps_the_key_of_the_root_that_holds_it(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write(second, "pdf", skill_md("pdf", "Fill and merge PDF files."))
    first.mkdir()
    (first / "shared").symlink_to(second, target_is_directory=True)

    result = load_skills([first, second])

    assert [(s.key, s.root) for s in result.skills] == [("pdf", str(second))]


def test_same_name_in_different_folders_both_stay(tmp_path: Path) -> None:
    write(tmp_path, "team-a/github", skill_md("github", "GitHub for team A repositories."))
    write(tmp_path, "team-b/github", skill_md("github", "GitHub for team B repositories."))

    result = load_skills([tmp_path])

    assert [(s.key, s.name) for s in result.skills] == [
        ("team-a/github", "github"),
        ("team-b/github", "github"),
    ]
    assert result.warnings == ()


def test_json_files_inside_a_folder_and_dependency_folders_are_not_read(tmp_path: Path) -> None:
    write(tmp_path, "good", GOOD)
    (tmp_path / "tools.json").write_text('[{"name": "t", "description": "a tool"}]')
    write(tmp_path, "node_modules/pkg", skill_md("pkg", "A vendored skill."))

    assert [s.key for s in load_skills([tmp_path]).skills] == ["good"]


def test_progress_counts_every_file(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        write(tmp_path, name, skill_md(name, f"Skill {name} does a thing."))
    write(tmp_path, "broken", "")
    calls: list[tuple[int, int]] = []

    load_skills([tmp_path], progress=lambda done, total: calls.append((done, total)))

    assert calls == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]


# -- tool catalogs -------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "repo": {"type": "string", "description": "owner/name of the repository"},
        "state": {"type": "string", "enum": ["open", "closed"]},
    },
    "required": ["repo"],
}
BODY = "Parameters:\n- repo (string; required): owner/name of the repository\n- state (string; one of open, closed)"

CATALOGS = {
    "plain list": [{"name": "list_issues", "description": "List issues of a repository.", "input_schema": SCHEMA}],
    "mcp tools/list": {
        "tools": [{"name": "list_issues", "description": "List issues of a repository.", "inputSchema": SCHEMA}]
    },
    "mcp json-rpc": {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "tools": [{"name": "list_issues", "description": "List issues of a repository.", "inputSchema": SCHEMA}]
        },
    },
    "openai function specs": [
        {
            "type": "function",
            "function": {
                "name": "list_issues",
                "description": "List issues of a repository.",
                "parameters": SCHEMA,
            },
        }
    ],
    "openai plain functions": [
        {"name": "list_issues", "description": "List issues of a repository.", "parameters": SCHEMA}
    ],
}


@pytest.mark.parametrize("shape", sorted(CATALOGS))
def test_each_catalog_shape_gives_the_same_skill(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(CATALOGS[shape]))

    skills, skipped = parse_tool_catalog(path)

    assert skipped == []
    assert len(skills) == 1
    tool = skills[0]
    assert (tool.key, tool.name, tool.description) == (
        "list_issues",
        "list_issues",
        "List issues of a repository.",
    )
    assert (tool.path, tool.root, tool.source_kind) == (str(path), str(tmp_path), "tool-catalog")
    assert tool.body == BODY
    assert tool.metadata["input_schema"] == SCHEMA
    assert tool.content_hash.startswith("sha256:")


def test_name_to_description_mapping_is_a_catalog(tmp_path: Path) -> None:
    path = tmp_path / "plugins.json"
    path.write_text(json.dumps({"calculator": "Evaluate a formula.", "weather": "Forecast for a city."}))
    skills, skipped = parse_tool_catalog(path)
    assert [(s.key, s.description, s.body) for s in skills] == [
        ("calculator", "Evaluate a formula.", ""),
        ("weather", "Forecast for a city.", ""),
    ]
    assert skipped == []


def test_metatool_catalog_loads_every_tool() -> None:
    require_corpus()
    path = BENCH / "metatool" / "dataset" / "plugin_des.json"
    expected = json.loads(path.read_text(encoding="utf-8"))
    skills, skipped = parse_tool_catalog(path)
    assert skipped == []
    assert [s.key for s in skills] == list(expected)


def test_bad_catalog_entries_are_skipped_and_good_ones_kept(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(
        json.dumps(
            {
                "tools": [
                    {"name": "ok", "description": "A good tool."},
                    {"name": "nodesc"},
                    {"description": "no name"},
                    "just a string",
                    {"name": "ok", "description": "Same name again."},
                ]
            }
        )
    )

    skills, skipped = parse_tool_catalog(path)

    assert [s.key for s in skills] == ["ok"]
    assert [(s.path, s.reason) for s in skipped] == [
        (str(path), "entry 1 ('nodesc') has no description; skipped"),
        (str(path), "entry 2 has no name; skipped"),
        (str(path), "entry 3 is a str, not an object with a name and a description; skipped"),
        (str(path), "entry 4 ('ok') repeats the tool name 'ok' of entry 0; skipped"),
    ]


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ('[{"name": "a",\n "description": }]', 2, "is not valid JSON: Expecting value (column 17)"),
        ('{"jsonrpc": "2.0", "error": {"message": "boom"}}', None, "is a JSON-RPC error response (boom)"),
        ('{"tools": {"a": 1}}', None, '"tools" must be a list, not dict'),
        ("42", None, "is not a tool catalog: expected a list of {name, description} objects"),
        ("", None, "the file is empty"),
    ],
)
def test_unreadable_catalog_raises(tmp_path: Path, text: str, line: int | None, reason: str) -> None:
    path = tmp_path / "tools.json"
    path.write_text(text)
    with pytest.raises(SkillParseError) as caught:
        parse_tool_catalog(path)
    assert (caught.value.path, caught.value.line) == (str(path), line)
    assert caught.value.reason.startswith(reason)


@pytest.mark.parametrize(
    ("annotations", "side_effects"),
    [
        ({"readOnlyHint": True, "openWorldHint": False}, "read-only"),
        ({"readOnlyHint": True}, "network"),
        ({"readOnlyHint": False, "openWorldHint": False}, "write-local"),
        ({"readOnlyHint": False}, "write-remote"),
        ({"title": "no hint"}, None),
    ],
)
def test_mcp_annotations_declare_side_effects(
    tmp_path: Path, annotations: dict[str, object], side_effects: str
) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": [{"name": "t", "description": "A tool.", "annotations": annotations}]}))
    assert parse_tool_catalog(path)[0][0].route.side_effects == side_effects


def test_load_skills_mixes_folders_and_catalogs_and_reports_bad_catalogs(tmp_path: Path) -> None:
    write(tmp_path / "skills", "good", GOOD)
    catalog = tmp_path / "tools.json"
    catalog.write_text(json.dumps([{"name": "t1", "description": "Tool one."}, {"name": "t2"}]))
    broken = tmp_path / "broken.json"
    broken.write_text("{")

    result = load_skills([tmp_path / "skills", catalog, broken])

    assert [(s.key, s.source_kind) for s in result.skills] == [("good", "skill-md"), ("t1", "tool-catalog")]
    assert [(s.path, s.reason) for s in result.skipped] == [
        (str(catalog), "entry 1 ('t2') has no description; skipped"),
        (
            str(broken),
            "line 1: is not valid JSON: Expecting property name enclosed in double quotes (column 2)",
        ),
    ]


# -- the real bench skills -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def bench() -> LoadResult:
    require_corpus()
    return load_skills([BENCH / "skills"])


def test_bench_skills_load(bench: LoadResult) -> None:
    assert len(bench.skills) >= 290, f"skipped: {bench.skipped}"
    assert len({s.key for s in bench.skills}) == len(bench.skills)
    index = json.loads((BENCH / "skills" / "index.json").read_text(encoding="utf-8"))
    assert {s.key for s in bench.skills} <= {entry["id"] for entry in index}


def test_bench_openclaw_skill_has_its_requirements(bench: LoadResult) -> None:
    notes = next(s for s in bench.skills if s.key == "steipete-clawdis/apple-notes")
    assert notes.requires == Requirements(bins=("memo",), os=("darwin",))
    assert notes.metadata["clawdis"]["emoji"] == "📝"


def test_bench_skill_with_unquoted_colon_loads_with_a_warning(bench: LoadResult) -> None:
    discord = next(s for s in bench.skills if s.key == "steipete-clawdis/discord")
    assert discord.description.startswith("Use when you need to control Discord from Clawdis via the discord tool: ")
    assert any(w.startswith(f"line 3 of {discord.path}/SKILL.md: description") for w in bench.warnings)
