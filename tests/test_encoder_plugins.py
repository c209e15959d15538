"""Third-party encoders arrive through the ``skillpilot.encoders`` entry-point group: a distribution
installed on ``sys.path`` declares a factory, ``embed.provider`` names it in config.yaml, and the
index is embedded with it; a plugin that cannot load is reported and the built-ins still work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from skillpilot import SkillPilot
from skillpilot.encoders import available_encoders

from .conftest import EXAMPLES, REPO, write_plugin
from .fake_encoder import SPEC, TrigramEncoder

PLUGIN_MODULE = """
import numpy as np


class ShoutEncoder:
    name = "shout-plugin/1"
    dim = 8

    def encode_batch(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for char in text.lower():
                out[row, ord(char) % self.dim] += 1.0
            out[row] /= max(float(np.linalg.norm(out[row])), 1e-9)
        return out


def build(settings):
    return ShoutEncoder()
"""

PROBE = """
import json
from skillpilot import SkillPilot
from skillpilot.encoders import available_encoders

pilot = SkillPilot(preconditions=False)
pilot.index([__import__("pathlib").Path(EXAMPLES)])
result = pilot.route("commit my changes")
print(json.dumps({
    "available": available_encoders(),
    "encoders": [e.name for e in pilot.encoders],
    "provider": pilot.stats().embed_provider,
    "skill": result.skill.id if result.skill else None,
}))
"""


def test_an_installed_plugin_is_selected_by_name_in_config(tmp_path: Path) -> None:
    # A fresh process: entry points are discovered once per process, from what is installed.
    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "shout_encoder.py").write_text(PLUGIN_MODULE, encoding="utf-8")
    write_plugin(
        site, "shout-encoder", "skillpilot.encoders", {"shout": "shout_encoder:build", "broken": "no_such_module:build"}
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("embed:\n  provider: shout\n", encoding="utf-8")
    env = {
        **os.environ,
        "SKILLPILOT_HOME": str(home),
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(site)]),
    }
    code = f"EXAMPLES = {str(EXAMPLES / 'skills')!r}\n" + textwrap.dedent(PROBE)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert {"shout", "minilm", "use-multilingual", "openai"} <= set(found["available"])
    assert "broken" not in found["available"]
    assert "encoder plugin broken (no_such_module:build) cannot be loaded" in proc.stderr
    assert (found["encoders"], found["provider"]) == (["shout-plugin/1"], "shout")
    assert found["skill"] == "git-commit"


def test_the_fake_encoder_is_a_registered_plugin_of_this_session(tmp_path: Path) -> None:
    assert SPEC in available_encoders()
    pilot = SkillPilot(home=tmp_path / "home", embed_provider=SPEC, preconditions=False)
    pilot.index([EXAMPLES / "skills"])
    assert [type(e) for e in pilot.encoders] == [TrigramEncoder]
    assert pilot.route("commit my changes").skill is not None
    pilot.close()
