"""Fusion: the sources' items in, one ranked, de-duplicated, token-bounded context out.

Input: the fetch stage's outcomes, each source's weight (the classifier's relative confidence in
it for MIXED, 1.0 otherwise), ``max_tokens`` and a token counter. Output: a
:class:`FusedContext` -- the items kept, best first, and ``contextText``.

Steps (the seed's 融合排序):
1. every item's score (in [0, 1], normalised by its source) is multiplied by its source's weight;
2. items of one source with the same key (chunk id / entity id) are one item, the best-scored;
3. all items are ordered by score, highest first (ties: the seed's source order, then the
   source's own order) -- a score-ordered merge across sources;
4. items are kept in that order while ``contextText`` stays within ``max_tokens`` tokens counted
   by :class:`~skillpilot.tokens.TokenCounter`; the first item that does not fit is cut to the
   room left (when at least ``MIN_SNIPPET_TOKENS`` remain) and ends the context.

``contextText`` has one section per source in the seed's order and format (``【附件摘要】``,
``【知识库片段】``, ``【图谱关联】``, separated by a blank line); each item is one line that starts
with its citation ``[n]``, its rank across all sources, so an answer can cite any source by
number (``[n]`` is ``items[n - 1]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..tokens import TokenCounter
from .model import SOURCE_NAMES, OmniItem, SourceName, SourceOutcome

SECTION_TITLES: dict[SourceName, str] = {
    "attachment": "【附件摘要】",
    "knowledge": "【知识库片段】",
    "graph": "【图谱关联】",
}
# Below this a cut snippet says too little to be worth its citation line.
MIN_SNIPPET_TOKENS = 16
ELLIPSIS = "…"


@dataclass(frozen=True)
class FusedContext:
    items: tuple[OmniItem, ...]
    context_text: str
    truncated: bool


def merge(outcomes: Sequence[SourceOutcome], weights: Mapping[SourceName, float]) -> list[OmniItem]:
    """Steps 1-3 of the module docstring: weighted, de-duplicated per source, best first."""
    best: dict[tuple[SourceName, str], tuple[OmniItem, int]] = {}
    for outcome in outcomes:
        weight = weights.get(outcome.source, 1.0)
        for position, item in enumerate(outcome.items):
            weighted = replace(item, score=item.score * weight)
            key = (item.source, item.key)
            if key not in best or weighted.score > best[key][0].score:
                best[key] = (weighted, position)
    ranked = sorted(best.values(), key=lambda pair: (-pair[0].score, SOURCE_NAMES.index(pair[0].source), pair[1]))
    return [item for item, _ in ranked]


def _label(item: OmniItem) -> str:
    if item.entity_name is not None:
        return f"{item.entity_name}（{item.entity_type}）" if item.entity_type else item.entity_name
    return item.title or item.chunk_id or item.key


def render(items: Sequence[OmniItem]) -> str:
    """``contextText`` for ``items`` (ranked): one section per source, one cited line per item."""
    sections = []
    for source in SOURCE_NAMES:
        # One line per item: a chunk's own line breaks would make its citation ambiguous.
        lines = [
            f"[{n}] {_label(item)}: {' '.join(item.snippet.split())}"
            for n, item in enumerate(items, 1)
            if item.source == source
        ]
        if lines:
            sections.append("\n".join([SECTION_TITLES[source], *lines]))
    return "\n\n".join(sections)


def fit(items: Sequence[OmniItem], max_tokens: int, counter: TokenCounter) -> FusedContext:
    """Step 4 of the module docstring: keep ranked ``items`` while the context fits ``max_tokens``."""
    kept: list[OmniItem] = []
    for item in items:
        if counter.count(render([*kept, item])) <= max_tokens:
            kept.append(item)
            continue
        room = max_tokens - counter.count(render([*kept, replace(item, snippet=ELLIPSIS)]))
        # Tokens of a joined text can differ from the sum of its parts' by one or two at the
        # seams, so shrink until the whole context fits rather than trust the arithmetic.
        while room >= MIN_SNIPPET_TOKENS:
            cut = replace(item, snippet=counter.prefix(item.snippet, room).rstrip() + ELLIPSIS)
            if counter.count(render([*kept, cut])) <= max_tokens:
                kept.append(cut)
                break
            room -= 1
        return FusedContext(tuple(kept), render(kept), truncated=True)
    return FusedContext(tuple(kept), render(kept), truncated=False)
