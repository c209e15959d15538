"""Registries of named parts: the built-ins and third parties' plugins, registered the same way.

Input: a part kind's entry-point group (``skillpilot.encoders``, ``skillpilot.retrievers``,
``skillpilot.stores``), the built-in parts named as entry points name theirs (``"module:attribute"``)
and any ``register(name, part)`` calls. Output: ``get(name)`` -- the part (a factory, usually) or
None -- and ``names()``, in the order the parts count: built-ins as declared, then installed
plugins by name, then registered ones.

Guarantees:
- Nothing is read at import time: the installed distributions' entry points are read on the first
  lookup (once per process; a plugin that cannot be imported is logged and left out), and a
  built-in's module is imported only when that part is asked for, so naming a backend here costs
  nothing until it is used (``index.postgres`` imports psycopg).
- A plugin of a built-in's name replaces it, and a ``register`` call replaces either.
- This module imports no stage: ``config`` checks ``embed.provider`` against ``ENCODERS`` without
  importing an encoder, which is why the built-ins are declared here and not in their packages.
  The order of ``names()`` is the order retrievers' lists are fused in, which decides the last
  bits of a fused score: the built-ins come first, in a fixed order.

Each kind's package says what a part is (``skillpilot.encoders``, ``skillpilot.retrieve``,
``skillpilot.index``) and wraps its registry in typed functions (``register_encoder`` ...).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from importlib import import_module
from importlib.metadata import entry_points

logger = logging.getLogger(__name__)


class Registry:
    """The parts of one kind, by name (see the module docstring). Parts are whatever the kind's
    package registers; this table only names them."""

    def __init__(self, group: str, kind: str, builtins: Mapping[str, str]) -> None:
        self.group = group
        self.kind = kind
        self._builtins = dict(builtins)
        self._plugins: dict[str, object] = {}
        self._registered: dict[str, object] = {}
        self._lock = threading.RLock()
        self._discovered = False

    @property
    def builtins(self) -> tuple[str, ...]:
        """The built-in parts' names, as declared (read without looking for plugins)."""
        return tuple(self._builtins)

    def register(self, name: str, part: object) -> None:
        """Make ``part`` the one ``name`` gives, in place of any built-in or plugin of that name."""
        with self._lock:
            self._registered[name] = part

    def get(self, name: str) -> object | None:
        """The part registered as ``name`` (a built-in's module imported now), or None."""
        self._discover()
        with self._lock:
            if name in self._registered:
                return self._registered[name]
            if name in self._plugins:
                return self._plugins[name]
            target = self._builtins.get(name)
        return None if target is None else _load(target)

    def names(self) -> list[str]:
        """Every registered name: built-ins in their declared order, then plugins by name, then
        ``register`` calls in their order (a name that several sources give appears once, first)."""
        self._discover()
        with self._lock:
            return list(dict.fromkeys([*self._builtins, *self._plugins, *self._registered]))

    def _discover(self) -> None:
        """Read the installed distributions' entry points of ``group`` (once)."""
        with self._lock:
            if self._discovered:
                return
            self._discovered = True
            for entry_point in sorted(entry_points(group=self.group), key=lambda e: e.name):
                try:
                    self._plugins[entry_point.name] = entry_point.load()
                except Exception as exc:  # a broken plugin must not take the built-ins down with it
                    logger.warning(
                        "%s plugin %s (%s) cannot be loaded: %r", self.kind, entry_point.name, entry_point.value, exc
                    )


def _load(target: str) -> object:
    module, _, attribute = target.partition(":")
    return getattr(import_module(module), attribute)


# Built-in encoders: factories ``(Settings) -> Encoder`` (``skillpilot.encoders``).
ENCODERS = Registry(
    "skillpilot.encoders",
    "encoder",
    {
        "minilm": "skillpilot.encoders:build_minilm",
        "use-multilingual": "skillpilot.encoders:build_use_multilingual",
        "openai": "skillpilot.encoders:build_openai",
    },
)

# Built-in retrievers, in the order their lists are fused: factories
# ``(RetrieverSources) -> Sequence[Retriever]`` (``skillpilot.retrieve``).
RETRIEVERS = Registry(
    "skillpilot.retrievers",
    "retriever",
    {
        "bm25": "skillpilot.retrieve.bm25:bm25_retrievers",
        "dense": "skillpilot.retrieve.ann:dense_retrievers",
    },
)

# Built-in stores, by URL scheme: factories ``(spec: str) -> SkillStore`` (``skillpilot.index``);
# a spec without a scheme is a path, opened by ``sqlite``.
STORES = Registry(
    "skillpilot.stores",
    "store",
    {
        "sqlite": "skillpilot.index.sqlite:open_sqlite",
        "postgresql": "skillpilot.index.postgres:PostgresStore",
        "postgres": "skillpilot.index.postgres:PostgresStore",
    },
)
