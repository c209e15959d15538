"""Small talk: a message that asks for nothing a skill could do.

Input: a message. Output: whether it is small talk. A message is small talk when it holds no
task word: each of its words is a stop word (``text.STOP_WORDS``), a number, or a word of the
conversational formulae that open, close or acknowledge a turn (greetings, thanks, farewells,
yes / no, laughter, "how are you"), in English, Chinese, Japanese or Korean. Such a message names no
task, so no skill can be its answer, however well one of them scores: "hello" matches a
text-to-speech skill whose examples say hello, "what's 2+2?" a SOC 2 skill by the digit 2.

Guarantees: a message with one word outside those sets is never small talk ("hello, merge my
branch" is a request); an empty message is not small talk either (there is nothing to route,
which the router says on its own).
"""

from __future__ import annotations

import re
import unicodedata

from .text import STOP_WORDS, Query, has_cjk

# The formulae's words, lower-case, as ``text.words`` splits them ("what's up" -> what, s, up).
FORMULA_WORDS = frozenset(
    """hi hii hello helo hallo hey heya hiya howdy yo sup greetings morning afternoon evening night
    gm gn good day thanks thank thx ty tysm cheers appreciate appreciated welcome bye goodbye cya
    see later farewell ok okay k kk alright fine sure yes yeah yep yup ya no nope nah cool nice
    great awesome perfect lovely wonderful excellent lol lmao haha hahaha hehe hmm hm um uh oh ah wow
    much lot sorry oops doing going well dear friend buddy mate pal everyone guys folks there sounds""".split()
)

# Chinese and Japanese formulae (and the particles around them), matched over a whole CJK run.
_CJK_FORMULA = re.compile(
    "(?:"
    "你好|您好|大家好|早上好|上午好|中午好|下午好|晚上好|晚安|早安|早|嗨|哈喽|哈啰|喂|"
    "谢谢|多谢|感谢|谢了|辛苦了|不客气|没关系|没事|再见|拜拜|回头见|"
    "好的|好吧|好|行|可以|是的|是|对|嗯|哦|噢|啊|呀|吧|呢|嘛|哈哈|呵呵|嘿嘿|"
    "你|您|们|大家|了|的|很|非常|太|真|在吗|在|吗|怎么样|最近|忙|棒|"
    "こんにちは|こんばんは|おはよう|ございます|ありがとう|どうも|さようなら|またね|おやすみ|なさい|"
    "はい|いいえ|うん|ええ|すみません|よろしく|お願いします|お願い|します|ね|よ|です|"
    "안녕하세요|안녕|감사합니다|고마워요|고마워|네|아니요"
    ")+"
)


def is_small_talk(message: Query | str) -> bool:
    """Whether ``message`` holds words and none of them names a task (see the module docstring)."""
    found = (message if isinstance(message, Query) else Query.of(message)).words
    if not found:
        return False
    for word in found:
        if has_cjk(word):
            if not _CJK_FORMULA.fullmatch(word):
                return False
        elif word not in STOP_WORDS and word not in FORMULA_WORDS and not _is_number(word):
            return False
    return True


def _is_number(word: str) -> bool:
    """A word of digits in any script (``2``, ``２``, ``٢``): a quantity names no task."""
    return all(unicodedata.category(c) == "Nd" for c in word)
