"""OntoMCP's ``ontoskill`` answers, field by field, for a SkillPilot catalog (for the MCP surface).

Input: the indexed catalog (``IndexedSkill`` list). OntoSkills skills (``source_kind ==
"ontoskill"``) answer with what their modules, manifests and lock say; any other skill answers
as OntoSkills answers for a workspace skill (package ``local``, qualified id ``local/<id>``).
Output: plain dicts whose keys are already in alphabetical order (OntoMCP's ``serde_json``
sorts them), and the compact texts OntoMCP puts in ``content[0].text``.

- :func:`resolve`: the skill a query names, as OntoMCP decides it (an id-looking ``q`` of at most
  64 bytes: exact qualified id, then ``package/id`` for one-segment packages, then short id or
  alias, ties broken by tier, package id, id), else None (then it is a search);
- :func:`skill_context` / :func:`context_text`: the SkillContextResult (README section 7a), with
  knowledge nodes inherited through ``oc:extends`` (transitively) marked ``inherited``;
- :func:`search_result` / :func:`search_text`: one search result and the compact text, for the
  BM25 search below and for SkillPilot's own ranking alike;
- :class:`KeywordSearch`: the BM25 search (section 7b). One document per
  skill: intents + aliases + nature. Tokens: lower-case, split on whitespace or ASCII
  punctuation, NLTK English stop words dropped, Snowball English stems (the ``bm25`` 1.0.1 crate
  OntoMCP uses). Scores: k1 = 1.2, b = 0.75, IDF = ln(1 + (N - n + 0.5) / (n + 0.5)) with that
  version's quirk that ``n`` counts occurrences, not documents; every query token occurrence
  adds ``idf * tf (k1 + 1) / (tf + k1 (1 - b + b |d| / avgdl))``. The top ``2 top_k`` are
  multiplied by the tier factor, re-sorted, cut by :func:`adaptive_cutoff` (min 0.1, gap 0.15)
  and capped at ``top_k``. Scores are float32 values, as OntoMCP reports them.

Not reproduced: ``sections`` (code blocks and tables of the skill body: the reader does not
read ``oc:hasSection``), Unicode-to-ASCII folding of the tokens, and the intent-level
``semantic`` mode.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

import numpy as np
import Stemmer

from ..catalog import trust_tier
from ..model import IndexedSkill
from . import vocab
from .reader import KnowledgeNode, OntoRecord, read_records

BM25_MIN, BM25_GAP = 0.1, 0.15
K1, B = 1.2, 0.75
MAX_ID_BYTES = 64
TEXT_RESULTS, TEXT_INTENTS = 5, 2
MAX_NODE_TEXT = 12_000
SAFETY_NOTES = (
    "Payload execution is delegated to the calling agent.",
    "The MCP server does not execute code.",
)

_ID = re.compile(r"^[A-Za-z0-9._/-]+$")
_SPLIT = re.compile(r"[\s!-/:-@\[-`{-~]+")  # Unicode whitespace or ASCII punctuation
_KIND_PRIORITY = (
    "procedure", "constraint", "design_principle", "heuristic", "anti_pattern",
    "recovery_tactic", "best_practice", "rule",
)  # fmt: skip
# NLTK's English stop words (179), the list the ``stop-words`` crate's nltk feature ships.
_STOP = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
    yourselves he him his himself she she's her hers herself it it's its itself they them their
    theirs themselves what which who whom this that that'll these those am is are was were be been
    being have has had having do does did doing a an the and but if or because as until while of at
    by for with about against between into through during before after above below to from up down
    in out on off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very s t can will just don
    don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn
    doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn
    needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't""".split()  # noqa: SIM905
)


@dataclass(frozen=True)
class OntoView:
    """How OntoMCP sees one catalog skill."""

    skill: IndexedSkill
    skill_id: str
    qualified_id: str
    package_id: str
    trust_tier: str
    intents: tuple[str, ...]
    aliases: tuple[str, ...]
    nature: str | None
    skill_type: str
    iri: str | None


class SearchResult(TypedDict):
    """One search result (README section 7b); OntoMCP always sends every key."""

    aliases: list[str]
    intents: list[str]
    matched_by: str
    qualified_id: str
    score: float
    skill_id: str
    trust_tier: str


class ContextSkill(TypedDict, total=False):
    """The ``skill`` of a SkillContextResult (README section 7a); null and empty keys left out."""

    aliases: list[str]
    contradicts: list[str]
    depends_on: list[str]
    differentia: str | None
    extends: list[str]
    generated_by: str | None
    genus: str | None
    handles_failure: list[str]
    id: str
    intents: list[str]
    nature: str
    package_id: str
    qualified_id: str
    requirements: list[dict[str, Any]]
    requires_state: list[str]
    skill_type: str
    source: str | None
    trust_tier: str
    version: str | None
    yields_state: list[str]


class SkillContext(TypedDict, total=False):
    """A SkillContextResult (README section 7a)."""

    include_inherited_knowledge: bool
    knowledge_nodes: list[dict[str, Any]]
    payload: dict[str, Any]
    skill: ContextSkill


def view(indexed: IndexedSkill, tiers: Mapping[str, str] | None = None) -> OntoView:
    """``indexed`` as OntoMCP names it; ``tiers`` are per-skill overrides (``trustTiers`` config)."""
    skill = indexed.skill
    tier = trust_tier(indexed, tiers or {})
    onto: dict[str, Any] | None = skill.metadata.get("ontoskills") if skill.source_kind == "ontoskill" else None
    if onto is not None:
        return OntoView(
            indexed, onto["skill_id"], onto["qualified_id"], onto["package_id"], tier,
            tuple(sorted(onto["intents"])), tuple(onto["aliases"]), onto.get("nature"),
            onto["skill_type"], onto["iri"],
        )  # fmt: skip
    intents = tuple(dict.fromkeys((*skill.route.triggers, *indexed.fingerprint.intent_patterns)))
    return OntoView(
        indexed, indexed.id, f"{vocab.LOCAL_PACKAGE}/{indexed.id}", vocab.LOCAL_PACKAGE, tier,
        intents, (), vocab.DEFAULT_NATURE, "declarative", None,
    )  # fmt: skip


def looks_like_id(q: str) -> bool:
    """Whether OntoMCP would try ``q`` as a skill id (at most 64 bytes of id characters)."""
    return len(q.encode("utf-8")) <= MAX_ID_BYTES and _ID.match(q) is not None


def tie_break(v: OntoView) -> tuple[int, str, str]:
    """OntoMCP's order among skills one name fits: tier, then package id, then id."""
    return (vocab.TIER_ORDER.get(v.trust_tier, len(vocab.TIER_ORDER)), v.package_id, v.skill_id)


def resolve(q: str, views: Sequence[OntoView]) -> OntoView | None:
    """The skill ``q`` names, by OntoMCP's rules (see the module docstring), or None."""
    if not looks_like_id(q):
        return None
    wanted = q.lower()
    exact = [v for v in views if v.qualified_id.lower() == wanted]
    if exact:
        return exact[0]
    package, _, short = wanted.partition("/")
    if short and "/" not in short:
        split = [v for v in views if v.package_id.lower() == package and v.skill_id.lower() == short]
        if split:
            return split[0]
    named = [v for v in views if wanted == v.skill_id.lower() or wanted in (a.lower() for a in v.aliases)]
    return min(named, key=tie_break, default=None)


def adaptive_cutoff(scores: Sequence[float], min_score: float, gap: float) -> int:
    """How many of the descending ``scores`` OntoMCP keeps (its exact rule, quirk included)."""
    if not scores or scores[0] < min_score:
        return 0
    for i in range(1, len(scores)):
        if scores[i - 1] - scores[i] > gap and scores[i] < min_score:
            return i
    return sum(1 for s in scores if s >= min_score)


class KeywordSearch:
    """OntoMCP's BM25 mode over a catalog (built once; ``search`` per query)."""

    def __init__(self, views: Sequence[OntoView]) -> None:
        self.views = list(views)
        self._stemmer = Stemmer.Stemmer("english")
        documents = [
            self.tokens(" ".join([*v.intents, *v.aliases, *([v.nature] if v.nature else [])])) for v in self.views
        ]
        lengths = [len(d) for d in documents]
        avgdl = sum(lengths) / len(lengths) if lengths and sum(lengths) else 1.0
        occurrences: Counter[str] = Counter(t for d in documents for t in d)
        n = len(documents)
        self._idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in occurrences.items()}
        self._weights: list[dict[str, float]] = []
        for document, length in zip(documents, lengths, strict=True):
            norm = K1 * (1 - B + B * length / avgdl)
            self._weights.append({t: tf * (K1 + 1) / (tf + norm) for t, tf in Counter(document).items()})

    def tokens(self, text: str) -> list[str]:
        words = [w for w in _SPLIT.split(text.lower()) if w and w not in _STOP]
        stems: list[str] = self._stemmer.stemWords(words)
        return stems

    def scores(self, q: str) -> list[tuple[int, float]]:
        """(catalog position, raw score) of every skill sharing a token with ``q``, best first."""
        query = [t for t in self.tokens(q) if t in self._idf]
        scored = []
        for position, weights in enumerate(self._weights):
            if any(t in weights for t in query):
                score = sum(self._idf[t] * weights.get(t, 0.0) for t in query)
                scored.append((position, _f32(score)))
        return sorted(scored, key=lambda p: (-p[1], p[0]))

    def search(self, q: str, top_k: int = 5) -> dict[str, Any]:
        """``{"mode": "bm25", "query": q, "results": [...]}`` exactly as OntoMCP answers."""
        ranked = []
        for position, score in self.scores(q)[: 2 * top_k]:
            factor = vocab.TIER_MULTIPLIERS.get(self.views[position].trust_tier, 1.0)
            ranked.append((position, _f32(score * factor)))
        ranked.sort(key=lambda p: (-p[1], p[0]))
        kept = ranked[: min(top_k, adaptive_cutoff([s for _, s in ranked], BM25_MIN, BM25_GAP))]
        results = [search_result(self.views[position], score, "keyword") for position, score in kept]
        return {"mode": "bm25", "query": q, "results": results}


def search_result(target: OntoView, score: float, matched_by: str) -> SearchResult:
    """One search result as OntoMCP gives it (``matched_by``: keyword, semantic or hybrid)."""
    return {
        "aliases": list(target.aliases),
        "intents": list(target.intents),
        "matched_by": matched_by,
        "qualified_id": target.qualified_id,
        "score": score,
        "skill_id": target.skill_id,
        "trust_tier": target.trust_tier,
    }


def search_text(response: Mapping[str, Any]) -> str:
    """OntoMCP's compact text for a search answer."""
    results = response["results"]
    if not results:
        return "No results found."
    lines = [f"Search mode: {response['mode']}"]
    for result in results[:TEXT_RESULTS]:
        lines.append(f"- {result['skill_id']} [{result['trust_tier']}]: {'; '.join(result['intents'][:TEXT_INTENTS])}")
    return "\n".join(lines)


def skill_context(target: OntoView, views: Sequence[OntoView]) -> SkillContext:
    """OntoMCP's SkillContextResult for ``target`` (empty and null fields left out)."""
    record = _record(target)
    by_iri = {v.iri: v for v in views if v.iri}

    def names(refs: Sequence[str]) -> list[str]:
        # A loaded target is named by its id, an unknown one by its compacted IRI.
        return [by_iri[r].skill_id if r in by_iri else r for r in refs]

    requires = target.skill.skill.requires
    stated = record.requirements if record else [
        *(("Tool", v, False) for v in requires.bins), *(("EnvVar", v, False) for v in requires.env),
        *(("OS", v, False) for v in requires.os),
    ]  # fmt: skip
    requirements = [{"optional": opt, "requirement_type": kind, "value": v} for kind, v, opt in stated]
    onto = target.skill.skill.metadata.get("ontoskills") or {}
    skill: ContextSkill = {
        "aliases": list(target.aliases),
        "contradicts": names(record.contradicts) if record else [],
        "depends_on": names(record.depends_on) if record else [],
        "differentia": record.differentia if record else None,
        "extends": names(record.extends) if record else [],
        "generated_by": record.generated_by if record else None,
        "genus": record.genus if record else None,
        "handles_failure": list(record.handles_failure) if record else [],
        "id": target.skill_id,
        "intents": sorted(target.intents),
        "nature": target.nature or vocab.DEFAULT_NATURE,
        "package_id": target.package_id,
        "qualified_id": target.qualified_id,
        "requirements": requirements,
        "requires_state": list(record.requires_state) if record else [],
        "skill_type": target.skill_type,
        "source": onto.get("source"),
        "trust_tier": target.trust_tier,
        "version": onto.get("version"),
        "yields_state": list(record.yields_state) if record else [],
    }
    context: SkillContext = {"include_inherited_knowledge": True}
    nodes = _knowledge(target, record, by_iri) if record else []
    if nodes:
        context["knowledge_nodes"] = nodes
    if record and record.payload:
        payload = {
            "available": True,
            "code": record.payload.code,
            "executor": record.payload.executor,
            "safety_notes": list(SAFETY_NOTES),
            "skill_id": target.qualified_id,
            "timeout": record.payload.timeout,
        }
        context["payload"] = _present(payload)
    context["skill"] = cast(ContextSkill, _present(skill))
    return context


def context_text(
    q: str, context: Mapping[str, Any], description: str | None = None, instructions: str | None = None
) -> str:
    """OntoMCP's compact text for a skill context; a ``description`` goes under the heading and
    ``instructions`` last (the MCP surface's additions: OntoMCP's text has neither)."""
    skill = context["skill"]
    lines = [f"## {q}"]
    if skill.get("differentia"):
        lines.append(" — ".join(p for p in (skill.get("genus"), skill["differentia"]) if p))
    if description:
        lines.append(description)
    if skill.get("intents"):
        lines.append("Intents: " + "; ".join(skill["intents"]))
    if skill.get("requirements"):
        lines.append("Requires: " + "; ".join(r["value"] for r in skill["requirements"]))
    lines.append("")
    budget = MAX_NODE_TEXT
    for node in sorted(context.get("knowledge_nodes", []), key=_node_order):
        severity = node.get("severity_level")
        flag = f" [{severity}]" if severity in ("CRITICAL", "HIGH") else ""
        where = f" ({node['applies_to_context']})" if node.get("applies_to_context") else ""
        block = [f"  {node['kind'].upper()}{where}{flag}:", f"  {node['directive_content']}"]
        if flag and node.get("rationale"):
            block.append(f"  Why: {node['rationale']}")
        for link in node.get("links", []) if flag else []:
            title = link["target_title"]
            correct = link["property"] == "correctAlternative"
            block.append(f'  → Correct: "{title}"' if correct else f"  → Applies to: {title}")
        text = "\n".join(block)
        if len(text) > budget:
            break
        budget -= len(text)
        lines.append(text)
    if instructions is not None:
        lines.extend([*([""] if lines[-1] else []), instructions])
    return "\n".join(lines).rstrip("\n")


def _record(target: OntoView) -> OntoRecord | None:
    onto = target.skill.skill.metadata.get("ontoskills")
    if target.skill.skill.source_kind != "ontoskill" or not onto:
        return None
    records = [r for r in read_records(Path(onto["module"])) if r.identifier == target.skill_id]
    return records[0] if records else None


def _knowledge(target: OntoView, record: OntoRecord, by_iri: Mapping[str, OntoView]) -> list[dict[str, Any]]:
    """Own nodes, then nodes of the skills it extends (transitively, each skill once)."""
    nodes = [_node(n, target, inherited=False) for n in record.knowledge]
    seen = {target.iri}
    pending = list(record.extends)
    while pending:
        parent = by_iri.get(pending.pop(0))
        if parent is None or parent.iri in seen:
            continue
        seen.add(parent.iri)
        parent_record = _record(parent)
        if parent_record is not None:
            nodes.extend(_node(n, parent, inherited=True) for n in parent_record.knowledge)
            pending.extend(parent_record.extends)
    return nodes


def _node(node: KnowledgeNode, source: OntoView, inherited: bool) -> dict[str, Any]:
    dimension = vocab.DIMENSION_OF.get(node.kind)
    links = [{"property": p, "target_title": title, "target_type": kind} for p, title, kind in node.links]
    return _present(
        {
            "applies_to_context": node.applies_to_context,
            "code_language": node.code_language,
            "dimension": vocab.snake_case(dimension) if dimension else None,
            "directive_content": node.directive,
            "inherited": inherited,
            "kind": vocab.snake_case(node.kind),
            "label": node.label,
            "links": links,
            "rationale": node.rationale,
            "severity_level": node.severity.upper() if node.severity else None,
            "source_qualified_id": source.qualified_id,
            "source_skill_id": source.skill_id,
            "step_order": node.step_order,
            "template_variables": node.template_variables,
        }
    )


def _node_order(node: Mapping[str, Any]) -> tuple[float, int, str]:
    step = node.get("step_order")
    kind = node["kind"]
    priority = _KIND_PRIORITY.index(kind) if kind in _KIND_PRIORITY else len(_KIND_PRIORITY)
    return (step if step is not None else math.inf, priority, node["directive_content"])


def _f32(value: float) -> float:
    """``value`` as OntoMCP's f32, printed as serde prints it (``0.87``, not ``0.8700000047683716``)."""
    return float(str(np.float32(value)))


def _present(data: Mapping[str, Any]) -> dict[str, Any]:
    """OntoMCP leaves out null and empty fields."""
    return {k: v for k, v in data.items() if v is not None and v != [] and v != ""}
