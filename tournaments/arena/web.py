"""The arena's web layer: the JSON API under ``/api/v1/`` and the pages, as one aiohttp application.

:func:`make_app` composes :mod:`tournaments.arena.api` (JSON) and
:mod:`tournaments.arena.pages` (HTML) over one :class:`~tournaments.arena.service.Arena`;
``nap arena serve`` runs it on the arena's loop, beside the ladder. What is here is what
both halves share:

- **who is asking** (:class:`Credentials`): the ``Authorization: Bearer`` header, checked
  wherever it is given (a wrong or revoked token is a 401, never a visitor); else, for a
  GET, the ``nap_arena`` cookie the login form sets (HttpOnly, SameSite=Strict). A POST
  counts the header only, so no other site can make a browser change anything here (the
  login and logout forms are checked to come from this site instead).
- **what a refusal is** (:data:`STATUS`, in one place): each kind of
  :mod:`tournaments.arena.errors` has its HTTP status, answered as ``{"error": "one line"}``
  under ``/api/`` and as a small page elsewhere (a page that needs a token sends the
  visitor to the login form). A bug is a 500 whose traceback goes to the log, not to the
  visitor.
- **what every answer carries** (:data:`tournaments.web.server.HEADERS`): no caching, no
  framing, nothing loaded from elsewhere, no referrer. Every body is bounded: requests
  by ``body_bytes``, except an upload, which the API reads in a stream it stops at the
  arena's pack limit.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Final

import structlog
from aiohttp import hdrs, web

from tournaments.arena.api import Api
from tournaments.arena.errors import (
    ForbiddenError,
    NameTakenError,
    NotFoundError,
    QuotaError,
    RefusedError,
    TooLargeError,
    UnauthorizedError,
)
from tournaments.arena.live import LiveTable, table_view
from tournaments.arena.pages import COOKIE, Pages
from tournaments.errors import ArenaError, StoreError
from tournaments.web.server import HEADERS

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from tournaments.arena.board import Leaderboard
    from tournaments.arena.people import Caller
    from tournaments.arena.service import Arena

    Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

__all__ = ["STATUS", "Board", "Credentials", "LiveTables", "make_app", "status_of"]

BODY_BYTES: Final = 16 << 10
"""The largest request body the application reads whole (a JSON request, the login form)."""
LIVE_EVERY_S: Final = 1.0
"""The tables in play are asked for at most this often, however many pages watch them."""

STATUS: Final[Mapping[type[ArenaError], int]] = {
    RefusedError: 400,
    UnauthorizedError: 401,
    ForbiddenError: 403,
    NotFoundError: 404,  # NotPublicError too: it says why
    NameTakenError: 409,
    TooLargeError: 413,
    QuotaError: 429,
}
"""Each kind of refusal's HTTP status: the one place they are mapped."""

_log = structlog.get_logger("nap.arena.web")


def status_of(error: ArenaError) -> int | None:
    """The HTTP status of a refusal (its kind's, or its nearest parent's); None for any other error."""
    return next((STATUS[kind] for kind in type(error).__mro__ if kind in STATUS), None)


@dataclass(frozen=True, slots=True)
class _Who:
    caller: Caller | None


_WHO: Final = web.RequestKey("nap_arena_who", _Who)


class Credentials:
    """Who made a request: its token's :class:`~tournaments.arena.people.Caller`, or None (nobody)."""

    def __init__(self, arena: Arena) -> None:
        self._arena = arena

    def caller(self, request: web.Request) -> Caller | None:
        """The caller, worked out once per request; UnauthorizedError for a wrong or revoked header token."""
        known = request.get(_WHO)
        if known is None:
            known = _Who(self._resolve(request))
            request[_WHO] = known
        return known.caller

    def _resolve(self, request: web.Request) -> Caller | None:
        header = request.headers.get(hdrs.AUTHORIZATION)
        if header is not None:
            scheme, _, token = header.strip().partition(" ")
            found = self._arena.caller(token.strip()) if scheme.lower() == "bearer" else None
            if found is None:
                msg = "the token is wrong or revoked (Authorization: Bearer nap_...)"
                raise UnauthorizedError(msg)
            return found
        if request.method in {hdrs.METH_GET, hdrs.METH_HEAD}:
            return self._arena.caller(request.cookies.get(COOKIE))
        return None


class Board:
    """The arena's leaderboard, with when it was last computed (ISO 8601, UTC)."""

    def __init__(self, arena: Arena) -> None:
        self._arena = arena
        self._board: Leaderboard | None = None
        self._at = ""

    def now(self) -> tuple[Leaderboard, str]:
        """The board as of the last complete block, and when it was computed."""
        board = self._arena.leaderboard()
        if board is not self._board:  # the arena computed it again: a block completed
            self._board, self._at = board, datetime.now(UTC).isoformat(timespec="seconds")
        return board, self._at


class LiveTables:
    """The ladder's tables in play for the live page, asked for at most every :data:`LIVE_EVERY_S`."""

    def __init__(self, arena: Arena) -> None:
        self._arena = arena
        self._tables: tuple[LiveTable, ...] = ()
        self._at: float | None = None

    @property
    def unavailable(self) -> str | None:
        """Why no table can be watched (None: they can, or none is in play)."""
        source = self._arena.tables
        return None if source is None else source.unavailable

    async def now(self) -> tuple[LiveTable, ...]:
        """Each table in play, from its public events: no card."""
        now = asyncio.get_running_loop().time()
        if self._at is not None and now - self._at < LIVE_EVERY_S:
            return self._tables
        source = self._arena.tables
        tables = [] if source is None else await source.tables()
        views = []
        for table in tables:
            found = await source.events(table.table, 0) if source is not None else None
            if found is not None:
                views.append(table_view(table, found.events, profile=self._arena.settings.profile))
        self._tables, self._at = tuple(views), now
        return self._tables


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
