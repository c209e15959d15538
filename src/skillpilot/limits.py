"""Every bound SkillPilot puts on what it is given, in one place (the README's security model
lists them). Input that goes past a bound is refused with a reason (a skipped file, a 413 or
422, an error result), never read further.

Kernel module: it imports nothing of SkillPilot, so every stage and every surface (the HTTP service, MCP,
each host's hook handler) reads the same numbers. The one exception is the hook process
(``adapters/hook_client.py``), which imports nothing of SkillPilot to start fast: its own
bound, ``SERVICE_TIMEOUT``, is declared there.

Files:
    MAX_SKILL_BYTES         a SKILL.md; larger ones are not read
    MAX_CATALOG_BYTES       a JSON tool catalog (it bundles many tools)
    MAX_MODULE_BYTES        an OntoSkills ``ontoskill.ttl`` module
    MAX_EXAMPLES_FILE_BYTES an examples file ``enrich --import`` reads

Frontmatter fields (a field past its bound makes the file one skipped file with the reason):
    MAX_NAME_CHARS          ``name`` (and a tool catalog entry's name)
    MAX_LIST_ITEMS          items of one list field (``triggers``, ``route.prefer_when``,
                            ``requires.env`` / ``bins`` / ``os`` and their metadata forms)
    MAX_LIST_CHARS          characters of one list field, all items together
    MAX_METADATA_NODES      values in ``metadata`` (YAML aliases can make a tiny file describe a
    MAX_METADATA_CHARS      huge tree: past a bound ``metadata`` is ignored with a warning,
    MAX_METADATA_DEPTH      though a ``private`` in it still counts)

Analysis (how much of an accepted text the router reads):
    MAX_QUERY_CHARS         a message, as routed (OntoSkills' 512-character cap)
    ANALYSED_CHARS          a description or body, as the fingerprint and the fast path read it
    MAX_PART_CHARS          a text sent to an encoder

Requests (HTTP routes, MCP tools and messages, hook events):
    MAX_BODY_BYTES          a request body (413 above it, before anything parses it)
    REQUEST_READ_SECONDS    seconds a client has to send one request, headers and body
    MAX_MESSAGE_CHARS       a message, query or intent (422 / an error result above it)
    MAX_ID_CHARS            a skill id, path, session or source name in a request
    MAX_REQUEST_ROOTS       roots one route may be limited to
    MAX_JSON_DEPTH          nesting of a JSON request or MCP message (:func:`too_deep`)
    MIN_TOP_K, MAX_TOP_K    results asked for

Hook events (every host's hook handler, inside the service):
    HOOK_FIELD_CHARS        each text field a host sends, by (dotted) name
    HOOK_WALK_ENTRIES       folder entries looked at per offered skill root (symlinks followed,
                            each real folder once); a larger root is not indexed from a hook
    HOOK_SETTINGS_BYTES     a host's settings or plugin file a hook handler reads (regular files only)
    TRANSCRIPT_TAIL_BYTES   the end of a transcript a ``Stop`` event names (regular files only)
    HOOK_INDEX_WAIT         seconds a prompt waits for a newly offered root to be indexed
    MAX_SESSIONS            sessions whose last routed prompt is remembered

Enrichment (``skillpilot enrich``):
    MAX_LLM_ANSWER_BYTES    an LLM API's reply to one batch (it asks for at most 8,192 tokens)

Packages (``skillpilot install`` from a registry):
    MAX_REGISTRY_FILE_BYTES one file fetched
    MAX_PACKAGE_FILES       files in one package
    MAX_PACKAGE_BYTES       all of one package's files together
    REGISTRY_READ_TIMEOUT   seconds one read may wait
    PACKAGE_SECONDS         seconds one package's whole install may take
"""

from __future__ import annotations

from typing import Any

MAX_SKILL_BYTES = 1024 * 1024
MAX_CATALOG_BYTES = 32 * 1024 * 1024
MAX_MODULE_BYTES = 8 * 1024 * 1024
# Six requests for each of 100,000 skills take about 40 MiB.
MAX_EXAMPLES_FILE_BYTES = 64 * 1024 * 1024

# Claude Code's own limit is 64; the benchmark corpus's longest name has 36 characters.
MAX_NAME_CHARS = 256
# The corpus's longest list has 12 items and 194 characters.
MAX_LIST_ITEMS = 256
MAX_LIST_CHARS = 32_000
MAX_METADATA_NODES = 10_000
MAX_METADATA_CHARS = 200_000
MAX_METADATA_DEPTH = 32

MAX_QUERY_CHARS = 512
ANALYSED_CHARS = 20_000
# Longer than any part in the benchmark corpus (1,230 characters at most), so no vector there changes.
MAX_PART_CHARS = 2000

MAX_BODY_BYTES = 1024 * 1024
# Pasted logs fit; a whole repository does not. The router reads the first MAX_QUERY_CHARS.
MAX_MESSAGE_CHARS = 32_000
# A skill id is its name or its folder path: as long as a path may be (Linux's PATH_MAX).
MAX_ID_CHARS = 4096
MAX_REQUEST_ROOTS = 64
MAX_JSON_DEPTH = 32
# A hook's whole exchange takes milliseconds; a client this slow is holding a connection open.
REQUEST_READ_SECONDS = 10.0
MIN_TOP_K, MAX_TOP_K, DEFAULT_TOP_K = 1, 100, 5

# A path as long as Linux's PATH_MAX; ids and names far longer than any host sends.
HOOK_FIELD_CHARS: dict[str, int] = {
    "hook_event_name": 64,
    "session_id": 256,
    "cwd": 4096,
    "transcript_path": 4096,
    "prompt": MAX_MESSAGE_CHARS,
    "tool_name": 256,
    # The skill a Skill tool call names, plugin prefix included (Claude Code), or activate_skill's
    # (Gemini CLI).
    "tool_input.skill": MAX_NAME_CHARS + 256,
    "tool_input.name": MAX_NAME_CHARS + 256,
    # A skill's name in older Claude Code versions, or Codex's shell command (reading a SKILL.md:
    # a command word, its options and a path).
    "tool_input.command": 4096 + 256,
}
# About 12,000 skills in the usual one-folder-per-skill layout.
HOOK_WALK_ENTRIES = 50_000
# A host's settings file or a plugin's manifest, as a hook handler reads it.
HOOK_SETTINGS_BYTES = 1024 * 1024
TRANSCRIPT_TAIL_BYTES = 1024 * 1024
# Within the hook client's 2 s: the rest is the route itself.
HOOK_INDEX_WAIT = 1.0
MAX_SESSIONS = 256

MAX_LLM_ANSWER_BYTES = 4 * 1024 * 1024
MAX_REGISTRY_FILE_BYTES = 64 * 1024 * 1024
MAX_PACKAGE_FILES = 10_000
MAX_PACKAGE_BYTES = 256 * 1024 * 1024
REGISTRY_READ_TIMEOUT = 30.0
PACKAGE_SECONDS = 300.0


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON value ``value`` nests lists and objects deeper than ``limit``: checked
    without recursion, before anything that recurses (validation, cleaning) sees it."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth >= limit:
                return True
            stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return False
