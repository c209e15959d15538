"""A minimal client of the resident service, for hooks that must answer fast (standard library only).

Input: the ``ServeInfo`` from ``serve.json`` and a message. Output: the service's ``RouteResult``.
Raises ``OSError`` (refused, timed out, HTTP error status: ``urllib.error.URLError`` and
``HTTPError`` are ``OSError``\\ s) or ``ValueError`` (an answer that is not a RouteResult), so a
caller can fall back to routing in-process on exactly those.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any, get_args

from ..model import Alternative, Decision, Method, RouteResult, SkillRef
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
        return route_result_from_dict(json.loads(response.read()))


def get_json(info: ServeInfo, path: str, timeout: float) -> Any:
    """``GET path`` on the service, with its token; the decoded JSON answer."""
    request = urllib.request.Request(info.url.rstrip("/") + path, method="GET")
    if info.token:
        request.add_header("Authorization", f"Bearer {info.token}")
    with _opener.open(request, timeout=timeout) as response:
        return json.loads(response.read())


def route_result_from_dict(data: Any) -> RouteResult:
    """The ``RouteResult`` that ``RouteResult.to_dict`` (and so ``POST /route``) produced, without
    its trace (hooks never need it). Raises ``ValueError`` when ``data`` is not one."""
    try:
        return _route_result(data)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"not a RouteResult: {exc!r}") from exc


def _route_result(data: Any) -> RouteResult:
    if data["decision"] not in get_args(Decision) or data["method"] not in get_args(Method):
        raise KeyError(f"decision {data['decision']!r} / method {data['method']!r}")
    skill = data["skill"]
    return RouteResult(
        query=data["query"],
        skill=SkillRef(**skill) if skill is not None else None,
        confidence=float(data["confidence"]),
        decision=data["decision"],
        method=data["method"],
        alternatives=tuple(Alternative(**a) for a in data["alternatives"]),
        conflict_resolved=bool(data["conflict_resolved"]),
        conflict_alternatives=tuple(data["conflict_alternatives"]),
        reasons=tuple(data["reasons"]),
        unmet_preconditions=tuple(data["unmet_preconditions"]),
        latency_ms=float(data["latency_ms"]),
    )
