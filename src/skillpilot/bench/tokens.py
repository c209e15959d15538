"""Token counts for the token-saving metric: the prompt text an agent would write, counted with
:class:`skillpilot.tokens.TokenCounter` (the bundled MiniLM WordPiece tokenizer).

Input: the catalog entries an agent would put in its prompt. Output: a token count. An LLM's own
BPE counts differ, but both prompts are counted the same way, so the *ratio* the metric reports
is what matters.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..tokens import TokenCounter
from .suites import CatalogEntry

__all__ = ["TokenCounter", "prompt_text"]


def prompt_text(entries: Iterable[CatalogEntry]) -> str:
    """How an agent lists skills in its prompt: one ``- name: description`` line each."""
    return "\n".join(f"- {e.name}: {e.description}" for e in entries)
