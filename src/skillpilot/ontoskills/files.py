"""File-system rules shared by compile and install: atomic writes and safe relative paths.

- :func:`write_bytes_atomic` (and its text / JSON forms) write a temporary file beside the
  target and rename it over the target, so a reader never sees half a file;
- :func:`safe_relative` accepts a package-relative path only if it stays inside its package:
  no absolute path, drive, backslash, ``..``, empty or ``.`` segment, NUL byte.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any


def write_bytes_atomic(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        # mkstemp makes the file private (0600); these files are shared with other tools.
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def safe_relative(value: object) -> PurePosixPath | None:
    """``value`` as a relative POSIX path that cannot leave its base folder, else None."""
    if not isinstance(value, str) or not value or "\\" in value or "\0" in value:
        return None
    path = PurePosixPath(value)
    if path.is_absolute() or ":" in path.parts[0]:
        return None
    # PurePosixPath drops "." segments and repeated slashes, so check the raw segments.
    if any(part in ("", ".", "..") for part in value.split("/")):
        return None
    return path
