"""One bot's outgoing side: its stream, its batches, and when to send them.

A :class:`BotLink` belongs to a bot identity and outlives its streams; what to send and
when a request's clock runs is the match core's business (:class:`~referee.match.BotState`,
which the link reads, and the :class:`~referee.match.Arbiter`, from which it takes the
requests to send). The link only decides *when* to write and encodes what it writes.

Outgoing traffic is batched: requests, events and notices produced while the writer is
busy or in the same event-loop tick go out together, the requests and events in ONE
Batch, already serialized (see :mod:`referee.wire.fastcodec`). While the bot still holds
requests it has not answered, new ones wait (up to a window that widens with what it
holds, :func:`batch_window`) so that they go out together when it answers: fewer, fuller
messages cost both sides far less than many small ones.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol

from referee.wire.fastcodec import batch_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from referee.match import Arbiter, BotState
    from referee.wire.fastcodec import Notice, RequestEncoder
    from referee.wire.stream import RefusalReason

_LAZY_S = 0.05
"""A notice that rides in batches waits at most this long for a batch to ride with."""

_MIN_GAP_S = 0.001
"""With batching on, an idle bot still gets at most one batch per this long (fuller batches)."""

WIDEN_EVERY: Final = 8
"""A bot holding more requests than this waits a wider window: see :func:`batch_window`."""

WIDEST: Final = 4
"""The widest window, in narrow windows: see :func:`batch_window`."""


def batch_window(narrow_s: float, held: int) -> float:
    """How long new requests wait for a bot holding ``held`` unanswered ones (seconds).

    ``narrow_s`` (``batch_window_s``) while it holds at most :data:`WIDEN_EVERY`, so one
    table (``nap serve``, ``nap play``, ``bot check``) and a few keep their pace; then
    ``narrow_s`` more for every :data:`WIDEN_EVERY` held, up to :data:`WIDEST` times
    ``narrow_s``. Why: a bot that holds many requests answers them one by one as each is
    thought (an ``async def`` bot at many tables), and each answer frees one new request;
    sent each on its own, every one costs both sides the price of a message. At 1,000
    tables (``bench/load.py``, about 55 held per bot process) a 20 ms window took 11% less
    CPU per decision than 5 ms, and 50 ms saved only 2 points more. The wait is not charged
    to the bot (a request is clocked from when it is written), and a bot that answers
    everything it holds gets what waits at once (:meth:`BotLink.answered`).
    """
    if held <= WIDEN_EVERY:
        return narrow_s
    return narrow_s * min(WIDEST, held / WIDEN_EVERY)


@dataclass(slots=True, eq=False)
class StreamState:
    """One attached stream; ``closed`` tells its writer to stop."""

    closed: bool = False
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class CpuMeter(Protocol):
    """How the referee reads a local bot's CPU: its process tree's, from outside it (the host's)."""

    def __call__(self) -> float | None:
        """The CPU the bot's process tree has spent so far, in ms; None when it cannot be read now."""


class BotLink:
    """The stream and outgoing buffers of one bot identity.

    ``encoders`` are the referee's, one per table playing (they keep the parts of the
    table's views already encoded); the link encodes each request as it sends it, and
    calls ``sent`` after sending requests (their clocks started: the referee's timer may
    have to be set earlier). ``cpu`` reads the bot's CPU for the CPU clock (None: the
    bot is on the wall clock): before requests leave, as answers come, and when the
    clock asks (:meth:`read_cpu`); ``charge(name, reading)`` hands the referee the reading
    taken before requests leave (its outputs carried out before they are taken).
    """

    def __init__(  # noqa: PLR0913 - keywords
        self,
        state: BotState,
        *,
        arbiter: Arbiter,
        encoders: dict[str, RequestEncoder],
        sent: Callable[[], None],
        batch_window_s: float = 0.005,
        cpu: CpuMeter | None = None,
        charge: Callable[[str, float], None] | None = None,
    ) -> None:
        self.name = state.name
        self.state = state
        self.cpu = cpu
        self._charge = charge
        self._arbiter = arbiter
        self._encoders = encoders
        self._sent = sent
        self._window_s = batch_window_s
        self.hello = asyncio.Event()
        self.decisions: tuple[str, ...] | None = None
        """The decision kinds beyond bids and cards its last Hello listed; None before any Hello."""
        self.refusal: tuple[RefusalReason, str] | None = None
        """Why the referee refused a Hello with this bot's token since it last connected (the reason
        and the message sent), until :meth:`referee.server.Referee.take_refusal` takes it."""
        self._stream: StreamState | None = None
        self._flush: asyncio.TimerHandle | None = None
        self._lazy: asyncio.TimerHandle | None = None
        self._flushed_at = 0.0
        self._events: list[bytes] = []
        self._notices: list[Notice] = []
        self._notices_in_batch = False
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def connected(self) -> bool:
        """Whether a stream is attached now."""
        return self._stream is not None

    @property
    def stream(self) -> StreamState | None:
        """The stream attached now, if any."""
        return self._stream

    def _running(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop

    # -- streams ---------------------------------------------------------------------------

    def attach(self, *, notices_in_batch: bool) -> StreamState:
        """Attach a new stream (the core has re-queued what was in flight); wake its writer."""
        self._notices_in_batch = notices_in_batch
        self.refusal = None
        stream = self._stream = StreamState()
        self.hello.set()
        stream.wake.set()
        return stream

    def detach(self, stream: StreamState) -> bool:
        """The stream ended; False if it was not the one attached (nothing to do then)."""
        stream.closed = True
        stream.wake.set()
        if self._stream is not stream:
            return False
        self._stream = None
        self._cancel_flush()
        return True

    def forget(self) -> None:
        """The bot is gone for good: drop what waits to be sent to it."""
        self._events.clear()
        self._notices.clear()

    async def outgoing(self, stream: StreamState) -> list[bytes]:
        """Wait for something to send on ``stream`` (serialized RefereeMessages); empty once closed."""
        while not stream.closed:
            await stream.wake.wait()
            stream.wake.clear()
            if stream.closed:
                break
            self._cancel_flush()
            loop = self._running()
            self._flushed_at = now = loop.time()
            messages = self._drain(now * 1000)
            if messages:
                return messages
        return []

    def read_cpu(self) -> float | None:
        """A reading of the bot's CPU (ms) for the CPU clock; None on the wall clock or when unreadable."""
        cpu = self.cpu
        return None if cpu is None else cpu()

    def _drain(self, now_ms: float) -> list[bytes]:
        encoders = self._encoders
        if self.cpu is not None and self._charge is not None and self.state.queued:
            reading = self.read_cpu()
            if reading is not None:
                self._charge(self.name, reading)
        requests = [
            encoders[ask.table].batch_entry(
                ask.view, request_id=ask.request_id, deadline_ms=deadline_ms, bank_ms=ask.bank_ms
            )
            for ask, deadline_ms in self._arbiter.take(self.name, now_ms)
        ]
        if requests:
            self._sent()
        notices = self._notices
        inside: list[bytes] = []
        if notices and self._notices_in_batch:
            inside = [notice.in_batch for notice in notices]
            notices = []
        out: list[bytes] = []
        if requests or self._events or inside:
            out.append(batch_of(requests, self._events, inside))
            self._events = []
        if notices:
            out.extend(notice.alone for notice in notices)
        self._notices = []
        return out

    # -- when to write ---------------------------------------------------------------------

    def wake(self) -> None:
        """Something is ready to send: wake the writer now, or once the bot has answered.

        While the bot holds unanswered requests (and may hold more than one), new ones wait
        for its answers or the :func:`batch_window` for what it holds, whichever comes
        first, so they travel together; and batches to one bot are at least
        :data:`_MIN_GAP_S` apart.
        """
        stream = self._stream
        if stream is None or self._flush is not None or stream.wake.is_set():
            return
        if self.state.max_outstanding > 1 and self._window_s > 0:
            held = len(self.state.outstanding)
            if held:
                self._flush = self._running().call_later(batch_window(self._window_s, held), self._flush_now)
                return
            loop = self._running()
            at = self._flushed_at + _MIN_GAP_S
            if at > loop.time():
                self._flush = loop.call_at(at, self._flush_now)
                return
        stream.wake.set()

    def answered(self) -> None:
        """The bot's answers were handled: send what waits, without waiting once it holds nothing."""
        if not self.state.queued:
            return
        if not self.state.outstanding and self._flush is not None:
            self._flush.cancel()
            self._flush = None
        self.wake()

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

    # -- events and notices ----------------------------------------------------------------

    def send_events(self, events: list[bytes]) -> None:
        """Queue serialized table events for the next batch (dropped while the bot is gone)."""
        if self.state.gone:
            return
        self._events.extend(events)
        if self._stream is not None:
            self.wake()

    def notify(self, notice: Notice) -> None:
        """Queue a notice (a Fault or a TableClosed): in the next batch if the bot opted in, else after it."""
        if self.state.gone:
            return
        self._notices.append(notice)
        stream = self._stream
        if stream is None:
            return
        if not self._notices_in_batch:
            self.wake()
        elif self._lazy is None and not stream.wake.is_set():
            # rides with the next batch; sent alone only if none comes soon
            self._lazy = self._running().call_later(_LAZY_S, self._flush_now)
