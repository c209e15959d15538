"""The knowledge-base source: named folders of documents, indexed with SkillPilot's hybrid engine.

Input: an optional knowledge-base name (none: every knowledge base, as the seed says) and a
question. Output: the best chunks as items with ``title`` (``NAME/relative/path``), ``chunkId``
and ``snippet``. Building a knowledge base from a folder is incremental: unchanged files keep
their chunks and vectors, files gone from the folder are dropped, unreadable files are skipped
and listed in the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...encoders import Encoder
from ...errors import DocumentError, SkillPilotError, SourceUnavailableError
from ..model import OmniItem, SourceName
from .chunkstore import ChunkStore, IngestReport
from .documents import SUPPORTED_SUFFIXES, Document, read_document


class KnowledgeSource:
    """The chunks of one knowledge base, or of all of them."""

    name: SourceName = "knowledge"

    def __init__(self, store: ChunkStore, knowledge_base: str | None, encoders: Sequence[Encoder]) -> None:
        self.store = store
        self.knowledge_base = knowledge_base
        self.encoders = encoders

    def fetch(self, query: str, top_k: int) -> list[OmniItem]:
        built = self.store.collections("knowledge")
        if not built:
            raise SourceUnavailableError(
                self.name, "no knowledge base built yet; build one with `skillpilot kb build NAME FOLDER`"
            )
        if self.knowledge_base is not None and self.knowledge_base not in built:
            raise SourceUnavailableError(
                self.name, f"no knowledge base {self.knowledge_base!r}; built: {', '.join(built)}"
            )
        scope = None if self.knowledge_base is None else [self.knowledge_base]
        hits = self.store.search("knowledge", scope, query, top_k, self.encoders)
        return [h.item(self.name, f"{h.collection}/{h.name}") for h in hits]


def ingest_folder(store: ChunkStore, name: str, folder: Path, encoders: Sequence[Encoder]) -> IngestReport:
    """Index every supported file under ``folder`` (hidden folders skipped) as knowledge base ``name``."""
    if not folder.is_dir():
        raise DocumentError(folder, "not a folder; give the folder that holds the knowledge base's documents")
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix.lower() in SUPPORTED_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    if not files:
        raise DocumentError(folder, f"no documents here; supported: {', '.join(SUPPORTED_SUFFIXES)}")
    report = IngestReport(kind="knowledge", collection=name)
    documents: list[tuple[str, Document]] = []
    for path in files:
        try:
            documents.append((path.relative_to(folder).as_posix(), read_document(path)))
        except SkillPilotError as exc:
            # One bad file should not stop a folder of good ones; the report lists it.
            report.skipped.append({"path": str(path), "reason": str(exc)})
    return store.ingest("knowledge", name, documents, encoders, prune=True, report=report)
