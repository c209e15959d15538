"""A small deterministic encoder for tests that check what a router holds, not what texts mean:
each index term hashed to one of ``DIM`` axes, so texts sharing words point the same way.
Registered through the real plugin path (``register_encoder``) by the ``term_hash`` fixture."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

import skillpilot.encoders as encoders
from skillpilot.text import tokenize

DIM = 64
SPEC = "term-hash-test"


class TermHashEncoder:
    name = "term-hash/1"
    dim = DIM

    def encode_batch(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            for term in tokenize(text) or ["empty"]:
                row[int(hashlib.sha256(term.encode()).hexdigest(), 16) % DIM] += 1.0
        norms: np.ndarray = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / norms


SPACE = f"{TermHashEncoder.name}|parts-v2"


@pytest.fixture
def term_hash(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``SPEC`` registered for one test (the registry is restored afterwards)."""
    monkeypatch.setattr(encoders, "_REGISTRY", dict(encoders._REGISTRY))
    encoders.register_encoder(SPEC, lambda _settings: TermHashEncoder())
    yield SPEC
