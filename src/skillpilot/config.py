"""Settings: resolved once, frozen, from (highest first) explicit overrides > ``SKILLPILOT_*`` env >
``$SKILLPILOT_HOME/config.yaml`` > defaults. Nothing is read at import time.

The YAML file uses the spec's section-10 layout (``router.hardRouteThreshold`` ...); env
variables use the flat field names (``SKILLPILOT_HARD_THRESHOLD=0.85``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError

DEFAULT_SKILL_DIRS = ("~/.claude/skills", "~/.openclaw/skills")
ENCODERS = ("minilm", "use-multilingual", "openai")

# config.yaml key (dotted) -> Settings field
YAML_KEYS: dict[str, str] = {
    "router.hardRouteThreshold": "hard_threshold",
    "router.softInjectThreshold": "soft_threshold",
    "router.enableSemantic": "enable_semantic",
    "router.enableKeyword": "enable_keyword",
    "router.debug": "debug",
    "router.preconditions": "preconditions",
    "embed.provider": "embed_provider",
    "embed.openaiModel": "openai_model",
    "embed.openaiBaseUrl": "openai_base_url",
    "index.skillDirs": "skill_dirs",
    "index.refreshInterval": "refresh_interval",
    "index.conflictThreshold": "conflict_threshold",
    "feedback.enabled": "feedback_enabled",
    "feedback.batchSize": "feedback_batch",
    "prefer": "prefer",
    "trustTiers": "trust_tiers",
    "platforms.cli.outputFormat": "output_format",
    "platforms.openclaw.showRoutingInfo": "show_routing_info",
    "platforms.openclaw.showConflictInfo": "show_conflict_info",
}


def default_home() -> Path:
    return Path(os.environ.get("SKILLPILOT_HOME") or "~/.skillpilot").expanduser()


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
    embed_provider: str = "minilm+use-multilingual"
    openai_model: str = "text-embedding-3-small"
    openai_base_url: str = "https://api.openai.com/v1"
    skill_dirs: tuple[str, ...] = DEFAULT_SKILL_DIRS
    refresh_interval: float = 5.0
    conflict_threshold: float = 0.85
    feedback_enabled: bool = True
    feedback_batch: int = 1
    prefer: dict[str, str] = field(default_factory=dict)
    trust_tiers: dict[str, str] = field(default_factory=dict)
    output_format: str = "human"
    show_routing_info: bool = False
    show_conflict_info: bool = True

    @property
    def index_path(self) -> Path:
        return self.home / "index.sqlite"

    @property
    def encoder_specs(self) -> tuple[str, ...]:
        return tuple(spec.strip() for spec in self.embed_provider.split("+") if spec.strip())

    @property
    def config_path(self) -> Path:
        return self.home / "config.yaml"

    def with_overrides(self, **overrides: Any) -> Settings:
        clean = {k: v for k, v in overrides.items() if v is not None}
        return _validated(replace(self, **clean), "override")


def _coerce(name: str, value: Any, source: str) -> Any:
    kind = {f.name: f.type for f in fields(Settings)}[name]
    try:
        if kind == "bool":
            if isinstance(value, str):
                low = value.strip().lower()
                if low in ("1", "true", "yes", "on"):
                    return True
                if low in ("0", "false", "no", "off"):
                    return False
                raise ValueError(value)
            if isinstance(value, bool):
                return value
            raise ValueError(value)
        if kind == "float":
            return float(value)
        if kind == "int":
            return int(value)
        if kind == "tuple[str, ...]":
            if isinstance(value, str):
                return tuple(p for p in value.split(os.pathsep) if p)
            return tuple(str(v) for v in value)
        if kind == "dict[str, str]":
            if not isinstance(value, Mapping):
                raise ValueError(value)
            return {str(k): str(v) for k, v in value.items()}
        if kind == "Path":
            return Path(str(value)).expanduser()
        return str(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(name, f"{value!r} is not a valid {kind}", source) from exc


def _validated(settings: Settings, source: str) -> Settings:
    checks = [
        ("hard_threshold", 0.0 <= settings.hard_threshold <= 1.0, "must be between 0 and 1"),
        ("soft_threshold", 0.0 <= settings.soft_threshold <= settings.hard_threshold,
         "must be between 0 and hard_threshold"),
        ("conflict_threshold", 0.0 < settings.conflict_threshold <= 1.0, "must be in (0, 1]"),
        ("feedback_batch", settings.feedback_batch >= 1, "must be >= 1"),
        ("refresh_interval", settings.refresh_interval > 0, "must be > 0 (minutes)"),
        ("embed_provider", all(spec in ENCODERS or Path(spec).expanduser().is_dir()
                                for spec in settings.encoder_specs),
         f"must be one of {', '.join(ENCODERS)} or a folder holding model.onnx + tokenizer.json "
         "(several joined by '+')"),
        ("enable_keyword", settings.enable_keyword or settings.enable_semantic,
         "cannot be off while enable_semantic is off too"),
        ("output_format", settings.output_format in ("human", "json"), "must be human or json"),
    ]
    for key, ok, why in checks:
        if not ok:
            raise ConfigError(key, f"{getattr(settings, key)!r} {why}", source)
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


def load_settings(home: Path | None = None, **overrides: Any) -> Settings:
    """Resolve settings once: overrides > env > config.yaml > defaults."""
    base = Settings(home=home or default_home())
    values: dict[str, Any] = {}
    path = base.config_path
    if path.is_file():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError("(file)", f"not valid YAML: {exc}", str(path)) from exc
        if not isinstance(data, Mapping):
            raise ConfigError("(file)", "the top level must be a mapping", str(path))
        for dotted, value in _flatten(data).items():
            if dotted not in YAML_KEYS:
                raise ConfigError(dotted, f"unknown key; allowed: {', '.join(sorted(YAML_KEYS))}", str(path))
            name = YAML_KEYS[dotted]
            values[name] = _coerce(name, value, str(path))
    for f in fields(Settings):
        env = os.environ.get(f"SKILLPILOT_{f.name.upper()}")
        if env is not None and f.name != "home":
            values[f.name] = _coerce(f.name, env, f"SKILLPILOT_{f.name.upper()}")
    for name, value in overrides.items():
        if value is not None:
            values[name] = _coerce(name, value, "command line")
    return _validated(replace(base, **values), str(path))
