"""A fake encoder for tests that do not assert what a model understands: hashed character
trigrams, L2-normalised, deterministic, no model file, microseconds per text. It is an installed
plugin like any third party's: ``conftest`` puts a distribution declaring it in the
``skillpilot.encoders`` entry-point group on ``sys.path``, so ``embed.provider: trigram-test``
(or ``SkillPilot(embed_provider="trigram-test")``) selects it through the real plugin path."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from skillpilot.config import Settings

SPEC = "trigram-test"


class TrigramEncoder:
    """Hashed character trigrams: texts sharing spelling get similar vectors, nothing more."""

    name = "trigram-test/1"
    dim = 512

    def encode_batch(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f"  {text.lower()}  "
            for i in range(len(padded) - 2):
                digest = hashlib.blake2b(padded[i : i + 3].encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dim] += 1.0
            out[row] /= max(float(np.linalg.norm(out[row])), 1e-9)
        return out


def build(_: Settings) -> TrigramEncoder:
    """The entry point's factory."""
    return TrigramEncoder()
