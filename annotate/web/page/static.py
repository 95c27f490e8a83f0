"""The page's own script and styles (never another host's), and no favicon."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"


async def favicon(request: Request) -> Response:
    return Response(status_code=204)


def static_files() -> Mount:
    return Mount("/static", StaticFiles(directory=STATIC), name="static")
