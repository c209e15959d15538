"""``/docs`` with no network: Swagger UI 5 (it reads FastAPI's OpenAPI 3.1) from the assets the
``fastapi-offline`` wheel ships (a ``[server]`` dependency; only its files are used), served by
the service itself under ``/docs/assets``.

FastAPI's own ``/docs`` loads Swagger UI from a CDN and renders a blank page offline; ``/redoc``
is not served.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from ..errors import MissingExtraError

try:
    import fastapi_offline
except ImportError as exc:
    raise MissingExtraError("server", "`skillpilot serve`", "fastapi-offline") from exc

ASSETS = "/docs/assets"


def add_docs(app: FastAPI) -> None:
    """Serve ``/docs`` for ``app`` (created with ``docs_url=None, redoc_url=None``)."""
    app.mount(ASSETS, StaticFiles(directory=Path(fastapi_offline.__file__).parent / "static"), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png",
        )
