"""One bot's side of the referee: its requests in flight, their clocks, and its comings and goings.

A :class:`BotState` belongs to a bot identity and outlives its connections. Requests
queue until there is room (at most :attr:`BotState.max_outstanding` in flight); a
request's clock starts when it is sent, or at once while the bot is away, so a decision
due meanwhile waits no longer than its deadline. When the bot goes away its requests
stay; when it comes back within the grace period the ones still in flight are sent
again with what is left of their deadlines; once the grace period is over every request
for it fails at once, until it returns.

Times are milliseconds on the caller's clock, given with each call; nothing here reads
a clock or arms a timer: :class:`~referee.match.arbiter.Arbiter` asks for the next time
something is due. A request's clock is a :class:`Request` of this bookkeeping around the
match core's :class:`~referee.match.messages.Ask`, which stays as the core made it.

A bot on the CPU clock (:meth:`BotState.clock_cpu`) keeps a
:class:`~referee.match.cpu.CpuLedger`: the requests it was sent are held there from then
until they end, the caller's readings of its process's CPU come in
(:meth:`BotState.read_cpu`) before requests are sent to it, with its answers and when
:attr:`BotState.cpu_check_at` is reached, and each request ends with the CPU it was
charged (:attr:`Request.cpu_ms`). Its requests' wall-clock
deadlines are then their backstops (:attr:`~referee.match.messages.Ask.backstop_ms`).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from referee.match.clock import Clock
from referee.match.cpu import CpuLedger

if TYPE_CHECKING:
    from referee.match.messages import Ask

EARLY_MS = 0.1
"""A deadline this close counts as passed (timer granularity)."""

WRITE_SLACK_MS = 0.5
"""A write that took no longer than this moves no clock (the common case costs nothing)."""

RETIRED_KEPT = 4096
"""How many ended ids a bot's late answers are still recognised for (bounded memory)."""

CPU_POLL_MS = 5.0
"""The shortest wait between two readings of a CPU-clocked bot's CPU for its deadlines (its
answers and the requests sent to it bring readings of their own)."""


class Request:
    """One :class:`~referee.match.messages.Ask` in a bot's queue or in flight, with its clock.

    ``sent_at`` once it left (or once the bot was away, so that a decision due meanwhile
    waits no longer than its deadline), ``expires_at`` then (``sent_at`` plus the ask's
    ``late_ms``, or its ``backstop_ms`` on the CPU clock), ``done`` once it has had its one
    reply or ended without one; ``cpu_ms`` once it ended, the CPU it was charged on the CPU
    clock (None on the wall clock).
    """

    __slots__ = ("ask", "cpu_ms", "done", "expires_at", "sent_at")

    def __init__(self, ask: Ask, *, done: bool = False) -> None:
        self.ask = ask
        self.sent_at: float | None = None
        self.expires_at: float | None = None
        self.done = done
        self.cpu_ms: float | None = None

    def elapsed(self, now: float) -> float:
        """Milliseconds from its sending to ``now`` (0 if it never left)."""
        sent_at = self.sent_at
        return 0.0 if sent_at is None else now - sent_at

    def __repr__(self) -> str:
        return f"<Request {self.ask!r} sent at {self.sent_at} expires at {self.expires_at} done {self.done}>"


class BotState:
    """Everything the referee keeps about one bot identity (pure bookkeeping)."""

    __slots__ = (
        "_clocked",
        "_queue",
        "_retired_order",
        "_taken_at",
        "_unwritten",
        "cap",
        "connected",
        "cpu",
        "cpu_check_at",
        "due",
        "gone",
        "grace_until",
        "listening",
        "max_outstanding",
        "name",
        "outstanding",
        "retired",
        "tables",
        "unknown",
    )

    def __init__(self, name: str, *, max_outstanding: int) -> None:
        self.name = name
        self.cap = max_outstanding
        """The referee's cap on requests in flight to one bot."""
        self.max_outstanding = max_outstanding
        """The cap for this connection: the referee's, or the bot's own max_batch if lower."""
        self.connected = False
        self.gone = False
        """Away past the grace period: requests for it fail at once until it comes back."""
        self.grace_until: float | None = None
        self.due: float | None = None
        """When something may be due at the latest (a deadline or the grace period's end): never
        later than :meth:`next_due`, which :meth:`due_now` brings it back to."""
        self.listening = False
        """Whether the bot asked for table events in its hello."""
        self.tables: set[str] = set()
        """The tables it sits at now."""
        self.outstanding: dict[int, Request] = {}
        """Sent and not yet answered, by request id."""
        self.retired: set[int] = set()
        """Ids sent and then ended without an answer (late or withdrawn): answers to them are
        ignored. The latest :data:`RETIRED_KEPT` only: an answer later than that is unknown."""
        self._retired_order: deque[int] = deque()
        self.unknown = 0
        """Answers to unknown requests on this connection (the referee cuts a flood off)."""
        self._queue: deque[Request] = deque()
        self._clocked: dict[int, Request] = {}
        self._unwritten: list[Request] = []
        """Requests taken to be sent whose clocks started when they were taken, at ``_taken_at``."""
        self._taken_at = 0.0
        self.cpu: CpuLedger | None = None
        """Its process's CPU while it holds requests, on the CPU clock (None: the wall clock)."""
        self.cpu_check_at: float | None = None
        """When its CPU must be read next for its requests' deadlines (None: nothing held)."""

    def clock_cpu(self, *, cores: float) -> None:
        """Clock this bot's decisions in its process's CPU (which can spend ``cores`` ms per ms)."""
        self.cpu = CpuLedger(cores=cores)

    @property
    def clock(self) -> Clock:
        """The clock its decisions run on."""
        return Clock.WALL if self.cpu is None else Clock.CPU

    @property
    def queued(self) -> bool:
        """Whether requests wait to be sent."""
        return bool(self._queue)

    # -- requests --------------------------------------------------------------------------

    def add(self, ask: Ask, now: float) -> Request:
        """Queue ``ask``; while the bot is away its clock starts now."""
        request = Request(ask)
        self._queue.append(request)
        if not self.connected:
            self._start_clock(request, now)
        return request

    def take(self, now: float) -> list[tuple[Ask, int]]:
        """The requests to send now, with the deadline each carries (ms from now).

        As many as there is room for; a request sent again after a reconnect carries what
        is left of its deadline. On the CPU clock each is held from now: the caller reads
        the process's CPU first (:meth:`read_cpu`), so that what it spent before is shared
        among the requests it held then.
        """
        ledger = self.cpu
        room = self.max_outstanding - len(self.outstanding)
        queue = self._queue
        sent: list[tuple[Ask, int]] = []
        outstanding = self.outstanding
        while room > 0 and queue:
            request = queue.popleft()
            if request.done:
                continue
            ask = request.ask
            outstanding[ask.request_id] = request
            if ledger is not None:
                ledger.hold(ask.request_id, ask.late_ms)
            sent_at = request.sent_at
            if request.expires_at is None or sent_at is None:
                self._start_clock(request, now)
                self._unwritten.append(request)
                self._taken_at = now
                sent.append((ask, ask.deadline_ms))
            else:  # what is left of the deadline it was told
                sent.append((ask, max(1, int(sent_at + ask.deadline_ms - now))))
            room -= 1
        if ledger is not None and sent:
            self.check_cpu(now)
        return sent

    def written(self, now: float) -> None:
        """The requests last taken are out (written to the stream): their clocks start now.

        A request's clock first starts when it is taken, so that one that can never be
        written (a bot that reads nothing) still expires; once written, it runs from then:
        no bot is charged for the time its request waited to be written.
        """
        if now - self._taken_at > WRITE_SLACK_MS:
            for request in self._unwritten:
                if not request.done and request.sent_at is not None and request.sent_at < now:
                    request.sent_at = now
                    request.expires_at = now + self._wall_limit(request.ask)
        self._unwritten.clear()

    def answer(self, request_id: int) -> Request | bool:
        """The request an answer with ``request_id`` ends; True to ignore it, False if unknown.

        Ignored: an answer to a request that already ended without one (late, withdrawn).
        Unknown: an id never sent to this bot, or already answered.
        """
        request = self.outstanding.pop(request_id, None)
        if request is None:
            return request_id in self.retired
        if request.done:
            return True
        request.done = True
        self._clocked.pop(request_id, None)
        ledger = self.cpu
        if ledger is not None:
            request.cpu_ms = ledger.release(request_id)
        return request

    def read_cpu(self, cpu_ms: float, now: float) -> list[Request]:
        """A reading of its process's CPU (on the CPU clock): end and return the requests it outran.

        Oldest first, each charged its limit (:meth:`~referee.match.cpu.CpuLedger.overrun`);
        the next reading is due at :attr:`cpu_check_at`.
        """
        ledger = self.cpu
        if ledger is None:
            return []
        ledger.read(cpu_ms)
        late = []
        for request_id, charged in ledger.overrun():
            request = self.outstanding.get(request_id)
            if request is not None and not request.done:
                self._end(request)
                request.cpu_ms = charged
                late.append(request)
        self.check_cpu(now)
        return late

    def check_cpu(self, now: float) -> None:
        """Set when the CPU must be read next: as soon as the process could outrun its limits.

        Called after every reading, and after answers (a request that took little of its
        limit leaves the others less to share).
        """
        ledger = self.cpu
        wait = None if ledger is None else ledger.check_in_ms(least_ms=CPU_POLL_MS)
        at = self.cpu_check_at = None if wait is None else now + wait
        if at is not None and (self.due is None or at < self.due):
            self.due = at

    def expired(self, now: float) -> list[Request]:
        """End every request past its deadline (they are retired): the late ones."""
        late = [
            request
            for request in self._clocked.values()
            if request.expires_at is not None and request.expires_at <= now + EARLY_MS
        ]
        for request in late:
            self._end(request)
        return late

    def withdraw(self, request: Request) -> bool:
        """End ``request`` without an answer (its table closed); False if it had ended already."""
        if request.done:
            return False
        self._end(request)
        return True

    def due_now(self, now: float) -> tuple[list[Request], list[Request] | None]:
        """What is due at ``now``: the late requests, and those of a bot gone for good.

        The second list is None unless the grace period is over at ``now``.
        """
        late = self.expired(now)
        grace = self.grace_until
        gone = self.give_up() if grace is not None and grace <= now + EARLY_MS else None
        self.due = self.next_due()
        return late, gone

    def next_due(self) -> float | None:
        """When something is due next: a deadline, the grace period's end, or a reading of its CPU."""
        due = min(
            (request.expires_at for request in self._clocked.values() if request.expires_at is not None),
            default=None,
        )
        for at in (self.grace_until, self.cpu_check_at):
            if at is not None and (due is None or at < due):
                due = at
        return due

    def cpu_due(self, now: float) -> bool:
        """Whether its CPU must be read at ``now`` (on the CPU clock)."""
        at = self.cpu_check_at
        return at is not None and at <= now + EARLY_MS

    def _wall_limit(self, ask: Ask) -> int:
        """How long ``ask`` may be held on the wall clock: its deadline, or on the CPU clock its backstop."""
        return ask.late_ms if self.cpu is None else ask.backstop_ms

    def _start_clock(self, request: Request, now: float) -> None:
        if request.expires_at is not None:
            return
        sent_at = request.sent_at
        if sent_at is None:
            sent_at = request.sent_at = now
        expires = request.expires_at = sent_at + self._wall_limit(request.ask)
        self._clocked[request.ask.request_id] = request
        due = self.due
        if due is None or expires < due:
            self.due = expires

    def _end(self, request: Request) -> None:
        request.done = True
        request_id = request.ask.request_id
        self._clocked.pop(request_id, None)
        ledger = self.cpu
        if ledger is not None:
            request.cpu_ms = ledger.release(request_id)
        if self.outstanding.pop(request_id, None) is not None:
            retired = self.retired
            retired.add(request_id)
            order = self._retired_order
            order.append(request_id)
            if len(order) > RETIRED_KEPT:
                retired.discard(order.popleft())

    # -- comings and goings ----------------------------------------------------------------

    def attach(self, *, max_batch: int, listening: bool) -> None:
        """A connection came: requests still in flight go first, with their clocks running on."""
        self.max_outstanding = max(1, min(max_batch, self.cap))
        self.listening = listening
        self.connected = True
        self.gone = False
        self.grace_until = None
        self.unknown = 0
        self._unwritten.clear()
        for request in sorted(self.outstanding.values(), key=lambda r: r.ask.request_id, reverse=True):
            self._queue.appendleft(request)
        self.outstanding.clear()

    def detach(self, now: float, *, grace_ms: float) -> None:
        """The connection ended: every request's clock runs from now on; the grace period starts."""
        self.connected = False
        for request in self.outstanding.values():
            self._start_clock(request, now)
        for request in self._queue:
            self._start_clock(request, now)
        grace = self.grace_until = now + grace_ms
        due = self.due
        if due is None or grace < due:
            self.due = grace

    def give_up(self) -> list[Request]:
        """The grace period is over: the bot is gone; end and return every request for it."""
        self.grace_until = None
        self.gone = True
        pending = [request for request in (*self.outstanding.values(), *self._queue) if not request.done]
        self.outstanding.clear()
        self._queue.clear()
        for request in pending:
            request.done = True
            self._clocked.pop(request.ask.request_id, None)
        if self.cpu is not None:
            self.cpu.drop()
            self.cpu_check_at = None
        return pending
