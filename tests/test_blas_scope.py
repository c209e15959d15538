"""The BLAS limit covers every BLAS loaded when a route runs, also one a module imported after
the first route brought (scipy ships its own OpenBLAS), and is lifted after it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .conftest import EXAMPLES, REPO

SCRIPT = f"""
import json, sys
from threadpoolctl import threadpool_info
from skillpilot import SkillPilot
from skillpilot.retrieve.dense import DenseRetriever

def threads():
    return {{p["filepath"]: p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}}

seen = []
scores_for = DenseRetriever.scores_for
def recording(self, vector):
    seen.append(threads())
    return scores_for(self, vector)
DenseRetriever.scores_for = recording

pilot = SkillPilot(home=sys.argv[1], embed_provider="trigram-test", preconditions=False)
pilot.index([{str(EXAMPLES / "skills")!r}])
pilot.route("join my PDF documents")
import scipy.linalg  # a second OpenBLAS, loaded after the first route
after_import = threads()
pilot.route("join my PDF documents")
print(json.dumps({{"during": seen, "after_import": after_import, "after": threads()}}))
"""


def test_a_blas_loaded_after_the_first_route_is_limited_too(tmp_path: os.PathLike[str]) -> None:
    # A fresh process: this one may have imported scipy already. The fake encoder is found as
    # the installed plugin it is in this session (conftest), through sys.path.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*sys.path, str(REPO)])}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    last = answer["during"][-1]
    assert len(last) == len(answer["after_import"]) >= 2  # both BLAS libraries were seen
    assert set(last.values()) == {1}
    assert answer["after"] == answer["after_import"]  # restored once the route is over
