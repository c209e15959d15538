"""MCP over stdio that answers every line it is sent (``skillpilot mcp``; used by ``serve.mcp``).

The SDK's stdio transport drops a line it cannot parse without a word, so a client waits forever
for the answer to a request holding a lone surrogate (``"\\ud800"``, which JSON allows and
Unicode text does not) or sees nothing for a malformed message. Here each stdin line is checked
before the SDK reads it:

- bytes that are not UTF-8 read as U+FFFD; lone surrogates in JSON strings become U+FFFD, so
  the request is answered like any other;
- a line that is not JSON gets a JSON-RPC ``Parse error`` (-32700, ``id: null``); JSON that is
  not a JSON-RPC message, or nests deeper than ``limits.MAX_JSON_DEPTH``, gets ``Invalid
  Request`` (-32600, with its ``id`` when it has one).

Output still goes only through the SDK's writer (stdout claimed by the SDK: nothing else is
written to it).
"""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
from anyio.abc import ObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, jsonrpc_message_adapter
from pydantic import ValidationError

from ..limits import MAX_JSON_DEPTH, too_deep
from ..text import clean_json


def checked(line: str) -> tuple[str | None, JSONRPCError | None]:
    """The line to hand the SDK, or the JSON-RPC error that answers it instead."""
    try:
        data = json.loads(line)
    except ValueError as exc:
        return None, JSONRPCError(
            jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message=f"Parse error: {exc}")
        )
    except RecursionError:  # deeper than the JSON parser itself goes: far past the bound
        return None, _too_deep(None)
    if too_deep(data):
        return None, _too_deep(_id_of(data))
    data = clean_json(data)
    try:
        jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError as exc:
        ident = _id_of(data)
        problem = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in problem["loc"][1:]) or "(message)"
        message = f"Invalid Request: not a JSON-RPC 2.0 message ({where}: {problem['msg']})"
        return None, JSONRPCError(jsonrpc="2.0", id=ident, error=ErrorData(code=INVALID_REQUEST, message=message))
    return json.dumps(data, ensure_ascii=False), None


def _too_deep(ident: str | int | None) -> JSONRPCError:
    message = f"Invalid Request: nested deeper than {MAX_JSON_DEPTH} levels"
    return JSONRPCError(jsonrpc="2.0", id=ident, error=ErrorData(code=INVALID_REQUEST, message=message))


def _id_of(data: Any) -> str | int | None:
    """The request id a JSON-RPC error answers, when the message has a usable one."""
    given = data.get("id") if isinstance(data, dict) else None
    return given if isinstance(given, str) or (isinstance(given, int) and not isinstance(given, bool)) else None


class CheckedLines:
    """stdin as the SDK reads it (an async iterator of text lines), each line :func:`checked`;
    the errors go out through ``replies`` once the transport has given it."""

    def __init__(self, source: BinaryIO) -> None:
        self.source = source
        self.replies: ObjectSendStream[SessionMessage] | None = None
        self.ready = anyio.Event()

    def __aiter__(self) -> CheckedLines:
        return self

    async def __anext__(self) -> str:
        while True:
            raw = await anyio.to_thread.run_sync(self.source.readline)
            if not raw:
                raise StopAsyncIteration
            text = raw.decode("utf-8", "replace")
            if not text.strip():
                continue
            line, error = checked(text)
            if line is not None:
                return line
            await self.ready.wait()
            assert self.replies is not None and error is not None
            await self.replies.send(SessionMessage(error))


async def run_stdio(server: Any) -> None:
    """Serve ``server`` (an ``MCPServer``) over stdin/stdout until stdin closes."""
    lines = CheckedLines(sys.stdin.buffer)
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.replies = write_stream
        lines.ready.set()
        lowlevel = server._lowlevel_server  # noqa: SLF001 - MCPServer.run_stdio_async does the same
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
