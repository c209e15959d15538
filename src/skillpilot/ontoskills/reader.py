"""Read OntoSkills ``ontoskill.ttl`` modules into records and :class:`~skillpilot.model.Skill` s.

Input: the path of a Turtle module (usually ``<skill>/ontoskill.ttl``) and the root it was found
under. The module may use any of the three ``oc:`` namespace generations (``vocab.NAMESPACES``):
each is read as the current one. Context that the TTL does not hold comes from around it:

- the nearest ``package.json`` (an OntoSkills manifest: it has a ``package_id``) in the module's
  folder or above it, up to the root: package id, version, trust tier, and the manifest entry of
  this skill (aliases, description);
- ``<root>/../state/registry.lock.json`` (what ``install`` writes, where OntoMCP looks for it):
  the installed package's trust tier and aliases win over the manifest's;
- ``intents.json`` beside the module: precomputed vectors (see :mod:`.intents`).

Output: :func:`read_records` gives one :class:`OntoRecord` per ``oc:Skill`` subject (everything
OntoMCP shows, knowledge nodes included); :func:`read_ontoskill` gives the skills the loader
indexes, plus warnings. A skill's ``name`` is its ``dcterms:identifier`` (the short id), its
``key`` the qualified id ``author/package/skill`` inside a package, else (a local skill, OntoSkills'
``local/<id>``) the module's folder relative to the root, because short ids are not unique.
Intents become ``route.triggers`` (an author-declared phrase the skill resolves), aliases
``route.prefer_when``; ``dependsOnSkill`` / ``extends`` become ``metadata["related"]`` and
``contradicts`` ``metadata["conflicts_with"]``; the rest sits under ``metadata["ontoskills"]``.

Guarantees: anything unreadable (not Turtle, no rdflib, no ``oc:Skill``, a skill without
``dcterms:identifier``) raises :class:`~skillpilot.errors.SkillParseError` naming the file;
``content_hash`` covers the module, its manifest entry, tier and ``intents.json``, so a change
to any of them re-indexes the skill.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import SkillParseError
from ..limits import MAX_MODULE_BYTES
from ..model import Requirements, RouteHints, Skill, TrustTier
from . import vocab

if TYPE_CHECKING:
    import rdflib

MODULE_FILE = "ontoskill.ttl"
INTENTS_FILE = "intents.json"
MANIFEST_FILE = "package.json"
LOCK_PATH = Path("state") / "registry.lock.json"
_BAD_SYNTAX = re.compile(r"Bad syntax \((.+?)\) at")
# The body is routing text (BM25 reads its start, dense its opening), not the whole document.
_BODY_DIRECTIVES = 12


@dataclass(frozen=True)
class KnowledgeNode:
    """One ``oc:impartsKnowledge`` node; ``kind`` is its most specific class's local name."""

    kind: str
    directive: str
    label: str | None = None
    rationale: str | None = None
    applies_to_context: str | None = None
    severity: str | None = None
    step_order: int | None = None
    code_language: str | None = None
    template_variables: str | None = None
    # (property local name, target title, target class local name)
    links: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class Payload:
    executor: str | None
    code: str | None
    timeout: int | None
    execution_path: str | None


@dataclass(frozen=True)
class OntoRecord:
    """One ``oc:Skill`` as its module states it (IRIs compacted to ``oc:Local``)."""

    path: str
    namespace: str
    iri: str
    identifier: str
    skill_type: str
    nature: str | None = None
    name: str | None = None
    description: str | None = None
    genus: str | None = None
    differentia: str | None = None
    category: str | None = None
    generated_by: str | None = None
    intents: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    extends: tuple[str, ...] = ()
    contradicts: tuple[str, ...] = ()
    requires_state: tuple[str, ...] = ()
    yields_state: tuple[str, ...] = ()
    handles_failure: tuple[str, ...] = ()
    # (type without the "Requirement" prefix, value, optional)
    requirements: tuple[tuple[str, str, bool], ...] = ()
    payload: Payload | None = None
    knowledge: tuple[KnowledgeNode, ...] = ()


@dataclass(frozen=True)
class PackageInfo:
    """The package a module belongs to, from its manifest (and the install lock)."""

    package_id: str
    folder: Path
    trust_tier: TrustTier
    version: str | None = None
    source: str | None = None
    # manifest ``skills`` entries keyed by their package-relative ``path``
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    # install-lock aliases keyed by skill id
    lock_aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)


def read_records(path: Path) -> list[OntoRecord]:
    """Every ``oc:Skill`` in the module at ``path``, in identifier order."""
    graph = _parse(Path(path))
    records = [
        _record(graph, subject, namespace, str(path))
        for namespace in vocab.NAMESPACES
        for subject in _skill_subjects(graph, namespace)
    ]
    if not records:
        raise SkillParseError(path, "holds no oc:Skill (in any OntoSkills namespace); nothing to index")
    return sorted(records, key=lambda r: r.identifier)


def read_ontoskill(path: Path, root: Path) -> tuple[list[Skill], tuple[str, ...]]:
    """The skills of one module found under ``root``, and warnings about them."""
    path = Path(os.path.abspath(path))
    root = Path(os.path.abspath(root))
    records = read_records(path)
    package = find_package(path, root)
    raw = path.read_bytes()
    intents_file = path.parent / INTENTS_FILE
    intents_bytes = intents_file.read_bytes() if intents_file.is_file() else b""
    folder_key = path.parent.relative_to(root).as_posix() if path.parent.is_relative_to(root) else path.parent.name
    skills: list[Skill] = []
    warnings: list[str] = []
    for record in records:
        entry = _manifest_entry(package, path, record.identifier)
        if package is not None:
            qualified = f"{package.package_id}/{record.identifier}"
            key = qualified
        else:
            qualified = f"{vocab.LOCAL_PACKAGE}/{record.identifier}"
            key = folder_key if len(records) == 1 else f"{folder_key}/{record.identifier}"
            key = key if key != "." else record.identifier
        aliases = _unique(
            [
                *record.aliases,
                *_strings(entry.get("aliases")),
                *(package.lock_aliases.get(record.identifier, ()) if package else ()),
            ]
        )
        tier: TrustTier = package.trust_tier if package else "local"
        description = (
            record.description or _string(entry.get("description")) or _genus_line(record) or "; ".join(record.intents)
        )
        if not record.intents:
            warnings.append(f"{path}: skill {record.identifier!r} declares no oc:resolvesIntent")
        onto: dict[str, Any] = {
            "skill_id": record.identifier,
            "qualified_id": qualified,
            "package_id": package.package_id if package else vocab.LOCAL_PACKAGE,
            "iri": record.iri,
            "namespace": record.namespace,
            "module": str(path),
            "skill_type": record.skill_type,
            "nature": record.nature,
            "genus": record.genus,
            "differentia": record.differentia,
            "intents": list(record.intents),
            "aliases": aliases,
            "depends_on": list(record.depends_on),
            "extends": list(record.extends),
            "contradicts": list(record.contradicts),
        }
        if package is not None and package.version:
            onto["version"] = package.version
        if package is not None and package.source:
            onto["source"] = package.source
        if intents_bytes:
            onto["intents_json"] = str(intents_file)
        context = json.dumps([qualified, tier, aliases, description], ensure_ascii=False).encode("utf-8")
        digest = hashlib.sha256(raw + b"\0" + context + b"\0" + intents_bytes).hexdigest()
        skills.append(
            Skill(
                key=key,
                name=record.identifier,
                description=description,
                body=_body(record, aliases),
                path=str(path.parent),
                root=str(root),
                source_kind="ontoskill",
                route=RouteHints(triggers=record.intents, prefer_when=tuple(aliases)),
                requires=_requirements(record),
                trust_tier=tier,
                metadata={
                    "ontoskills": onto,
                    "related": _unique([*record.depends_on, *record.extends]),
                    "conflicts_with": list(record.contradicts),
                },
                content_hash="sha256:" + digest,
            )
        )
    return skills, tuple(warnings)


def find_package(module: Path, root: Path) -> PackageInfo | None:
    """The OntoSkills package holding ``module``: the nearest manifest between it and ``root``."""
    folder = module.parent
    while True:
        manifest = _json(folder / MANIFEST_FILE)
        if isinstance(manifest, dict) and isinstance(manifest.get("package_id"), str):
            return _package(folder, manifest, root)
        if folder == root or folder.parent == folder or not folder.is_relative_to(root):
            return None
        folder = folder.parent


def _package(folder: Path, manifest: dict[str, Any], root: Path) -> PackageInfo:
    package_id = manifest["package_id"].strip()
    entries = {
        str(e["path"]): e
        for e in manifest.get("skills") or []
        if isinstance(e, dict) and isinstance(e.get("path"), str)
    }
    tier = vocab.trust_tier(manifest.get("trust_tier"))
    lock_aliases: dict[str, tuple[str, ...]] = {}
    lock = _json(root.parent / LOCK_PATH)
    installed = lock.get("packages", {}).get(package_id) if isinstance(lock, dict) else None
    if isinstance(installed, dict):
        tier = vocab.trust_tier(installed.get("trust_tier"), tier)
        for skill in installed.get("skills") or []:
            if isinstance(skill, dict) and isinstance(skill.get("skill_id"), str):
                lock_aliases[skill["skill_id"]] = tuple(_strings(skill.get("aliases")))
    return PackageInfo(
        package_id=package_id,
        folder=folder,
        trust_tier=tier,
        version=_string(manifest.get("version")),
        source=_string(manifest.get("source")),
        entries=entries,
        lock_aliases=lock_aliases,
    )


def _manifest_entry(package: PackageInfo | None, module: Path, identifier: str) -> dict[str, Any]:
    if package is None:
        return {}
    relative = module.relative_to(package.folder).as_posix()
    by_path = package.entries.get(relative)
    if by_path is not None:
        return by_path
    return next((e for e in package.entries.values() if e.get("id") == identifier), {})


def _parse(path: Path) -> rdflib.Graph:
    try:
        import rdflib
    except ImportError:
        raise SkillParseError(
            path, "reading ontoskill.ttl needs rdflib: install it with `pip install 'skillpilot[ontoskills]'`"
        ) from None
    try:
        size = os.stat(path).st_size
        if size > MAX_MODULE_BYTES:
            raise SkillParseError(path, f"is {size >> 20} MiB; modules over {MAX_MODULE_BYTES >> 20} MiB are not read")
        data = path.read_bytes()
    except OSError as exc:
        raise SkillParseError(path, f"cannot be read: {exc.strerror or exc}") from exc
    graph = rdflib.Graph()
    try:
        graph.parse(data=data, format="turtle")
    except Exception as exc:  # rdflib raises BadSyntax, ParserError, even IndexError
        # BadSyntax carries a 0-based line and buries its reason in a multi-line message.
        line = getattr(exc, "lines", None)
        text = str(exc)
        found = _BAD_SYNTAX.search(text)
        reason = found.group(1) if found else (text.strip().splitlines() or [type(exc).__name__])[0][:200]
        raise SkillParseError(
            path, f"is not valid Turtle: {reason}", line=line + 1 if isinstance(line, int) else None
        ) from None
    return graph


def _skill_subjects(graph: rdflib.Graph, namespace: str) -> list[rdflib.term.Node]:
    from rdflib import RDF, URIRef

    types = [URIRef(namespace + t) for t in ("Skill", "ExecutableSkill", "DeclarativeSkill")]
    return sorted({s for t in types for s in graph.subjects(RDF.type, t)}, key=str)


def _record(graph: rdflib.Graph, subject: rdflib.term.Node, namespace: str, path: str) -> OntoRecord:
    from rdflib import RDF, Literal, URIRef

    def oc(name: str) -> URIRef:
        return URIRef(namespace + name)

    def one(predicate: URIRef, node: rdflib.term.Node = subject) -> str | None:
        values = sorted(str(o) for o in graph.objects(node, predicate) if isinstance(o, Literal))
        return values[0] if values else None

    def many(predicate: URIRef) -> tuple[str, ...]:
        return tuple(sorted({str(o) for o in graph.objects(subject, predicate) if isinstance(o, Literal)}))

    def refs(*predicates: URIRef) -> tuple[str, ...]:
        # IRIs are compacted (oc:skill_...); old modules name targets by id in a literal.
        found = {vocab.compact(str(o)) for p in predicates for o in graph.objects(subject, p)}
        return tuple(sorted(found))

    identifier = one(URIRef(vocab.DCTERMS + "identifier"))
    if not identifier:
        raise SkillParseError(path, f"skill {vocab.compact(str(subject))} has no dcterms:identifier (its id)")
    types = {vocab.compact(str(t)) for t in graph.objects(subject, RDF.type)}
    payload_node = graph.value(subject, oc("hasPayload"))
    if "oc:ExecutableSkill" in types or payload_node is not None:
        skill_type = "executable"
    elif "oc:DeclarativeSkill" in types:
        skill_type = "declarative"
    else:
        skill_type = "unknown"
    payload = None
    if payload_node is not None:
        timeout = one(oc("timeout"), payload_node)
        payload = Payload(
            executor=one(oc("executor"), payload_node),
            code=one(oc("code"), payload_node),
            timeout=int(timeout) if timeout and timeout.lstrip("-").isdigit() else None,
            execution_path=one(oc("executionPath"), payload_node),
        )
    requirements = []
    for node in graph.objects(subject, oc("hasRequirement")):
        kinds = sorted(vocab.compact(str(t))[3:] for t in graph.objects(node, RDF.type))
        kind = next(
            (k.removeprefix("Requirement") for k in kinds if k.startswith("Requirement") and k != "Requirement"),
            "",
        )
        value = one(oc("requirementValue"), node)
        if value:
            optional = one(oc("isOptional"), node) in ("true", "1")
            requirements.append((kind or "Unknown", value, optional))
    knowledge = [
        _knowledge(graph, node, namespace) for node in sorted(graph.objects(subject, oc("impartsKnowledge")), key=str)
    ]
    return OntoRecord(
        path=path,
        namespace=namespace,
        iri=vocab.compact(str(subject)),
        identifier=identifier.strip(),
        skill_type=skill_type,
        nature=one(oc("nature")),
        name=one(oc("hasName")),
        description=one(oc("hasDescription")),
        genus=one(URIRef(vocab.SKOS + "broader")),
        differentia=one(oc("differentia")),
        category=one(oc("hasCategory")),
        generated_by=one(oc("generatedBy")),
        intents=many(oc("resolvesIntent")),
        aliases=many(oc("hasAlias")),
        depends_on=refs(oc("dependsOnSkill"), oc("dependsOn")),
        extends=refs(oc("extends")),
        contradicts=refs(oc("contradicts")),
        requires_state=refs(oc("requiresState")),
        yields_state=refs(oc("yieldsState")),
        handles_failure=refs(oc("handlesFailure")),
        requirements=tuple(sorted(requirements)),
        payload=payload,
        knowledge=tuple(k for k in knowledge if k is not None),
    )


def _knowledge(graph: rdflib.Graph, node: rdflib.term.Node, namespace: str) -> KnowledgeNode | None:
    from rdflib import RDF, RDFS, Literal, URIRef

    def value(name: str, of: rdflib.term.Node = node) -> str | None:
        found = graph.value(of, URIRef(namespace + name))
        return str(found) if isinstance(found, Literal) else None

    directive = value("directiveContent")
    if directive is None:
        return None
    kinds = sorted(vocab.compact(str(t))[3:] for t in graph.objects(node, RDF.type) if str(t).startswith(namespace))
    # A node typed "oc:AntiPattern, oc:KnowledgeNode" is an anti-pattern: drop the generic classes.
    specific = [k for k in kinds if k != "KnowledgeNode" and k not in vocab.DIMENSION_OF.values()] or kinds
    links = []
    for prop in ("correctAlternative", "appliesToStep"):
        for target in graph.objects(node, URIRef(namespace + prop)):
            title = value("sectionTitle", target) or value("stepTitle", target) or graph.value(target, RDFS.label)
            kind = next((vocab.compact(str(t))[3:] for t in graph.objects(target, RDF.type)), "")
            links.append((prop, str(title) if title is not None else vocab.compact(str(target)), kind))
    step = value("stepOrder")
    label = graph.value(node, RDFS.label)
    return KnowledgeNode(
        kind=specific[0] if specific else "KnowledgeNode",
        directive=directive,
        label=str(label) if label is not None else None,
        rationale=value("hasRationale"),
        applies_to_context=value("appliesToContext"),
        severity=value("severityLevel"),
        step_order=int(step) if step and step.isdigit() else None,
        code_language=value("codeLanguage"),
        template_variables=value("templateVariables"),
        links=tuple(sorted(links)),
    )


def _genus_line(record: OntoRecord) -> str:
    """OntoMCP's "genus — differentia" line (either part may be missing)."""
    return " — ".join(p for p in (record.genus, record.differentia) if p)


def _body(record: OntoRecord, aliases: list[str]) -> str:
    lines = [_genus_line(record)] if _genus_line(record) else []
    if record.intents:
        lines.append("Resolves: " + "; ".join(record.intents) + ".")
    if aliases:
        lines.append("Also known as: " + ", ".join(aliases) + ".")
    lines.extend(f"- {k.directive}" for k in record.knowledge[:_BODY_DIRECTIVES])
    return "\n".join(lines)


def _requirements(record: OntoRecord) -> Requirements:
    # Only required tools and env vars are checkable preconditions; APIs and knowledge are not.
    bins = tuple(v for kind, v, optional in record.requirements if kind == "Tool" and not optional)
    env = tuple(v for kind, v, optional in record.requirements if kind == "EnvVar" and not optional)
    return Requirements(env=env, bins=bins)


@lru_cache(maxsize=256)
def _json_at(path: str, mtime_ns: int, size: int) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def _json(path: Path) -> Any:
    """A small JSON file, parsed once per version (a package's manifest serves all its skills)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return _json_at(str(path), info.st_mtime_ns, info.st_size)


def _string(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _strings(value: Any) -> list[str]:
    return [v.strip() for v in value if isinstance(v, str) and v.strip()] if isinstance(value, list) else []


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))
