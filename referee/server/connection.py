"""One bot's link to the referee: its requests in flight, its outgoing batches, its answers.

A :class:`BotLink` belongs to a bot identity and outlives its streams: when the bot's
connection drops, the link keeps the bot's requests; when the bot comes back (same token)
within the grace period, the link re-sends what is still outstanding.

Outgoing traffic is batched: requests, events and notices produced while the writer is
busy or in the same event-loop tick go out together, the requests and events in ONE
Batch, already serialized (see :mod:`referee.wire.fastcodec`). While the bot still holds
requests it has not answered, new ones wait (up to ``batch_window_s``) so that they go
out together when it answers: fewer, fuller messages cost both sides far less than many
small ones. At most ``max_outstanding`` requests are in flight at once; the rest wait in
a queue and their clocks start only when they are sent (or at once while the bot is
away, so a decision due while it is gone waits no longer than its deadline).

A request ends in exactly one :class:`Reply`, handed to the asker's callback: the answer,
or none when its deadline passes (one timer per link, set for the earliest deadline),
the bot is gone for good, or the request is withdrawn.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from typing import TYPE_CHECKING

from referee.server.faults import FaultKind
from referee.server.pending import Pending, Reply, Seated, StreamState
from referee.wire.fastcodec import (
    RequestEncoder,
    bank_field,
    batch_message,
    deadline_field,
    length_delimited,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from referee.rules import ViewFields
    from referee.wire import nap_pb2

_request_ids = itertools.count(1)
"""Request ids are unique across the referee, so an answer to another bot's id is caught."""

_LAZY_S = 0.05
"""A notice that rides in batches waits at most this long for a batch to ride with."""

_MIN_GAP_S = 0.001
"""With batching on, an idle bot still gets at most one batch per this long (fuller batches)."""

_EARLY_S = 1e-4
"""A deadline this close counts as passed when the link's timer fires (clock granularity)."""


class BotLink:
    """Everything the referee keeps about one bot identity."""

    def __init__(self, name: str, *, max_outstanding: int, reconnect_grace_s: float,
                 orphan_fault: Callable[[str, FaultKind, str], None],
                 batch_window_s: float = 0.005) -> None:
        self.name = name
        self.cap = max_outstanding
        self.max_outstanding = max_outstanding
        self.wants_events = False
        self.tables: dict[str, Seated] = {}
        self.hello = asyncio.Event()
        self._grace_s = reconnect_grace_s
        self._window_s = batch_window_s
        self._orphan_fault = orphan_fault
        self._stream: StreamState | None = None
        self._gone = False
        self._grace_timer: asyncio.TimerHandle | None = None
        self._outstanding: dict[int, Pending] = {}
        self._queue: deque[Pending] = deque()
        self._clocked: dict[int, Pending] = {}
        self._sweep: asyncio.TimerHandle | None = None
        self._sweep_at = 0.0
        self._flush: asyncio.TimerHandle | None = None
        self._lazy: asyncio.TimerHandle | None = None
        self._flushed_at = 0.0
        self._events: list[bytes] = []
        self._notices: list[nap_pb2.RefereeMessage] = []
        self._notices_in_batch = False
        self._retired: set[int] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def connected(self) -> bool:
        """Whether a stream is attached now."""
        return self._stream is not None

    def _running(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop

    # -- streams ---------------------------------------------------------------------------

    def attach(self, *, max_batch: int, wants_events: bool,
               notices_in_batch: bool = False) -> StreamState:
        """Attach a new stream; re-send every request still outstanding."""
        self.max_outstanding = max(1, min(max_batch, self.cap))
        self.wants_events = wants_events
        self._notices_in_batch = notices_in_batch
        self._gone = False
        if self._grace_timer is not None:
            self._grace_timer.cancel()
            self._grace_timer = None
        # Outstanding requests go back to the head of the queue and are sent first, with
        # what is left of their deadline (their clocks keep running).
        for pending in sorted(self._outstanding.values(), key=lambda p: p.request_id,
                              reverse=True):
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
        self._cancel_flush()
        if self.tables:
            self.report(FaultKind.DISCONNECT, detail)
        loop = self._running()
        now = loop.time()
        for pending in self._outstanding.values():
            self._start_clock(pending, now)
        for pending in self._queue:
            self._start_clock(pending, now)
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

    async def outgoing(self, stream: StreamState) -> list[bytes]:
        """Wait for something to send on ``stream`` (serialized RefereeMessages); empty once closed."""
        while not stream.closed:
            await stream.wake.wait()
            stream.wake.clear()
            if stream.closed:
                break
            self._cancel_flush()
            self._flushed_at = self._running().time()
            messages = self._drain()
            if messages:
                return messages
        return []

    def _drain(self) -> list[bytes]:
        out: list[bytes] = []
        room = self.max_outstanding - len(self._outstanding)
        requests: list[bytes] = []
        queue = self._queue
        if room > 0 and queue:
            now = self._running().time()
            outstanding = self._outstanding
            while room > 0 and queue:
                pending = queue.popleft()
                if pending.done:
                    continue
                outstanding[pending.request_id] = pending
                if pending.expires_at is None:
                    pending.sent_at = now
                    self._start_clock(pending, now)
                    deadline_ms = pending.deadline_ms
                else:  # re-sent after a reconnect: what is left of its deadline
                    deadline_ms = max(1, int((pending.expires_at - now) * 1000))
                requests.append(pending.head + deadline_field(deadline_ms) + pending.tail)
                room -= 1
        notices = self._notices
        inside = b""
        if notices and self._notices_in_batch:
            inside = b"".join([
                length_delimited(b"\x1a" if notice.HasField("table_closed") else b"\x22",
                                 (notice.table_closed if notice.HasField("table_closed")
                                  else notice.fault).SerializeToString())
                for notice in notices])
            notices = []
        if requests or self._events or inside:
            out.append(batch_message(requests, self._events, inside))
            self._events = []
        if notices:
            out.extend(notice.SerializeToString() for notice in notices)
        self._notices = []
        return out

    def _wake(self) -> None:
        """Something is ready to send: wake the writer now, or once the bot has answered.

        While the bot holds unanswered requests (and may hold more than one), new ones wait
        for its answers or ``batch_window_s``, whichever comes first, so they travel together;
        and batches to one bot are at least :data:`_MIN_GAP_S` apart.
        """
        stream = self._stream
        if stream is None or self._flush is not None or stream.wake.is_set():
            return
        if self.max_outstanding > 1 and self._window_s > 0:
            if self._outstanding:
                self._flush = self._running().call_later(self._window_s, self._flush_now)
                return
            loop = self._running()
            at = self._flushed_at + _MIN_GAP_S
            if at > loop.time():
                self._flush = loop.call_at(at, self._flush_now)
                return
        stream.wake.set()

    def _cancel_flush(self) -> None:
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if self._lazy is not None:
            self._lazy.cancel()
            self._lazy = None

    def _flush_now(self) -> None:
        self._flush = None
        self._lazy = None
        if self._stream is not None:
            self._stream.wake.set()

    # -- requests --------------------------------------------------------------------------

    def ask(self, view: ViewFields, *, table: str, deadline_ms: int, time_bank_ms: int,  # noqa: PLR0913 - keywords
            on_reply: Callable[[Reply], None] | None = None,
            encoder: RequestEncoder | None = None) -> Pending:
        """Send a decision request for the seat to act in ``view``; ``on_reply`` gets its reply.

        ``view`` is the fields of that seat's view (:func:`referee.rules.view_fields`): the
        request is encoded from them alone. ``on_reply`` is called exactly once (never
        from inside this call), unless the request is withdrawn by :meth:`withdraw` with
        ``notify=False``. ``encoder`` is the table's (it keeps the growing parts of the
        views already encoded).
        """
        callback = on_reply if on_reply is not None else _ignore
        request_id = next(_request_ids)
        if encoder is None:
            encoder = RequestEncoder(table)
        head, tail = encoder.request_of(view, request_id=request_id)
        pending = Pending(request_id, table, head, tail + bank_field(time_bank_ms),
                          deadline_ms, callback)
        if self._gone:
            pending.done = True
            self._running().call_soon(callback, Reply(None, 0.0, FaultKind.DISCONNECT))
            return pending
        self._queue.append(pending)
        if self._stream is None:
            self._start_clock(pending, self._running().time())
        else:
            self._wake()
        return pending

    def _start_clock(self, pending: Pending, now: float) -> None:
        if pending.expires_at is not None:
            return
        if pending.sent_at is None:
            pending.sent_at = now
        expires_at = pending.expires_at = pending.sent_at + pending.deadline_ms / 1000
        self._clocked[pending.request_id] = pending
        if self._sweep is None or expires_at < self._sweep_at:
            self._set_sweep(expires_at)

    def _set_sweep(self, at: float) -> None:
        """Set the link's one deadline timer for ``at`` (earlier than the one set, if any)."""
        if self._sweep is not None:
            self._sweep.cancel()
        self._sweep_at = at
        self._sweep = self._running().call_at(at, self._expire)

    def _expire(self) -> None:
        """The link's one deadline timer: fail every request past its deadline, set the next."""
        self._sweep = None
        now = self._running().time()
        clocked = self._clocked
        late = [p for p in clocked.values() if p.expires_at is not None
                and p.expires_at <= now + _EARLY_S]
        for pending in late:
            if self._outstanding.pop(pending.request_id, None) is not None:
                self._retired.add(pending.request_id)
            self._finish(pending, Reply(None, self._elapsed_ms(pending), FaultKind.LATE))
        if clocked:  # (a callback above may have set the timer already: set it again)
            self._set_sweep(min(p.expires_at or now for p in clocked.values()))
        elif self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        if late and self._queue:
            self._wake()

    def _elapsed_ms(self, pending: Pending) -> float:
        if pending.sent_at is None:
            return 0.0
        return (self._running().time() - pending.sent_at) * 1000

    def _finish(self, pending: Pending, reply: Reply) -> None:
        """End ``pending`` with ``reply`` (once): the callback runs now."""
        if pending.done:
            return
        pending.done = True
        self._clocked.pop(pending.request_id, None)
        pending.on_reply(reply)

    def on_answers(self, answers: Iterable[nap_pb2.Answer]) -> None:
        """Route answers to their requests; an id not outstanding here is a fault."""
        now = self._running().time()
        outstanding = self._outstanding
        clocked = self._clocked
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
            if pending.done:
                continue
            pending.done = True
            del clocked[request_id]
            sent_at = pending.sent_at if pending.sent_at is not None else now
            pending.on_reply(Reply(answer.action, (now - sent_at) * 1000))
        if self._queue:
            if not outstanding and self._flush is not None:  # it answered all: no need to wait
                self._flush.cancel()
                self._flush = None
            self._wake()

    def withdraw(self, pending: Pending, *, notify: bool = True) -> None:
        """Give up on ``pending`` (its table closed, or its bot was disqualified).

        A later answer to it is ignored. With ``notify`` its callback gets a DISCONNECT
        reply soon after (not from inside this call).
        """
        if pending.done:
            return
        pending.done = True
        self._clocked.pop(pending.request_id, None)
        if self._outstanding.pop(pending.request_id, None) is not None:
            self._retired.add(pending.request_id)
        if notify:
            reply = Reply(None, self._elapsed_ms(pending), FaultKind.DISCONNECT)
            self._running().call_soon(pending.on_reply, reply)

    # -- events and notices ----------------------------------------------------------------

    def send_events(self, events: Iterable[nap_pb2.TableEvent]) -> None:
        """Queue table events for the next batch (dropped while the bot is gone)."""
        if self._gone:
            return
        self._events.extend(event.SerializeToString() for event in events)
        if self._stream is not None:
            self._wake()

    def notify(self, message: nap_pb2.RefereeMessage) -> None:
        """Queue a notice (a Fault or a TableClosed): in the next batch if the bot opted in, else after it."""
        if self._gone:
            return
        self._notices.append(message)
        stream = self._stream
        if stream is None:
            return
        if not self._notices_in_batch:
            self._wake()
        elif self._lazy is None and not stream.wake.is_set():
            # rides with the next batch; sent alone only if none comes soon
            self._lazy = self._running().call_later(_LAZY_S, self._flush_now)

    def report(self, kind: FaultKind, detail: str, *, request_id: int = 0,
               action: str = "") -> None:
        """Record a fault of the connection at every table the bot sits at."""
        if not self.tables:
            self._orphan_fault(self.name, kind, detail)
            return
        for table in list(self.tables.values()):
            table.bot_fault(self.name, kind, detail, request_id=request_id, action=action)

    def leave(self, table: str, pending: Pending | None = None) -> None:
        """The bot no longer sits at ``table``: withdraw ``pending``, the table's request to it."""
        self.tables.pop(table, None)
        if pending is not None:
            self.withdraw(pending)


def _ignore(reply: Reply) -> None:
    del reply
