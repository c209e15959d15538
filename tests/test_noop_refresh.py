"""A refresh that finds nothing changed (the service and the watcher run one every few seconds)
does not make routers rebuild their catalog; a real change does."""

from __future__ import annotations

from pathlib import Path

from skillpilot import SkillPilot

from .conftest import write_skill


def test_an_unchanged_reindex_keeps_every_router_warm_and_an_edit_reloads(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "video-trim", "name: video-trim\ndescription: Cut a video to a time range.")
    write_skill(root, "weather", "name: weather\ndescription: Current weather and the forecast for any city.")
    writer = SkillPilot(home=tmp_path / "home", enable_semantic=False)
    writer.index([root])
    router = SkillPilot(home=tmp_path / "home", enable_semantic=False)
    assert router.route("trim this video").load_ms > 0
    generation = router.store.generation()

    report = writer.index([root])
    assert (report.added, report.updated, report.unchanged) == (0, 0, 2)
    assert router.store.generation() == generation
    assert router.route("trim this video, please").load_ms == 0.0

    write_skill(root, "weather", "name: weather\ndescription: The weather forecast and rain radar for any city.")
    assert writer.index([root]).updated == 1
    assert router.store.generation() == generation + 1
    assert router.route("will it rain tomorrow").load_ms > 0
