"""Every error SkillPilot raises on purpose.

    SkillPilotError                  base: catch this to catch them all
    ├── SkillParseError(path, line)  a SKILL.md or tool catalog that cannot be read as a skill
    ├── SkillNotFoundError(ref)      a skill id / key that is not in the index
    ├── FeedbackNotFoundError(id)    a feedback signal id that the feedback store does not hold
    ├── StoreError(path, problem)    a store file: the disk is full, it is damaged, locked or read-only
    ├── EncoderError(encoder)        an embedding model that cannot be loaded or run
    ├── ConfigError(key)             a config value that is missing or not allowed
    ├── FeedbackError                feedback that lacks what it needs (also a ValueError)
    ├── BenchError                   a benchmark suite, dataset or method that cannot be used
    ├── MissingExtraError(extra)     an optional dependency that is not installed
    ├── RegistryError(source)        a skill registry or package that cannot be read, trusted or
    │                                installed (OntoSkills registries)
    ├── DocumentError(path)          a document (attachment, knowledge-base file, triples file)
    │                                that cannot be read
    ├── SourceUnavailableError(source)  an omni-retrieval source with nothing to search yet
    └── ServiceError(home)           the resident service of a home that cannot be started,
                                     reached or stopped (or already runs)

Messages say what went wrong *and* what to do about it; a surface prints ``str(error)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal


class SkillPilotError(Exception):
    """Base class of every error SkillPilot raises on purpose."""


class SkillParseError(SkillPilotError):
    """A skill file that cannot be turned into a skill; ``path`` (and ``line`` when known) say where."""

    def __init__(self, path: str | Path, reason: str, line: int | None = None) -> None:
        self.path = str(path)
        self.reason = reason
        self.line = line
        where = f"line {line} of {self.path}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


class SkillNotFoundError(SkillPilotError):
    """A skill id or key that the index does not hold."""

    def __init__(self, ref: str, suggestions: tuple[str, ...] = ()) -> None:
        self.ref = ref
        self.suggestions = suggestions
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"no skill {ref!r} in the index.{hint} Run `skillpilot search {ref!r}` to find its id.")


class FeedbackNotFoundError(SkillPilotError):
    """A feedback signal id that the feedback store does not hold (never recorded, or undone)."""

    def __init__(self, signal_id: int, last_id: int) -> None:
        self.signal_id = signal_id
        super().__init__(
            f"no feedback signal #{signal_id} (the newest is #{last_id}; it may have been undone already)."
            " Run `skillpilot feedback list` to see the ids."
        )


StoreProblem = Literal["full", "locked", "damaged", "read-only", "error"]


class StoreError(SkillPilotError):
    """A store file (the index, feedback, the routing log) that cannot be opened, read or
    written; ``problem`` says why: the disk is ``full``, the file is ``damaged``, ``locked`` by
    another writer, ``read-only``, or another ``error``. The message says the safe fix."""

    def __init__(self, path: str | Path, reason: str, problem: StoreProblem = "error") -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {reason}")


class EncoderError(SkillPilotError):
    """An embedding model that cannot be loaded or run."""

    def __init__(self, encoder: str, reason: str) -> None:
        self.encoder = encoder
        super().__init__(f"encoder {encoder!r}: {reason}")


class ConfigError(SkillPilotError):
    """A configuration value that is not allowed; ``key`` is the dotted config key."""

    def __init__(self, key: str, reason: str, source: str | None = None) -> None:
        self.key = key
        self.source = source
        where = f" (in {source})" if source else ""
        super().__init__(f"config {key!r}{where}: {reason}")


class FeedbackError(SkillPilotError, ValueError):
    """A feedback signal that lacks what it needs (its kind, message or skills); the message
    says which argument to give."""


class BenchError(SkillPilotError):
    """A benchmark suite, dataset or method that cannot be used; the message says which and why."""


class MissingExtraError(SkillPilotError):
    """An optional dependency is needed for this feature."""

    def __init__(self, extra: str, feature: str, module: str) -> None:
        self.extra = extra
        super().__init__(
            f"{feature} needs the Python package {module!r}: install it with `pip install 'skillpilot[{extra}]'`"
        )


class DocumentError(SkillPilotError):
    """A document that cannot be read or parsed; ``path`` says which."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class SourceUnavailableError(SkillPilotError):
    """An omni-retrieval source that has nothing to search (no attachments, no knowledge base, an
    empty graph space): a configuration gap, not a failure, so it is reported and never retried."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


class RegistryError(SkillPilotError):
    """A registry, package or installed package that cannot be read, trusted or changed;
    ``source`` names the registry, URL, file or package."""

    def __init__(self, source: str | Path, reason: str) -> None:
        self.source = str(source)
        self.reason = reason
        super().__init__(f"{self.source}: {reason}")


class ServiceError(SkillPilotError):
    """The resident service of ``home`` cannot be started, reached or stopped, or already runs."""

    def __init__(self, home: str | Path, reason: str) -> None:
        self.home = str(home)
        self.reason = reason
        super().__init__(f"service for {self.home}: {reason}")
