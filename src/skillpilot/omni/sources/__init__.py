"""Omni-retrieval's sources behind one Protocol: attachments, knowledge bases, a graph.

Input: a question and how many items to return. Output: up to that many
:class:`~skillpilot.omni.model.OmniItem`, best first, each scored in [0, 1] by its source.

    attachments  files registered to a session          (chunkstore: BM25 + dense)
    knowledge    folders of documents, by name          (chunkstore: BM25 + dense)
    graph        entities and relations in a space      (GraphStore: SQLite triples by default)

A source bound to nothing searchable (no session, no knowledge base built, an empty graph space)
raises :class:`~skillpilot.errors.SourceUnavailableError`; any other exception is a failure that
the fetch stage reports and may retry. Third-party sources implement the same Protocol and are
handed to :func:`skillpilot.omni.omni_retrieve` by name.
"""

from __future__ import annotations

from typing import Protocol

from ..model import OmniItem, SourceName


class Source(Protocol):
    """Anything that finds context for a question; ``name`` says which of the seed's sources it is."""

    @property
    def name(self) -> SourceName: ...

    def fetch(self, query: str, top_k: int) -> list[OmniItem]:
        """At most ``top_k`` items, best first, scores in [0, 1]."""
        ...
