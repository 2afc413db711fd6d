"""The watch page of a tournament being played: a web server in the runner's own process.

``nap tournament run --watch`` (and ``resume --watch``) serves one page on 127.0.0.1
(a free port, or ``--port``) at ``http://127.0.0.1:PORT/TOKEN/``: a secret token, made
up for the run, is the first part of every path, so a page, a script or a WebSocket
without it is refused (403). The page gets everything over one WebSocket (``ws``): the
progress, the faults and the standings as sessions are committed, the tables in play,
and the public events of the table it follows.

What it shows comes only from what the runner tells it (a :class:`Watch` is one of the
run's observers, :mod:`tournaments.play.observers`: the run's start, each session
committed, the source of the tables in play, :mod:`tournaments.play.tables`) and from the
store the runner commits to (the standings' running totals). A bot cannot reach it: bots
run isolated, without network. The tables are asked for only while a page is open; a
page that follows a table makes its host replay that table's record into public events
twice a second: no hand of a seat ever reaches the page.

Nothing here changes the run: a page closed, a server that fails, or a tournament killed
leaves the store as the runner leaves it (every committed session, an exact resume).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from typing import TYPE_CHECKING, Any, Final, Self

import structlog
from aiohttp import WSMsgType, web

from tournaments.errors import WatchError
from tournaments.plan.config import TournamentConfig
from tournaments.play.observers import RunObserver
from tournaments.stats.standings import standings_of
from tournaments.web.server import HOST, PageServer, static_folder
from tournaments.web.watch_feed import RunFeed, event_json, standings_json, table_json

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

    from tournaments.play.observers import RunProgress, RunStart
    from tournaments.play.tables import TableSource
    from tournaments.results import SessionResult
    from tournaments.store.database import Store

__all__ = ["Watch"]

PUSH_EVERY_S = 0.5
"""How often the page is sent what changed (and a followed table's new events)."""
STANDINGS_EVERY_S = 1.0
"""The standings are computed again at most this often, and only when sessions were committed."""
TABLES_EVERY_S = 2.0
"""How often the list of tables in play is asked for (only while a page is open)."""
PAGE_FILES: Final = {"": "watch.html", "watch.js": "watch.js", "watch.css": "watch.css"}
"""The page's files, by their path under the token."""

_log = structlog.get_logger("nap.watch")


@dataclasses.dataclass(slots=True, eq=False)
class _Page:
    """One open page: its socket and the table it follows (with how many of its events it has)."""

    socket: web.WebSocketResponse
    table: str | None = None
    since: int = 0


class Watch(RunObserver):
    """The watch page of one run: bind it (:meth:`bind`), open it around the run (``async with``).

    It follows the run as one of its observers (``RunOptions.observers``).

    ``store`` is the run's store (the standings are read from its totals, in this process,
    on the event loop). ``clock`` gives seconds (monotonic), for the rate.
    """

    def __init__(
        self,
        *,
        store: Store,
        port: int = 0,
        token: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.feed = RunFeed()
        self._port = port
        self._clock = clock
        page = static_folder("watch.html")
        self._server = PageServer(
            folder=page, files=PAGE_FILES, handlers={"ws": self._websocket}, token=token
        )
        self._tables: TableSource | None = None
        self._pages: set[_Page] = set()
        self._publisher: asyncio.Task[None] | None = None
        self._standings: dict[str, Any] | None = None
        self._standings_at = -1.0
        self._standings_count = -1
        self._has_pool = False
        self._table_list: list[dict[str, Any]] = []
        self._tables_at = -TABLES_EVERY_S

    # -- the run's side ----------------------------------------------------------------------

    def bind(self) -> str:
        """Bind the page's port on 127.0.0.1 now (before the run starts); its URL, with the token.

        WatchError (one line) when the port cannot be bound.
        """
        try:
            return self._server.bind(self._port)
        except OSError as exc:
            msg = f"cannot serve the watch page on {HOST}:{self._port}: {exc.strerror or exc}"
            raise WatchError(msg) from None

    @property
    def url(self) -> str:
        """The page's address, token included."""
        return self._server.url

    @property
    def port(self) -> int:
        """The page's port (once bound)."""
        return self._server.port

    @property
    def token(self) -> str:
        """The secret first part of every path."""
        return self._server.token

    def started(self, start: RunStart) -> None:
        """The run starts: the page shows it, with the pool records if its profile has a pool."""
        self.feed.started(start)
        with contextlib.suppress(Exception):  # the standings then show without the pool records
            config = TournamentConfig.from_json(self.store.tournament(start.tournament).config)
            self._has_pool = config.profile.has_pool

    def committed(self, result: SessionResult, progress: RunProgress) -> None:  # noqa: ARG002 - the feed counts
        """A session is committed: the page counts it, with its faults."""
        self.feed.session(result, self._clock())

    def tables(self, source: TableSource) -> None:
        """The tables in play: asked while a page is open."""
        self._tables = source

    # -- serving -----------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        """Serve the page (on the port :meth:`bind` bound, or binding one now)."""
        if not self._server.port:
            self.bind()
        await self._server.start()
        self._publisher = asyncio.create_task(self._publish())
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Tell the open pages how the run ended (with the last standings), then stop serving."""
        self.feed.state = "finished" if kind is None else "stopped"
        if self._publisher is not None:
            self._publisher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._publisher
        with contextlib.suppress(Exception):
            await self._push(final=True)
        for page in list(self._pages):
            with contextlib.suppress(Exception):
                await page.socket.close(message=b"the run is over")
        await self._server.stop()

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(heartbeat=20.0, max_msg_size=4096)
        await ws.prepare(request)
        page = _Page(ws)
        self._pages.add(page)
        try:
            await self._send(page, self._status(self._clock()))
            async for message in ws:
                if message.type is not WSMsgType.TEXT:
                    continue
                try:
                    data = json.loads(message.data)
                except ValueError:
                    continue
                table = data.get("follow") if isinstance(data, dict) else None
                page.table = table if isinstance(table, str) else None
                page.since = 0
        finally:
            self._pages.discard(page)
        return ws

    # -- what the pages are sent -------------------------------------------------------------

    async def _publish(self) -> None:
        """While pages are open, send them what changed, every :data:`PUSH_EVERY_S`."""
        while True:
            await asyncio.sleep(PUSH_EVERY_S)
            if not self._pages:
                continue
            try:
                await self._push(final=False)
            except Exception:  # noqa: BLE001 - the page is an onlooker: the run goes on
                _log.exception("watch page update failed")

    async def _push(self, *, final: bool) -> None:
        now = self._clock()
        tables = self._tables
        if tables is not None and not final and now - self._tables_at >= TABLES_EVERY_S:
            self._tables_at = now
            self._table_list = [table_json(t) for t in await tables.tables()]
        self._refresh_standings(now, force=final)
        status = self._status(now)
        if final:
            status["tables"] = []
        for page in list(self._pages):
            await self._send(page, status)
            if page.table is not None and tables is not None and not final:
                await self._follow(page, tables)

    def _refresh_standings(self, now: float, *, force: bool) -> None:
        feed = self.feed
        start = feed.start
        if start is None or feed.committed == self._standings_count:
            return
        if not force and now - self._standings_at < STANDINGS_EVERY_S:
            return
        tally = self.store.tally([start.tournament])
        self._standings_at, self._standings_count = now, feed.committed
        if tally.sessions:
            self._standings = standings_json(standings_of(tally, has_pool=self._has_pool))

    def _status(self, now: float) -> dict[str, Any]:
        tables = self._tables
        return {
            "type": "status",
            **self.feed.status_json(now),
            "standings": self._standings,
            "tables": self._table_list,
            "tables_unavailable": None if tables is None else tables.unavailable,
        }

    async def _follow(self, page: _Page, tables: TableSource) -> None:
        """Send the page the new public events of the table it follows."""
        table = page.table
        if table is None:
            return
        found = await tables.events(table, page.since)
        if page.table != table:  # it chose another meanwhile
            return
        if found is None:
            await self._send(page, {"type": "table", "table": table, "gone": True})
            page.table = None
            return
        if found.events or found.over:
            await self._send(
                page,
                {
                    "type": "table",
                    "table": table,
                    "since": found.since,
                    "events": [event_json(event) for event in found.events],
                    "over": found.over,
                },
            )
        page.since = found.since + len(found.events)
        if found.over:
            page.table = None

    async def _send(self, page: _Page, message: dict[str, Any]) -> None:
        if page.socket.closed:
            self._pages.discard(page)
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            await page.socket.send_json(message)
