"""The person's seat: a client of the referee like any bot, with a WebSocket to the person's page.

:class:`PersonSeat` is what the SDK's :class:`~clients.sdk.connection.Connection` drives
(through :class:`SeatDispatcher`): every event and decision request the referee sends
this seat goes into the seat's :class:`~tournaments.web.table.SeatTable`, and each change
goes to the page as a snapshot of it, so the page is built only from this seat's stream.
A decision waits for the page's answer until its clock runs out; then the referee applies
its fault policy, as for a bot, and the seat answers nothing (an answer after the
deadline would be ignored anyway).

One tab holds the seat: a second tab takes over, and the first is told so and closed. A
seat whose clock ran out while no tab was open has been left: it leaves the referee
(``on_leave``), which plays the rest of the session by its fault policy, and the session
is stored as usual. A page's answer is checked here first (the request it answers must
be the one pending, the action one of its legal ones), so a stale click is refused with
a message instead of becoming a fault.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from aiohttp import WSMsgType, web

from clients.sdk.bot import Bot
from clients.sdk.dispatch import Dispatcher
from referee.wire.botstream import Answer, RequestViews, told_of
from tournaments.web.table import Decision, SeatTable

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from referee.rules import Profile
    from referee.wire.botstream import Answers, Batch, EventNotice, Request

__all__ = ["PersonSeat", "SeatDispatcher", "Seating"]

LATE_SLACK_S: Final = 0.5
"""Seconds past a decision's deadline the seat waits before taking its clock as run out
(the referee has applied its fault policy by then)."""
_MOST_SEATS: Final = 7
"""Seats named when a table comes without its seating (never, from the driver): Nap's most."""
_CLOSING_S: Final = 2.0
"""Seconds the last messages to a tab may take to leave when the command ends."""
_REPLACED: Final = "This table was opened in another tab: play there. This tab no longer receives anything."


@dataclass(frozen=True, slots=True)
class Seating:
    """Who sits where at one table, and which of the person's sessions it is (public, from the driver)."""

    names: tuple[str, ...]
    seat: int
    session: int
    sessions: int


@dataclass(slots=True)
class _Tab:
    """One open page: its socket and the messages queued for it, sent in order by one task."""

    socket: web.WebSocketResponse
    outbox: asyncio.Queue[dict[str, Any] | None] = field(default_factory=asyncio.Queue)
    sender: asyncio.Task[None] | None = None


@dataclass(frozen=True, slots=True)
class _Pending:
    """A decision waiting for the page: when it came (the seat's clock) and the page's answer to be."""

    decision: Decision
    came: float
    answer: asyncio.Future[str]


class PersonSeat:
    """The person's seat at the referee's tables, one table at a time, shown on one tab.

    ``hello`` is what a tab is told first (the person's name, the decision clock, the
    fault policy in words). ``on_leave`` is called once the seat gives up its place
    (its clock ran out with no tab open). ``clock`` is monotonic seconds.
    """

    def __init__(
        self,
        *,
        hello: dict[str, Any],
        on_leave: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._hello = hello
        self._on_leave = on_leave
        self._clock = clock
        self._seatings: dict[str, Seating] = {}
        self._closed: dict[str, asyncio.Event] = {}
        """Per table expected, set once the referee has closed it (everything it told the seat is in)."""
        self._tables: dict[str, SeatTable] = {}
        self.table: SeatTable | None = None
        """The table shown (the last one opened)."""
        self._pending: _Pending | None = None
        """The decision waiting for the page."""
        self._tab: _Tab | None = None
        self._tab_opened = asyncio.Event()
        self.left = False
        """Whether the seat gave up its place (no tab when a clock ran out)."""

    # -- the driver's side ----------------------------------------------------------------

    def expect(self, table: str, seating: Seating) -> None:
        """The next table this seat sits at, and who sits where (before the referee opens it)."""
        self._seatings[table] = seating
        self._closed[table] = asyncio.Event()

    async def table_closed(self, table: str) -> None:
        """Return once the referee has closed ``table`` to this seat (a table :meth:`expect` named).

        The referee closes a table after the last events it tells of it (the last trick,
        the settlement, the session's end), so the page has been sent all of them by then.
        """
        closed = self._closed[table]
        await closed.wait()
        del self._closed[table]

    async def first_tab(self, timeout: float) -> bool:  # noqa: ASYNC109 - the caller's deadline, in seconds
        """Wait for a tab to open the page; False if none did within ``timeout`` seconds."""
        try:
            await asyncio.wait_for(self._tab_opened.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def tell_page(self, message: dict[str, Any]) -> None:
        """Send the open tab (if any) a message of the driver's (``{"type": "done", ...}``)."""
        self._queue(message)

    async def close_tabs(self) -> None:
        """Send the tab what is queued for it, then close it (the command is ending); 2 s at most."""
        tab, self._tab = self._tab, None
        if tab is not None and tab.sender is not None:
            tab.outbox.put_nowait(None)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(tab.sender), _CLOSING_S)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(tab.socket.close(), _CLOSING_S)

    # -- the referee's side (through SeatDispatcher) --------------------------------------

    def told(self, notice: EventNotice, rules: Profile | None) -> None:
        """An event the referee told this seat."""
        told = told_of(notice)
        if told is None:
            return
        table = self._table(notice.table, notice.seat, rules)
        table.tell(told)
        self._show(table)

    async def decide(
        self, requests: Sequence[Request], views: RequestViews, rules: Profile | None
    ) -> Answers:
        """The page's answers to ``requests``, one after another; none for a clock that ran out."""
        answers: list[Answer] = []
        for request in requests:
            answer = await self._decide(request, views, rules)
            if answer is not None:
                answers.append(answer)
        return tuple(answers)

    async def _decide(self, request: Request, views: RequestViews, rules: Profile | None) -> Answer | None:
        table = self._table(request.table, request.seat, rules)
        decision = Decision(
            request_id=request.request_id,
            view=views.view(request),
            deadline_ms=request.deadline_ms,
            texts=tuple(request.legal_actions),
        )
        pending = self._pending = _Pending(
            decision, self._clock(), asyncio.get_running_loop().create_future()
        )
        table.see(decision)
        self._show(table)
        try:
            text = await asyncio.wait_for(pending.answer, request.deadline_ms / 1000 + LATE_SLACK_S)
        except TimeoutError:
            table.answered()
            self._show(table)  # the page's clock says the time is up; the referee's penalty follows
            if self._tab is None:
                self._leave()
            return None
        finally:
            if self._pending is pending:
                self._pending = None
        table.answered()  # the table's update comes with the referee's event for this answer
        return Answer(request.request_id, text)

    def closed(self, table: str) -> None:
        """The referee closed ``table`` (its session is over): the page keeps showing it."""
        self._seatings.pop(table, None)
        self._tables.pop(table, None)
        closed = self._closed.get(table)
        if closed is not None:
            closed.set()

    def _table(self, table: str, seat: int, rules: Profile | None) -> SeatTable:
        found = self._tables.get(table)
        if found is None:
            seating = self._seatings.get(table)
            names = seating.names if seating is not None else ()
            found = SeatTable(
                seat=seat,
                names=names or tuple(f"seat {n}" for n in range(max(seat + 1, _MOST_SEATS))),
                rules=rules,
                session=seating.session if seating is not None else 1,
                sessions=seating.sessions if seating is not None else 1,
            )
            self._tables[table] = found
        self.table = found
        return found

    def _leave(self) -> None:
        if not self.left:
            self.left = True
            self._on_leave()

    # -- the page's side --------------------------------------------------------------------

    async def socket(self, request: web.Request) -> web.StreamResponse:
        """A tab's WebSocket: it takes the seat over from any tab before it."""
        socket = web.WebSocketResponse(heartbeat=20.0, max_msg_size=64 * 1024)
        await socket.prepare(request)
        old, tab = self._tab, _Tab(socket)
        self._tab = tab
        if old is not None:
            old.outbox.put_nowait({"type": "replaced", "message": _REPLACED})
            old.outbox.put_nowait(None)
        self._tab_opened.set()
        sender = tab.sender = asyncio.create_task(self._send(tab))
        tab.outbox.put_nowait({"type": "hello", **self._hello})
        if self.table is not None:
            tab.outbox.put_nowait(self._snapshot(self.table))
        try:
            async for message in socket:
                if message.type is WSMsgType.TEXT:
                    self._from_page(tab, message.data)
                elif message.type is WSMsgType.ERROR:
                    break
        finally:
            if self._tab is tab:
                self._tab = None
                tab.outbox.put_nowait(None)
            await sender
        return socket

    def _from_page(self, tab: _Tab, data: str) -> None:
        try:
            message = json.loads(data)
            kind = message["type"]
        except (ValueError, KeyError, TypeError):
            tab.outbox.put_nowait({"type": "refused", "message": "not a message this page sends"})
            return
        if kind == "act" and self._tab is tab:
            refusal = self._act(message.get("request"), message.get("action"))
            if refusal is not None:
                tab.outbox.put_nowait({"type": "refused", "message": refusal})

    def _act(self, request: object, action: object) -> str | None:
        """The page's answer to the pending decision; why it is refused, or None once it is taken."""
        pending = self._pending
        if pending is None or pending.decision.request_id != request:
            return "that decision is over (answered, or its clock ran out)"
        if action not in pending.decision.texts:
            return f"{action!r} is not one of the legal actions"
        assert isinstance(action, str)  # noqa: S101 - it is one of the texts
        self._pending = None
        if not pending.answer.done():
            pending.answer.set_result(action)
        return None

    def _show(self, table: SeatTable) -> None:
        if table is self.table:
            self._queue(self._snapshot(table))

    def _snapshot(self, table: SeatTable) -> dict[str, Any]:
        pending = self._pending
        remaining = None
        if pending is not None and table.decision is pending.decision:
            remaining = int(pending.decision.deadline_ms - (self._clock() - pending.came) * 1000)
        return table.snapshot(remaining_ms=remaining)

    def _queue(self, message: dict[str, Any]) -> None:
        if self._tab is not None:
            self._tab.outbox.put_nowait(message)

    @staticmethod
    async def _send(tab: _Tab) -> None:
        """Send ``tab`` its messages in order until told to stop (None), then close it."""
        socket = tab.socket
        while (message := await tab.outbox.get()) is not None:
            try:
                await socket.send_str(json.dumps(message))
            except (ConnectionError, RuntimeError):
                break
        with contextlib.suppress(Exception):
            await socket.close()


class SeatDispatcher(Dispatcher):
    """The SDK's dispatcher for the person's seat: events and requests go to the :class:`PersonSeat`.

    Each batch's events are told at once, in order; its requests are answered later, from
    the page (an awaitable of the batch's answers, which the connection sends when ready).
    """

    def __init__(self, seat: PersonSeat) -> None:
        super().__init__(Bot)
        self._person = seat
        self._requests = RequestViews()

    def handle_batch(self, batch: Batch) -> Awaitable[Answers] | None:
        """Tell the seat the batch's events; its requests are answered from the page."""
        seat = self._person
        for notice in batch.events:
            seat.told(notice, self.rules)
        if not batch.requests:
            return None
        return seat.decide(batch.requests, self._requests, self.rules)

    def close_table(self, table: str) -> None:
        """The table closed: forget its views; the seat keeps showing it."""
        self._requests.forget(table)
        self._person.closed(table)
