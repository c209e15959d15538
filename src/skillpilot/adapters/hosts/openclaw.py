"""OpenClaw as a host: its plugin (``adapters/openclaw``, JavaScript) runs inside OpenClaw and asks
the service for the shared adapter action (``POST /action``) on its ``before_prompt_build`` event,
so it sends no hook JSON and ``setup`` writes no file: OpenClaw installs the plugin itself
(``openclaw plugins install``, see docs/hosts/openclaw.md). ``skillpilot doctor openclaw`` checks that
OpenClaw's config (``~/.openclaw/openclaw.json``) has the plugin enabled and loaded.

The skills OpenClaw offers are the index's own roots (its plugin routes over every indexed skill);
OpenClaw reads the skill to use from the context, so the wording names it with its path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...config import Settings, default_home
from ...errors import ConfigError
from ...model import IndexedSkill
from . import Check, HookEvent, HookSpec, SkillRoot, Wording, json_object, listed_name

PLUGIN_ID = "skillpilot"


def openclaw_config() -> Path:
    """OpenClaw's config file: ``$OPENCLAW_CONFIG_PATH`` or ``~/.openclaw/openclaw.json``."""
    return Path(os.environ.get("OPENCLAW_CONFIG_PATH") or "~/.openclaw/openclaw.json").expanduser()


def _plugin_entry() -> dict[str, Any]:
    """SkillPilot's entry in OpenClaw's ``plugins.entries`` ({} when there is none)."""
    plugins = json_object(openclaw_config()).get("plugins")
    entries = plugins.get("entries") if isinstance(plugins, dict) else None
    entry = entries.get(PLUGIN_ID) if isinstance(entries, dict) else None
    return entry if isinstance(entry, dict) else {}


class PluginCheck:
    """``doctor openclaw``: the plugin is installed the way the README's commands leave it."""

    def install(self, home: Path, project: Path | None, library_roots: Sequence[str] = ()) -> dict[str, Any]:
        raise ConfigError(
            "setup",
            "OpenClaw installs the plugin itself: `openclaw plugins install --link adapters/openclaw` "
            "(docs/hosts/openclaw.md)",
        )

    def uninstall(self, project: Path | None) -> dict[str, Any]:
        raise ConfigError("setup", "OpenClaw removes the plugin itself: `openclaw plugins uninstall skillpilot`")

    def served_homes(self, project: Path | None) -> set[str]:
        # As the plugin finds its home: its config's `home`, else $SKILLPILOT_HOME, else ~/.skillpilot.
        entry = _plugin_entry()
        if entry.get("enabled") is not True:
            return set()
        config = entry.get("config")
        home = config.get("home") if isinstance(config, dict) else None
        return {str(Path(home if isinstance(home, str) else default_home()).expanduser().absolute())}

    def checks(self, project: Path | None, library_roots: Sequence[str] = ()) -> list[Check]:
        path = openclaw_config()
        enabled = _plugin_entry().get("enabled") is True
        text = (
            f"the {PLUGIN_ID} plugin is enabled in {path}"
            if enabled
            else f"the {PLUGIN_ID} plugin is not enabled in {path}: install it with `openclaw plugins install`"
        )
        return [Check(enabled, text, {"path": str(path)})]


class OpenClaw:
    """The OpenClaw host (see the module docstring)."""

    name = "openclaw"
    title = "OpenClaw"
    hooks: tuple[HookSpec, ...] = ()
    wording = Wording()
    setup = PluginCheck()

    def read(self, payload: Mapping[str, Any]) -> HookEvent:
        # The plugin calls /action, not /hook/openclaw: no hook event means anything here.
        return HookEvent("ignored")

    def skill_roots(self, cwd: Path | None) -> list[SkillRoot]:
        return []

    def skill_name(self, skill: IndexedSkill, root: SkillRoot) -> str | None:
        return listed_name(skill, root)

    def prompt_output(self, context: str) -> dict[str, Any]:
        return {"prependContext": context}

    def library_roots(self, settings: Settings) -> tuple[str, ...]:
        return ()


HOST = OpenClaw()
