"""Per-skill ``intents.json``: OntoSkills' precomputed all-MiniLM-L6-v2 intent vectors.

Format (OntoCore ``export_skill_embeddings``, read by OntoMCP ``embeddings.rs``)::

    {"model": "sentence-transformers/all-MiniLM-L6-v2", "dimension": 384,
     "intents": [{"intent": "say hello", "embedding": [384 floats, L2-normalised],
                  "skills": ["hello"]}]}

one entry per distinct intent, sorted by intent; ``skills`` holds short ids.

- :func:`write_intents` writes that format (atomically: a reader never sees half a file);
- :func:`read_intents` reads it, renormalising every vector and skipping entries whose length is
  not ``dimension`` (as OntoMCP does);
- :func:`precomputed_vectors` is the index builder's hook: for an OntoSkills skill whose
  ``intents.json`` was made by the model the encoder runs, it returns the vectors to store
  instead of embedding anything. Row 0 is the normalised mean of the intent vectors (the
  "what it is for" vector that conflict detection compares), rows 1.. the intents themselves,
  so dense retrieval scores a skill by its best intent, as OntoMCP's semantic search does.
  Our ``minilm`` encoder is the int8 quantisation of the same model: its query vectors and the
  float model's intent vectors agree to a cosine of about 0.99, close enough to share a space.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..model import Skill
from . import vocab
from .files import write_json_atomic

log = logging.getLogger(__name__)

#: Encoder names (``Encoder.name``) that are all-MiniLM-L6-v2, whatever the quantisation.
MINILM_ENCODER_PREFIX = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class IntentVector:
    intent: str
    vector: np.ndarray
    skills: tuple[str, ...]


def write_intents(path: Path, intents: Sequence[str], vectors: np.ndarray, skill_ids: Sequence[str]) -> None:
    """Write ``intents`` (row ``i`` of ``vectors`` embeds ``intents[i]``) for ``skill_ids``."""
    if len(intents) != len(vectors):
        raise ValueError(f"{len(intents)} intents but {len(vectors)} vectors")
    rows = {text: row for text, row in zip(intents, vectors, strict=True)}
    data = {
        "model": vocab.MODEL_NAME,
        "dimension": int(vectors.shape[1]) if len(vectors) else vocab.MODEL_DIMENSION,
        "intents": [
            {
                "intent": text,
                # 8 decimals keep the unit norm to ~1e-7 and halve the file against float reprs.
                "embedding": [round(float(v), 8) for v in rows[text] / max(float(np.linalg.norm(rows[text])), 1e-12)],
                "skills": list(skill_ids),
            }
            for text in sorted(rows)
        ],
    }
    write_json_atomic(path, data)


def read_intents(path: Path) -> tuple[str, list[IntentVector]]:
    """The model name and the usable entries of an ``intents.json``; ``ValueError`` if unreadable."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict) or not isinstance(data.get("intents"), list):
        raise ValueError(f"{path}: not an intents.json (expected an object with an 'intents' list)")
    dimension = data.get("dimension")
    entries = []
    for item in data["intents"]:
        if not isinstance(item, dict) or not isinstance(item.get("intent"), str):
            continue
        vector = np.asarray(item.get("embedding") or [], dtype=np.float32)
        if vector.ndim != 1 or len(vector) != dimension or not np.all(np.isfinite(vector)):
            continue
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            continue
        skills = tuple(s for s in item.get("skills") or [] if isinstance(s, str))
        entries.append(IntentVector(item["intent"], vector / norm, skills))
    return str(data.get("model", "")), entries


def is_minilm(model: str) -> bool:
    """Whether an ``intents.json`` model name (``sentence-transformers/all-MiniLM-L6-v2``) or an
    encoder name (``all-MiniLM-L6-v2-int8/1.0.0``) is all-MiniLM-L6-v2."""
    return any(part.startswith(MINILM_ENCODER_PREFIX) for part in model.split("/"))


def precomputed_vectors(skill: Skill, encoder_name: str, dim: int) -> np.ndarray | None:
    """The vectors to store for ``skill`` under this encoder, or None to embed it as usual."""
    if skill.source_kind != "ontoskill" or dim != vocab.MODEL_DIMENSION or not is_minilm(encoder_name):
        return None
    onto: dict[str, Any] = skill.metadata.get("ontoskills") or {}
    path = onto.get("intents_json")
    if not isinstance(path, str):
        return None
    try:
        model, entries = read_intents(Path(path))
    except (OSError, ValueError) as exc:
        log.warning("%s: cannot use the precomputed vectors (%s); embedding instead", path, exc)
        return None
    # OntoCore lets a sub-skill's file overwrite its parent's: use only entries naming this skill.
    mine = [e.vector for e in entries if skill.name in e.skills and len(e.vector) == dim]
    if not is_minilm(model) or not mine:
        return None
    matrix = np.stack(mine).astype(np.float32)
    centroid = matrix.mean(axis=0)
    centroid /= max(float(np.linalg.norm(centroid)), 1e-12)
    return np.vstack([centroid[None, :], matrix])
