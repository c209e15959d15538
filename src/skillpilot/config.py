"""Settings: resolved once, frozen, from (highest first) explicit overrides > ``SKILLPILOT_*`` env >
``$SKILLPILOT_HOME/config.yaml`` > defaults. Nothing is read at import time.

The YAML file uses the spec's section-10 layout (``router.hardRouteThreshold`` ...; every key is
in ``OPTIONS``); env variables use the flat field names (``SKILLPILOT_HARD_THRESHOLD=0.85``;
lists are ``os.pathsep``-separated, mappings ``a=b,c=d``).

Guarantees: an unknown key, a value of the wrong type or outside its allowed values raises
``ConfigError`` naming the key as the user wrote it (``router.hardRouteThreshold`` in the file,
``SKILLPILOT_HARD_THRESHOLD`` in the environment) and what is allowed. ``resolve_settings`` also
says where each value came from (``skillpilot config show``).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, get_args

import yaml

from .errors import ConfigError
from .model import TRUST_TIERS
from .plugins import ENCODERS

# What the routing log keeps of a message (skillpilot.routelog).
QueryPrivacy = Literal["text", "hash", "off"]
QUERY_PRIVACY: tuple[QueryPrivacy, ...] = get_args(QueryPrivacy)

DEFAULT_SKILL_DIRS = ("~/.claude/skills", "~/.openclaw/skills")
DEFAULT_EMBED = "minilm+use-multilingual"
# The spec's name for "the offline models" (section 10); it means our local default set.
EMBED_ALIASES = {"local-onnx": DEFAULT_EMBED}
OUTPUT_FORMATS = ("human", "json")
DEFAULT_SOURCE = "default"


@dataclass(frozen=True)
class Option:
    """One config.yaml key: its dotted name, the Settings field it sets, what it means."""

    key: str
    field: str
    help: str


OPTIONS: tuple[Option, ...] = (
    Option(
        "router.hardRouteThreshold",
        "hard_threshold",
        "confidence (0-1) at or above which a skill is invoked directly",
    ),
    Option(
        "router.softInjectThreshold",
        "soft_threshold",
        "confidence (0-hardRouteThreshold) at or above which a skill is offered to the LLM",
    ),
    Option("router.enableSemantic", "enable_semantic", "match by meaning with embedding models (true/false)"),
    Option(
        "router.enableKeyword",
        "enable_keyword",
        "match trigger phrases, names and BM25 keywords (true/false)",
    ),
    Option("router.debug", "debug", "include the full routing trace in every result (true/false)"),
    Option(
        "router.preconditions",
        "preconditions",
        "lower skills whose env vars / binaries are missing on this machine (true/false)",
    ),
    Option(
        "embed.provider",
        "embed_provider",
        f"{', '.join(ENCODERS.builtins)}, local-onnx (= {DEFAULT_EMBED}), a model folder, or several joined by '+'",
    ),
    Option("embed.openaiModel", "openai_model", "embedding model when provider is openai"),
    Option("embed.openaiBaseUrl", "openai_base_url", "OpenAI-compatible API base URL when provider is openai"),
    Option("index.skillDirs", "skill_dirs", "skill folders to scan (a list)"),
    Option(
        "index.refreshInterval",
        "refresh_interval",
        "minutes between index refreshes in long-running servers (> 0)",
    ),
    Option(
        "index.store",
        "store",
        "where the index lives: empty = index.sqlite in the home, a SQLite file, or postgresql://user@host/db",
    ),
    Option(
        "index.annAbove",
        "ann_above",
        "on a PostgreSQL store, a catalog of more skills than this takes its candidates from the HNSW index "
        "instead of holding every vector (>= 0)",
    ),
    Option(
        "index.conflictThreshold",
        "conflict_threshold",
        "description similarity (0-1] from which two skills form a conflict group",
    ),
    Option("feedback.enabled", "feedback_enabled", "learn from confirm / correct / ignore feedback (true/false)"),
    Option("feedback.batchSize", "feedback_batch", "how many new signals trigger a re-fit (>= 1)"),
    Option(
        "feedback.implicit",
        "feedback_implicit",
        "learn from implicit signals (what the agent did after a route, sent by hooks) too (true/false)",
    ),
    Option(
        "enrich.with",
        "enrich_with",
        "the LLM `skillpilot enrich` writes example requests with: claude, gemini, codex, openai, anthropic",
    ),
    Option("enrich.model", "enrich_model", "the model it asks (empty: the CLI's or provider's default)"),
    Option(
        "enrich.baseUrl",
        "enrich_base_url",
        "openai / anthropic: the API base URL (empty: OpenAI's or Anthropic's; Ollama: http://localhost:11434/v1)",
    ),
    Option("enrich.command", "enrich_command", "claude / gemini / codex: the CLI's path (empty: found on PATH)"),
    Option(
        "enrich.languages",
        "enrich_languages",
        "languages to write requests in, as codes (empty: English plus those the skills are written in)",
    ),
    Option("enrich.perSkill", "enrich_per_skill", "example requests per skill (2-20)"),
    Option("enrich.batchSize", "enrich_batch", "skills per LLM request (>= 1)"),
    Option("enrich.concurrency", "enrich_concurrency", "LLM requests at once (>= 1)"),
    Option("enrich.timeoutSeconds", "enrich_timeout", "seconds one LLM request may take (> 0)"),
    Option("enrich.retries", "enrich_retries", "times a failed or unreadable LLM request is tried again (>= 0)"),
    Option(
        "enrich.tokenBudget",
        "enrich_token_budget",
        "tokens one enrich run may spend; it stops before a request would go over (0: no limit)",
    ),
    Option(
        "enrich.onIndex",
        "enrich_on_index",
        "`skillpilot index` also writes examples for new and changed skills (true/false; the watcher never does)",
    ),
    Option("log.enabled", "log_enabled", "append each route decision to log.sqlite in the home (true/false)"),
    Option(
        "log.queries",
        "log_queries",
        f"what the routing log keeps of each message: {', '.join(QUERY_PRIVACY)} (hash: SHA-256 only)",
    ),
    Option("log.maxRows", "log_max_rows", "the routing log keeps at most this many decisions (>= 1)"),
    Option("log.maxAgeDays", "log_max_age_days", "the routing log forgets decisions older than this (> 0)"),
    Option(
        "prefer",
        "prefer",
        "conflict rules, skill -> the skill to choose instead, e.g. {github: github-advanced}",
    ),
    Option(
        "trustTiers",
        "trust_tiers",
        f"per-skill trust tier ({', '.join(TRUST_TIERS)}), e.g. {{pdf: official}}",
    ),
    Option(
        "omni.timeoutMs",
        "omni_timeout_ms",
        "omni-retrieval: milliseconds for a whole `context` call, the retry included (> 0)",
    ),
    Option(
        "omni.attachmentTimeoutMs",
        "omni_attachment_timeout_ms",
        "omni-retrieval: milliseconds the attachment source may take before it is skipped (> 0)",
    ),
    Option(
        "omni.knowledgeTimeoutMs",
        "omni_knowledge_timeout_ms",
        "omni-retrieval: milliseconds the knowledge-base source may take before it is skipped (> 0)",
    ),
    Option(
        "omni.graphTimeoutMs",
        "omni_graph_timeout_ms",
        "omni-retrieval: milliseconds the graph source may take before it is skipped (> 0)",
    ),
    Option(
        "omni.retry",
        "omni_retry",
        "omni-retrieval: how many times a failed source is tried again (timed-out ones never are; >= 0)",
    ),
    Option("platforms.cli.outputFormat", "output_format", f"default CLI output: {' or '.join(OUTPUT_FORMATS)}"),
    Option(
        "platforms.openclaw.showRoutingInfo",
        "show_routing_info",
        "OpenClaw: append 'via <skill>' to replies (true/false)",
    ),
    Option(
        "platforms.openclaw.showConflictInfo",
        "show_conflict_info",
        "OpenClaw: say which conflicting skills were passed over (true/false)",
    ),
    Option(
        "platforms.claudeCode.libraryRoots",
        "claude_code_library_roots",
        "Claude Code: skill folders it does not read itself; the hook tells the model to read the routed SKILL.md",
    ),
    Option(
        "platforms.codex.libraryRoots",
        "codex_library_roots",
        "Codex CLI: skill folders it does not list itself; the hook tells the model which SKILL.md to read",
    ),
)
# config.yaml key (dotted) -> Settings field
YAML_KEYS: dict[str, str] = {o.key: o.field for o in OPTIONS}
_KEY_OF: dict[str, str] = {o.field: o.key for o in OPTIONS}


def default_home() -> Path:
    return Path(os.environ.get("SKILLPILOT_HOME") or "~/.skillpilot").expanduser()


def default_model_cache() -> Path:
    """Where models derived from shipped weights are kept (shared by every home):
    ``$SKILLPILOT_MODEL_CACHE``, else ``$XDG_CACHE_HOME/skillpilot``, else ``~/.cache/skillpilot``."""
    configured = os.environ.get("SKILLPILOT_MODEL_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "skillpilot"


def env_name(name: str) -> str:
    return f"SKILLPILOT_{name.upper()}"


@dataclass(frozen=True)
class Settings:
    home: Path = field(default_factory=default_home)
    hard_threshold: float = 0.80
    soft_threshold: float = 0.45
    enable_semantic: bool = True
    enable_keyword: bool = True
    debug: bool = False
    preconditions: bool = True
    # One encoder, or several joined by "+" (each gets its own dense retriever in the fusion).
    embed_provider: str = DEFAULT_EMBED
    openai_model: str = "text-embedding-3-small"
    openai_base_url: str = "https://api.openai.com/v1"
    skill_dirs: tuple[str, ...] = DEFAULT_SKILL_DIRS
    refresh_interval: float = 5.0
    # Empty: index.sqlite in the home; else a SQLite path or a postgresql:// URL (index.open_store).
    store: str = ""
    # Above this many skills a router on PostgreSQL asks the HNSW index for candidates instead of
    # holding every vector; below it routes equal SQLite's exactly (benchmarks/pg_scale.py).
    ann_above: int = 20_000
    # Mean cosine of two skills' descriptions over the encoders; 0.5 is calibrated for the
    # default encoders (see skillpilot.conflicts), the spec's 0.85 finds only near-copies.
    conflict_threshold: float = 0.5
    feedback_enabled: bool = True
    feedback_batch: int = 1
    feedback_implicit: bool = True
    # Example requests (skillpilot.enrich): which LLM writes them, and how a run may spend it.
    enrich_with: str = ""
    enrich_model: str = ""
    enrich_base_url: str = ""
    enrich_command: str = ""
    enrich_languages: tuple[str, ...] = ()
    enrich_per_skill: int = 6
    enrich_batch: int = 8
    enrich_concurrency: int = 2
    enrich_timeout: float = 180.0
    enrich_retries: int = 2
    enrich_token_budget: int = 300_000
    enrich_on_index: bool = False
    log_enabled: bool = True
    log_queries: str = "text"
    log_max_rows: int = 100_000
    log_max_age_days: float = 30.0
    prefer: dict[str, str] = field(default_factory=dict)
    trust_tiers: dict[str, str] = field(default_factory=dict)
    # Omni-retrieval (skillpilot.omni): the seed's 8000 ms for the whole call, retry 1; each
    # source gets most of it, so one slow source cannot use up the others' time.
    omni_timeout_ms: float = 8000.0
    omni_attachment_timeout_ms: float = 5000.0
    omni_knowledge_timeout_ms: float = 5000.0
    omni_graph_timeout_ms: float = 5000.0
    omni_retry: int = 1
    output_format: str = "human"
    show_routing_info: bool = False
    show_conflict_info: bool = True
    # Library mode: skills indexed from folders Claude Code never lists, handed over by path.
    claude_code_library_roots: tuple[str, ...] = ()
    codex_library_roots: tuple[str, ...] = ()

    @property
    def index_path(self) -> Path:
        return self.home / "index.sqlite"

    @property
    def feedback_path(self) -> Path:
        return self.home / "feedback.sqlite"

    @property
    def log_path(self) -> Path:
        return self.home / "log.sqlite"

    @property
    def omni_path(self) -> Path:
        """Where omni-retrieval keeps attachments, knowledge bases and graphs."""
        return self.home / "omni"

    @property
    def encoder_specs(self) -> tuple[str, ...]:
        return tuple(spec.strip() for spec in self.embed_provider.split("+") if spec.strip())

    @property
    def config_path(self) -> Path:
        return self.home / "config.yaml"

    def with_overrides(self, **overrides: Any) -> Settings:
        _check_override_names(overrides)
        clean = {k: v for k, v in overrides.items() if v is not None}
        return _validated(replace(self, **clean), dict.fromkeys(clean, "override"))


def _check_override_names(overrides: Mapping[str, Any]) -> None:
    """An override must name a setting: a misspelt one is an error naming the closest ones."""
    names = [f.name for f in fields(Settings)]
    for name in overrides:
        if name not in names:
            close = difflib.get_close_matches(name, names, n=3)
            hint = f"did you mean {' or '.join(close)}?" if close else f"settings are: {', '.join(sorted(names))}"
            raise ConfigError(name, f"unknown setting; {hint}", "override")


def _key_in(name: str, source: str) -> str:
    """How the user spelled setting ``name`` in ``source``."""
    if source.startswith("SKILLPILOT_"):
        return source
    if source.endswith((".yaml", ".yml")):
        return _KEY_OF.get(name, name)
    return name


def _mapping(value: Any) -> Mapping[Any, Any]:
    """A mapping from YAML, or from ``a=b,c=d`` in an environment variable."""
    if isinstance(value, str):
        pairs = [p.split("=", 1) for p in value.split(",") if p.strip()]
        if any(len(p) != 2 for p in pairs):
            raise ValueError(value)
        return {k.strip(): v.strip() for k, v in pairs}
    if not isinstance(value, Mapping):
        raise ValueError(value)
    return value


_EXPECTED = {
    "bool": "true or false",
    "float": "a number",
    "int": "a whole number",
    "tuple[str, ...]": "a list of strings",
    "dict[str, str]": "a mapping of names to names",
    "str": "a string",
    "Path": "a path",
}


def _coerce(name: str, value: Any, source: str) -> Any:
    kind = {f.name: str(f.type) for f in fields(Settings)}[name]
    try:
        if kind == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, str):
                low = value.strip().lower()
                if low in ("1", "true", "yes", "on"):
                    return True
                if low in ("0", "false", "no", "off"):
                    return False
            raise ValueError(value)
        # YAML's true/false is not a number, though Python would take it as 1/0.
        if isinstance(value, bool) and kind in ("float", "int"):
            raise ValueError(value)
        if kind == "float":
            return float(value)
        if kind == "int":
            number = float(value)
            if not number.is_integer():
                raise ValueError(value)
            return int(number)
        if kind == "tuple[str, ...]":
            if isinstance(value, str):
                return tuple(p for p in value.split(os.pathsep) if p)
            if not isinstance(value, list | tuple):
                raise ValueError(value)
            return tuple(str(v) for v in value)
        if kind == "dict[str, str]":
            mapping = _mapping(value)
            if any(not isinstance(v, str | int | float) or isinstance(v, bool) for v in mapping.values()):
                raise ValueError(value)
            return {str(k): str(v) for k, v in mapping.items()}
        if kind == "Path":
            return Path(str(value)).expanduser()
        if isinstance(value, Mapping | list):
            raise ValueError(value)
        return str(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(_key_in(name, source), f"{value!r} is not {_EXPECTED[kind]}", source) from exc


def _validated(settings: Settings, sources: Mapping[str, str]) -> Settings:
    """Check every value against what is allowed; the error names the key where it was set."""
    settings = replace(settings, embed_provider=EMBED_ALIASES.get(settings.embed_provider, settings.embed_provider))
    bad_tiers = sorted(k for k, v in settings.trust_tiers.items() if v not in TRUST_TIERS)
    self_preferring = sorted(k for k, v in settings.prefer.items() if k == v or not k or not v)
    # Plugins count too: the registry reads the installed entry points on this first lookup.
    encoders = sorted(ENCODERS.names())
    from .enrich.writers import available_writers

    writers = available_writers()
    checks = [
        ("hard_threshold", 0.0 <= settings.hard_threshold <= 1.0, "must be between 0 and 1"),
        (
            "soft_threshold",
            0.0 <= settings.soft_threshold <= settings.hard_threshold,
            "must be between 0 and hard_threshold (router.hardRouteThreshold)",
        ),
        ("conflict_threshold", 0.0 < settings.conflict_threshold <= 1.0, "must be in (0, 1]"),
        ("ann_above", settings.ann_above >= 0, "must be >= 0 (skills)"),
        ("feedback_batch", settings.feedback_batch >= 1, "must be >= 1"),
        ("log_queries", settings.log_queries in QUERY_PRIVACY, f"must be one of {', '.join(QUERY_PRIVACY)}"),
        ("log_max_rows", settings.log_max_rows >= 1, "must be >= 1"),
        ("log_max_age_days", settings.log_max_age_days > 0, "must be > 0 (days)"),
        *(
            (name, getattr(settings, name) > 0, "must be > 0 (milliseconds)")
            for name in (
                "omni_timeout_ms",
                "omni_attachment_timeout_ms",
                "omni_knowledge_timeout_ms",
                "omni_graph_timeout_ms",
            )
        ),
        ("omni_retry", settings.omni_retry >= 0, "must be >= 0"),
        (
            "enrich_with",
            not settings.enrich_with or settings.enrich_with in writers,
            f"must be one of {', '.join(writers)} (or empty)",
        ),
        ("enrich_per_skill", 2 <= settings.enrich_per_skill <= 20, "must be between 2 and 20"),
        *((name, getattr(settings, name) >= 1, "must be >= 1") for name in ("enrich_batch", "enrich_concurrency")),
        ("enrich_timeout", settings.enrich_timeout > 0, "must be > 0 (seconds)"),
        ("enrich_retries", settings.enrich_retries >= 0, "must be >= 0"),
        ("enrich_token_budget", settings.enrich_token_budget >= 0, "must be >= 0 (tokens; 0: no limit)"),
        ("refresh_interval", settings.refresh_interval > 0, "must be > 0 (minutes)"),
        (
            "embed_provider",
            bool(settings.encoder_specs)
            and all(spec in encoders or Path(spec).expanduser().is_dir() for spec in settings.encoder_specs),
            f"must be one of {', '.join(encoders)}, local-onnx, or a folder holding model.onnx + "
            "tokenizer.json (several joined by '+')",
        ),
        (
            "enable_keyword",
            settings.enable_keyword or settings.enable_semantic,
            "cannot be off while enable_semantic is off too",
        ),
        ("output_format", settings.output_format in OUTPUT_FORMATS, f"must be {' or '.join(OUTPUT_FORMATS)}"),
        (
            "trust_tiers",
            not bad_tiers,
            f"{', '.join(bad_tiers)}: the tier must be one of {', '.join(TRUST_TIERS)}",
        ),
        (
            "prefer",
            not self_preferring,
            f"{', '.join(map(repr, self_preferring))}: each rule names two different skills, "
            "e.g. {github: github-advanced}",
        ),
    ]
    for name, ok, why in checks:
        if not ok:
            source = sources.get(name, DEFAULT_SOURCE)
            raise ConfigError(_key_in(name, source), f"{getattr(settings, name)!r} {why}", source)
    return settings


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if dotted in YAML_KEYS:
            flat[dotted] = value
        elif isinstance(value, Mapping):
            flat.update(_flatten(value, f"{dotted}."))
        else:
            flat[dotted] = value
    return flat


def _yaml_problem(error: yaml.YAMLError) -> str:
    """PyYAML's error as one line that says where: "line 3, column 18: expected ',' or ']' ..."
    (its own text spans lines and quotes the file back; a hook prints errors on one line)."""

    def at(mark: Any) -> str:
        return f"line {mark.line + 1}, column {mark.column + 1}"

    mark, began = getattr(error, "problem_mark", None), getattr(error, "context_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    context = getattr(error, "context", None)
    text = f"{at(mark)}: {problem}" if mark is not None else problem
    if context:
        text += f" ({context}" + (f" that starts at {at(began)})" if began is not None else ")")
    return " ".join(text.split())


def resolve_settings(home: Path | None = None, **overrides: Any) -> tuple[Settings, dict[str, str]]:
    """Settings, and for each field set anywhere but the defaults, where it was set (the config
    file's path, the env variable's name, or ``override``)."""
    base = Settings(home=home or default_home())
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    path = base.config_path
    if path.is_file():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError("(file)", f"not valid YAML: {_yaml_problem(exc)}", str(path)) from exc
        if not isinstance(data, Mapping):
            raise ConfigError("(file)", "the top level must be a mapping", str(path))
        for dotted, value in _flatten(data).items():
            if dotted not in YAML_KEYS:
                raise ConfigError(dotted, f"unknown key; allowed: {', '.join(sorted(YAML_KEYS))}", str(path))
            name = YAML_KEYS[dotted]
            values[name] = _coerce(name, value, str(path))
            sources[name] = str(path)
    for f in fields(Settings):
        env = os.environ.get(env_name(f.name))
        if env is not None and f.name != "home":
            values[f.name] = _coerce(f.name, env, env_name(f.name))
            sources[f.name] = env_name(f.name)
    _check_override_names(overrides)
    for name, value in overrides.items():
        if value is not None:
            values[name] = _coerce(name, value, "override")
            sources[name] = "override"
    return _validated(replace(base, **values), sources), sources


def load_settings(home: Path | None = None, **overrides: Any) -> Settings:
    """Resolve settings once: overrides > env > config.yaml > defaults."""
    return resolve_settings(home, **overrides)[0]


def config_template() -> str:
    """A config.yaml holding every option at its default, each with a comment saying what it does."""
    defaults = Settings(home=Path("."))
    lines = ["# SkillPilot configuration (skillpilot config init). Env SKILLPILOT_<FIELD> overrides a key."]
    previous: list[str] | None = None
    for option in OPTIONS:
        *sections, leaf = option.key.split(".")
        if previous is None or not sections or sections[:1] != previous[:1]:
            lines.append("")
        common = 0
        while previous and common < min(len(sections), len(previous)) and sections[common] == previous[common]:
            common += 1
        lines.extend(f"{'  ' * depth}{sections[depth]}:" for depth in range(common, len(sections)))
        previous = sections
        indent = "  " * len(sections)
        value = getattr(defaults, option.field)
        rendered = yaml.safe_dump(list(value) if isinstance(value, tuple) else value, default_flow_style=True)
        lines.append(f"{indent}# {option.help} [env {env_name(option.field)}]")
        lines.append(f"{indent}{leaf}: {rendered.removesuffix(chr(10)).removesuffix('...').strip()}")
    return "\n".join(lines) + "\n"
