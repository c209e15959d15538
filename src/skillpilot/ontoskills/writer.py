"""Write OntoSkills modules (``ontoskill.ttl``) in the current namespace, and check them with SHACL.

Input: a :class:`~skillpilot.model.Skill` and its intents (:func:`skill_graph`), or an existing
OntoSkills module in any namespace generation (:func:`migrated_graph`). Output: an rdflib graph,
serialised by :func:`turtle` with OntoCore's prefixes (oc, dcterms, skos, prov, owl, rdf, rdfs,
xsd), and :func:`validate` against a SHACL shapes file (OntoSkills ships
``core/specs/ontoskills.shacl.ttl``; SkillPilot does not bundle it).

What a SkillPilot skill becomes (OntoCore's ``serialize_skill`` vocabulary):

- subject ``oc:skill_<slug of the qualified id>``, typed ``oc:Skill`` + ``oc:DeclarativeSkill``
  (an OntoSkills executable skill keeps its type only through :func:`migrated_graph`, which
  keeps its payload);
- ``dcterms:identifier`` = the skill's name (its short id), ``oc:hasName``, ``oc:hasDescription``;
- ``oc:resolvesIntent`` per intent, ``oc:hasAlias`` per alias (OntoSkills sources only: a
  SKILL.md has no aliases, and its ``prefer_when`` words are tie-breakers, not names);
- ``oc:nature``: the source's when it has one, else ``vocab.DEFAULT_NATURE`` ("Tool": OntoMCP
  cannot load a skill without one);
- required binaries / env vars as ``oc:hasRequirement oc:req_<8 hex>`` nodes
  (``oc:RequirementTool`` / ``oc:RequirementEnvVar``, ``oc:requirementValue``, ``oc:isOptional false``);
- related / conflicting skills (``metadata["related"]`` / ``["conflicts_with"]``) as
  ``oc:dependsOnSkill`` / ``oc:contradicts`` IRIs;
- ``oc:contentHash`` (SHA-256 of the source) and ``prov:wasDerivedFrom`` (its path).

Migration rewrites every ``oc:`` IRI of an older generation to the current namespace and types
each ``oc:impartsKnowledge`` target ``oc:KnowledgeNode`` too (older compilers typed them only by
subclass, which the current shapes reject).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import MissingExtraError, SkillParseError
from ..model import Skill
from . import vocab

if TYPE_CHECKING:
    import rdflib


def _rdflib() -> Any:
    try:
        import rdflib
    except ImportError as exc:
        raise MissingExtraError("ontoskills", "writing ontoskill.ttl", "rdflib") from exc
    return rdflib


def skill_graph(skill: Skill, intents: Sequence[str], qualified_id: str) -> rdflib.Graph:
    """The module for one SkillPilot skill (any source kind)."""
    rdflib = _rdflib()
    from rdflib import RDF, XSD, Literal, Namespace, URIRef

    oc = Namespace(vocab.CURRENT_NS)
    dcterms = Namespace(vocab.DCTERMS)
    graph = _bound(rdflib.Graph())
    onto: dict[str, Any] = skill.metadata.get("ontoskills") or {}
    subject = oc[vocab.skill_slug(qualified_id)]
    graph.add((subject, RDF.type, oc.Skill))
    graph.add((subject, RDF.type, oc.DeclarativeSkill))
    graph.add((subject, dcterms.identifier, Literal(skill.name)))
    graph.add((subject, oc.hasName, Literal(skill.name)))
    graph.add((subject, oc.hasDescription, Literal(skill.description)))
    graph.add((subject, oc.nature, Literal(onto.get("nature") or vocab.DEFAULT_NATURE)))
    for field, predicate in (("genus", URIRef(vocab.SKOS + "broader")), ("differentia", oc.differentia)):
        if onto.get(field):
            graph.add((subject, predicate, Literal(onto[field])))
    for intent in dict.fromkeys(intents):
        graph.add((subject, oc.resolvesIntent, Literal(intent)))
    for alias in onto.get("aliases") or ():
        graph.add((subject, oc.hasAlias, Literal(alias)))
    for kind, values in (("Tool", skill.requires.bins), ("EnvVar", skill.requires.env)):
        for value in values:
            node = oc["req_" + hashlib.sha256(f"{kind}:{value}".encode()).hexdigest()[:8]]
            graph.add((subject, oc.hasRequirement, node))
            graph.add((node, RDF.type, oc["Requirement" + kind]))
            graph.add((node, oc.requirementValue, Literal(value)))
            graph.add((node, oc.isOptional, Literal(False, datatype=XSD.boolean)))
    for key, predicate in (("related", oc.dependsOnSkill), ("conflicts_with", oc.contradicts)):
        for target in skill.metadata.get(key) or []:
            if isinstance(target, str):
                graph.add((subject, predicate, _skill_ref(oc, target)))
    if skill.content_hash:
        graph.add((subject, oc.contentHash, Literal(skill.content_hash.removeprefix("sha256:"))))
    graph.add((subject, URIRef(vocab.PROV + "wasDerivedFrom"), Literal(skill.path)))
    return graph


def migrated_graph(module: Path) -> rdflib.Graph:
    """An OntoSkills module of any generation, restated in the current namespace."""
    rdflib = _rdflib()
    from rdflib import RDF, URIRef

    source = rdflib.Graph()
    try:
        source.parse(module, format="turtle")
    except Exception as exc:  # rdflib's parse errors share no base class
        raise SkillParseError(module, f"is not valid Turtle: {exc}") from None
    graph = _bound(rdflib.Graph())

    def current(node: Any) -> Any:
        if isinstance(node, URIRef):
            for namespace in vocab.NAMESPACES[1:]:
                if str(node).startswith(namespace):
                    return URIRef(vocab.CURRENT_NS + str(node)[len(namespace) :])
        return node

    for s, p, o in source:
        # Old modules import the core ontology from the compiling machine (file:///Users/...).
        if p == URIRef("http://www.w3.org/2002/07/owl#imports"):
            continue
        graph.add((current(s), current(p), current(o)))
    knowledge = URIRef(vocab.CURRENT_NS + "KnowledgeNode")
    for node in set(graph.objects(None, URIRef(vocab.CURRENT_NS + "impartsKnowledge"))):
        graph.add((node, RDF.type, knowledge))
    return graph


def turtle(graph: rdflib.Graph) -> str:
    text: str = graph.serialize(format="turtle")
    return text


def validate(graph: rdflib.Graph, shapes: Path) -> tuple[bool, str]:
    """Whether ``graph`` conforms to the SHACL ``shapes`` (warnings allowed), and pyshacl's report."""
    try:
        import pyshacl
    except ImportError as exc:
        raise MissingExtraError("ontoskills", "SHACL validation", "pyshacl") from exc
    rdflib = _rdflib()
    shapes_graph = rdflib.Graph()
    try:
        shapes_graph.parse(shapes, format="turtle")
    except Exception as exc:  # rdflib's parse errors share no base class
        raise SkillParseError(shapes, f"is not a readable SHACL shapes file: {exc}") from None
    conforms, _, report = pyshacl.validate(graph, shacl_graph=shapes_graph, allow_warnings=True)
    return bool(conforms), str(report)


def _skill_ref(oc: Any, target: str) -> Any:
    """``oc:skill_x`` stays that IRI; a bare id (``docx``) becomes ``oc:skill_<id>``, as old
    OntoCore named skills."""
    local = target.removeprefix("oc:") if target.startswith("oc:") else vocab.skill_slug(target)
    return oc[local]


def _bound(graph: rdflib.Graph) -> rdflib.Graph:
    from rdflib import OWL, RDF, RDFS, XSD, Namespace

    for prefix, namespace in (
        ("oc", Namespace(vocab.CURRENT_NS)),
        ("dcterms", Namespace(vocab.DCTERMS)),
        ("skos", Namespace(vocab.SKOS)),
        ("prov", Namespace(vocab.PROV)),
        ("owl", OWL),
        ("rdf", RDF),
        ("rdfs", RDFS),
        ("xsd", XSD),
    ):
        graph.bind(prefix, namespace, replace=True)
    return graph
