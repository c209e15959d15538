"""Third-party retrievers and stores arrive the way encoders do: a distribution on ``sys.path``
declares a factory in the ``skillpilot.retrievers`` / ``skillpilot.stores`` entry-point group, and
that is all it takes. Each plugin here is two files, its module and its entry points (beside pip's
METADATA), and the real CLI in a fresh process indexes into the plugin's store and routes with
the plugin's retriever in the fusion."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .conftest import EXAMPLES, REPO, write_plugin

TAG_RETRIEVER = '''
"""A message that tags a skill (``#skill-id``) names it."""

import re

import numpy as np

from skillpilot import RetrieverId

TAG = re.compile(r"#([\\w-]+)")


class TagRetriever:
    id = RetrieverId("tag")

    def __init__(self, skills):
        self.position = {skill.id: n for n, skill in enumerate(skills)}

    def scores(self, query):
        scores = np.zeros(len(self.position))
        for tag in TAG.findall(query.text):
            if tag in self.position:
                scores[self.position[tag]] = 1.0
        return scores


def build(sources):
    return [TagRetriever(sources.skills)]
'''

SCRATCH_STORE = '''
"""``scratch://NAME``: an index in ``$SCRATCH_STORES/NAME.sqlite``."""

import os
from pathlib import Path

from skillpilot.index.sqlite import SQLiteStore


def build(spec):
    return SQLiteStore(Path(os.environ["SCRATCH_STORES"]) / (spec.removeprefix("scratch://") + ".sqlite"))
'''


def test_a_retriever_and_a_store_from_plugins_route_end_to_end(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "tag_retriever.py").write_text(TAG_RETRIEVER, encoding="utf-8")
    write_plugin(site, "skillpilot-tags", "skillpilot.retrievers", {"tag": "tag_retriever:build"})
    (site / "scratch_store.py").write_text(SCRATCH_STORE, encoding="utf-8")
    write_plugin(site, "skillpilot-scratch", "skillpilot.stores", {"scratch": "scratch_store:build"})
    stores = tmp_path / "stores"
    stores.mkdir()
    env = {
        **os.environ,
        "SKILLPILOT_HOME": str(tmp_path / "home"),
        "SKILLPILOT_ENABLE_SEMANTIC": "false",  # keyword parts and the plugin: no model to load
        "SKILLPILOT_PRECONDITIONS": "false",
        "SCRATCH_STORES": str(stores),
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(site)]),
    }

    def cli(*args: str, **settings: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "skillpilot", *args]
        return subprocess.run(command, capture_output=True, text=True, env={**env, **settings}, timeout=120)

    indexed = cli("index", str(EXAMPLES / "skills"), "--store", "scratch://team", "--json")
    assert indexed.returncode == 0, indexed.stderr
    assert (stores / "team.sqlite").is_file() and not (tmp_path / "home" / "index.sqlite").exists()

    tagged = cli("route", "#email-send please", "--store", "scratch://team", "--trace", "--json")
    assert tagged.returncode == 0, tagged.stderr
    route = json.loads(tagged.stdout)
    assert route["skill"]["id"] == "email-send"
    # The plugin's list is fused at the documented weight for a list the calibration has not fitted.
    assert "tag=0.50" in json.dumps(route["trace"])
    untagged = json.loads(cli("route", "please", "--store", "scratch://team", "--json").stdout)
    assert (untagged["skill"], untagged["method"]) == (None, "no-match")

    # The index.store setting names it too; an unknown scheme's error lists the installed ones.
    stats = json.loads(cli("stats", "--json", SKILLPILOT_STORE="scratch://team").stdout)
    assert (stats["skills"], stats["index_path"]) == (json.loads(indexed.stdout)["total"], str(stores / "team.sqlite"))
    unknown = cli("route", "please", "--store", "mysql://db/skills")
    assert unknown.returncode == 1 and "scratch://" in unknown.stderr
