"""One bot's link to the referee: its requests in flight, its outgoing batches, its answers.

A :class:`BotLink` belongs to a bot identity and outlives its streams: when the bot's
connection drops, the link keeps the bot's requests; when the bot comes back (same token)
within the grace period, the link re-sends what is still outstanding.

Outgoing traffic is batched: requests, events and notices produced while the writer is
busy or in the same event-loop tick go out together, the requests and events in ONE
Batch. At most ``max_outstanding`` requests are in flight at once; the rest wait in a
queue and their clocks start only when they are sent (or at once while the bot is away,
so a decision due while it is gone waits no longer than its deadline).
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from referee.server.faults import FaultKind
from referee.wire import nap_pb2
from referee.wire.codec import request_to_proto

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from referee.rules import SeatView

_request_ids = itertools.count(1)
"""Request ids are unique across the referee, so an answer to another bot's id is caught."""


class Seated(Protocol):
    """A table the bot sits at, told about faults that belong to the bot's connection."""

    def bot_fault(self, bot: str, kind: FaultKind, detail: str, *, request_id: int = 0,
                  action: str = "") -> None:
        """Record a connection-level fault of ``bot``."""


@dataclass(frozen=True, slots=True)
class Reply:
    """How a request ended: an answer (``action``), or none (``missing`` says why)."""

    action: str | None
    elapsed_ms: float
    missing: FaultKind | None = None


@dataclass(slots=True, eq=False)
class _Pending:
    request_id: int
    table: str
    message: nap_pb2.DecisionRequest
    deadline_s: float
    future: asyncio.Future[Reply]
    sent_at: float | None = None
    expires_at: float | None = None
    timer: asyncio.TimerHandle | None = None


@dataclass(slots=True, eq=False)
class StreamState:
    """One attached stream; ``closed`` tells its writer to stop."""

    closed: bool = False
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class BotLink:
    """Everything the referee keeps about one bot identity."""

    def __init__(self, name: str, *, max_outstanding: int, reconnect_grace_s: float,
                 orphan_fault: Callable[[str, FaultKind, str], None]) -> None:
        self.name = name
        self.cap = max_outstanding
        self.max_outstanding = max_outstanding
        self.wants_events = False
        self.tables: dict[str, Seated] = {}
        self.hello = asyncio.Event()
        self._grace_s = reconnect_grace_s
        self._orphan_fault = orphan_fault
        self._stream: StreamState | None = None
        self._gone = False
        self._grace_timer: asyncio.TimerHandle | None = None
        self._outstanding: dict[int, _Pending] = {}
        self._queue: deque[_Pending] = deque()
        self._events: list[nap_pb2.TableEvent] = []
        self._notices: list[nap_pb2.RefereeMessage] = []
        self._retired: set[int] = set()

    @property
    def connected(self) -> bool:
        """Whether a stream is attached now."""
        return self._stream is not None

    # -- streams ---------------------------------------------------------------------------

    def attach(self, *, max_batch: int, wants_events: bool) -> StreamState:
        """Attach a new stream; re-send every request still outstanding."""
        loop = asyncio.get_running_loop()
        self.max_outstanding = max(1, min(max_batch, self.cap))
        self.wants_events = wants_events
        self._gone = False
        if self._grace_timer is not None:
            self._grace_timer.cancel()
            self._grace_timer = None
        # Outstanding requests go back to the head of the queue, with what is left of
        # their deadline, and are sent first.
        now = loop.time()
        for pending in sorted(self._outstanding.values(), key=lambda p: p.request_id,
                              reverse=True):
            if pending.expires_at is not None:
                left_ms = max(1, int((pending.expires_at - now) * 1000))
                pending.message.deadline_ms = left_ms
            self._queue.appendleft(pending)
        self._outstanding.clear()
        self._stream = StreamState()
        self.hello.set()
        self._stream.wake.set()
        return self._stream

    def detach(self, stream: StreamState, detail: str) -> None:
        """The stream ended: record a disconnect where the bot sits and start the grace period."""
        stream.closed = True
        stream.wake.set()
        if self._stream is not stream:
            return
        self._stream = None
        if self.tables:
            self.report(FaultKind.DISCONNECT, detail)
        loop = asyncio.get_running_loop()
        for pending in self._outstanding.values():
            self._start_clock(pending, loop)
        for pending in self._queue:
            self._start_clock(pending, loop)
        self._grace_timer = loop.call_later(self._grace_s, self._give_up)

    def _give_up(self) -> None:
        """The grace period is over: every request for the bot fails at once, until it returns."""
        self._grace_timer = None
        if self._stream is not None:
            return
        self._gone = True
        self._events.clear()
        self._notices.clear()
        pending = [*self._outstanding.values(), *self._queue]
        self._outstanding.clear()
        self._queue.clear()
        for item in pending:
            self._finish(item, Reply(None, self._elapsed_ms(item), FaultKind.DISCONNECT))

    async def outgoing(self, stream: StreamState) -> list[nap_pb2.RefereeMessage]:
        """Wait for something to send on ``stream``; empty once it is closed."""
        while not stream.closed:
            await stream.wake.wait()
            stream.wake.clear()
            if stream.closed:
                break
            messages = self._drain()
            if messages:
                return messages
        return []

    def _drain(self) -> list[nap_pb2.RefereeMessage]:
        out: list[nap_pb2.RefereeMessage] = []
        room = self.max_outstanding - len(self._outstanding)
        requests: list[nap_pb2.DecisionRequest] = []
        if room > 0 and self._queue:
            loop = asyncio.get_running_loop()
            now = loop.time()
            queue = self._queue
            outstanding = self._outstanding
            while room > 0 and queue:
                pending = queue.popleft()
                if pending.future.done():
                    continue
                outstanding[pending.request_id] = pending
                if pending.sent_at is None:
                    pending.sent_at = now
                self._start_clock(pending, loop)
                requests.append(pending.message)
                room -= 1
        if requests or self._events:
            message = nap_pb2.RefereeMessage()
            batch = message.batch
            batch.requests.extend(requests)
            batch.events.extend(self._events)
            self._events.clear()
            out.append(message)
        if self._notices:
            out.extend(self._notices)
            self._notices.clear()
        return out

    # -- requests --------------------------------------------------------------------------

    def ask(self, view: SeatView, *, table: str, deadline_ms: int,
            time_bank_ms: int) -> asyncio.Future[Reply]:
        """Send a decision request for the seat to act in ``view``; the future is its reply."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Reply] = loop.create_future()
        if self._gone:
            future.set_result(Reply(None, 0.0, FaultKind.DISCONNECT))
            return future
        request_id = next(_request_ids)
        message = request_to_proto(view, table=table, request_id=request_id,
                                   deadline_ms=deadline_ms, time_bank_ms=time_bank_ms)
        pending = _Pending(request_id, table, message, deadline_ms / 1000, future)
        self._queue.append(pending)
        stream = self._stream
        if stream is None:
            self._start_clock(pending, loop)
        else:
            stream.wake.set()
        return future

    def _start_clock(self, pending: _Pending, loop: asyncio.AbstractEventLoop) -> None:
        if pending.timer is None:
            now = loop.time()
            if pending.sent_at is None:
                pending.sent_at = now
            pending.expires_at = pending.sent_at + pending.deadline_s
            pending.timer = loop.call_at(pending.expires_at, self._expire, pending)

    def _expire(self, pending: _Pending) -> None:
        if pending.future.done():
            return
        self._outstanding.pop(pending.request_id, None)
        self._retired.add(pending.request_id)
        self._finish(pending, Reply(None, self._elapsed_ms(pending), FaultKind.LATE))
        if self._stream is not None:
            self._stream.wake.set()

    def _elapsed_ms(self, pending: _Pending) -> float:
        if pending.sent_at is None:
            return 0.0
        return (asyncio.get_running_loop().time() - pending.sent_at) * 1000

    @staticmethod
    def _finish(pending: _Pending, reply: Reply) -> None:
        if pending.timer is not None:
            pending.timer.cancel()
        if not pending.future.done():
            pending.future.set_result(reply)

    def on_answers(self, answers: Iterable[nap_pb2.Answer]) -> None:
        """Route answers to their requests; an id not outstanding here is a fault."""
        now = asyncio.get_running_loop().time()
        outstanding = self._outstanding
        for answer in answers:
            request_id = answer.request_id
            pending = outstanding.pop(request_id, None)
            if pending is None:
                if request_id in self._retired:
                    continue  # late (already faulted) or withdrawn: ignored
                self.report(FaultKind.UNKNOWN_REQUEST,
                            f"request {request_id} is not outstanding on this connection",
                            request_id=request_id, action=answer.action)
                continue
            sent_at = pending.sent_at if pending.sent_at is not None else now
            if pending.timer is not None:
                pending.timer.cancel()
            if not pending.future.done():
                pending.future.set_result(Reply(answer.action, (now - sent_at) * 1000))
        if self._queue and self._stream is not None:
            self._stream.wake.set()

    # -- events and notices ----------------------------------------------------------------

    def send_events(self, events: Iterable[nap_pb2.TableEvent]) -> None:
        """Queue table events for the next batch (dropped while the bot is gone)."""
        if self._gone:
            return
        self._events.extend(events)
        if self._stream is not None:
            self._stream.wake.set()

    def notify(self, message: nap_pb2.RefereeMessage) -> None:
        """Queue a stand-alone message (a Fault or a TableClosed), sent after the next batch."""
        if self._gone:
            return
        self._notices.append(message)
        if self._stream is not None:
            self._stream.wake.set()

    def report(self, kind: FaultKind, detail: str, *, request_id: int = 0,
               action: str = "") -> None:
        """Record a fault of the connection at every table the bot sits at."""
        if not self.tables:
            self._orphan_fault(self.name, kind, detail)
            return
        for table in list(self.tables.values()):
            table.bot_fault(self.name, kind, detail, request_id=request_id, action=action)

    def leave(self, table: str) -> None:
        """The bot no longer sits at ``table``: withdraw whatever is left for it."""
        self.tables.pop(table, None)
        for request_id, pending in list(self._outstanding.items()):
            if pending.table == table:
                del self._outstanding[request_id]
                self._retired.add(request_id)
                self._finish(pending, Reply(None, self._elapsed_ms(pending),
                                            FaultKind.DISCONNECT))
