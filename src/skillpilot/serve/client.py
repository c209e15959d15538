"""A minimal client of the resident service, for hooks that must answer fast (standard library only).

Input: the ``ServeInfo`` from ``serve.json`` and a message. Output: the service's ``RouteResult``,
every field of it, plan and trace included (``RouteResult.from_dict``).
Raises ``OSError`` (refused, timed out, HTTP error status: ``urllib.error.URLError`` and
``HTTPError`` are ``OSError``\\ s) or ``ValueError`` (an answer that is not a RouteResult), so a
caller can fall back to routing in-process on exactly those.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from ..model import RouteResult
from . import ServeInfo

# The service is on this machine: an HTTP(S)_PROXY from the environment must not be asked for it.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def route_via_service(info: ServeInfo, message: str, timeout: float, surface: str = "http") -> RouteResult:
    """Route through the resident service; its routing log labels the decision ``surface``."""
    request = urllib.request.Request(
        info.url.rstrip("/") + "/route",
        data=json.dumps({"message": message, "surface": surface}).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    if info.token:
        request.add_header("Authorization", f"Bearer {info.token}")
    with _opener.open(request, timeout=timeout) as response:
        return RouteResult.from_dict(json.loads(response.read()))


def get_json(info: ServeInfo, path: str, timeout: float) -> Any:
    """``GET path`` on the service, with its token; the decoded JSON answer."""
    request = urllib.request.Request(info.url.rstrip("/") + path, method="GET")
    if info.token:
        request.add_header("Authorization", f"Bearer {info.token}")
    with _opener.open(request, timeout=timeout) as response:
        return json.loads(response.read())
