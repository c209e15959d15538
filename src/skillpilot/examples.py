"""Example requests: what users would type when a skill is the right one, kept in the home.

Authors write terse descriptions; users describe situations. An example request ("my scanned
letter is just a picture, make the text selectable") tells the router what a skill's users say.
They come from three places: an LLM that read the skill (``skillpilot enrich``), a file the user
imports (``enrich --import``), or the skill itself (an OntoSkills skill's own intents).

Input: skills (their content hash, key, name, and for an OntoSkills skill its intents) and
request lists. Output: an :class:`ExampleSet` per skill text, and per encoder the requests'
vectors, in ``examples.sqlite`` in the home.

Guarantees:
- Keyed by the skill's content hash: a skill whose text changes has no examples until new ones
  are written for its new text (the old set stays, harmless, and is used again if the text comes
  back). Every set records what made it: the model (or ``import:<file>``, or ``skill``), the
  prompt version and the date.
- Nothing here writes into a skill folder; ``write_examples_file`` writes only the file it is given.
- A set's vectors are stored with a digest of its requests: vectors of other requests (a set
  rewritten since) are never used; ``missing_vectors`` says what an encoder still has to embed.
- ``generation`` changes with every write, so a router holding a catalog knows when to rebuild it.
- Files: :func:`read_examples_file` reads the fixtures' ``{key: [requests]}`` shape and OntoSkills'
  ``intents.json`` (``{"intents": [{"intent", "skills": [short ids]}]}``; vectors ignored);
  :func:`write_examples_file` writes the first shape, so an export imports back as it was.
- A request is one message as a user types it: one longer than ``MAX_REQUEST_CHARS`` or text that
  is no valid Unicode (a lone surrogate) is never stored; a file's such requests are left out, each
  named with the reason (:func:`request_problem`), and the rest of the file is read.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .encoders import Encoder
from .errors import DocumentError, StoreError
from .limits import MAX_EXAMPLES_FILE_BYTES
from .model import IndexedSkill, Skill
from .sqlitefile import connect, set_aside_advice, transaction

ExampleSource = Literal["llm", "import", "skill"]
EXAMPLES_FILE = "examples.sqlite"
# A request is one message as a user types it; longer text is a document, not a request.
MAX_REQUEST_CHARS = 300
# What the skill's own requests (OntoSkills intents) are recorded as being made by.
OWN_MODEL = "skill"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS examples (
    content_hash TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    requests TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    made_at REAL NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('llm', 'import', 'skill'))
);
CREATE TABLE IF NOT EXISTS example_vectors (
    content_hash TEXT NOT NULL,
    encoder TEXT NOT NULL,
    digest TEXT NOT NULL,
    dim INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (content_hash, encoder)
);
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""
_COLUMNS = "content_hash, key, name, requests, model, prompt_version, made_at, source"
_EMBED_BATCH = 64


_FILE_SHAPE = 'expected {"<skill key>": ["a request", ...]} or an OntoSkills intents.json'


@dataclass(frozen=True)
class ExampleSet:
    """The example requests of one skill text, and what made them."""

    content_hash: str
    key: str
    name: str
    requests: tuple[str, ...]
    model: str
    prompt_version: str
    made_at: float
    source: ExampleSource

    @property
    def digest(self) -> str:
        """What the stored vectors of these requests are checked against."""
        return requests_digest(self.requests)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "content_hash": self.content_hash,
            "requests": list(self.requests),
            "model": self.model,
            "prompt_version": self.prompt_version,
            "made_at": self.made_at,
            "source": self.source,
        }


@dataclass(frozen=True)
class ImportReport:
    """What ``enrich --import`` stored: the file, the keys of the skills it gave requests to,
    (reference, why) for each reference that named no indexed skill, and (reference, why) for
    each request of the file left out (``request_problem``)."""

    path: str
    skills: tuple[str, ...]
    unmatched: tuple[tuple[str, str], ...] = ()
    rejected: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "skills": list(self.skills),
            "unmatched": [{"reference": r, "reason": why} for r, why in self.unmatched],
            "rejected": [{"reference": r, "reason": why} for r, why in self.rejected],
        }


@dataclass(frozen=True)
class ExamplesFile:
    """An examples file as read: skill reference -> its requests, and (reference, why) for each
    request left out."""

    requests: dict[str, tuple[str, ...]]
    rejected: tuple[tuple[str, str], ...] = ()


def printable(reference: str) -> str:
    """``reference`` as a report can show it: a lone surrogate as its escape (``\\ud800``)."""
    return reference.encode("utf-8", "backslashreplace").decode("utf-8")


def request_problem(request: str) -> str | None:
    """Why ``request`` cannot be stored as an example request (None: it can)."""
    if len(request) > MAX_REQUEST_CHARS:
        return f"longer than {MAX_REQUEST_CHARS} characters ({len(request):,})"
    try:
        request.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"not valid Unicode (a lone surrogate at character {exc.start + 1})"
    return None


def requests_digest(requests: Sequence[str]) -> str:
    return hashlib.sha256(json.dumps(list(requests), ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def own_requests(skill: Skill) -> tuple[str, ...]:
    """The requests a skill states itself: an OntoSkills skill's intents (``oc:resolvesIntent``)."""
    onto = skill.metadata.get("ontoskills") if skill.source_kind == "ontoskill" else None
    intents = onto.get("intents") if isinstance(onto, dict) else None
    if not isinstance(intents, list):
        return ()
    return tuple(dict.fromkeys(i.strip() for i in intents if isinstance(i, str) and i.strip()))


def own_example_set(skill: Skill) -> ExampleSet | None:
    """The skill's own requests as an example set (None when it states none)."""
    requests = own_requests(skill)
    if not requests:
        return None
    return ExampleSet(skill.content_hash, skill.key, skill.name, requests, OWN_MODEL, "", time.time(), "skill")


class ExampleStore:
    """Example sets and their vectors in one SQLite file (WAL: safe to share between processes)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        damaged = set_aside_advice(self.path, "`skillpilot enrich` writes the examples again")
        self._db = connect(self.path, "examples store", _SCHEMA, damaged=damaged)

    def close(self) -> None:
        self._db.close()

    def generation(self) -> int:
        row = self._db.execute("SELECT value FROM state WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    def _bump(self, db: Any) -> None:
        db.execute("INSERT INTO state VALUES ('generation', 1) ON CONFLICT(key) DO UPDATE SET value = value + 1")

    def put(self, sets: Iterable[ExampleSet]) -> int:
        """Store ``sets`` (replacing any set of the same skill text) in one transaction; how many."""
        rows = [
            (
                s.content_hash,
                s.key,
                s.name,
                json.dumps(list(s.requests), ensure_ascii=False),
                s.model,
                s.prompt_version,
                s.made_at,
                s.source,
            )
            for s in sets
        ]
        if not rows:
            return 0
        with transaction(self._db, self.path, "examples store") as db:
            db.executemany(f"INSERT OR REPLACE INTO examples ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self._bump(db)
        return len(rows)

    def remove(self, content_hashes: Iterable[str]) -> int:
        hashes = [(h,) for h in content_hashes]
        with transaction(self._db, self.path, "examples store") as db:
            before = db.total_changes
            db.executemany("DELETE FROM examples WHERE content_hash = ?", hashes)
            removed = db.total_changes - before
            db.executemany("DELETE FROM example_vectors WHERE content_hash = ?", hashes)
            self._bump(db)
        return removed

    def get(self, content_hashes: Iterable[str]) -> dict[str, ExampleSet]:
        """The stored sets of these skill texts (texts without one are left out)."""
        wanted = list(dict.fromkeys(content_hashes))
        found: dict[str, ExampleSet] = {}
        # SQLite allows 32,766 parameters per statement; 500 keeps each statement small.
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self._db.execute(f"SELECT {_COLUMNS} FROM examples WHERE content_hash IN ({marks})", chunk):
                found[row[0]] = _set_from_row(row)
        return found

    def all(self) -> list[ExampleSet]:
        return [_set_from_row(r) for r in self._db.execute(f"SELECT {_COLUMNS} FROM examples ORDER BY key")]

    def vectors(self, encoder: str, sets: Iterable[ExampleSet]) -> dict[str, np.ndarray]:
        """The stored vectors (one row per request) of ``sets`` for ``encoder``, by content hash;
        sets whose vectors are missing, or were made for other requests, are left out."""
        wanted = {s.content_hash: s for s in sets}
        found: dict[str, np.ndarray] = {}
        rows = self._db.execute(
            "SELECT content_hash, digest, dim, data FROM example_vectors WHERE encoder = ?", (encoder,)
        ).fetchall()
        for content_hash, digest, dim, data in rows:
            example = wanted.get(content_hash)
            if example is None or digest != example.digest:
                continue
            matrix = np.frombuffer(data, dtype=np.float32).reshape(-1, dim)
            if len(matrix) == len(example.requests):
                found[content_hash] = matrix
        return found

    def missing_vectors(self, encoder: str, sets: Iterable[ExampleSet]) -> list[ExampleSet]:
        """The sets ``encoder`` has no current vectors for."""
        sets = list(sets)
        have = self.vectors(encoder, sets)
        return [s for s in sets if s.content_hash not in have]

    def put_vectors(self, encoder: str, vectors: Mapping[str, tuple[str, np.ndarray]]) -> None:
        """Store, per content hash, (digest of the requests embedded, their vectors)."""
        rows = [
            (content_hash, encoder, digest, int(matrix.shape[1]), np.ascontiguousarray(matrix, np.float32).tobytes())
            for content_hash, (digest, matrix) in vectors.items()
        ]
        if not rows:
            return
        with transaction(self._db, self.path, "examples store") as db:
            db.executemany("INSERT OR REPLACE INTO example_vectors VALUES (?, ?, ?, ?, ?)", rows)
            self._bump(db)


def _set_from_row(row: Sequence[Any]) -> ExampleSet:
    content_hash, key, name, requests, model, prompt_version, made_at, source = row
    return ExampleSet(
        content_hash, key, name, tuple(json.loads(requests)), model, prompt_version, float(made_at), source
    )


Progress = Callable[[str, int, int], None]


def embed_missing(
    store: ExampleStore, sets: Sequence[ExampleSet], encoders: Sequence[Encoder], progress: Progress | None = None
) -> int:
    """Embed the requests of ``sets`` that an encoder has no current vectors for, and store them;
    how many sets were embedded (by any encoder)."""
    embedded: set[str] = set()
    for encoder in encoders:
        missing = store.missing_vectors(encoder.name, sets)
        if not missing:
            continue
        texts = [request for example in missing for request in example.requests]
        label = f"embedding example requests with {encoder.name}"
        rows = []
        for start in range(0, len(texts), _EMBED_BATCH):
            rows.append(encoder.encode_batch(texts[start : start + _EMBED_BATCH]))
            if progress:
                progress(label, min(start + _EMBED_BATCH, len(texts)), len(texts))
        matrix = np.concatenate(rows)
        vectors: dict[str, tuple[str, np.ndarray]] = {}
        offset = 0
        for example in missing:
            vectors[example.content_hash] = (example.digest, matrix[offset : offset + len(example.requests)])
            offset += len(example.requests)
        store.put_vectors(encoder.name, vectors)
        embedded.update(vectors)
    return len(embedded)


def match_references(
    references: Iterable[str], skills: Sequence[IndexedSkill]
) -> tuple[dict[str, list[IndexedSkill]], dict[str, str]]:
    """Which skills each reference of an examples file means (a key, id or name, tried in that
    order; a key two roots share means both copies), and why the others mean none."""
    by: dict[str, dict[str, list[IndexedSkill]]] = {"key": {}, "id": {}, "name": {}}
    for skill in skills:
        by["key"].setdefault(skill.key, []).append(skill)
        by["id"].setdefault(skill.id, []).append(skill)
        by["name"].setdefault(skill.name, []).append(skill)
    matched: dict[str, list[IndexedSkill]] = {}
    unmatched: dict[str, str] = {}
    for reference in references:
        found = by["key"].get(reference) or by["id"].get(reference)
        named = by["name"].get(reference, [])
        if found:
            matched[reference] = found
        elif len(named) == 1:
            matched[reference] = named
        elif named:
            unmatched[reference] = f"{len(named)} skills are named {reference!r}; use a key: " + ", ".join(
                s.key for s in named
            )
        else:
            unmatched[reference] = "no indexed skill has this key, id or name"
    return matched, unmatched


def example_sets(skills: Sequence[IndexedSkill], store: ExampleStore | None) -> dict[str, ExampleSet]:
    """Content hash -> the example set of each of the skills' texts that has one: the stored
    set, else the skill's own requests (an OntoSkills skill's intents)."""
    found = store.get(s.skill.content_hash for s in skills) if store is not None else {}
    for skill in skills:
        own = own_example_set(skill.skill)
        if own is not None and skill.skill.content_hash not in found:
            found[skill.skill.content_hash] = own
    return found


def open_examples(home: Path, *, create: bool) -> ExampleStore | None:
    """The examples store of a home; None when it has none and ``create`` is off (a router never
    creates the file just to find it empty)."""
    path = Path(home) / EXAMPLES_FILE
    if not create and not path.exists():
        return None
    return ExampleStore(path)


def read_examples_file(path: Path) -> ExamplesFile:
    """Skill reference -> requests from ``path``: the ``{key: [requests]}`` shape (a reference is
    a key, id or name) or an OntoSkills ``intents.json`` (a reference is a skill's short id).
    Blank and repeated requests are dropped, unstorable ones left out with the reason; raises
    ``DocumentError`` for a file of another shape."""
    try:
        with Path(path).open("rb") as file:
            raw = file.read(MAX_EXAMPLES_FILE_BYTES + 1)
    except OSError as exc:
        raise DocumentError(path, f"cannot read the examples file ({exc.strerror or exc})") from exc
    if len(raw) > MAX_EXAMPLES_FILE_BYTES:
        raise DocumentError(path, f"is over {MAX_EXAMPLES_FILE_BYTES >> 20} MiB; split it and import each part")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise DocumentError(
            path, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); {_FILE_SHAPE}"
        ) from None
    except ValueError as exc:
        raise DocumentError(path, f"not JSON ({exc}); {_FILE_SHAPE}") from exc
    except RecursionError:
        raise DocumentError(path, f"its JSON is nested too deeply; {_FILE_SHAPE}") from None
    if isinstance(data, dict) and isinstance(data.get("intents"), list):
        found: dict[str, list[str]] = {}
        for entry in data["intents"]:
            if not isinstance(entry, dict) or not isinstance(entry.get("intent"), str):
                continue
            for skill in entry.get("skills") or []:
                if isinstance(skill, str):
                    found.setdefault(skill, []).append(entry["intent"])
        return _checked(found)
    if not isinstance(data, dict):
        raise DocumentError(path, f"the top level is a {type(data).__name__}, not an object; {_FILE_SHAPE}")
    for ref, requests in data.items():
        if not isinstance(requests, list) or not all(isinstance(r, str) for r in requests):
            raise DocumentError(
                path, f"{ref!r} maps to {type(requests).__name__}, not a list of strings; {_FILE_SHAPE}"
            )
    return _checked(data)


def _checked(found: Mapping[str, Sequence[str]]) -> ExamplesFile:
    requests: dict[str, tuple[str, ...]] = {}
    rejected: list[tuple[str, str]] = []
    for ref, texts in found.items():
        kept = []
        for number, text in enumerate(texts, start=1):
            request = " ".join(text.split())
            problem = request_problem(request)
            if problem is None:
                kept.append(request)
            else:
                rejected.append((printable(ref), f"request {number} of {len(texts)} left out: {problem}"))
        requests[ref] = tuple(dict.fromkeys(r for r in kept if r))
    return ExamplesFile(requests, tuple(rejected))


def write_examples_file(path: Path, examples: Mapping[str, Sequence[str]]) -> None:
    """Write ``{reference: [requests]}`` to ``path`` (sorted by reference, UTF-8, atomically)."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.tmp")
    text = json.dumps({ref: list(examples[ref]) for ref in sorted(examples)}, ensure_ascii=False, indent=2) + "\n"
    try:
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(target)
    except OSError as exc:
        raise StoreError(target, f"cannot write the examples file ({exc.strerror or exc})") from exc


__all__ = [
    "EXAMPLES_FILE",
    "MAX_REQUEST_CHARS",
    "ExampleSet",
    "ExampleSource",
    "ExampleStore",
    "ExamplesFile",
    "ImportReport",
    "embed_missing",
    "example_sets",
    "match_references",
    "open_examples",
    "own_example_set",
    "own_requests",
    "printable",
    "read_examples_file",
    "request_problem",
    "requests_digest",
    "write_examples_file",
]
