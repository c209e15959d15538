"""Small talk passes through: a greeting, thanks or sum is no request, whatever a skill's text holds.

Real bundled models over the example skills plus two written after the bench skills that caught
"hello" (a text-to-speech skill whose examples say hello) and "what's 2+2?" (a SOC 2 skill, by the
digit 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillpilot import SkillPilot
from skillpilot.smalltalk import is_small_talk

from .conftest import EXAMPLES, write_skill

CHIT_CHAT = (
    "hi",
    "hello",
    "hey there!",
    "what's 2+2?",
    "2+2",
    "thanks!",
    "thank you so much",
    "great, thanks",
    "good morning",
    "how are you?",
    "who are you?",
    "ok",
    "cool, sounds good",
    "lol",
    "bye",
    "yes",
    "你好",
    "谢谢你",
    "こんにちは",
    "ありがとうございます",
)


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> SkillPilot:
    root = tmp_path_factory.mktemp("skills")
    write_skill(
        root,
        "soc2-compliance",
        "name: soc2-compliance\ndescription: Use when the user asks to prepare for SOC 2 audits, map Trust Service "
        "Criteria, collect audit evidence, or assess SOC 2 Type 1 vs Type 2 readiness.",
        "# SOC 2\n\nSOC 2 Type 1 checks design; SOC 2 Type 2 checks operation over 3-12 months.\n"
        "Map each of the 2 control sets, CC1-CC9, to evidence. Step 2: gap analysis.\n",
    )
    write_skill(
        root,
        "say-aloud",
        """
        name: say-aloud
        description: Text-to-speech with mac-style say UX.
        """,
        '# Usage\n\n- `say-aloud "Hello there"`\n- `say-aloud -v Roger "Hello"`\n- `say-aloud "hi, hello!"`\n',
    )
    pilot = SkillPilot(home=tmp_path_factory.mktemp("home"), preconditions=False)
    pilot.index([EXAMPLES / "skills", root])
    return pilot


@pytest.mark.parametrize("message", CHIT_CHAT)
def test_small_talk_passes_through_without_a_skill(pilot: SkillPilot, message: str) -> None:
    result = pilot.route(message)
    assert (result.decision, result.skill, result.confidence) == ("passthrough", None, 0.0)
    assert result.reasons == (
        "the message asks for nothing a skill does (greetings, thanks, yes / no and numbers name no task)",
    )


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("hello, read this paragraph aloud with text-to-speech", "say-aloud"),
        ("thanks! now get us ready for the SOC 2 Type 2 audit", "soc2-compliance"),
        ("你好，帮我把视频的前30秒剪掉", "video-trim"),
    ],
)
def test_a_request_with_a_greeting_is_still_routed(pilot: SkillPilot, message: str, expected: str) -> None:
    result = pilot.route(message)
    assert result.skill is not None and result.skill.id == expected
    assert result.decision in ("hard", "soft")


def test_one_task_word_makes_a_request() -> None:
    assert not is_small_talk("hello, merge my branch")
    assert not is_small_talk("你好帮我画流程图")
    assert not is_small_talk("2 pdfs")
    assert not is_small_talk("")  # nothing to route: not small talk either
    assert is_small_talk("２＋２＝？")


def test_small_talk_skips_the_models(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "greeter", "name: greeter\ndescription: Say hello to new members.")
    pilot = SkillPilot(home=tmp_path / "home", embed_provider="trigram-test")
    pilot.index([tmp_path / "skills"])
    result = pilot.route("hello!", trace=True)
    assert result.decision == "passthrough" and result.method == "no-match"
    assert result.trace == ()
