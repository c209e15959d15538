"""An index run says how far it got: embedding (texts done of texts to embed, per encoder) and the
conflict update (skills compared of skills to compare), each ending at its total."""

from __future__ import annotations

from pathlib import Path

from skillpilot.index.builder import build_index
from skillpilot.index.sqlite import SQLiteStore
from skillpilot.retrieve.dense import EMBEDDING

from .conftest import write_skill
from .fake_encoder import TrigramEncoder


def test_embedding_and_conflict_comparison_report_progress_to_their_totals(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for n in range(70):  # more than one embedding batch
        write_skill(root, f"s{n}", f"name: s{n}\ndescription: Convert document number {n} to another format.")
    seen: dict[str, list[tuple[int, int]]] = {}
    store = SQLiteStore(tmp_path / "index.sqlite")
    build_index(
        store,
        [root],
        encoders=lambda: [TrigramEncoder()],
        texts_for=EMBEDDING,
        conflict_threshold=0.5,
        progress=lambda stage, done, total: seen.setdefault(stage, []).append((done, total)),
    )
    embedding = seen[f"embedding with {TrigramEncoder.name}"]
    assert len(embedding) == 2 and embedding[-1] == (70, 70)
    assert seen["comparing skills for conflict groups"][-1] == (70, 70)
    assert seen["updating conflict groups"][-1] == (1, 1)
    assert store.conflict_graph() is not None
