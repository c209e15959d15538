"""Conflict groups and their resolution, on real SKILL.md folders, a real index and the bundled models."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from skillpilot import SkillPilot
from skillpilot.conflicts import detect_conflicts
from skillpilot.decide import Calibrations, shipped_calibration

from .cli_util import CliOutcome, run_cli
from .conftest import write_skill


def write_chat_skills(root: Path) -> None:
    """Three team-chat skills that overlap (one conflict group) and five unrelated ones."""
    write_skill(
        root,
        "chat",
        """
        name: chat
        description: Post a message to a team chat channel or a colleague, and read what was said
          recently in a channel.
        route:
          triggers: ["post in chat"]
          priority: 7
          prefer_when: [message, channel, DM]
        """,
    )
    write_skill(
        root,
        "chat-admin",
        """
        name: chat-admin
        description: Team chat workspace administration and mass messaging - schedule posts, broadcast
          to many channels, archive channels, invite and remove members.
        route:
          prefer_when: [schedule, all channels, broadcast, archive, invite]
        """,
    )
    write_skill(
        root,
        "chat-alerts",
        """
        name: chat-alerts
        description: Post automatic alerts to a team chat channel from scripts, cron jobs and deploy
          pipelines through an incoming webhook.
        route:
          prefer_when: [alert, webhook, cron, notify me]
        """,
    )
    write_skill(root, "weather", "name: weather\ndescription: Current weather and the forecast for any city.")
    write_skill(
        root,
        "git-commit",
        "name: git-commit\ndescription: Stage changes and write a conventional commit message for the repository.",
    )
    write_skill(
        root,
        "csv-stats",
        "name: csv-stats\n"
        "description: Summarise a CSV file - column types, missing values, averages and simple charts.",
    )
    write_skill(
        root,
        "translate",
        "name: translate\ndescription: Translate text between languages, keeping the formatting.",
    )
    write_skill(
        root,
        "calendar",
        "name: calendar\ndescription: Create, move and cancel meetings in the user's calendar and find free time.",
    )


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> SkillPilot:
    root = tmp_path_factory.mktemp("chat-skills")
    write_chat_skills(root)
    pilot = SkillPilot(home=tmp_path_factory.mktemp("chat-home"), preconditions=False)
    pilot.index([root])
    return pilot


def test_overlapping_skills_form_one_group(chat: SkillPilot) -> None:
    groups = chat.conflict_groups()
    assert [g.members for g in groups] == [("chat", "chat-admin", "chat-alerts")]
    assert 0.5 <= groups[0].similarity < 1.0
    assert groups[0].tip == "disambiguated by route.prefer_when and route.priority"
    assert chat.stats().conflict_groups == 1


def test_threshold_comes_from_the_settings(chat: SkillPilot) -> None:
    strict = SkillPilot(home=chat.settings.home, preconditions=False, conflict_threshold=0.95)
    assert strict.conflict_groups() == []
    assert strict.route("schedule an announcement in all channels for Monday").conflict_resolved is False


def test_message_signals_choose_inside_the_group(chat: SkillPilot) -> None:
    result = chat.route("schedule an announcement in all channels for Monday")
    assert result.skill is not None and result.skill.id == "chat-admin"
    assert result.conflict_resolved is True
    assert result.conflict_alternatives == ("chat", "chat-alerts")
    assert result.reasons[0] == "chose chat-admin over chat, chat-alerts: 'schedule', 'all channels'"

    alerts = chat.route("ping me in chat whenever the nightly cron job fails")
    assert alerts.skill is not None and alerts.skill.id == "chat-alerts"
    assert alerts.reasons[0].startswith("chose chat-alerts over chat, chat-admin: 'cron'")

    trigger = chat.route("post in chat that lunch is here")
    assert trigger.skill is not None and trigger.skill.id == "chat"
    assert trigger.reasons[0] == "chose chat over chat-alerts, chat-admin: 'post in chat'"


def test_a_rival_beyond_the_calibrations_contest_margin_cannot_take_the_route_on_its_words(chat: SkillPilot) -> None:
    message = "archive the old marketing channel"
    # chat-admin leads fusion by under 1.0: chat contests it and wins on 'channel' and its priority.
    contested = chat.route(message)
    assert contested.skill is not None and contested.skill.id == "chat"
    assert contested.reasons[0] == "chose chat over chat-admin, chat-alerts: 'channel'"
    narrow = SkillPilot(home=chat.settings.home, preconditions=False)
    narrow.calibration = Calibrations(plain=dataclasses.replace(shipped_calibration().plain, contest_margin=0.5))
    kept = narrow.route(message)
    assert kept.skill is not None and kept.skill.id == "chat-admin"
    assert kept.reasons[0] == "chose chat-admin over chat, chat-alerts: 'archive'"


def test_messages_outside_any_group_are_not_resolved(chat: SkillPilot) -> None:
    result = chat.route("what's the weather in Paris tomorrow")
    assert result.skill is not None and result.skill.id == "weather"
    assert (result.conflict_resolved, result.conflict_alternatives) == (False, ())
    assert not any(reason.startswith("chose ") for reason in result.reasons)


def test_user_rule_overrides_the_message_signals(chat: SkillPilot) -> None:
    ruled = SkillPilot(home=chat.settings.home, preconditions=False, prefer={"chat": "chat-admin"})
    result = ruled.route("post in chat that lunch is here")
    assert result.skill is not None and result.skill.id == "chat-admin"
    assert result.reasons[0] == "chose chat-admin over chat, chat-alerts: your rule prefer: {chat: chat-admin}"
    # A rule only applies where its two skills compete.
    weather = ruled.route("what's the weather in Paris tomorrow")
    assert weather.skill is not None and weather.skill.id == "weather"


def test_trace_shows_the_resolver(chat: SkillPilot) -> None:
    result = chat.route("schedule an announcement in all channels for Monday", trace=True)
    decision = (result.trace or ())[-1]
    assert "conflict resolver: chose chat-admin over chat, chat-alerts: 'schedule', 'all channels'" in decision.notes


@pytest.mark.parametrize(
    ("kit", "tools", "winner", "loser"), [(9, 5, "pdf-kit", "pdf-tools"), (5, 9, "pdf-tools", "pdf-kit")]
)
def test_declared_priority_breaks_a_tie(
    tmp_path: Path, isolated_home: Path, kit: int, tools: int, winner: str, loser: str
) -> None:
    description = "description: Merge, split and rotate the pages of PDF files."
    write_skill(tmp_path / "s", "pdf-kit", f"name: pdf-kit\n{description}\nroute:\n  priority: {kit}")
    write_skill(tmp_path / "s", "pdf-tools", f"name: pdf-tools\n{description}\nroute:\n  priority: {tools}")
    write_skill(
        tmp_path / "s",
        "weather",
        "name: weather\ndescription: Current weather and the forecast for any city.",
    )
    pilot = SkillPilot(home=isolated_home, preconditions=False)
    pilot.index([tmp_path / "s"])
    assert [g.tip for g in pilot.conflict_groups()] == ["add route.prefer_when to pdf-kit, pdf-tools to disambiguate"]
    result = pilot.route("merge these two pdfs into one")
    assert result.skill is not None and result.skill.id == winner
    assert result.conflict_alternatives == (loser,)
    assert result.reasons[0] == f"chose {winner} over {loser}: declared priority 9"


def test_same_name_copies_get_the_copy_tip(tmp_path: Path, isolated_home: Path) -> None:
    description = "description: Merge, split and rotate the pages of PDF files."
    write_skill(tmp_path / "a", "pdf", f"name: pdf\n{description}")
    write_skill(tmp_path / "b", "pdf", f"name: pdf\n{description}")
    write_skill(
        tmp_path / "a",
        "weather",
        "name: weather\ndescription: Current weather and the forecast for any city.",
    )
    pilot = SkillPilot(home=isolated_home, preconditions=False)
    pilot.index([tmp_path / "a", tmp_path / "b"])
    [group] = pilot.conflict_groups()
    assert group.members == ("a/pdf", "b/pdf")
    assert group.similarity == pytest.approx(1.0, abs=1e-3)
    assert group.tip.startswith("several skills share a name")


def test_groups_do_not_chain(tmp_path: Path, isolated_home: Path) -> None:
    """a~b strongly and b~c moderately, a and c unrelated: c stays out (average linkage)."""
    for name in ("a", "b", "c", "d"):
        write_skill(tmp_path, name, f"name: {name}\ndescription: Skill {name} does one particular thing well.")
    pilot = SkillPilot(home=isolated_home, enable_semantic=False)
    pilot.index([tmp_path])
    skills = pilot.skills()
    a, c, d = np.eye(3, dtype=np.float32)
    b = (a * 0.95 + c * 0.31) / np.linalg.norm(a * 0.95 + c * 0.31)
    vectors = np.stack([a, b, c, d])  # a.b = 0.95, b.c = 0.31, a.c = 0, d unrelated
    groups = detect_conflicts(skills, [vectors], threshold=0.3)
    assert [g.members for g in groups] == [("a", "b")]
    assert groups[0].similarity == pytest.approx(float(a @ b), abs=1e-4)
    # With the bar low enough for c to join on average, it does.
    assert [g.members for g in detect_conflicts(skills, [vectors], threshold=0.15)] == [("a", "b", "c")]


def _cli(*args: str, home: Path) -> CliOutcome:
    return run_cli(*args, home=home, SKILLPILOT_PRECONDITIONS="off")


def test_conflicts_command(chat: SkillPilot) -> None:
    home = chat.settings.home
    machine = _cli("conflicts", "--json", home=home)
    assert machine.returncode == 0, machine.stderr
    data = json.loads(machine.stdout)
    assert data["threshold"] == 0.5
    assert [g["members"] for g in data["groups"]] == [["chat", "chat-admin", "chat-alerts"]]
    assert data["groups"][0]["keys"] == ["chat", "chat-admin", "chat-alerts"]
    assert data["groups"][0]["tip"] == "disambiguated by route.prefer_when and route.priority"
    human = _cli("conflicts", home=home)
    assert human.returncode == 0
    assert human.stdout.splitlines()[:3] == [
        f"Conflict group 1 (similarity {data['groups'][0]['similarity']:.2f}):",
        "  chat · chat-admin · chat-alerts",
        "  Tip: disambiguated by route.prefer_when and route.priority",
    ]
    none = _cli("conflicts", home=home.parent / "empty-home")
    assert none.returncode == 0
    assert none.stdout.startswith("no conflict groups")
