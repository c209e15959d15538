"""The marketplace commands: public search with filters, related skills, near-duplicates.

    skillpilot market-search QUERY [--top-k 10] [--exclude ID] [--category C] [--trust TIER] [--json]
    skillpilot related SKILL_ID [--top-k 3] [--json]
    skillpilot dedup [--json]

Each takes ``--home``, ``--store`` and ``--catalog`` (the catalog metadata file, default
``$SKILLPILOT_HOME/market.yaml``). ``market-search`` and ``related`` print public projections
only (never instructions or folder paths); ``dedup`` reads the private view and prints each
cluster member's folder path, for the index owner. Same conventions as the rest of the CLI:
results on stdout (JSON with ``--json``), messages on stderr, exit 1 on a SkillPilot error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import ConfigError
from ..market import Market, MarketHit, SearchFilters
from . import HomeOption, JsonOption, StoreOption, _pilot, _print_json, _run, out

CatalogOption = Annotated[
    Path | None,
    typer.Option(
        "--catalog", help="Catalog metadata file (signals, categories, weights); default: $SKILLPILOT_HOME/market.yaml."
    ),
]


def _market(home: Path | None, store: str | None, catalog: Path | None) -> Market:
    return _run(lambda: Market(_pilot(home, store), catalog))


def _print_hits(hits: list[MarketHit], as_json: bool, empty: str) -> None:
    if as_json:
        _print_json([h.to_dict() for h in hits])
        return
    if not hits:
        out.print(empty, markup=False)
        return
    for hit in hits:
        out.print(f"[bold]{hit.skill.id}[/bold]  score {hit.score:.3f}", markup=True, highlight=False)
        out.print(f"  {hit.skill.description[:160]}", markup=False, soft_wrap=True)
        for line in hit.explanation:
            out.print(f"  - {line}", markup=False, soft_wrap=True)


def market_search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, help="At most this many results.")] = 10,
    exclude: Annotated[list[str] | None, typer.Option("--exclude", help="Leave this skill id out (repeat).")] = None,
    category: Annotated[
        list[str] | None, typer.Option("--category", help="Only skills in this category (repeat: any of).")
    ] = None,
    trust: Annotated[list[str] | None, typer.Option("--trust", help="Only this trust tier (repeat: any of).")] = None,
    catalog: CatalogOption = None,
    home: HomeOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Search public skills: BM25 + meaning, RRF, re-ranked by quality, popularity, recency, trust."""
    market = _market(home, store, catalog)
    try:
        filters = SearchFilters(tuple(exclude or ()), tuple(category or ()), tuple(trust or ()))
    except ConfigError as exc:
        raise typer.BadParameter(str(exc), param_hint="--trust") from exc
    hits = _run(lambda: market.search(query, top_k=top_k, filters=filters))
    _print_hits(hits, as_json, "no skill is relevant enough")


def related(
    skill: Annotated[str, typer.Argument(help="The skill whose detail page it is (id, key or name).")],
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, help="At most this many.")] = 3,
    catalog: CatalogOption = None,
    home: HomeOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Related skills for a detail page: relevant, diverse (MMR), never a copy of the skill."""
    market = _market(home, store, catalog)
    hits = _run(lambda: market.related(skill, top_k=top_k))
    _print_hits(hits, as_json, "no skill is related closely enough")


def dedup(
    catalog: CatalogOption = None,
    home: HomeOption = None,
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Near-duplicate clusters (exact copies, forks, drifted versions), read on the private view."""
    market = _market(home, store, catalog)
    clusters = _run(market.dedup)
    if as_json:
        _print_json({"clusters": [c.to_dict() for c in clusters]})
        return
    if not clusters:
        out.print("no near-duplicates", markup=False)
    for cluster in clusters:
        out.print(
            f"[bold]Cluster {cluster.id}[/bold]: {cluster.kind}, similarity {cluster.similarity:.2f}",
            markup=True,
            highlight=False,
        )
        for member in cluster.members:
            out.print(f"  {member.id}  {member.path}", markup=False, soft_wrap=True)
        for pair in cluster.pairs:
            out.print(f"  {pair.a} ~ {pair.b}: {pair.kind}, {pair.evidence}", markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``market-search``, ``related`` and ``dedup`` to the ``skillpilot`` app."""
    app.command("market-search")(market_search)
    app.command("related")(related)
    app.command("dedup")(dedup)
