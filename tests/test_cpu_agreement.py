"""The bundled encoders give the same vectors on every x86-64 CPU: 16 fixed texts against a
reference committed from one CPU. Each text is embedded alone (a text's row is the same bits in
any batch: ``tests/test_index_shared_texts.py``), so this covers routes and index runs alike.

``.ci/run`` runs this file natively and under Debian's ``qemu-x86_64 -cpu Haswell`` (AVX2, no
AVX-512) and ``-cpu Nehalem`` (no AVX at all), with ``EXPECT_CPU_WITHOUT`` naming the
instruction set that must then be missing, so an emulator that let the host's features through
fails instead of passing for nothing. Re-record (only when a model or its runtime changes, saying
why in the commit) with ``UPDATE_GOLDEN=1 python -m pytest tests/test_cpu_agreement.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from skillpilot.bench.report import instruction_sets
from skillpilot.config import Settings
from skillpilot.encoders import get_encoder

REFERENCE = Path(__file__).parent / "golden" / "vectors.npz"
# Per component: the bar for "the same answer on every CPU"; float kernels differ by
# at most ~2.2e-7 across instruction sets (encoders.onnx "Float kernels").
TOLERANCE = 1e-6
ENCODERS = ("minilm", "use-multilingual")
TEXTS = (
    "open a PR for my branch",
    "Cut the boring first minute out of my screen recording",
    "make my scanned letter searchable",
    "what's 2+2?",
    "send the weekly metrics digest to the team",
    "Create, edit and analyze Excel spreadsheets with formulas, charts and pivot tables. Use when the user "
    "asks about .xlsx files or wants a budget sheet.",
    "Run a semgrep scan over the repository and explain the findings that matter",
    "fill in the fields of this PDF application form with my details",
    "帮我把这个PDF转换成Word文档",
    "流程图",
    "このスライドを英語に翻訳して",
    "Übersetze diese Rechnung ins Englische, bitte",
    "docker compose up fails with port 5432 already in use",
    "a",
    "symbols ©®™ ½ № ∑ x² → and accents: Ångström, façade, Dvořák",
    "Use when the user wants a GDPR data protection impact assessment. " * 6,
)


def _vectors(spec: str) -> np.ndarray:
    encoder = get_encoder(spec, Settings())
    return np.vstack([encoder.encode_batch([text]) for text in TEXTS])


def test_the_cpu_is_the_one_the_run_asked_for() -> None:
    expected_missing = os.environ.get("EXPECT_CPU_WITHOUT")
    found = instruction_sets()
    assert "SSE42" in found, found
    if expected_missing:
        assert expected_missing not in found, f"{expected_missing} is available here ({found}): not emulated"


@pytest.mark.parametrize("spec", ENCODERS)
def test_vectors_match_the_reference_recorded_on_another_cpu(spec: str) -> None:
    vectors = _vectors(spec)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        recorded = dict(np.load(REFERENCE)) if REFERENCE.is_file() else {}
        recorded[spec] = vectors
        np.savez_compressed(REFERENCE, **recorded)
    reference = np.load(REFERENCE)[spec]
    assert reference.shape == vectors.shape
    worst = float(np.abs(reference - vectors).max())
    assert worst <= TOLERANCE, f"{spec}: a component differs by {worst:.2e} on {instruction_sets()}"
