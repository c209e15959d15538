"""A bounded mutation fuzz of the SKILL.md reader, for CI: real example files, randomly damaged
(bytes flipped, inserted, deleted, chunks duplicated, awkward bytes spliced in), read through
the loader for ``FUZZ_SECONDS`` (default 3). Every file must give a skill or a skipped entry
with a reason, never an exception, and everything the loader hands on must encode as UTF-8.

Seeded (``FUZZ_SEED``, default 0) so a failure replays; the failing input is in the message.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import pytest

from skillpilot.skills import load_skills

from .conftest import EXAMPLES

FUZZ_SECONDS = float(os.environ.get("FUZZ_SECONDS", "3"))
SPLICES = [b"\xff", b"\xed\xa0\x80", b"\x00", b"\r", b"\t", b"\n---\n", b": ", b'"\\ud800"', b"&a *a", b"\xe2\x80\xae"]


def _mutate(data: bytes, rng: random.Random) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        where = rng.randrange(len(buffer) + 1)
        kind = rng.randrange(5)
        if kind == 0 and buffer:
            buffer[min(where, len(buffer) - 1)] = rng.randrange(256)
        elif kind == 1:
            buffer[where:where] = bytes([rng.randrange(256)])
        elif kind == 2 and buffer:
            del buffer[where : where + rng.randint(1, 16)]
        elif kind == 3:
            buffer[where:where] = buffer[where : where + rng.randint(1, 64)]
        else:
            buffer[where:where] = rng.choice(SPLICES)
    return bytes(buffer)


@pytest.mark.fuzz
def test_the_loader_survives_damaged_skill_files(tmp_path: Path) -> None:
    seeds = [p.read_bytes() for p in sorted((EXAMPLES / "skills").rglob("SKILL.md"))]
    assert seeds, "the example skills are the fuzz seeds"
    rng = random.Random(int(os.environ.get("FUZZ_SEED", "0")))
    root = tmp_path / "fuzz"
    (root / "skill").mkdir(parents=True)
    target = root / "skill" / "SKILL.md"
    deadline = time.monotonic() + FUZZ_SECONDS
    runs = 0
    while time.monotonic() < deadline:
        data = _mutate(rng.choice(seeds), rng)
        target.write_bytes(data)
        try:
            loaded = load_skills([root])
            assert len(loaded.skills) + len(loaded.skipped) == 1
            assert all(s.reason for s in loaded.skipped)
            json.dumps([loaded.skills, loaded.skipped, loaded.warnings], default=repr, ensure_ascii=False).encode()
        except Exception as exc:
            raise AssertionError(f"run {runs}: {type(exc).__name__}: {exc} on input {data!r}") from exc
        runs += 1
    assert runs > 10
