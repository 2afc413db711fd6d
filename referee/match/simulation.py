"""The match core driven in simulated time, with bots that are Python callables.

A :class:`Simulation` is the third caller of the :class:`~referee.match.arbiter.Arbiter`,
beside the gRPC referee: it plays sessions between bots that answer each request with
:class:`Answer`, :class:`Leave` or :class:`Garble` reactions, each after a simulated
delay. Time only moves when nothing is left to do now: to the next reaction, or to the
next deadline or grace period's end. A session with bots that answer at once takes no
simulated time at all; one with a silent bot plays its whole clock in microseconds.

It is what in-process play runs on (the same tables, clocks, faults and policies as over
gRPC, for the same choices of the same bots), and what the fault tests drive: every
fault scenario of the referee (late, bank exhausted, illegal, malformed, unknown
request, answered twice, gone and back, disqualified, revoke penalty) replays here in
milliseconds, with nothing left to timing.

Requests are delivered as soon as they can be sent (no batching window), at most the
bot's ``max_batch`` in flight. Everything each bot would have been sent is kept in
:attr:`Simulation.received`.

A bot may be clocked in its CPU (``cores`` given to :meth:`Simulation.add_bot`), as the
referee clocks a local bot: its simulated process spends each reaction's ``cpu_ms``
evenly from the moment it was sent the request to the reaction, and ``busy`` cores all
the time besides (a bot with threads spinning in the background); the referee reads that
CPU when it sends the bot requests, when the bot answers and when its clock asks.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, assert_never

from referee.match.arbiter import Arbiter
from referee.match.faults import FaultKind
from referee.match.messages import Ask, Closed, Faulted, Finished, Tell, Unseated

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from referee.match.clock import Clock
    from referee.match.faults import Fault
    from referee.match.messages import Output, SessionOutcome, SessionSpec


@dataclass(frozen=True, slots=True)
class Answer:
    """Answer request ``request_id`` with ``text``, ``after_ms`` from now, having spent ``cpu_ms`` on it."""

    request_id: int
    text: str
    after_ms: float = 0.0
    cpu_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class Leave:
    """Drop the connection ``after_ms`` from now; come back ``back_after_ms`` later (None: never)."""

    after_ms: float = 0.0
    back_after_ms: float | None = None
    detail: str = "connection lost"
    cpu_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class Garble:
    """Send ``after_ms`` from now bytes that are no message: a malformed fault, and the connection ends."""

    after_ms: float = 0.0
    cpu_ms: float = 0.0


Reaction = Answer | Leave | Garble
"""What a simulated bot does about a request."""

GARBLED = "a message that is not a BotMessage"
"""The detail of the malformed fault a garbled message draws (as over gRPC)."""


@dataclass(slots=True)
class _Process:
    """A simulated bot process's CPU: each reaction's spent evenly until it comes, and a busy rate."""

    busy: float = 0.0
    """Cores it keeps busy all the time besides its reactions."""
    spent: float = 0.0
    """The CPU of the reactions that have come."""
    working: list[tuple[float, float, float]] = field(default_factory=list)
    """The reactions still to come: (sent at, due at, CPU), each spent evenly in between."""

    def work(self, start: float, end: float, cpu_ms: float) -> None:
        if cpu_ms > 0:
            self.working.append((start, end, cpu_ms))

    def cpu(self, now: float) -> float:
        """The CPU spent from 0 to ``now`` (ms)."""
        ongoing = 0.0
        left = []
        for start, end, cpu_ms in self.working:
            if end <= now:
                self.spent += cpu_ms
            else:
                left.append((start, end, cpu_ms))
                ongoing += cpu_ms * max(0.0, now - start) / (end - start)
        self.working = left
        return self.busy * now + self.spent + ongoing


@dataclass(slots=True)
class _Bot:
    respond: Callable[[Ask, int, float], Iterable[Reaction]]
    max_batch: int
    listening: bool
    on_tell: Callable[[Tell], None] | None
    process: _Process | None
    """Its process's CPU, on the CPU clock (None: the wall clock)."""
    received: list[Output] = field(default_factory=list)

    def cpu(self, now: float) -> float | None:
        return None if self.process is None else self.process.cpu(now)


class Simulation:
    """Sessions on an :class:`Arbiter`, in simulated time (milliseconds from 0)."""

    def __init__(
        self, *, fault_limit: int = 10, reconnect_grace_ms: float = 5000.0, max_outstanding: int = 256
    ) -> None:
        self.arbiter = Arbiter(
            fault_limit=fault_limit, reconnect_grace_ms=reconnect_grace_ms, max_outstanding=max_outstanding
        )
        self.now = 0.0
        self.unseated: list[Fault] = []
        """Faults of bots that sat at no table."""
        self._bots: dict[str, _Bot] = {}
        self._events: list[tuple[float, int, str, Reaction | None]] = []
        self._order = itertools.count()
        self._to_write: dict[str, None] = {}
        """Bots with requests waiting to be sent, in the order they got them (so a run replays)."""
        self._outcomes: dict[str, SessionOutcome] = {}

    def add_bot(  # noqa: PLR0913 - keywords
        self,
        name: str,
        respond: Callable[[Ask, int, float], Iterable[Reaction]],
        *,
        max_batch: int = 64,
        listening: bool = False,
        on_tell: Callable[[Tell], None] | None = None,
        cores: float | None = None,
        busy: float = 0.0,
    ) -> None:
        """Register ``name``, connected from the start.

        ``respond(ask, deadline_ms, now)`` reacts to each request it is sent; ``on_tell``
        (if given) gets each :class:`Tell` for it. With ``cores`` the bot is on the CPU
        clock (its process can spend that many ms of CPU per ms), and keeps ``busy`` cores
        busy besides its reactions.
        """
        self.arbiter.add_bot(name)
        process = None if cores is None else _Process(busy=busy)
        self._bots[name] = _Bot(respond, max_batch, listening, on_tell, process)
        if cores is not None:
            self.arbiter.clock_cpu(name, cores=cores)
        self.arbiter.attach(name, max_batch=max_batch, listening=listening)

    def clock(self, bot: str) -> Clock:
        """The clock ``bot``'s decisions run on."""
        return self.arbiter.clock(bot)

    def received(self, bot: str) -> list[Output]:
        """Everything ``bot`` was told (tells, fault notices, closings), in order."""
        return self._bots[bot].received

    def play(self, *specs: SessionSpec) -> list[SessionOutcome]:
        """Play the sessions at once, to their ends; their outcomes in the order given."""
        for spec in specs:
            self._handle(self.arbiter.open(spec, self.now))
        tables = [spec.table for spec in specs]
        while len(self._outcomes) < len(tables):
            self._write()
            self._step()
        return [self._outcomes.pop(table) for table in tables]

    # -- the loop --------------------------------------------------------------------------

    def _step(self) -> None:
        """Move time to the next thing to happen and make it happen."""
        events = self._events
        wake = self.arbiter.wake_at
        if events and (wake is None or events[0][0] <= wake):
            at, _, bot, reaction = heapq.heappop(events)
            self.now = max(self.now, at)
            self._react(bot, reaction)
        elif wake is not None:
            now = self.now = max(self.now, wake)
            bots = self._bots
            readings = {name: bots[name].cpu(now) or 0.0 for name in self.arbiter.cpu_due(now)}
            self._handle(self.arbiter.tick(now, readings))
        else:  # pragma: no cover - a table always waits on a reaction or a clock
            msg = f"the simulation stalled at {self.now} ms: no reaction and no deadline pending"
            raise RuntimeError(msg)

    def _write(self) -> None:
        """Send each connected bot what it has waiting, and schedule its reactions."""
        while self._to_write:
            name = next(iter(self._to_write))
            del self._to_write[name]
            bot = self._bots[name]
            if not self.arbiter.bot(name).connected:
                continue
            now = self.now
            cpu = bot.cpu(now)
            if cpu is not None:
                self._handle(self.arbiter.read_cpu(name, cpu, now))
            for ask, deadline_ms in self.arbiter.take(name, now):
                for reaction in bot.respond(ask, deadline_ms, now):
                    if bot.process is not None:
                        bot.process.work(now, now + reaction.after_ms, reaction.cpu_ms)
                    self._schedule(name, reaction.after_ms, reaction)

    def _schedule(self, bot: str, after_ms: float, reaction: Reaction | None) -> None:
        heapq.heappush(self._events, (self.now + after_ms, next(self._order), bot, reaction))

    def _react(self, name: str, reaction: Reaction | None) -> None:
        arbiter, now = self.arbiter, self.now
        state = arbiter.bot(name)
        if reaction is None:  # back after a Leave
            bot = self._bots[name]
            arbiter.attach(name, max_batch=bot.max_batch, listening=bot.listening)
            self._to_write[name] = None
            return
        if not state.connected:
            return  # nothing reaches the referee from a bot that is away
        if isinstance(reaction, Answer):
            cpu = self._bots[name].cpu(now)
            self._handle(arbiter.answers(name, ((reaction.request_id, reaction.text),), now, cpu))
            if state.queued:
                self._to_write[name] = None
        elif isinstance(reaction, Leave):
            self._handle(arbiter.detach(name, now, reaction.detail))
            if reaction.back_after_ms is not None:
                self._schedule(name, reaction.back_after_ms, None)
        else:
            self._handle(arbiter.connection_fault(name, FaultKind.MALFORMED, GARBLED, now))
            self._handle(arbiter.detach(name, now, f"malformed: {GARBLED}"))

    def _handle(self, outputs: list[Output]) -> None:
        for item in outputs:
            if type(item) is Ask:
                self._to_write[item.bot] = None
                continue
            if type(item) is Finished:
                self._outcomes[item.table] = item.outcome
                continue
            if type(item) is Unseated:
                self.unseated.append(item.fault)
                continue
            if type(item) is Faulted:
                name = item.fault.bot
            elif type(item) is Tell or type(item) is Closed:
                name = item.bot
            else:
                assert_never(item)
            if self.arbiter.bot(name).gone:
                continue  # dropped, as over gRPC, while the bot is gone
            bot = self._bots[name]
            bot.received.append(item)
            if type(item) is Tell and bot.on_tell is not None:
                bot.on_tell(item)
