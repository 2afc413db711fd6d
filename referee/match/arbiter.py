r"""The referee's pure core: every table and every bot of one referee, on a clock given as values.

An :class:`Arbiter` routes between the tables (one :class:`~referee.match.loop.Match`
each) and the bots (one :class:`~referee.match.bots.BotState` each): it owns the count
the tables number their requests from (unique across the referee, so an answer to another
bot's request is caught), queues them per bot with their clocks, hands each answer to
its table, fails requests whose deadline passed or whose bot is gone for good, and
reports a connection's faults at every table the bot sits at.

Inputs: :meth:`~Arbiter.open` a table, a bot :meth:`~Arbiter.attach`\\ es or
:meth:`~Arbiter.detach`\\ es, :meth:`~Arbiter.answers` arrive, a
:meth:`~Arbiter.connection_fault`, time passes (:meth:`~Arbiter.tick` once
:attr:`~Arbiter.wake_at` is reached), :meth:`~Arbiter.abort`. A bot on the CPU clock
(:meth:`~Arbiter.clock_cpu`) also needs readings of its process's CPU, as values: before
requests are taken for it (:meth:`~Arbiter.read_cpu`), with its answers, and at each
tick for the bots :meth:`~Arbiter.cpu_due` names. Each returns the outputs the
caller carries out, in order (see :mod:`referee.match.messages`); an
:class:`~referee.match.messages.Ask` in them means its bot has a request to send, which
the caller takes with :meth:`~Arbiter.take` when it writes to that bot. The gRPC referee
and the simulated-time driver are the two callers.
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import TYPE_CHECKING

from referee.match.bots import EARLY_MS, BotState, Request
from referee.match.faults import Fault, FaultKind
from referee.match.loop import Match
from referee.match.messages import Ask, Closed, CloseReason, Finished, Unseated

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from referee.match.clock import Clock
    from referee.match.messages import Output, SessionSpec
    from referee.rules import SessionRecord


class Arbiter:
    """Tables and bots of one referee.

    ``fault_limit``: faults of one bot at one table after which it is disqualified there
    (0: never). ``reconnect_grace_ms``: how long a bot that went away may take to come
    back and keep its seats. ``max_outstanding``: requests in flight to one bot at most
    (a bot may ask for fewer). ``max_unknown_answers``: answers to unknown requests one
    connection may send (each one a fault at every table it sits at); past it the rest
    are not read and the connection is :meth:`cut_off` (0: no limit).
    """

    def __init__(
        self,
        *,
        fault_limit: int = 10,
        reconnect_grace_ms: float = 5000.0,
        max_outstanding: int = 256,
        max_unknown_answers: int = 64,
    ) -> None:
        self.fault_limit = fault_limit
        self.reconnect_grace_ms = reconnect_grace_ms
        self.max_outstanding = max_outstanding
        self.max_unknown_answers = max_unknown_answers
        self._bots: dict[str, BotState] = {}
        self._matches: dict[str, Match] = {}
        self._asks: dict[str, Request] = {}
        """Per table, its latest request."""
        self._ids = itertools.count(1)
        """The request ids of every table (drawn by its match core)."""
        self._due: deque[tuple[Ask, float, float | None]] = deque()
        """Withdrawn requests whose tables still wait for their reply, with its elapsed ms and CPU."""
        self.wake_at: float | None = None
        """When :meth:`tick` must run next (a deadline, or a grace period's end), if ever:
        never later than the first thing due."""

    # -- bots ------------------------------------------------------------------------------

    def add_bot(self, name: str) -> BotState:
        """Register bot ``name``; ValueError if it is already."""
        if name in self._bots:
            msg = f"bot {name!r} is already registered"
            raise ValueError(msg)
        state = self._bots[name] = BotState(name, max_outstanding=self.max_outstanding)
        return state

    def bot(self, name: str) -> BotState:
        """Bot ``name``'s state; KeyError naming the registered bots otherwise."""
        try:
            return self._bots[name]
        except KeyError:
            msg = f"no bot called {name!r} (registered: {', '.join(sorted(self._bots))})"
            raise KeyError(msg) from None

    def clock_cpu(self, bot: str, *, cores: float) -> None:
        """Clock bot ``bot`` in its process's CPU (which can spend ``cores`` ms of it per ms).

        From then on the caller reads that CPU (the process tree's, in ms) before it takes
        requests for the bot (:meth:`read_cpu`, then :meth:`take`), when answers come
        (:meth:`answers`) and when :meth:`cpu_due` names it (:meth:`tick`).
        """
        self._bots[bot].clock_cpu(cores=cores)

    def clock(self, bot: str) -> Clock:
        """The clock bot ``bot``'s decisions run on."""
        return self._bots[bot].clock

    def attach(self, bot: str, *, max_batch: int, listening: bool) -> None:
        """Bot ``bot`` (re)connected; what it holds in flight is sent again first."""
        state = self._bots[bot]
        state.attach(max_batch=max_batch, listening=listening)
        for table in state.tables:
            self._matches[table].listen(bot, on=listening)

    def detach(self, bot: str, now: float, detail: str) -> list[Output]:
        """Bot ``bot``'s connection ended (``detail`` says how): a disconnect where it sits."""
        state = self._bots[bot]
        state.detach(now, grace_ms=self.reconnect_grace_ms)
        self._watch(state)
        out: list[Output] = []
        if state.tables:
            self._connection_fault(state, FaultKind.DISCONNECT, detail, 0, "", now, out)
        return out

    def answers(
        self, bot: str, answers: Iterable[tuple[int, str]], now: float, cpu: float | None = None
    ) -> list[Output]:
        """Answers from ``bot``: (request id, action text) pairs, in the order they came.

        ``cpu`` is a reading of its process's CPU (ms) taken as they came, on the CPU clock:
        the requests it outran are late before the answers are played.
        """
        state = self._bots[bot]
        matches = self._matches
        out: list[Output] = []
        if cpu is not None:
            self._outran(state, cpu, now, out)
        for request_id, text in answers:
            found = state.answer(request_id)
            if type(found) is Request:
                match = matches.get(found.ask.table)
                if match is not None:
                    sent_at = found.sent_at  # set: it was sent, since it is answered
                    elapsed = 0.0 if sent_at is None else now - sent_at
                    self._carry(match, match.answered(text, elapsed, found.cpu_ms), now, out)
            elif found is False:
                if self.cut_off(bot):
                    break
                state.unknown += 1
                self._connection_fault(
                    state,
                    FaultKind.UNKNOWN_REQUEST,
                    f"request {request_id} is not outstanding on this connection",
                    request_id,
                    text,
                    now,
                    out,
                )
        if state.cpu is not None:
            state.check_cpu(now)
            self._watch(state)
        if self._due:
            self._settle(now, out)
        return out

    def connection_fault(  # noqa: PLR0913 - keywords
        self,
        bot: str,
        kind: FaultKind,
        detail: str,
        now: float,
        *,
        request_id: int = 0,
        action: str = "",
    ) -> list[Output]:
        """A fault of ``bot``'s connection (a malformed message, say), at every table it sits at."""
        out: list[Output] = []
        self._connection_fault(self._bots[bot], kind, detail, request_id, action, now, out)
        return out

    def cut_off(self, bot: str) -> bool:
        """Whether ``bot``'s connection sent more answers to unknown requests than allowed."""
        limit = self.max_unknown_answers
        return bool(limit) and self._bots[bot].unknown >= limit

    def written(self, bot: str, now: float) -> None:
        """The requests last taken for ``bot`` are written to its stream: their clocks run from now."""
        self._bots[bot].written(now)

    def take(self, bot: str, now: float) -> list[tuple[Ask, int]]:
        """The requests to send to ``bot`` now, each with the deadline it carries (ms).

        On the CPU clock, read its CPU first (:meth:`read_cpu`).
        """
        state = self._bots[bot]
        sent = state.take(now)
        self._watch(state)
        return sent

    def read_cpu(self, bot: str, cpu: float, now: float) -> list[Output]:
        """A reading of ``bot``'s process CPU (ms), on the CPU clock: the requests it outran are late.

        Taken before requests are sent to it (:meth:`take`), so that the CPU it spent
        before them is judged among the requests it held then.
        """
        out: list[Output] = []
        state = self._bots[bot]
        if state.cpu is not None:
            self._outran(state, cpu, now, out)
            if self._due:
                self._settle(now, out)
        return out

    def cpu_due(self, now: float) -> list[str]:
        """The bots on the CPU clock whose CPU must be read for :meth:`tick` at ``now``."""
        return [name for name, state in self._bots.items() if state.cpu_due(now)]

    # -- tables ----------------------------------------------------------------------------

    def open(self, spec: SessionSpec, now: float) -> list[Output]:
        """Start playing ``spec``; ValueError if its table is playing, KeyError for an unknown bot."""
        if spec.table in self._matches:
            msg = f"table {spec.table!r} is already playing"
            raise ValueError(msg)
        bots = [self.bot(name) for name in dict.fromkeys(spec.seats)]
        match = Match(
            spec,
            fault_limit=self.fault_limit,
            listening=[state.name for state in bots if state.listening],
            request_ids=self._ids,
        )
        self._matches[spec.table] = match
        for state in bots:
            state.tables.add(spec.table)
        out: list[Output] = []
        self._carry(match, match.start(), now, out)
        if self._due:
            self._settle(now, out)
        return out

    def abort(self, table: str, now: float) -> list[Output]:
        """Stop ``table``'s session where it stands (nothing if it is not playing)."""
        out: list[Output] = []
        match = self._matches.get(table)
        if match is not None:
            self._carry(match, match.abort(), now, out)
        return out

    @property
    def playing(self) -> frozenset[str]:
        """The tables playing now."""
        return frozenset(self._matches)

    def record(self, table: str) -> SessionRecord | None:
        """The record so far of ``table``'s session (hidden cards included), None if it is not playing."""
        match = self._matches.get(table)
        return None if match is None else match.record()

    # -- time ------------------------------------------------------------------------------

    def tick(self, now: float, cpu: Mapping[str, float] | None = None) -> list[Output]:
        """Time is ``now``: fail the requests past their deadline and those of bots gone for good.

        ``cpu`` holds a reading of the process's CPU of each bot :meth:`cpu_due` named (ms):
        the requests it outran are late.
        """
        out: list[Output] = []
        matches = self._matches
        for name, state in self._bots.items():
            due = state.due
            if due is None or due > now + EARLY_MS:
                continue
            reading = None if cpu is None else cpu.get(name)
            if reading is not None:
                self._outran(state, reading, now, out)
            late, gone = state.due_now(now)
            for request in late:
                self._late(state, request, now, out, backstop=request.cpu_ms is not None)
            for request in gone or ():
                match = matches.get(request.ask.table)
                if match is not None:
                    self._carry(
                        match,
                        match.unanswered(FaultKind.DISCONNECT, request.elapsed(now), away=True),
                        now,
                        out,
                    )
        if self._due:
            self._settle(now, out)
        self.wake_at = min(
            (state.due for state in self._bots.values() if state.due is not None), default=None
        )
        return out

    def _outran(self, state: BotState, cpu: float, now: float, out: list[Output]) -> None:
        """A reading of ``state``'s CPU: the requests it outran are late, each charged its limit."""
        for request in state.read_cpu(cpu, now):
            self._late(state, request, now, out, backstop=False)
        self._watch(state)

    def _late(
        self, state: BotState, request: Request, now: float, out: list[Output], *, backstop: bool
    ) -> None:
        """``request`` of ``state``'s bot is late: charged on its table (``backstop``: on the wall)."""
        match = self._matches.get(request.ask.table)
        if match is not None:
            fault = match.unanswered(
                FaultKind.LATE,
                request.elapsed(now),
                away=not state.connected,
                cpu_ms=request.cpu_ms,
                backstop=backstop,
            )
            self._carry(match, fault, now, out)

    def _watch(self, state: BotState) -> None:
        """``state``'s clocks may have started: wake no later than its first deadline."""
        due = state.due
        if due is not None and (self.wake_at is None or due < self.wake_at):
            self.wake_at = due

    # -- carrying out what the tables decided ----------------------------------------------

    def _carry(self, match: Match, outputs: list[Output], now: float, out: list[Output]) -> None:
        """Do the arbiter's part of ``match``'s outputs and pass them all on to ``out``."""
        for item in outputs:
            if type(item) is Ask:
                state = self._bots[item.bot]
                if state.gone:  # fails at once, as soon as this input is handled
                    self._asks[item.table] = Request(item, done=True)
                    self._due.append((item, 0.0, None))
                else:
                    self._asks[item.table] = state.add(item, now)
                    if not state.connected:
                        self._watch(state)
            elif type(item) is Closed:
                state = self._bots[item.bot]
                state.tables.discard(item.table)
                request = self._asks.get(item.table)
                if (
                    request is not None
                    and request.ask.bot == item.bot
                    and state.withdraw(request)
                    and item.reason is CloseReason.DISQUALIFIED
                ):
                    self._due.append((request.ask, request.elapsed(now), request.cpu_ms))
            elif type(item) is Finished:
                del self._matches[match.table]
                self._asks.pop(match.table, None)
            # a Tell, a Faulted or an Unseated is the caller's to carry out
        out.extend(outputs)

    def _settle(self, now: float, out: list[Output]) -> None:
        """Reply to the requests that ended without an answer while the input was handled."""
        due = self._due
        while due:
            ask, elapsed, cpu = due.popleft()
            match = self._matches.get(ask.table)
            if match is not None and match.asked is ask:
                unanswered = match.unanswered(FaultKind.DISCONNECT, elapsed, away=True, cpu_ms=cpu)
                self._carry(match, unanswered, now, out)

    def _connection_fault(  # noqa: PLR0913, PLR0917 - one fault's parts
        self,
        state: BotState,
        kind: FaultKind,
        detail: str,
        request_id: int,
        action: str,
        now: float,
        out: list[Output],
    ) -> None:
        if not state.tables:
            out.append(
                Unseated(
                    Fault(
                        kind=kind,
                        bot=state.name,
                        table=None,
                        seat=None,
                        deal=None,
                        decision=None,
                        elapsed_ms=None,
                        detail=detail,
                    )
                )
            )
            return
        for table in sorted(state.tables):
            match = self._matches[table]
            self._carry(
                match,
                match.connection_fault(state.name, kind, detail, request_id=request_id, action=action),
                now,
                out,
            )
        if self._due:
            self._settle(now, out)
