"""Embeddings from an OpenAI-compatible HTTP endpoint (OpenAI, Azure proxies, Ollama, vLLM, ...).

Input: texts; ``settings.openai_base_url`` and ``settings.openai_model``; an API key from
``SKILLPILOT_OPENAI_API_KEY`` or else ``OPENAI_API_KEY`` (none: no Authorization header, for
local servers that need none).
Output: float32 ``(n, dim)``, rows L2-normalised (OpenAI's already are, other servers'
may not be).

Protocol: ``POST {base_url}/embeddings`` with ``{"model": ..., "input": [...]}``; the reply's
``data`` items are put back in input order by their ``"index"``. At most 64 inputs go in one
request. ``dim`` is learned from the first reply (reading it before any encode costs one
request).

Guarantees:
- Only the standard library (``urllib.request``) is used; every request has a timeout.
- Every HTTP, network or malformed-reply failure becomes ``EncoderError`` with a fix hint.
- An empty string is sent as one space, because the OpenAI API rejects empty inputs.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..config import Settings
from ..errors import EncoderError

__all__ = ["BATCH_SIZE", "OpenAIEncoder"]

logger = logging.getLogger(__name__)

#: Inputs per request: far below OpenAI's 2048-input cap, so one request also stays under
#: its per-request token limit for skill-sized texts.
BATCH_SIZE = 64
_KEY_ENV = ("SKILLPILOT_OPENAI_API_KEY", "OPENAI_API_KEY")
_CONFIG_HINT = "check embed.openaiBaseUrl / SKILLPILOT_OPENAI_BASE_URL and embed.openaiModel"


class OpenAIEncoder:
    """An OpenAI-compatible ``/embeddings`` endpoint behind the ``Encoder`` Protocol."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 30.0) -> None:
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._api_key = api_key
        self._timeout = timeout
        # The endpoint is part of the id: two servers may serve different weights under one
        # model name, and switching servers must not mix their vectors in one index.
        self.name: str = f"openai/{model}@{base_url.split('://', 1)[-1].rstrip('/')}"
        self._dim: int | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIEncoder:
        key = next((os.environ[k] for k in _KEY_ENV if os.environ.get(k)), None)
        return cls(settings.openai_base_url, settings.openai_model, api_key=key)

    @property
    def dim(self) -> int:
        if self._dim is None:
            # Learning the width takes a reply; encode_batch records it as it goes.
            return int(self.encode_batch(["dimension probe"]).shape[1])
        return self._dim

    def encode_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        inputs = [t if t else " " for t in texts]
        parts = [self._request(inputs[i : i + BATCH_SIZE]) for i in range(0, len(inputs), BATCH_SIZE)]
        vectors = np.concatenate(parts)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.ascontiguousarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)

    def _request(self, inputs: list[str]) -> np.ndarray:
        body = json.dumps({"model": self._model, "input": inputs}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                reply = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise EncoderError(self.name, _http_message(self._url, exc)) from exc
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            raise EncoderError(
                self.name,
                f"cannot reach {self._url} ({reason}); {_CONFIG_HINT}, or use a local encoder (embed.provider: minilm)",
            ) from exc
        except ValueError as exc:  # json.JSONDecodeError and UnicodeDecodeError
            raise EncoderError(self.name, f"{self._url} did not return JSON ({exc}); {_CONFIG_HINT}") from exc
        return self._vectors(reply, len(inputs))

    def _vectors(self, reply: Any, count: int) -> np.ndarray:
        """The reply's vectors in input order, checked for count and width."""
        try:
            items = sorted(reply["data"], key=lambda item: int(item["index"]))
            vectors = np.array([item["embedding"] for item in items], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise EncoderError(
                self.name, f"{self._url} replied without data[].index/embedding ({exc!r}); {_CONFIG_HINT}"
            ) from exc
        if vectors.ndim != 2 or vectors.shape[0] != count:
            raise EncoderError(self.name, f"{self._url} returned {len(vectors)} vectors for {count} inputs")
        if self._dim is None:
            self._dim = int(vectors.shape[1])
            logger.debug("%s: dim %d", self.name, self._dim)
        elif vectors.shape[1] != self._dim:
            raise EncoderError(self.name, f"{self._url} changed the width from {self._dim} to {vectors.shape[1]}")
        return vectors


def _http_message(url: str, exc: urllib.error.HTTPError) -> str:
    try:
        detail = json.loads(exc.read()).get("error", {}).get("message", "")
    except (ValueError, AttributeError, OSError):
        detail = ""
    if exc.code in (401, 403):
        hint = "set SKILLPILOT_OPENAI_API_KEY or OPENAI_API_KEY to a valid key"
    elif exc.code == 404:
        hint = _CONFIG_HINT
    elif exc.code == 429:
        hint = "rate limited or out of quota: wait, check your plan, or use embed.provider: minilm"
    elif exc.code >= 500:
        hint = "the server failed: retry later, or use a local encoder (embed.provider: minilm)"
    else:
        hint = _CONFIG_HINT
    return f"HTTP {exc.code} from {url}{': ' + detail if detail else ''}; {hint}"
