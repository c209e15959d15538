"""LangChain: ``SkillPilotTool``, a ``langchain_core`` tool named ``skill_router`` (the spec's 6.3).

    from skillpilot import SkillPilot
    from skillpilot.adapters.langchain import SkillPilotTool

    tool = SkillPilotTool(pilot=SkillPilot())
    tool.invoke({"query": "commit my changes"})   # -> "SkillPilot routed this prompt to ..."

Input: a user query. Output (``content_and_artifact``): the text of the shared ``AdapterAction``
for the model ("No matching skill found" on a pass-through) and, as the artifact, the whole
``RouteResult`` as a dict for the program. Arguments that are not ``{"query": "<text>"}``
(``{}``, ``{"query": 5}``) come back as an error tool message saying what to send, for the model
to call again, instead of raising pydantic's error into the agent loop. Needs the
``[langchain]`` extra.
"""

from __future__ import annotations

import threading
from typing import Any, Literal

from ..errors import MissingExtraError

try:
    from langchain_core.tools import BaseTool
    from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError
except ImportError as exc:
    raise MissingExtraError("langchain", "SkillPilotTool", exc.name or "langchain_core") from exc

from ..router import SkillPilot
from . import action_for

__all__ = ["NO_MATCH", "SkillPilotTool"]

NO_MATCH = "No matching skill found"


class _Query(BaseModel):
    query: str = Field(description="The user's request, as they wrote it.")


def _invalid_arguments(error: Exception) -> str:
    """What the model reads when its arguments do not validate: what is wrong, and what to send."""
    problems = error.errors() if isinstance(error, ValidationError) else []
    found = "; ".join(f"{'.'.join(map(str, p['loc'])) or 'arguments'}: {p['msg']}" for p in problems) or str(error)
    return f'skill_router takes {{"query": "<the user\'s request as text>"}} ({found}); call it again with that.'


class SkillPilotTool(BaseTool):
    """Routes user intent to the most appropriate installed skill."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "skill_router"
    description: str = (
        "Routes user intent to the most appropriate installed skill. Call it with the user's request "
        "before choosing a skill yourself; it names the skill to use, or says that none fits."
    )
    args_schema: type[BaseModel] = _Query
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_validation_error: Any = _invalid_arguments
    pilot: SkillPilot = Field(default_factory=SkillPilot, exclude=True)
    # LangChain runs async and batched tool calls in worker threads; the router is not thread-safe.
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def _run(self, query: str, **_: Any) -> tuple[str, dict[str, Any]]:
        with self._lock:
            result = self.pilot.route(query)
        action = action_for(result)
        return (action.context if action.type != "passthrough" else NO_MATCH), result.to_dict()
