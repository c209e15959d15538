"""Claude Code's ``UserPromptSubmit`` hook (``skillpilot hook claude-code``).

Input: the hook's JSON on stdin (``{"prompt", "session_id", "cwd", "hook_event_name", ...}``).
Output on stdout: for a hard or soft decision
``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "..."}}``,
whose context tells the model which skill to invoke with its Skill tool (hard) or which
skills to consider (soft); for a pass-through, nothing.

The route comes from the resident service when ``$SKILLPILOT_HOME/serve.json`` points at one
that answers within ``SERVICE_TIMEOUT`` seconds, else from a ``SkillPilot`` built in-process.

Guarantees: :func:`run_hook` never raises and writes nothing to stdout but that JSON, so the
prompt is never blocked or polluted: any error is one line on stderr and the prompt goes on
as if SkillPilot were not installed (fail open).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import TextIO

from ..config import Settings, load_settings
from ..model import RouteResult
from ..router import SkillPilot
from ..serve import read_serve_file
from ..serve.client import route_via_service
from . import action_for

log = logging.getLogger(__name__)

EVENT = "UserPromptSubmit"
# Well under Claude Code's hook timeout, and far above the service's milliseconds: a service
# that takes longer is stuck, and routing in-process is the faster way out.
SERVICE_TIMEOUT = 2.0
SKILL_TOOL = "your Skill tool"


def hook_output(payload: str, home: Path | None = None) -> str | None:
    """The JSON line to print for one hook payload, or None to print nothing. May raise."""
    data = json.loads(payload)
    prompt = data.get("prompt") if isinstance(data, dict) else None
    if not isinstance(prompt, str):
        raise ValueError(f"expected the {EVENT} JSON with a string 'prompt', got {payload[:80]!r}")
    if not prompt.strip():
        return None
    settings = load_settings(home)
    action = action_for(
        route(settings, prompt), settings.soft_threshold, SKILL_TOOL, settings.claude_code_library_roots
    )
    if action.type == "passthrough":
        return None
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": action.context}},
        ensure_ascii=False,
    )


def route(settings: Settings, prompt: str) -> RouteResult:
    """Route ``prompt`` through the resident service if one answers, else in-process."""
    info = read_serve_file(settings.home)
    if info is not None:
        try:
            return route_via_service(info, prompt, SERVICE_TIMEOUT, surface="hook")
        except (OSError, ValueError) as exc:
            log.info("the service at %s did not answer (%s); routing in-process", info.url, exc)
    pilot = SkillPilot(settings=settings, surface="hook")
    try:
        return pilot.route(prompt)
    finally:
        pilot.close()


def run_hook(stdin: TextIO, stdout: TextIO, home: Path | None = None) -> None:
    """Read the payload from ``stdin``, write the hook's answer (if any) to ``stdout``. Never raises."""
    try:
        # Whatever a library prints while routing goes to stderr: Claude Code would add any
        # text on stdout to the prompt's context.
        with contextlib.redirect_stdout(sys.stderr):
            output = hook_output(stdin.read(), home)
    except Exception as exc:
        print(f"skillpilot hook: skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
        return
    if output is not None:
        stdout.write(output + "\n")
        stdout.flush()
