"""Related lists people click: a detail page is not empty when a neighbour stands out, and a page
whose neighbours are all alike gets no filler."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from skillpilot import SkillPilot
from skillpilot.market import Market
from skillpilot.market.catalog import RELATED
from skillpilot.market.search import _stands_out

from .conftest import BENCH, require_corpus
from .surfaces_util import cli, indexed


def test_a_neighbour_that_stands_out_counts_and_a_flat_crowd_does_not() -> None:
    rng = np.random.default_rng(0)
    crowd = rng.normal(0.2, 0.05, 200)
    others = np.ones(201, dtype=bool)
    others[0] = False
    sparse = np.concatenate([[1.0], crowd])
    sparse[1] = 0.48  # far below min_similarity (0.55), far above this page's background
    assert np.flatnonzero(_stands_out(sparse, others, RELATED)).tolist() == [1]
    flat = np.concatenate([[1.0], np.full(200, 0.3)])
    assert not _stands_out(flat, others, RELATED).any()
    # Half of min_similarity is the least a card needs, however sparse the corner.
    low = np.concatenate([[1.0], crowd * 0.2])
    low[1] = 0.2
    assert not _stands_out(low, others, RELATED).any()


@pytest.mark.slow
def test_every_example_page_with_a_standout_neighbour_shows_it(tmp_path: Path) -> None:
    pilot = indexed(tmp_path / "home")
    market = Market(pilot)
    pages = {s.id: market.related(s.id) for s in pilot.skills()}
    assert [h.skill.id for h in pages["email-send"]][:1] == ["newsletter-campaign"]
    assert all(
        h.similarity is not None and h.similarity >= RELATED.min_similarity / 2 for v in pages.values() for h in v
    )


@pytest.mark.slow
def test_brainstorming_has_a_related_card_on_the_bench_corpus(tmp_path: Path) -> None:
    require_corpus()
    home = tmp_path / "home"
    SkillPilot(home=home, preconditions=False).index([BENCH / "skills"])
    done = cli("related", "obra-superpowers/brainstorming", "--json", home=home)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout), done.stdout
