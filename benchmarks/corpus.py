"""Where the benchmark scripts find the shared corpus: ``$SKILLPILOT_BENCH_DATA``, else
``../shared/bench`` beside the checkout (a worktree or a copy elsewhere names it)."""

from __future__ import annotations

import os
from pathlib import Path

BENCH = Path(os.environ.get("SKILLPILOT_BENCH_DATA") or Path(__file__).resolve().parents[2] / "shared" / "bench")
