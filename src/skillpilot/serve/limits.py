"""The limits every server surface enforces alike, so an HTTP route and its MCP tool accept the
same requests: body size, message length, result count."""

from __future__ import annotations

# A request body (HTTP routes, MCP over HTTP): 413 above it, before anything parses it.
MAX_BODY_BYTES = 1024 * 1024
# A message or query: longer ones are refused rather than tokenised and embedded (pasted logs
# fit; a whole repository does not).
MAX_QUERY_CHARS = 32_000
MIN_TOP_K, MAX_TOP_K, DEFAULT_TOP_K = 1, 100, 5
