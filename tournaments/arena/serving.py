"""What the arena's API and pages share to answer a request (:mod:`tournaments.arena.web` composes them).

- **who is asking** (:class:`Credentials`): the ``Authorization: Bearer`` header, checked
  wherever it is given (a wrong or revoked token is a 401, never a visitor); else, for a
  GET, the :data:`COOKIE` the login form sets. A POST counts the header only, so no other
  site can make a browser change anything here (the login and logout forms are checked to
  come from this site instead).
- **what a refusal is** (:data:`STATUS`, in one place): each kind of
  :mod:`tournaments.arena.errors` has its HTTP status.
- **the leaderboard** with when it was computed (:class:`Board`), and **the tables in
  play** (:class:`LiveTables`), asked for at most every :data:`LIVE_EVERY_S` however many
  pages watch them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from aiohttp import hdrs, web

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

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tournaments.arena.board import Leaderboard
    from tournaments.arena.people import Caller
    from tournaments.arena.service import Arena
    from tournaments.errors import ArenaError

__all__ = ["COOKIE", "LIVE_EVERY_S", "STATUS", "Board", "Credentials", "LiveTables", "status_of"]

COOKIE: Final = "nap_arena"
"""The cookie that holds a signed-in person's token (HttpOnly, SameSite=Strict): a GET counts it."""
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
