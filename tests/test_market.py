"""The marketplace on real SKILL.md folders, a real SQLite index and a real embedding model:
public vs private views, search with signals and filters, related lists, near-duplicates,
find_skill, and the CLI."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from skillpilot import SkillPilot
from skillpilot.errors import ConfigError, SkillNotFoundError
from skillpilot.market import Market, SearchFilters, find_skill

from .cli_util import CliOutcome, run_cli
from .conftest import BENCH, require_corpus, write_skill

SECRET = "Zanzibar-7731 quokka nebula"
LONG_STEPS = " ".join(
    f"Step {n}: open the quarterly ledger, reconcile every {word} entry against the bank export, "
    f"and flag each mismatch in the review column before moving on."
    for n, word in enumerate(["invoice", "refund", "payroll", "vendor", "tax", "grant"], start=1)
)


def _skills(root: Path) -> None:
    write_skill(
        root,
        "image-to-prompt",
        """
        name: image-to-prompt
        description: Convert an image into a reusable text-to-image generation prompt.
        metadata:
          categories: [images]
          public_capabilities: [image-understanding]
          installs: 40
        """,
        "Describe subject, style, lighting and lens, then write the prompt.\n",
    )
    write_skill(
        root,
        "prompt-from-picture",
        """
        name: prompt-from-picture
        description: Turn a picture into a detailed prompt for image generation models.
        metadata:
          categories: [images]
          installs: 20000
          quality: 0.95
        """,
        "Look at the picture and write a prompt.\n",
    )
    write_skill(
        root,
        "lighting-recovery",
        """
        name: lighting-recovery
        description: Recover the lighting setup and camera parameters from a photo.
        private: true
        metadata:
          categories: [images]
        """,
        f"Internal recipe: {SECRET}. Estimate the key light angle from the shadows.\n",
    )
    write_skill(
        root,
        "photo-restore",
        """
        name: photo-restore
        description: Restore old, scratched or faded photographs.
        metadata: {categories: [images]}
        """,
        "Remove scratches, fix fading and colourise.\n",
    )
    write_skill(
        root,
        "ledger-reconcile",
        """
        name: ledger-reconcile
        description: Reconcile the accounting ledger against bank statements.
        metadata: {categories: [finance]}
        """,
        LONG_STEPS + "\n",
    )
    write_skill(
        root,
        "ledger-reconcile-pro",
        """
        name: ledger-reconcile-pro
        description: Reconcile ledgers with bank statements, with extra checks.
        metadata: {categories: [finance]}
        """,
        "Pro edition. " + LONG_STEPS + " Finally email the controller.\n",
    )
    write_skill(
        root,
        "ledger-reconcile-lite",
        """
        name: ledger-reconcile-lite
        description: Quick reconciliation of a ledger with a bank CSV export.
        trust_tier: official
        metadata: {categories: [finance], forked_from: ledger-reconcile}
        """,
        "Load both files, match amounts by date, list what is left over.\n",
    )
    write_skill(
        root,
        "invoice-chaser",
        """
        name: invoice-chaser
        description: Write polite reminder emails for unpaid invoices.
        metadata: {categories: [finance]}
        """,
        "Find overdue invoices and draft one reminder per customer.\n",
    )
    write_skill(
        root,
        "acme/brand-guidelines",
        """
        name: brand-guidelines
        description: Apply the Acme brand colours and typography to documents.
        metadata: {categories: [design]}
        """,
        "Acme orange #ff6600 for headings, Inter for body text, logo top left.\n",
    )
    write_skill(
        root,
        "globex/brand-guidelines",
        """
        name: brand-guidelines
        description: Write copy in the Globex voice: plain, friendly, short.
        metadata: {categories: [design]}
        """,
        "Use second person, avoid jargon, keep sentences under twenty words.\n",
    )


@pytest.fixture(scope="module")
def market(tmp_path_factory: pytest.TempPathFactory) -> Market:
    root = tmp_path_factory.mktemp("market-skills")
    _skills(root)
    pilot = SkillPilot(
        home=tmp_path_factory.mktemp("market-home"), embed_provider="use-multilingual", preconditions=False
    )
    pilot.index([root])
    return Market(pilot)


def _ids(hits: list[Any]) -> list[str]:
    return [h.skill.id for h in hits]


def test_private_body_never_reaches_public_output(market: Market) -> None:
    outputs: list[Any] = []
    for query in ("recover lighting from a photo", SECRET, "image prompt"):
        outputs += [h.to_dict() for h in market.search(query, top_k=10)]
    for skill in ("lighting-recovery", "image-to-prompt", "photo-restore"):
        outputs += [h.to_dict() for h in market.related(skill, top_k=5)]
    outputs += [h.to_dict() for h in market.browse(top_k=20)]
    outputs.append(market.public("lighting-recovery").to_dict())
    installed = SkillPilot(home=market.pilot.settings.home, embed_provider="use-multilingual")
    outputs.append(find_skill("recover lighting", market=market, installed=installed))
    outputs.append(find_skill(None, market=market, installed=installed, top_k=20))
    dumped = json.dumps(outputs)
    assert "lighting-recovery" in dumped
    assert "Zanzibar" not in dumped and "quokka" not in dumped
    assert "Internal recipe" not in dumped
    # The body is not indexed for public search at all, so its words find nothing of it.
    assert "lighting-recovery" not in _ids(market.search(SECRET))
    assert market.public("lighting-recovery").private is True


def test_search_reranks_by_signals_and_explains(market: Market) -> None:
    hits = market.search("make a generation prompt from an image", top_k=3)
    assert _ids(hits)[:2] == ["prompt-from-picture", "image-to-prompt"]
    top = hits[0]
    assert top.signals["popularity"] == 1.0
    assert any(line.startswith("popularity 1.00 (20,000 installs) lifted it") for line in top.explanation)
    assert top.explanation[0].startswith("relevance ")
    assert top.score == pytest.approx(
        sum(
            weight * top.signals[name]
            for name, weight in {
                "relevance": 0.75,
                "quality": 0.08,
                "popularity": 0.1,
                "recency": 0.04,
                "trust": 0.03,
            }.items()
        ),
        abs=1e-3,
    )


def test_weights_come_from_the_catalog_file(market: Market) -> None:
    path = market.pilot.settings.home / "market.yaml"
    path.write_text(yaml.safe_dump({"weights": {"search": {"popularity": 0.0, "quality": 0.0}}}))
    try:
        by_relevance = market.search("make a generation prompt from an image", top_k=2)
        assert [h.signals["relevance"] for h in by_relevance] == sorted(
            (h.signals["relevance"] for h in by_relevance), reverse=True
        )
        assert all("popularity" not in line for h in by_relevance for line in h.explanation)
    finally:
        path.unlink()


def test_filters_exclude_ids_categories_and_tiers(market: Market) -> None:
    query = "reminder emails for unpaid invoices"
    assert _ids(market.search(query, top_k=10))[0] == "invoice-chaser"
    without = market.search(query, 10, SearchFilters(exclude_ids=("invoice-chaser",)))
    assert "invoice-chaser" not in _ids(without)
    official = market.search("reconcile a ledger", 10, SearchFilters(trust_tiers=("official",)))
    assert _ids(official) == ["ledger-reconcile-lite"]
    in_images = market.search("photo", 10, SearchFilters(categories=("images",)))
    assert in_images and all("images" in h.skill.categories for h in in_images)
    with pytest.raises(ConfigError, match="trust_tiers"):
        SearchFilters(trust_tiers=("gold",))


def test_near_duplicates_fold_into_one_result(market: Market) -> None:
    hits = market.search("reconcile the ledger with the bank statement", top_k=10)
    ids = _ids(hits)
    assert ("ledger-reconcile" in ids) != ("ledger-reconcile-pro" in ids)
    shown = hits[ids.index("ledger-reconcile" if "ledger-reconcile" in ids else "ledger-reconcile-pro")]
    assert set(shown.duplicates) <= {"ledger-reconcile", "ledger-reconcile-pro", "ledger-reconcile-lite"}
    assert shown.duplicates and any(line.startswith("folded near-duplicates") for line in shown.explanation)


def test_related_is_relevant_diverse_and_never_a_copy(market: Market) -> None:
    related = market.related("image-to-prompt", top_k=3)
    ids = _ids(related)
    assert ids[0] == "prompt-from-picture"
    assert "image-to-prompt" not in ids
    assert all(h.similarity is not None and h.similarity >= 0.55 for h in related)
    # The finance skills are neither similar enough nor in the same category: no filler.
    assert not {i for i in ids if "ledger" in i or "invoice" in i}
    copies = market.related("ledger-reconcile", top_k=3)
    assert not set(_ids(copies)) & {"ledger-reconcile", "ledger-reconcile-pro", "ledger-reconcile-lite"}
    with pytest.raises(SkillNotFoundError):
        market.related("no-such-skill")


def test_dedup_marks_forks_drifted_copies_and_keeps_namesakes_apart(market: Market) -> None:
    clusters = market.dedup()
    assert len(clusters) == 1
    cluster = clusters[0]
    assert cluster.ids == ("ledger-reconcile", "ledger-reconcile-lite", "ledger-reconcile-pro")
    assert cluster.kind == "fork"
    kinds = {(p.a, p.b): p.kind for p in cluster.pairs}
    # The lite fork shares no text with its origin: the declared relation is what joins them.
    assert kinds == {
        ("ledger-reconcile", "ledger-reconcile-lite"): "fork",
        ("ledger-reconcile", "ledger-reconcile-pro"): "drifted",
    }
    assert all(m.path.endswith(m.key) for m in cluster.members)
    assert not any("brand-guidelines" in i for c in clusters for i in c.ids)


def test_exact_copies_whatever_the_name(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    body = "Unzip the archive, then list every file with its size and checksum.\n"
    write_skill(root, "a/unzip", "name: unzip\ndescription: Unpack zip archives.", body)
    write_skill(root, "b/unpacker", "name: unpacker\ndescription: Unpack zip archives.", body)
    write_skill(root, "c/zipper", "name: zipper\ndescription: Pack folders into zip archives.", "Zip it.\n")
    pilot = SkillPilot(home=tmp_path / "home", enable_semantic=False)
    pilot.index([root])
    [cluster] = Market(pilot).dedup()
    assert (cluster.kind, cluster.ids, cluster.similarity) == ("exact", ("unpacker", "unzip"), 1.0)


def test_dedup_on_the_development_corpus(tmp_path: Path) -> None:
    """OVERLAPS.md's drifted copies are found; the three brand-guidelines stay three skills."""
    require_corpus()
    pilot = SkillPilot(home=tmp_path / "home", enable_semantic=False)
    pilot.index([BENCH / "skills"])
    pairs = {(p.a, p.b): p.kind for c in Market(pilot).dedup() for p in c.pairs}
    for expected in [
        ("anthropics-skills/mcp-builder", "composiohq-awesome-claude-skills/mcp-builder"),
        ("anthropics-skills/skill-creator", "composiohq-awesome-claude-skills/skill-creator"),
        ("anthropics-skills/slack-gif-creator", "composiohq-awesome-claude-skills/slack-gif-creator"),
        ("artifacts-builder", "web-artifacts-builder"),
    ]:
        assert pairs.get(expected) == "drifted", expected
    assert not any("brand-guidelines" in a or "brand-guidelines" in b for a, b in pairs)
    assert not any("webapp-testing" in a for a, _ in pairs)


def test_find_skill_merges_market_and_installed(market: Market, tmp_path: Path) -> None:
    home_root = tmp_path / "installed"
    write_skill(
        home_root,
        "photo-restore",
        """
        name: photo-restore
        description: Restore old, scratched or faded photographs.
        """,
        "My own copy.\n",
    )
    installed = SkillPilot(home=tmp_path / "home", enable_semantic=False)
    installed.index([home_root])
    found = find_skill("restore an old scratched photograph", market=market, installed=installed, top_k=3)
    assert found["mode"] == "search" and found["errors"] == []
    top = found["results"][0]
    assert (top["id"], top["installed"], top["sources"]) == ("photo-restore", True, ["market", "installed"])
    assert top["path"] == str(home_root / "photo-restore")
    assert "installed: +0.1" in top["explanation"]
    assert [r["id"] for r in found["results"]].count("photo-restore") == 1
    assert all("path" not in r for r in found["results"] if not r["installed"])
    filtered = find_skill(
        "restore a photo", market=market, installed=installed, filters={"exclude_ids": ["photo-restore"]}
    )
    assert "photo-restore" not in [r["id"] for r in filtered["results"]]
    listed = find_skill("", market=market, installed=installed, scope=["installed"])
    assert listed["mode"] == "list" and [r["id"] for r in listed["results"]] == ["photo-restore"]
    broken = SkillPilot(home=tmp_path / "home", store=_FailingStore(), enable_semantic=False)
    partial = find_skill("restore a photo", market=market, installed=broken)
    assert partial["errors"][0]["source"] == "installed" and partial["results"]


class _FailingStore:
    """A store whose disk is gone: every read fails as a real one would."""

    def __getattr__(self, name: str) -> Any:
        from skillpilot.errors import StoreError

        def fail(*_: Any) -> Any:
            raise StoreError("/gone/index.sqlite", "cannot read the index: disk I/O error")

        return fail


def test_catalog_file_sets_privacy_tier_and_categories(market: Market) -> None:
    path = market.pilot.settings.home / "market.yaml"
    path.write_text(
        yaml.safe_dump(
            {"skills": {"photo-restore": {"private": True, "trust_tier": "verified", "categories": ["restoration"]}}}
        )
    )
    try:
        public = market.public("photo-restore")
        assert (public.private, public.trust_tier, public.categories) == (True, "verified", ("restoration",))
        # A catalog can hide a body, never expose one the author marked private.
        path.write_text(yaml.safe_dump({"skills": {"lighting-recovery": {"private": False}}}))
        assert market.public("lighting-recovery").private is True
    finally:
        path.unlink()


def test_catalog_file_errors_name_the_key(market: Market) -> None:
    path = market.pilot.settings.home / "market.yaml"
    path.write_text(
        textwrap.dedent("""
        skills:
          photo-restore: {installs: many}
        """)
    )
    try:
        with pytest.raises(ConfigError, match=r"skills\.photo-restore\.installs"):
            market.search("photo")
    finally:
        path.unlink()


def _cli(*args: str, home: Path) -> CliOutcome:
    return run_cli(*args, home=home, SKILLPILOT_ENABLE_SEMANTIC="false")


def test_cli_market_commands(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _skills(root)
    home = tmp_path / "home"
    assert _cli("index", str(root), home=home).returncode == 0
    search = _cli("market-search", "recover the lighting of a photo", "--json", home=home)
    assert search.returncode == 0, search.stderr
    assert json.loads(search.stdout)[0]["skill"]["id"] == "lighting-recovery"
    related = _cli("related", "ledger-reconcile", "--json", home=home)
    assert related.returncode == 0, related.stderr
    shown = {h["skill"]["id"] for h in json.loads(related.stdout)}
    assert not {"ledger-reconcile-pro", "ledger-reconcile-lite"} & shown
    dedup = _cli("dedup", "--json", home=home)
    [cluster] = json.loads(dedup.stdout)["clusters"]
    assert cluster["kind"] == "fork" and len(cluster["members"]) == 3
    for output in (search.stdout, related.stdout):
        assert "Zanzibar" not in output
    missing = _cli("related", "nope", home=home)
    assert (missing.returncode, missing.stdout) == (1, "")
    assert "no skill 'nope'" in missing.stderr
    assert _cli("market-search", "x", "--trust", "gold", home=home).returncode == 2
