"""The arena's JSON API under ``/api/v1/``: what the command line and scripts call (docs/arena.md).

Every handler asks the :class:`~tournaments.arena.service.Arena` with the request's caller
and answers JSON; a refusal is raised as one of :mod:`tournaments.arena.errors`' kinds
and answered by :mod:`tournaments.arena.web` (``{"error": "one line"}`` with its status).

An upload (``POST /api/v1/submissions``) is refused before a byte of it is read when its
token is wrong or its Content-Length is over the arena's limit (also in answer to
``Expect: 100-continue``, so that a client does not send it at all), and read in a
stream that stops as soon as it passes the limit (a chunked upload, or one that lies
about its length, is never read past it).

``GET /api/v1/events`` is a stream of Server-Sent Events: ``leaderboard`` when a block
completes (``{"blocks": n}``), ``submission`` when a submission is made or changes
status (``{"id": n}``, nothing more). One :class:`_Feed` works out what changed each time
the arena's counter moves and hands it to every open stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING, Any, Final

import structlog
from aiohttp import web
from aiohttp.web_urldispatcher import _default_expect_handler

from tournaments.arena.errors import RefusedError
from tournaments.report.audit import open_log

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from tournaments.arena.people import Caller
    from tournaments.arena.service import Arena
    from tournaments.arena.serving import Board, Credentials, LiveTables
    from tournaments.store.arena import Submission

    Refuse = Callable[[web.Request, Exception], web.StreamResponse]

__all__ = ["LATEST_SESSIONS", "Api", "path_number", "submission_json"]

LATEST_SESSIONS: Final = 24
"""An entry's latest sessions of complete blocks listed with it (its page links their replays)."""
READ_CHUNK: Final = 64 << 10
"""An upload is read in pieces of at most this many bytes, its size checked after each."""
_QUEUED: Final = 64
"""Events kept for one stream that does not read them; past this it is closed (its page reconnects)."""
_LATE_S: Final = 0.01
"""How long past the moment a held-back board may be computed again the feed looks at it."""

_log = structlog.get_logger("nap.arena.web")


def submission_json(
    submission: Submission, steps: list[tuple[str, str, str]] | None = None
) -> dict[str, Any]:
    """A submission as the API serves it; ``steps`` (its admission log) when given."""
    data: dict[str, Any] = {
        "id": submission.id,
        "owner": submission.owner,
        "status": submission.status,
        "reason": submission.reason,
        "name": submission.name,
        "version": submission.version,
        "entry": submission.entry,
        "size": submission.size,
        "submitted_at": submission.submitted_at,
        "updated_at": submission.updated_at,
        "rating": None if submission.rating is None else dict(submission.rating),
    }
    if steps is not None:
        data["steps"] = [{"at": at, "step": step, "text": text} for at, step, text in steps]
    return data


class Api:
    """The API's handlers over one arena (:meth:`routes`) and its event feed (:meth:`start`, :meth:`stop`)."""

    def __init__(
        self, arena: Arena, *, credentials: Credentials, board: Board, live: LiveTables, heartbeat_s: float
    ) -> None:
        self._arena = arena
        self._credentials = credentials
        self._board = board
        self._live = live
        self._heartbeat_s = heartbeat_s
        self._feed = _Feed(arena)

    def routes(self, *, refuse: Refuse) -> list[web.RouteDef]:
        """The API's routes; ``refuse`` answers an upload refused before its body is read."""
        expect = self._expect_upload(refuse)
        return [
            web.get("/api/v1/me", self.me),
            web.post("/api/v1/people", self.add_person),
            web.get("/api/v1/people", self.people),
            web.post("/api/v1/people/{name}/revoke", self.revoke),
            web.post("/api/v1/people/{name}/tokens", self.new_token),
            web.post("/api/v1/submissions", self.submit, expect_handler=expect),
            web.get("/api/v1/submissions", self.submissions),
            web.get("/api/v1/submissions/{id}", self.submission),
            web.get("/api/v1/leaderboard", self.leaderboard),
            web.get("/api/v1/entries/{entry}", self.entry),
            web.get("/api/v1/entries/{entry}/log", self.entry_log),
            web.get("/api/v1/sessions/{id}", self.session),
            web.get("/api/v1/live", self.live),
            web.get("/api/v1/events", self.events),
        ]

    async def start(self, app: web.Application) -> None:
        """Start the event feed (the application's start)."""
        del app
        self._feed.start()

    async def stop(self, app: web.Application) -> None:
        """End every open event stream (the application's shutdown), so that it stops at once."""
        del app
        await self._feed.stop()

    def _caller(self, request: web.Request) -> Caller | None:
        return self._credentials.caller(request)

    # People

    async def me(self, request: web.Request) -> web.Response:
        """``{"name", "admin", "scopes"}``."""
        return web.json_response(self._arena.me(self._caller(request)))

    async def add_person(self, request: web.Request) -> web.Response:
        """201 ``{"name", "token"}`` (the token is shown this once)."""
        caller = self._caller(request)
        self._arena.me(caller)  # a token first: the body is read only for one
        body = await _json_object(request)
        name, admin = body.get("name"), body.get("admin", False)
        if not isinstance(name, str) or not isinstance(admin, bool):
            msg = 'a person is {"name": "...", "admin": false}'
            raise RefusedError(msg)
        token = self._arena.add_person(caller, name, admin=admin)
        return web.json_response({"name": name, "token": token}, status=201)

    async def people(self, request: web.Request) -> web.Response:
        """Everyone, with their valid tokens' count (admin)."""
        return web.json_response(self._arena.people(self._caller(request)))

    async def revoke(self, request: web.Request) -> web.Response:
        """``{"revoked": n}``: every token of that person."""
        revoked = self._arena.revoke(self._caller(request), request.match_info["name"])
        return web.json_response({"revoked": revoked})

    async def new_token(self, request: web.Request) -> web.Response:
        """201 ``{"token"}``: a new token for that person (an admin's request, or their own)."""
        token = self._arena.new_token(self._caller(request), request.match_info["name"])
        return web.json_response({"token": token}, status=201)

    # Submissions

    def _expect_upload(self, refuse: Refuse) -> Callable[[web.Request], Awaitable[web.StreamResponse | None]]:
        async def expect(request: web.Request) -> web.StreamResponse | None:
            """Refuse an upload announced with ``Expect: 100-continue`` before the client sends it."""
            try:
                self._arena.me(self._caller(request))
                self._arena.check_size(request.content_length)
            except Exception as exc:  # noqa: BLE001 - answered as the handler's failure would be
                return refuse(request, exc)
            await _default_expect_handler(request)
            return None

        return expect

    async def submit(self, request: web.Request) -> web.Response:
        """202 the new submission, queued; refused at once (400, stored as refused), 413 or 429."""
        caller = self._caller(request)
        self._arena.me(caller)  # a token before a byte is read
        self._arena.check_size(request.content_length)
        data = bytearray()
        async for chunk in request.content.iter_chunked(READ_CHUNK):
            data += chunk
            self._arena.check_size(len(data))  # a chunked upload, or one longer than it said
        submission = self._arena.submit(caller, bytes(data))
        _, steps = self._arena.submission(caller, submission.id)
        return web.json_response(submission_json(submission, steps), status=202)

    async def submissions(self, request: web.Request) -> web.Response:
        """The caller's submissions (an admin's: ``?owner=NAME``'s, or everyone's), oldest first."""
        owner = request.query.get("owner")
        found = self._arena.submissions(self._caller(request), owner=owner)
        return web.json_response([submission_json(s) for s in found])

    async def submission(self, request: web.Request) -> web.Response:
        """One of the caller's submissions with its whole admission log."""
        found, steps = self._arena.submission(self._caller(request), path_number(request, "id"))
        return web.json_response(submission_json(found, steps))

    # What everyone sees

    async def leaderboard(self, request: web.Request) -> web.Response:
        """The leaderboard: the arena's facts, when it was computed, and its rows."""
        self._caller(request)  # a token given must be a good one
        board, at = self._board.now()
        settings = self._arena.settings
        arena = {
            "profile": settings.profile.name,
            "table_sizes": list(settings.table_sizes),
            "decision_ms": settings.decision_ms,
            "keep": settings.keep,
            "quota": settings.quota,
            "placement_blocks": settings.placement_blocks,
        }
        trouble = self._arena.trouble.now
        return web.json_response({"arena": arena, "updated_at": at, "trouble": trouble, **board.to_json()})

    async def entry(self, request: web.Request) -> web.Response:
        """An entry's public record, its admission's public steps and its latest complete sessions."""
        self._caller(request)
        name = request.match_info["entry"]
        record, steps = self._arena.entry(name)
        sessions = self._arena.store.complete_sessions(self._arena.ladder, name, limit=LATEST_SESSIONS)
        return web.json_response(
            {
                **record.to_json(),
                "steps": [{"at": at, "step": step, "text": text} for at, step, text in steps],
                "sessions": [
                    {"id": s.id, "block": s.block, "rotation": s.rotation, "bots": list(s.bots)}
                    for s in sessions
                ],
            }
        )

    async def entry_log(self, request: web.Request) -> web.Response:
        """An entry's bot logs, for its owner (or an admin)."""
        return web.json_response(self._arena.entry_log(self._caller(request), request.match_info["entry"]))

    async def session(self, request: web.Request) -> web.Response:
        """A session's log once its block is complete; 404 with why before."""
        self._caller(request)
        number = path_number(request, "id")
        data = self._arena.session_log(number)
        payload = open_log(data, name=f"the log of session {number}").payload
        return web.json_response(payload)

    async def live(self, request: web.Request) -> web.Response:
        """The tables in play, from their public events: no card of any kind."""
        self._caller(request)
        tables = await self._live.now()
        return web.json_response(
            {"tables": [t.to_json() for t in tables], "unavailable": self._live.unavailable}
        )

    async def events(self, request: web.Request) -> web.StreamResponse:
        """Server-Sent Events: ``leaderboard`` and ``submission``, until the client or the arena goes."""
        self._caller(request)
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
        )
        queue = self._feed.subscribe()  # before the page hears the stream is open: it misses nothing after
        try:
            await response.prepare(request)
            await response.write(b"retry: 3000\n\n")
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), timeout=self._heartbeat_s)
                except TimeoutError:
                    await response.write(b": still here\n\n")
                    continue
                if event is None:  # the arena stops, or this stream fell behind
                    break
                kind, data = event
                await response.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())
        except ConnectionError:  # the page went away
            pass
        finally:
            self._feed.unsubscribe(queue)
        return response


_Event = tuple[str, dict[str, Any]] | None


class _Feed:
    """What changed each time the arena's counter moves, handed to every open event stream.

    A block completed when the arena's leaderboard is a new one; a submission changed when
    it is new or its ``updated_at`` moved. Nothing is worked out while no stream is open.
    """

    def __init__(self, arena: Arena) -> None:
        self._arena = arena
        self._queues: set[asyncio.Queue[_Event]] = set()
        self._task: asyncio.Task[None] | None = None
        self._board: object = None
        self._updated: dict[int, str] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._follow(), name="arena event feed")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for queue in list(self._queues):
            _offer(queue, None)
        self._queues.clear()

    def subscribe(self) -> asyncio.Queue[_Event]:
        if not self._queues:  # what the new events are measured against
            self._board, self._updated = self._arena.leaderboard(), self._submissions()
        queue: asyncio.Queue[_Event] = asyncio.Queue(maxsize=_QUEUED)
        self._queues.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[_Event]) -> None:
        self._queues.discard(queue)

    def _submissions(self) -> dict[int, str]:
        return {s.id: s.updated_at for s in self._arena.store.submissions()}

    async def _follow(self) -> None:
        number = self._arena.changes.number
        while True:
            due = self._arena.board_due() if self._queues else None
            if due is None:
                number = await self._arena.changes.after(number)
            else:  # a board held back (a large one): sent once it may be computed again, change or not
                with contextlib.suppress(TimeoutError):
                    number = await asyncio.wait_for(self._arena.changes.after(number), timeout=due + _LATE_S)
            if not self._queues:
                continue
            try:
                events = self._changed()
            except Exception:  # noqa: BLE001 - the streams wait for the next change
                _log.exception("event feed failed")
                continue
            for queue in list(self._queues):
                for event in events:
                    if not _offer(queue, event):
                        self._queues.discard(queue)
                        _offer(queue, None, force=True)
                        break

    def _changed(self) -> list[tuple[str, dict[str, Any]]]:
        events: list[tuple[str, dict[str, Any]]] = []
        updated, before = self._submissions(), self._updated or {}
        for number, at in updated.items():
            if before.get(number) != at:
                events.append(("submission", {"id": number}))
        self._updated = updated
        board = self._arena.leaderboard()
        if board is not self._board:
            self._board = board
            events.append(("leaderboard", {"blocks": board.blocks}))
        return events


def _offer(queue: asyncio.Queue[_Event], event: _Event, *, force: bool = False) -> bool:
    """Put ``event`` in ``queue`` if there is room (``force``: make room); whether it went in."""
    if force and queue.full():
        queue.get_nowait()
    try:
        queue.put_nowait(event)
    except asyncio.QueueFull:
        return False
    return True


async def _json_object(request: web.Request) -> dict[str, Any]:
    """The request's JSON object (read whole: bounded by the application's ``client_max_size``)."""
    try:
        body = await request.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        msg = "the body must be a JSON object"
        raise RefusedError(msg)
    return body


def path_number(request: web.Request, name: str) -> int:
    """A path's number (a submission's, a session's); 404 for anything else."""
    text = request.match_info[name]
    if not text.isdecimal() or len(text) > 18:
        raise web.HTTPNotFound
    return int(text)
