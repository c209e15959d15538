"""The limits every server surface enforces alike, so an HTTP route and its MCP tool accept the
same requests: body size, message length, result count."""

from __future__ import annotations

# A request body (HTTP routes, MCP over HTTP): 413 above it, before anything parses it.
MAX_BODY_BYTES = 1024 * 1024
# A message or query a server accepts: longer ones are refused (pasted logs fit; a whole repository
# does not). The router itself reads only the first text.MAX_QUERY_CHARS of what it accepts.
MAX_MESSAGE_CHARS = 32_000
MIN_TOP_K, MAX_TOP_K, DEFAULT_TOP_K = 1, 100, 5
