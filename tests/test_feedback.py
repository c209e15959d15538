"""Feedback on real skills, a real index, a real feedback file and the bundled models."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from skillpilot import SkillNotFoundError, SkillPilot
from skillpilot.feedback import Signal, skill_weights
from skillpilot.retrieve.dense import DenseRetriever

from .cli_util import CliOutcome, run_cli
from .test_conflicts import write_chat_skills

CORRECTED = "tell the #dev channel that the release is out"
PARAPHRASES = (
    "let the dev channel know the new release shipped",
    "announce in the dev channel that we released",
)
# Not paraphrases of CORRECTED: same conflict group, or nothing to do with chat.
OTHERS = (
    "DM Alice that I'll be late",
    "what did people say in #incidents this morning",
    "schedule an announcement in all channels for Monday",
    "what's the weather in Paris tomorrow",
    "summarise sales.csv",
)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("chat-skills")
    write_chat_skills(root)
    return root


@pytest.fixture()
def pilot(catalog: Path, isolated_home: Path) -> SkillPilot:
    pilot = SkillPilot(home=isolated_home, preconditions=False)
    pilot.index([catalog])
    return pilot


def routes(pilot: SkillPilot, *queries: str) -> list[str | None]:
    return [r.skill.id if r.skill else None for r in map(pilot.route, queries)]


def test_a_correction_teaches_that_kind_of_request_only(pilot: SkillPilot) -> None:
    before = routes(pilot, CORRECTED, *PARAPHRASES, *OTHERS)
    assert before[:3] == ["chat", "chat", "chat"]
    pilot.feedback("correct", CORRECTED, wrong="chat", right="chat-alerts")
    after = routes(pilot, CORRECTED, *PARAPHRASES, *OTHERS)
    assert after[:3] == ["chat-alerts", "chat-alerts", "chat-alerts"]
    assert after[3:] == before[3:]
    result = pilot.route(PARAPHRASES[0])
    # One signal's word is a soft route at most (feedback.SINGLE_CONFIDENCE_MAX).
    assert result.decision == "soft" and result.confidence <= 0.79
    assert result.reasons[:2] == (
        "chose chat-alerts over chat, chat-admin: your feedback on similar messages",
        f"feedback: you chose it for a similar message: {CORRECTED!r}",
    )


def test_a_signal_is_durable_and_seen_by_other_routers(pilot: SkillPilot) -> None:
    long_lived = SkillPilot(home=pilot.settings.home, preconditions=False)
    assert routes(long_lived, CORRECTED) == ["chat"]
    signal = pilot.feedback("corrected", CORRECTED, wrong="chat", right="chat-alerts")
    # Committed before feedback() returned: a separate connection sees it at once.
    with sqlite3.connect(pilot.settings.feedback_path) as db:
        rows = db.execute("SELECT id, kind, query, skill, wrong FROM signals").fetchall()
        encoders = {e for (e,) in db.execute("SELECT encoder FROM query_vectors")}
    assert rows == [(signal.id, "corrected", CORRECTED, "chat-alerts", "chat")]
    assert encoders == {e.name for e in pilot.encoders}
    assert routes(long_lived, CORRECTED) == ["chat-alerts"]
    assert routes(SkillPilot(home=pilot.settings.home, preconditions=False), PARAPHRASES[1]) == ["chat-alerts"]


def test_feedback_on_a_message_just_routed_does_not_read_it_again(
    pilot: SkillPilot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hook's skill-used event names the prompt its route just read with every model.
    pilot.route(CORRECTED)
    read: list[str] = []
    encode = DenseRetriever.encode
    monkeypatch.setattr(DenseRetriever, "encode", lambda self, text: read.append(text) or encode(self, text))
    pilot.feedback("correct", CORRECTED, wrong="chat", right="chat-alerts")
    assert read == []
    pilot.feedback("confirm", PARAPHRASES[0], skill="chat-alerts")
    assert read == [PARAPHRASES[0]] * len(pilot.encoders)
    assert routes(pilot, CORRECTED) == ["chat-alerts"]


def test_batch_size_sets_when_signals_count(pilot: SkillPilot) -> None:
    batched = SkillPilot(home=pilot.settings.home, preconditions=False, feedback_batch=2)
    batched.feedback("correct", CORRECTED, wrong="chat", right="chat-alerts")
    assert routes(batched, CORRECTED) == ["chat"]
    stats = batched.feedback_stats()
    assert (stats.signals, stats.fitted, stats.pending) == (1, 0, 1)
    batched.feedback("confirm", "summarise sales.csv", skill="csv-stats")
    assert routes(batched, CORRECTED) == ["chat-alerts"]
    assert batched.feedback_stats().pending == 0


def test_ignored_and_confirmed_move_only_similar_messages(pilot: SkillPilot) -> None:
    before = routes(pilot, *OTHERS)
    pilot.feedback("ignore", OTHERS[0], skill="chat")
    assert routes(pilot, OTHERS[0]) == ["chat-admin"]
    assert routes(pilot, *OTHERS[1:]) == before[1:]
    pilot.reset_feedback()
    assert pilot.route(OTHERS[2]).decision != "hard"
    pilot.feedback("confirmed", OTHERS[2], skill="chat-admin")
    confirmed = pilot.route(OTHERS[2])
    assert confirmed.skill is not None and confirmed.skill.id == "chat-admin"
    # One confirmation is the user's word for one message: a soft route, not a hard one.
    assert confirmed.decision == "soft" and confirmed.confidence <= 0.79


def test_reset_and_disabled_feedback(pilot: SkillPilot) -> None:
    pilot.feedback("correct", CORRECTED, wrong="chat", right="chat-alerts")
    off = SkillPilot(home=pilot.settings.home, preconditions=False, feedback_enabled=False)
    assert routes(off, CORRECTED) == ["chat"]
    assert pilot.reset_feedback() == 1
    assert routes(pilot, CORRECTED) == ["chat"]
    assert pilot.feedback_stats().signals == 0


def test_signals_recorded_without_models_are_embedded_later(catalog: Path, pilot: SkillPilot) -> None:
    keyword_only = SkillPilot(home=pilot.settings.home, preconditions=False, enable_semantic=False)
    keyword_only.feedback("correct", CORRECTED, wrong="chat", right="chat-alerts")
    with sqlite3.connect(pilot.settings.feedback_path) as db:
        assert db.execute("SELECT COUNT(*) FROM query_vectors").fetchone() == (0,)
    assert routes(pilot, PARAPHRASES[0]) == ["chat-alerts"]
    with sqlite3.connect(pilot.settings.feedback_path) as db:
        assert db.execute("SELECT COUNT(*) FROM query_vectors").fetchone() == (len(pilot.encoders),)


def test_skills_are_checked_and_named_canonically(pilot: SkillPilot) -> None:
    signal = pilot.feedback("correct", CORRECTED, wrong="chat", right="chat-alerts")
    assert (signal.kind, signal.skill, signal.wrong, signal.id > 0) == (
        "corrected",
        "chat-alerts",
        "chat",
        True,
    )
    with pytest.raises(SkillNotFoundError, match="no skill 'slack'"):
        pilot.feedback("correct", CORRECTED, wrong="slack", right="chat")
    with pytest.raises(ValueError, match="needs wrong= .* and right="):
        pilot.feedback("corrected", CORRECTED, wrong="chat")
    with pytest.raises(ValueError, match="two different skills"):
        pilot.feedback("corrected", CORRECTED, wrong="chat", right="chat")
    with pytest.raises(
        ValueError, match=r"feedback kind 'liked': use confirm, correct, ignore \(or confirmed, corrected, ignored\)"
    ):
        pilot.feedback("liked", CORRECTED, skill="chat")


def test_per_skill_weights_follow_the_spec_and_stay_bounded() -> None:
    def corrected(n: int) -> list[Signal]:
        return [Signal.of("corrected", f"q{i}", wrong="a", right="b") for i in range(n)]

    assert skill_weights(corrected(1)) == {"a": 0.85, "b": 1.1}
    assert skill_weights(corrected(30)) == {"a": 0.1, "b": 2.0}
    assert skill_weights([Signal.of("confirm", "q", skill="a")]) == {"a": 1.05}
    assert skill_weights([Signal.of("ignore", f"q{i}", skill="a") for i in range(40)]) == {"a": 0.3}
    # The same (message, skill) pair counts once, however often it is sent.
    assert skill_weights([Signal.of("ignore", "q", skill="a")] * 40) == {"a": 0.95}


def _cli(*args: str, home: Path) -> CliOutcome:
    return run_cli(*args, home=home, SKILLPILOT_PRECONDITIONS="off")


def test_feedback_commands(pilot: SkillPilot) -> None:
    home = pilot.settings.home
    recorded = _cli("feedback", "correct", "--wrong", "chat", "--right", "chat-alerts", "--query", CORRECTED, home=home)
    assert recorded.returncode == 0, recorded.stderr
    assert recorded.stdout == f"recorded #1 corrected: chat -> chat-alerts for {CORRECTED!r}\n"
    confirmed = _cli("feedback", "confirm", "--skill", "weather", "--query", "rain in Oslo?", "--json", home=home)
    assert json.loads(confirmed.stdout)["kind"] == "confirmed"
    stats = json.loads(_cli("feedback", "stats", "--json", home=home).stdout)
    assert (stats["signals"], stats["by_kind"]["corrected"], stats["examples"]) == (2, 1, 3)
    assert stats["weights"] == {"chat": 0.85, "chat-alerts": 1.1, "weather": 1.05}
    assert routes(pilot, CORRECTED) == ["chat-alerts"]

    unknown = _cli("feedback", "ignore", "--skill", "nope", "--query", "x", home=home)
    assert unknown.returncode == 1 and "no skill 'nope'" in unknown.stderr
    same = _cli("feedback", "correct", "--wrong", "chat", "--right", "chat", "--query", "x", home=home)
    assert same.returncode == 2 and "two different skills" in same.stderr
    assert _cli("feedback", "correct", "--wrong", "chat", "--query", "x", home=home).returncode == 2

    reset = _cli("feedback", "reset", "--yes", home=home)
    assert (reset.returncode, reset.stdout) == (0, "removed 2 feedback signals\n")
    assert routes(pilot, CORRECTED) == ["chat"]
