"""Feedback that helps and cannot be hijacked: the bounds per signal and per skill, implicit
signals, fading, undo, privacy and a broken feedback file, on real skills, a real index and a
real feedback file (bundled models)."""

# ruff: noqa: F811
from __future__ import annotations

import json
import logging
import sqlite3
import time
from pathlib import Path

import pytest

from skillpilot import SkillPilot
from skillpilot.errors import FeedbackNotFoundError
from skillpilot.feedback import DAY_SECONDS, HALF_LIFE_DAYS, IMPLICIT_HALF_LIFE_DAYS

# The chat skills' catalog and a router over it, shared with the other feedback tests: pytest
# fixtures, which the test parameters of the same names receive (so not redefinitions).
from .test_feedback import _cli, catalog, pilot  # noqa: F401

# No skill fits a restaurant booking: every one of these passes through before any feedback.
BOOKING = "book a table for two at an Italian restaurant tonight"
BOOKING_LIKE = (
    "get me a restaurant reservation for two this evening",
    "find a table for 2 at a trattoria tonight",
)
BOOKING_PARAPHRASE = "reserve a dinner table for two tonight"
# Routed to chat, below the soft threshold.
RELEASE = "tell the #dev channel that the release is out"


def feedback_factor(reasons: tuple[str, ...]) -> float:
    """The feedback multiplier a route's reasons report for its skill (1.0 when none)."""
    for reason in reasons:
        if reason.endswith("(feedback)"):
            return float(reason.split("score multiplied by ")[1].split()[0])
    return 1.0


@pytest.mark.parametrize("implicit", [False, True])
@pytest.mark.parametrize("kind", ["confirm", "correct"])
def test_one_signal_never_turns_a_passthrough_into_a_hard_route(pilot: SkillPilot, kind: str, implicit: bool) -> None:
    messages = (BOOKING_PARAPHRASE, *BOOKING_LIKE)
    assert {pilot.route(m).decision for m in messages} == {"passthrough"}
    if kind == "confirm":
        pilot.feedback("confirm", BOOKING_PARAPHRASE, skill="calendar", implicit=implicit)
    else:
        routed = pilot.route(BOOKING_PARAPHRASE).skill
        assert routed is not None and routed.id != "calendar"
        pilot.feedback("correct", BOOKING_PARAPHRASE, wrong=routed.id, right="calendar", implicit=implicit)
    for message in messages:
        result = pilot.route(message)
        assert result.decision != "hard" and result.confidence <= 0.79, (message, result.confidence)
        assert feedback_factor(result.reasons) <= 2.0


def test_hard_needs_three_distinct_agreeing_messages_and_repeats_count_once(pilot: SkillPilot) -> None:
    for _ in range(3):
        pilot.feedback("confirm", BOOKING_LIKE[0], skill="calendar")
    repeated = pilot.route(BOOKING_PARAPHRASE)
    assert repeated.skill is not None and repeated.skill.id == "calendar"
    assert (repeated.decision, repeated.confidence) == ("soft", 0.79)
    assert feedback_factor(repeated.reasons) <= 2.0
    assert pilot.feedback_stats().weights == {"calendar": 1.05}

    pilot.feedback("confirm", BOOKING_LIKE[1], skill="calendar")
    two = pilot.route(BOOKING_PARAPHRASE)
    assert two.decision == "soft" and two.confidence <= 0.79

    pilot.feedback("confirm", BOOKING, skill="calendar")
    three = pilot.route(BOOKING_PARAPHRASE)
    assert three.skill is not None and three.skill.id == "calendar"
    assert three.decision == "hard"
    # Per skill, everything learned together stays within x4.
    assert feedback_factor(three.reasons) == 4.0
    assert sum("you chose it for a similar message" in r for r in three.reasons) == 3


def test_a_later_signal_about_the_same_message_replaces_the_earlier(pilot: SkillPilot) -> None:
    pilot.feedback("confirm", RELEASE, skill="chat")
    pilot.feedback("correct", RELEASE, wrong="chat", right="chat-alerts")
    assert pilot.feedback_stats().weights == {"chat": 0.85, "chat-alerts": 1.1}
    result = pilot.route(RELEASE)
    assert result.skill is not None and result.skill.id == "chat-alerts"


def test_implicit_signals_weigh_less_and_can_be_turned_off(pilot: SkillPilot) -> None:
    before = pilot.route(RELEASE)
    assert before.skill is not None and before.skill.id == "chat"
    explicit = pilot.feedback("confirm", RELEASE, skill="chat")
    assert feedback_factor(pilot.route(RELEASE).reasons) == 2.0
    pilot.undo_feedback(explicit.id)
    signal = pilot.feedback("confirm", RELEASE, skill="chat", implicit=True)
    assert signal.implicit
    # Half the weight: the square root of the explicit signal's factor.
    assert feedback_factor(pilot.route(RELEASE).reasons) == 1.41

    home = pilot.settings.home
    explicit_only = SkillPilot(home=home, preconditions=False, feedback_implicit=False)
    ignored = explicit_only.route(RELEASE)
    assert (ignored.confidence, ignored.reasons) == (before.confidence, before.reasons)
    assert explicit_only.feedback_stats().weights == {}
    explicit_only.feedback("confirm", RELEASE, skill="chat")
    assert feedback_factor(explicit_only.route(RELEASE).reasons) == 2.0


@pytest.mark.parametrize(("implicit", "half_life"), [(False, HALF_LIFE_DAYS), (True, IMPLICIT_HALF_LIFE_DAYS)])
def test_signals_fade_with_their_half_life(pilot: SkillPilot, implicit: bool, half_life: float) -> None:
    signal = pilot.feedback("confirm", RELEASE, skill="chat", implicit=implicit)
    fresh = feedback_factor(pilot.route(RELEASE).reasons)
    with sqlite3.connect(pilot.settings.feedback_path) as db:
        db.execute("UPDATE signals SET at=? WHERE id=?", (time.time() - half_life * DAY_SECONDS, signal.id))
    aged = feedback_factor(SkillPilot(home=pilot.settings.home, preconditions=False).route(RELEASE).reasons)
    assert aged == pytest.approx(fresh**0.5, abs=0.01)


def test_undo_forgets_one_signal(pilot: SkillPilot) -> None:
    before = pilot.route(RELEASE)
    kept = pilot.feedback("confirm", "what's the weather in Paris tomorrow", skill="weather")
    undone = pilot.feedback("correct", RELEASE, wrong="chat", right="chat-alerts")
    assert pilot.route(RELEASE).skill.id == "chat-alerts"  # type: ignore[union-attr]
    assert pilot.undo_feedback(undone.id).id == undone.id
    after = pilot.route(RELEASE)
    assert (after.skill, after.confidence) == (before.skill, before.confidence)
    assert [s.id for s in pilot.feedback_signals()] == [kept.id]
    with pytest.raises(FeedbackNotFoundError, match=f"no feedback signal #{undone.id}"):
        pilot.undo_feedback(undone.id)


def test_feedback_list_and_undo_commands(pilot: SkillPilot) -> None:
    home = pilot.settings.home
    signal = pilot.feedback("correct", RELEASE, wrong="chat", right="chat-alerts")
    pilot.feedback("confirm", RELEASE, skill="chat-alerts", implicit=True)
    listed = _cli("feedback", "list", home=home)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        f"#{signal.id} corrected: chat -> chat-alerts for {RELEASE!r}",
        f"#{signal.id + 1} confirmed (implicit): chat-alerts for {RELEASE!r}",
    ]
    undone = _cli("feedback", "undo", str(signal.id), "--json", home=home)
    assert undone.returncode == 0, undone.stderr
    assert json.loads(undone.stdout)["id"] == signal.id
    assert [s["id"] for s in json.loads(_cli("feedback", "list", "--json", home=home).stdout)["signals"]] == [
        signal.id + 1
    ]
    again = _cli("feedback", "undo", str(signal.id), home=home)
    assert again.returncode == 1 and f"no feedback signal #{signal.id}" in again.stderr


def test_http_feedback_takes_implicit_and_undoes(pilot: SkillPilot) -> None:
    pytest.importorskip("fastapi")
    from skillpilot.serve.http import create_app

    from .surfaces_util import uvicorn_on_loopback
    from .test_surfaces_serve import post, request

    with uvicorn_on_loopback(create_app(pilot)) as url:
        status, signal = post(
            url, "/feedback", {"kind": "confirm", "query": RELEASE, "skill": "chat", "implicit": True}
        )
        assert (status, signal["implicit"], signal["kind"]) == (200, True, "confirmed")
        status, body = request(url, "DELETE", f"/feedback/{signal['id']}")
        assert (status, body["id"]) == (200, signal["id"])
        status, body = request(url, "DELETE", f"/feedback/{signal['id']}")
        assert (status, body["error"]["type"]) == (404, "FeedbackNotFoundError")
    assert pilot.feedback_signals() == []


@pytest.mark.parametrize("privacy", ["hash", "off"])
def test_log_queries_governs_the_feedback_file(catalog: Path, isolated_home: Path, privacy: str) -> None:
    pilot = SkillPilot(home=isolated_home, preconditions=False, log_queries=privacy)
    pilot.index([catalog])
    for _ in range(3):
        signal = pilot.feedback("correct", RELEASE, wrong="chat", right="chat-alerts")
    assert signal.query == ""
    # Matching by meaning needs only the vectors: the lesson still generalises.
    result = pilot.route("let the dev channel know the new release shipped")
    assert result.skill is not None and result.skill.id == "chat-alerts"
    assert f"feedback: you chose it for a similar message: signal #{signal.id} (message not kept)" in result.reasons
    # Three sends of one message are one signal's worth, without the text to compare.
    assert result.decision != "hard"
    pilot.close()
    stored = b"".join(p.read_bytes() for p in isolated_home.glob("feedback.sqlite*"))
    assert b"#dev channel" not in stored and RELEASE.encode() not in stored


def test_a_corrupt_feedback_file_does_not_stop_routing(pilot: SkillPilot, caplog: pytest.LogCaptureFixture) -> None:
    before = pilot.route(RELEASE)
    pilot.close()  # the feedback file is closed: break it
    path = pilot.settings.feedback_path
    for leftover in path.parent.glob("feedback.sqlite-*"):
        leftover.unlink()
    path.write_bytes(b"this is not a database " * 200)
    fresh = SkillPilot(home=pilot.settings.home, preconditions=False)
    with caplog.at_level(logging.WARNING, logger="skillpilot.router"):
        results = [fresh.route(RELEASE), fresh.route(RELEASE)]
    assert all((r.skill, r.confidence) == (before.skill, before.confidence) for r in results)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert str(path) in warnings[0] and "the feedback store is damaged" in warnings[0]
    assert f"move it aside (`mv {path} {path}.damaged`" in warnings[0] and "delete" not in warnings[0]
