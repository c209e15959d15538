"""Settings from config.yaml, SKILLPILOT_* variables and arguments, and the `config` command."""

from __future__ import annotations

import json
import os
import stat
import textwrap
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from skillpilot import ConfigError, Settings, SkillPilot, load_settings
from skillpilot.config import OPTIONS, config_template, resolve_settings

from .cli_util import CliOutcome, run_cli
from .conftest import EXAMPLES


def write_config(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_every_option_of_the_spec_layout_is_read(isolated_home: Path) -> None:
    path = write_config(
        isolated_home,
        """
        router:
          hardRouteThreshold: 0.9
          softInjectThreshold: 0.5
          enableSemantic: false
          debug: true
        embed:
          provider: local-onnx
          openaiModel: text-embedding-3-large
        index:
          skillDirs: [~/skills, /opt/skills]
          refreshInterval: 10
          conflictThreshold: 0.7
        feedback:
          enabled: false
          batchSize: 10
        prefer:
          github: github-advanced
        trustTiers: {pdf: official}
        platforms:
          openclaw:
            showRoutingInfo: true
            showConflictInfo: false
          cli:
            outputFormat: json
        """,
    )
    settings, sources = resolve_settings()
    assert settings == Settings(
        home=isolated_home,
        hard_threshold=0.9,
        soft_threshold=0.5,
        enable_semantic=False,
        debug=True,
        embed_provider="minilm+use-multilingual",
        openai_model="text-embedding-3-large",
        skill_dirs=("~/skills", "/opt/skills"),
        refresh_interval=10.0,
        conflict_threshold=0.7,
        feedback_enabled=False,
        feedback_batch=10,
        prefer={"github": "github-advanced"},
        trust_tiers={"pdf": "official"},
        output_format="json",
        show_routing_info=True,
        show_conflict_info=False,
    )
    assert set(sources.values()) == {str(path)}
    assert "preconditions" not in sources


def test_arguments_beat_env_beat_file(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(
        isolated_home,
        "router:\n  hardRouteThreshold: 0.9\n  softInjectThreshold: 0.3\nfeedback:\n  batchSize: 4\n",
    )
    monkeypatch.setenv("SKILLPILOT_HARD_THRESHOLD", "0.85")
    monkeypatch.setenv("SKILLPILOT_FEEDBACK_BATCH", "3")
    monkeypatch.setenv("SKILLPILOT_PREFER", "slack=slack-advanced, github=github-advanced")
    settings, sources = resolve_settings(feedback_batch=2)
    assert (settings.hard_threshold, settings.soft_threshold, settings.feedback_batch) == (0.85, 0.3, 2)
    assert settings.prefer == {"slack": "slack-advanced", "github": "github-advanced"}
    assert sources["hard_threshold"] == "SKILLPILOT_HARD_THRESHOLD"
    assert sources["feedback_batch"] == "override"
    assert sources["soft_threshold"].endswith("config.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "router:\n  hardRoute: 0.9\n",
            "config 'router.hardRoute' (in {path}): unknown key; allowed: embed.openaiBaseUrl",
        ),
        (
            "router:\n  hardRouteThreshold: 2\n",
            "config 'router.hardRouteThreshold' (in {path}): 2.0 must be between 0 and 1",
        ),
        (
            "router:\n  hardRouteThreshold: yes\n",
            "config 'router.hardRouteThreshold' (in {path}): True is not a number",
        ),
        ("router:\n  debug: maybe\n", "config 'router.debug' (in {path}): 'maybe' is not true or false"),
        (
            "feedback:\n  batchSize: 2.5\n",
            "config 'feedback.batchSize' (in {path}): 2.5 is not a whole number",
        ),
        ("feedback:\n  batchSize: 0\n", "config 'feedback.batchSize' (in {path}): 0 must be >= 1"),
        ("index:\n  skillDirs: ~/skills\n", None),
        (
            "index:\n  conflictThreshold: 0\n",
            "config 'index.conflictThreshold' (in {path}): 0.0 must be in (0, 1]",
        ),
        (
            "embed:\n  provider: bert\n",
            # trigram-test: the test session's installed encoder plugin (tests/conftest.py).
            "config 'embed.provider' (in {path}): 'bert' must be one of minilm, "
            "openai, trigram-test, use-multilingual, local-onnx, or a folder",
        ),
        (
            "platforms:\n  cli:\n    outputFormat: xml\n",
            "config 'platforms.cli.outputFormat' (in {path}): 'xml' must be human or json",
        ),
        (
            "trustTiers:\n  pdf: gold\n",
            "config 'trustTiers' (in {path}): {'pdf': 'gold'} pdf: the tier must be one of local, official, "
            "verified, community",
        ),
        (
            "prefer:\n  github: github\n",
            "config 'prefer' (in {path}): {'github': 'github'} 'github': each rule names two different skills",
        ),
        (
            "prefer: github-advanced\n",
            "config 'prefer' (in {path}): 'github-advanced' is not a mapping of names",
        ),
        ("- a list\n", "config '(file)' (in {path}): the top level must be a mapping"),
        (
            "router:\n  hardThreshold: 0.9\n  softThreshold: [oops\n",
            "config '(file)' (in {path}): not valid YAML: line 4, column 1: expected ',' or ']', but got "
            "'<stream end>' (while parsing a flow sequence that starts at line 3, column 18)",
        ),
    ],
)
def test_invalid_values_name_the_key_and_what_is_allowed(isolated_home: Path, text: str, message: str | None) -> None:
    path = write_config(isolated_home, text)
    if message is None:  # a single folder where a list is expected is read as one folder
        assert load_settings().skill_dirs == ("~/skills",)
        return
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert str(caught.value).startswith(message.replace("{path}", str(path)))
    assert "\n" not in str(caught.value)  # one line, as a hook prints it


def test_env_errors_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLPILOT_SOFT_THRESHOLD", "0.95")
    with pytest.raises(
        ConfigError,
        match=r"config 'SKILLPILOT_SOFT_THRESHOLD' \(in SKILLPILOT_SOFT_THRESHOLD\): "
        r"0.95 must be between 0 and hard_threshold",
    ):
        load_settings()
    monkeypatch.setenv("SKILLPILOT_SOFT_THRESHOLD", "0.3")
    monkeypatch.setenv("SKILLPILOT_TRUST_TIERS", "pdf")
    with pytest.raises(ConfigError, match="'SKILLPILOT_TRUST_TIERS'.*'pdf' is not a mapping"):
        load_settings()


def test_template_covers_every_setting_and_reads_back_as_the_defaults(isolated_home: Path) -> None:
    assert {f.name for f in fields(Settings)} - {o.field for o in OPTIONS} == {"home"}
    text = config_template()
    for option in OPTIONS:
        assert f"{option.key.rsplit('.', 1)[-1]}:" in text
        assert f"[env SKILLPILOT_{option.field.upper()}]" in text
    assert isinstance(yaml.safe_load(text), dict)
    write_config(isolated_home, text)
    assert load_settings() == Settings(home=isolated_home)


def test_debug_setting_traces_every_route(tmp_path: Path, isolated_home: Path) -> None:
    pilot = SkillPilot(home=isolated_home, enable_semantic=False, debug=True)
    pilot.index([EXAMPLES / "skills"])
    assert pilot.route("commit my changes").trace
    assert SkillPilot(home=isolated_home, enable_semantic=False).route("commit my changes").trace is None


def _cli(*args: str, home: Path) -> CliOutcome:
    return run_cli(*args, home=home)


def test_config_commands(isolated_home: Path) -> None:
    target = isolated_home / "config.yaml"
    assert _cli("config", "path", home=isolated_home).stdout == f"{target}\n"
    created = _cli("config", "init", home=isolated_home)
    assert (created.returncode, created.stdout) == (0, f"{target}\n")
    assert target.read_text(encoding="utf-8") == config_template()
    again = _cli("config", "init", home=isolated_home)
    assert again.returncode == 1 and "exists; use --force" in again.stderr

    target.write_text("router:\n  hardRouteThreshold: 0.9\n", encoding="utf-8")
    shown = json.loads(_cli("config", "show", "--json", home=isolated_home).stdout)
    assert shown["path"] == str(target)
    assert shown["settings"]["router.hardRouteThreshold"] == {"value": 0.9, "source": str(target)}
    assert shown["settings"]["index.skillDirs"] == {
        "value": ["~/.claude/skills", "~/.openclaw/skills"],
        "source": "default",
    }
    human = _cli("config", "show", home=isolated_home).stdout
    assert "router.hardRouteThreshold            0.9  (" in human

    target.write_text("router:\n  hardRouteThreshold: high\n", encoding="utf-8")
    broken = _cli("config", "show", home=isolated_home)
    assert broken.returncode == 1
    assert "config 'router.hardRouteThreshold'" in broken.stderr and "is not a number" in broken.stderr
    # Finding and rewriting a broken file still works.
    assert _cli("config", "path", home=isolated_home).returncode == 0
    assert _cli("config", "init", "--force", home=isolated_home).returncode == 0
    assert _cli("config", "show", home=isolated_home).returncode == 0


def test_config_init_is_never_writable_by_others(tmp_path: Path) -> None:
    home = tmp_path / "new-home"
    old = os.umask(0)
    try:
        assert _cli("config", "init", home=home).returncode == 0
    finally:
        os.umask(old)
    # A home made here is private like every store's; others may read the file, never change it.
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "config.yaml").stat().st_mode) == 0o644
