"""The arena's web layer: the JSON API under ``/api/v1/`` and the pages, as one aiohttp application.

:func:`make_app` composes :mod:`tournaments.arena.api` (JSON) and
:mod:`tournaments.arena.pages` (HTML) over one :class:`~tournaments.arena.service.Arena`
and what both halves share (:mod:`tournaments.arena.serving`: who is asking, each
refusal's status, the board, the tables in play); ``nap arena serve`` runs it on the
arena's loop, beside the ladder. What is here:

- **how a refusal is answered**: as ``{"error": "one line"}`` under ``/api/`` and as a
  small page elsewhere (a page that needs a token sends the visitor to the login form).
  A bug is a 500 whose traceback goes to the log, not to the visitor.
- **what every answer carries** (:data:`tournaments.web.server.HEADERS`): no caching, no
  framing, nothing loaded from elsewhere, no referrer. Every body is bounded: requests
  by ``body_bytes``, except an upload, which the API reads in a stream it stops at the
  arena's pack limit.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Final

import structlog
from aiohttp import web

from tournaments.arena.api import Api
from tournaments.arena.pages import Pages
from tournaments.arena.serving import Board, Credentials, LiveTables, status_of
from tournaments.errors import ArenaError, StoreError
from tournaments.web.server import HEADERS

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from tournaments.arena.service import Arena

    Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

__all__ = ["BODY_BYTES", "make_app"]

BODY_BYTES: Final = 16 << 10
"""The largest request body the application reads whole (a JSON request, the login form)."""
_log = structlog.get_logger("nap.arena.web")


def make_app(arena: Arena, *, body_bytes: int = BODY_BYTES, heartbeat_s: float = 15.0) -> web.Application:
    """The arena's application: the API under ``/api/v1/``, the pages, their static files.

    ``body_bytes`` bounds every request body read whole (an upload is bounded by the
    arena's pack limit instead); ``heartbeat_s`` is how often an open event stream is sent
    a comment, so that proxies keep it open.
    """
    credentials = Credentials(arena)
    board = Board(arena)
    live = LiveTables(arena)
    api = Api(arena, credentials=credentials, board=board, live=live, heartbeat_s=heartbeat_s)
    pages = Pages(arena, credentials=credentials, board=board, live=live)

    refuse = partial(_refuse, pages)

    @web.middleware
    async def answer(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if exc.status < 400:  # a redirect
                raise
            return refuse(request, exc)
        except Exception as exc:  # noqa: BLE001 - every failure is answered: a refusal, or a 500 logged
            return refuse(request, exc)

    app = web.Application(middlewares=[answer], client_max_size=body_bytes)
    app.on_response_prepare.append(_headers)
    app.add_routes(api.routes(refuse=refuse))
    app.add_routes(pages.routes())
    app.on_startup.append(api.start)
    app.on_shutdown.append(api.stop)
    return app


def _refuse(pages: Pages, request: web.Request, exc: Exception) -> web.StreamResponse:
    """The answer to a request that failed with ``exc``: its refusal, or a 500 for a bug (logged)."""
    if isinstance(exc, web.HTTPException):  # aiohttp's own: no such route, a body too large...
        status = exc.status
        message = exc.text if status == 413 and exc.text else (exc.reason or "refused").lower()
    elif isinstance(exc, ArenaError) and (kind := status_of(exc)) is not None:
        status, message = kind, str(exc)
        if status == 401 and not _is_api(request):
            return pages.to_login(request)
    elif isinstance(exc, StoreError):  # the database cannot answer now (a full disk, say)
        _log.error("store error", path=request.path, error=str(exc))
        status, message = 503, "the arena cannot answer this now: try again later"
    else:
        _log.error("web handler failed", path=request.path, exc_info=exc)
        status, message = 500, "the arena failed to answer this (its log says why)"
    if _is_api(request):
        return web.json_response({"error": message}, status=status)
    return pages.refusal(request, status, message)


def _is_api(request: web.Request) -> bool:
    return request.path.startswith("/api/")


async def _headers(request: web.Request, response: web.StreamResponse) -> None:
    """Add :data:`HEADERS` to every answer (a page that inlines a script sets its own policy first)."""
    del request
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
