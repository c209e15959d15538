"""The attachment source: files a user registered to a session, chunked and searched.

Input: the session id of the request and a question. Output: the session's best chunks as
items with ``title`` (the file name), ``chunkId`` and ``snippet``. A file is filed under its
name: registering ``report.pdf`` again replaces the session's earlier ``report.pdf``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...encoders import Encoder
from ...errors import SourceUnavailableError
from ..model import OmniItem, SourceName
from .chunkstore import ChunkStore, IngestReport
from .documents import read_document


class AttachmentSource:
    """The chunks of one session's attachments."""

    name: SourceName = "attachment"

    def __init__(self, store: ChunkStore, session_id: str | None, encoders: Sequence[Encoder]) -> None:
        self.store = store
        self.session_id = session_id
        self.encoders = encoders

    def fetch(self, query: str, top_k: int) -> list[OmniItem]:
        if not self.session_id:
            raise SourceUnavailableError(
                self.name,
                "no sessionId given; attachments belong to a session (`skillpilot context ... --session S`)",
            )
        if self.session_id not in self.store.collections("attachment"):
            raise SourceUnavailableError(
                self.name,
                f"session {self.session_id!r} has no attachments; add some with "
                f"`skillpilot attach {self.session_id} FILE...`",
            )
        hits = self.store.search("attachment", [self.session_id], query, top_k, self.encoders)
        return [h.item(self.name, h.title) for h in hits]


def ingest_attachments(
    store: ChunkStore, session_id: str, paths: Sequence[Path], encoders: Sequence[Encoder]
) -> IngestReport:
    """Read, chunk, embed and file ``paths`` under ``session_id``; any unreadable file raises
    ``DocumentError`` before anything is stored (the user named each file)."""
    documents = [(path.name, read_document(path)) for path in paths]
    return store.ingest("attachment", session_id, documents, encoders)
