"""Skill formats besides SKILL.md and JSON tool catalogs, registered like third parties would.

A :class:`Loader` names the file a folder walk picks up (``file_name``), the suffix that makes
a file a root on its own, how to read one file into skills, and optionally the vectors a skill
of its format ships (so the indexer stores them instead of embedding). ``load_skills`` and the
index builder ask only this registry, so a format package can be deleted without breaking
either: the built-in OntoSkills loader (``skillpilot.ontoskills.loader``) registers itself when
its module is present and is simply absent otherwise.

    register_loader(Loader("myformat", "skill.toml", ".toml", read_toml))
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model import Skill

log = logging.getLogger(__name__)

# (file, root it was found under) -> (skills, warnings); raises SkillParseError for bad input.
Reader = Callable[[Path, Path], tuple[list[Skill], tuple[str, ...]]]
# (skill, encoder name, encoder dim) -> the vectors to store, or None to embed as usual.
ShippedVectors = Callable[[Skill, str, int], np.ndarray | None]

# Formats shipped with SkillPilot, each registering itself on import (an edge: may be absent).
BUILTIN_LOADERS = ("skillpilot.ontoskills.loader",)


@dataclass(frozen=True)
class Loader:
    name: str
    file_name: str
    suffix: str
    read: Reader
    vectors: ShippedVectors | None = None


_REGISTRY: dict[str, Loader] = {}
_LOCK = threading.Lock()
_builtins_loaded = False


def register_loader(loader: Loader) -> None:
    """Make ``loader``'s files indexable (registering a name again replaces it)."""
    with _LOCK:
        _REGISTRY[loader.name] = loader


def loaders() -> list[Loader]:
    """Every registered loader, the built-ins that are installed included."""
    global _builtins_loaded
    if not _builtins_loaded:
        for module in BUILTIN_LOADERS:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:
                if exc.name is None or not module.startswith(exc.name):
                    raise
                log.debug("skill format %s is not installed", module)
        _builtins_loaded = True
    with _LOCK:
        return list(_REGISTRY.values())


def loader_for_file(name: str) -> Loader | None:
    """The loader whose walked file is called ``name``."""
    return next((loader for loader in loaders() if loader.file_name == name), None)


def loader_for_root(path: Path) -> Loader | None:
    """The loader that reads a root given as one file with this suffix."""
    return next((loader for loader in loaders() if path.suffix.lower() == loader.suffix), None)


def shipped_vectors(skill: Skill, encoder_name: str, dim: int) -> np.ndarray | None:
    """The vectors ``skill``'s format ships for this encoder, or None to embed it."""
    for loader in loaders():
        if loader.vectors is not None:
            vectors = loader.vectors(skill, encoder_name, dim)
            if vectors is not None:
                return vectors
    return None
