"""No dead options: every setting config.yaml accepts is read somewhere outside ``config.py``
(an option nothing reads would silently do nothing)."""

from __future__ import annotations

import re
from pathlib import Path

import skillpilot
from skillpilot.config import OPTIONS

SOURCE = Path(skillpilot.__file__).parent


def test_every_option_is_read_outside_the_config_module() -> None:
    code = "\n".join(
        path.read_text(encoding="utf-8") for path in sorted(SOURCE.rglob("*.py")) if path.name != "config.py"
    )
    unread = [o.key for o in OPTIONS if not re.search(rf"\.{o.field}\b", code)]
    assert unread == []
