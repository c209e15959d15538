"""A skill's dense score is its best part's cosine, the secondary parts weighted down, -1 without
vectors: checked against the formula on skills of zero to four parts."""

from __future__ import annotations

import numpy as np

from skillpilot.retrieve.dense import SECONDARY_PART_WEIGHT, DenseRetriever

from .fake_encoder import TrigramEncoder


def test_each_skill_scores_its_best_weighted_part() -> None:
    encoder = TrigramEncoder()
    rng = np.random.default_rng(7)
    parts = [int(n) for n in rng.integers(0, 5, 300)]
    vectors = [rng.normal(size=(n, encoder.dim)).astype(np.float32) for n in parts]
    query = rng.normal(size=encoder.dim).astype(np.float32)
    scores = DenseRetriever(encoder, vectors).scores_for(query)
    weight = np.float32(SECONDARY_PART_WEIGHT)
    for n, skill in enumerate(vectors):
        if not len(skill):
            assert scores[n] == -1.0
            continue
        cosines = [
            np.float32(row @ query) * (np.float32(1.0) if part == 0 else weight) for part, row in enumerate(skill)
        ]
        assert abs(float(scores[n]) - float(max(cosines))) < 1e-4
