"""Conflict groups kept in the index: updated incrementally, they equal a from-scratch build."""

from __future__ import annotations

import numpy as np
import pytest

from skillpilot.conflicts import build_graph, update_graph
from skillpilot.index import ConflictGraph

THRESHOLD = 0.5
CONFIG = "a+b@0.5"


class Catalog:
    """Skills as (root, key, hash) with two encoders' unit vectors: clusters of near-copies and
    exact copies (forks), so groups chain, tie and merge like on a real fork-heavy catalog."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.centres = [self._unit(self.rng.normal(size=(30, d))) for d in (16, 24)]
        self.skills: dict[str, tuple[str, list[np.ndarray]]] = {}
        self.serial = 0

    @staticmethod
    def _unit(rows: np.ndarray) -> np.ndarray:
        return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)

    def vectors(self) -> list[np.ndarray]:
        cluster = int(self.rng.integers(0, 30))
        noise = float(self.rng.choice([0.0, 0.3, 0.6, 1.0]))
        return [self._unit(c[cluster] + noise * self.rng.normal(size=c.shape[1])) for c in self.centres]

    def add(self, count: int) -> None:
        for _ in range(count):
            self.serial += 1
            key = f"skill-{self.serial:04d}"
            if self.skills and self.rng.random() < 0.3:
                # A fork: another skill's very vectors under a new key.
                self.skills[key] = (f"h{self.serial}", self.skills[str(self.rng.choice(list(self.skills)))][1])
            else:
                self.skills[key] = (f"h{self.serial}", self.vectors())

    def edit(self, count: int) -> None:
        for key in self.rng.choice(sorted(self.skills), count, replace=False):
            self.serial += 1
            self.skills[str(key)] = (f"h{self.serial}", self.vectors())

    def delete(self, count: int) -> None:
        for key in self.rng.choice(sorted(self.skills), count, replace=False):
            del self.skills[str(key)]

    def state(self) -> tuple[list[tuple[str, str, str]], list[np.ndarray]]:
        keys = sorted(self.skills)
        names = [("root", k, self.skills[k][0]) for k in keys]
        matrices = [np.stack([self.skills[k][1][e] for k in keys]) for e in range(2)]
        return names, matrices


def _same(left: ConflictGraph, right: ConflictGraph) -> None:
    assert left.skills == right.skills
    assert sorted(map(tuple, left.pairs.tolist())) == sorted(map(tuple, right.pairs.tolist()))
    assert dict(zip(map(tuple, left.pairs.tolist()), left.similarity.tolist(), strict=True)) == dict(
        zip(map(tuple, right.pairs.tolist()), right.similarity.tolist(), strict=True)
    )
    assert sorted(left.groups) == sorted(right.groups)


@pytest.mark.parametrize("seed", range(4))
def test_incremental_updates_equal_a_build_from_scratch(seed: int) -> None:
    catalog = Catalog(seed)
    catalog.add(400)
    graph = build_graph(*catalog.state(), THRESHOLD, CONFIG)
    assert len(graph.groups) > 20 and max(len(g[1]) for g in graph.groups) >= 3
    steps = ["add", "edit", "delete", "add", "delete", "edit", "add", "edit"]
    for step in steps:
        getattr(catalog, step)(int(catalog.rng.integers(1, 40)))
        graph = update_graph(graph, *catalog.state(), THRESHOLD, CONFIG)
        _same(graph, build_graph(*catalog.state(), THRESHOLD, CONFIG))


def test_an_unchanged_catalog_keeps_its_graph_and_other_settings_rebuild() -> None:
    catalog = Catalog(7)
    catalog.add(120)
    graph = build_graph(*catalog.state(), THRESHOLD, CONFIG)
    again = update_graph(graph, *catalog.state(), THRESHOLD, CONFIG)
    assert again.pairs is graph.pairs and again.groups == graph.groups
    stricter = update_graph(graph, *catalog.state(), 0.8, "a+b@0.8")
    _same(stricter, build_graph(*catalog.state(), 0.8, "a+b@0.8"))
    assert len(stricter.pairs) < len(graph.pairs)
