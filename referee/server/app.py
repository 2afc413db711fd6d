"""The referee as a library: the facade the tournament runner drives.

:class:`Referee` owns the gRPC server (Play, health and reflection), the match core
(:class:`~referee.match.Arbiter`), one :class:`~referee.server.connection.BotLink` per
bot, one timer and the log lines; ``play_session`` plays one session and many run
concurrently. Everything the core decides comes back as outputs, carried out here:
requests to wake a bot's writer for, events and notices to encode and queue, faults to
log, finished sessions to hand back. The service (:mod:`referee.server.service`) feeds
the core what the streams bring.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from typing import TYPE_CHECKING, Any, ParamSpec, assert_never

import grpc  # type: ignore[import-untyped]  # grpcio ships no stubs
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc  # type: ignore[import-untyped]
from grpc_reflection.v1alpha import reflection  # type: ignore[import-untyped]

from referee.match import (
    Arbiter,
    Ask,
    Closed,
    CloseReason,
    Fault,
    Faulted,
    FaultKind,
    Finished,
    SessionOutcome,
    SessionSpec,
    Tell,
    TimeLimits,
    Unseated,
)
from referee.rules import DEFAULT_PROFILE, Profile
from referee.server.connection import BotLink, CpuMeter
from referee.server.limits import ServerLimits
from referee.server.service import SERVER_VERSION, SERVICE_NAME, PlayService
from referee.wire.codec import told_to_proto
from referee.wire.fastcodec import RequestEncoder, closed_notice, fault_notice
from referee.wire.stream import missing_decisions, welcome_message

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

    from referee.match import Output
    from referee.server.connection import StreamState
    from referee.wire.stream import Hello, RefusalReason

__all__ = ["Referee"]

_P = ParamSpec("_P")

_KEEPALIVE_MS = 10_000
"""The referee pings a bot's connection after this long without traffic."""
_KEEPALIVE_TIMEOUT_MS = 5_000
"""A ping unanswered this long drops the connection."""
_FAULTS_KEPT = 1_000
"""Faults of bots at no table kept in :attr:`Referee.faults` (the latest; memory stays bounded)."""


async def _calls_settled(timeout: float = 5.0) -> None:  # noqa: ASYNC109 - a bound, not an API
    """Wait for grpc.aio's own task per call (``_schedule_rpc_coro``) to end after a stop.

    ``server.stop`` returns once gRPC core has ended every call, but each call's task still
    waits for core's word on the event loop. A loop that closes first (``asyncio.run``
    right after a stop, as when a tournament ends on an error) cancels those tasks, and
    grpc prints a traceback per call on stderr: on a loaded machine, under the one-line
    error a user was promised.
    """
    calls = [
        task
        for task in asyncio.all_tasks()
        if getattr(task.get_coro(), "__name__", "") == "_schedule_rpc_coro" and not task.done()
    ]
    if calls:
        await asyncio.wait(calls, timeout=timeout)


def _listen(server: grpc.aio.Server, address: str) -> int:
    """Add ``address`` to ``server``'s ports; the port bound (1 for a Unix socket). OSError when it cannot."""
    try:
        bound: int = server.add_insecure_port(address)
    except RuntimeError as exc:
        bound = 0
        cause: Exception | None = exc
    else:
        cause = None
    if not bound:
        msg = f"cannot listen on {address} (in use?)"
        raise OSError(msg) from cause
    return bound


class Referee:
    """A referee server: register bots, start, then play sessions between them.

    ``profile`` and ``time_limits`` are what Welcome announces to every bot; a session
    may still play another profile or clock (each request carries its own view and
    deadline).
    """

    def __init__(
        self,
        *,
        limits: ServerLimits = ServerLimits(),  # noqa: B008 - frozen default
        logger: Any = None,  # noqa: ANN401 - any structlog logger
        profile: Profile = DEFAULT_PROFILE,
        time_limits: TimeLimits = TimeLimits(),  # noqa: B008 - frozen default
    ) -> None:
        self.limits = limits
        self.profile = profile
        self.time_limits = time_limits
        self._log = logger if logger is not None else structlog.get_logger("referee")
        self.arbiter = Arbiter(
            fault_limit=limits.fault_limit,
            reconnect_grace_ms=limits.reconnect_grace_s * 1000,
            max_outstanding=limits.max_outstanding,
            max_unknown_answers=limits.max_unknown_answers,
        )
        self._links: dict[str, BotLink] = {}
        self._shown: dict[str, str] = {}
        self._by_token: dict[str, BotLink] = {}
        self._encoders: dict[str, RequestEncoder] = {}
        self._sessions: dict[str, asyncio.Future[SessionOutcome]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cores = float(os.cpu_count() or 1)
        """How fast a bot's process tree can spend CPU at most (ms per ms): the machine's cores."""
        self.faults: deque[Fault] = deque(maxlen=_FAULTS_KEPT)
        """Faults of bots that sat at no table when they made them (connection faults), the latest."""
        self._service = PlayService(self, logger=self._log)
        self._server: grpc.aio.Server | None = None

    def add_bot(
        self, *, name: str, token: str, shown_as: str | None = None, cpu: CpuMeter | None = None
    ) -> None:
        """Register a bot entry: ``token`` is its secret, ``name`` its identity.

        ``shown_as`` is the id its Welcome tells the bot (``name`` by default): several
        identities (a bot's processes, one per rotation of a block) may show one name,
        so that nothing the bot receives tells them apart. ``cpu`` reads the CPU of the
        bot's process tree: its decisions are then clocked in it (:class:`~referee.match.Clock`),
        with the wall clock as a backstop; without it (a remote bot), on the wall clock.
        """
        if name in self._links or token in self._by_token:
            msg = f"bot {name!r} or its token is already registered"
            raise ValueError(msg)
        state = self.arbiter.add_bot(name)
        if cpu is not None:
            self.arbiter.clock_cpu(name, cores=self._cores)
        link = BotLink(
            state,
            arbiter=self.arbiter,
            encoders=self._encoders,
            sent=self._arm,
            batch_window_s=self.limits.batch_window_s,
            cpu=cpu,
            charge=self._charge_cpu,
        )
        self._links[name] = link
        self._by_token[token] = link
        self._shown[name] = shown_as or name

    # -- the server ------------------------------------------------------------------------

    async def start(
        self, *, host: str | None = "127.0.0.1", port: int = 0, unix_socket: Path | None = None
    ) -> int:
        """Start serving on ``host:port`` and/or a Unix-domain socket; return the TCP port (0: none).

        ``host`` None serves no TCP port at all: only processes that can reach the
        ``unix_socket`` file (created here, mode 0666: keep it in a folder only its users
        can enter) can connect. OSError when an address cannot be bound.
        """
        size = self.limits.max_message_bytes
        server = grpc.aio.server(
            options=[
                # read up to 4x the cap, so that a larger message is seen and faulted as
                # oversized by the service (beyond, gRPC ends the stream by itself)
                ("grpc.max_receive_message_length", 4 * size),
                ("grpc.max_send_message_length", size),
                ("grpc.so_reuseport", 0),
                # ping idle connections: a peer that froze or vanished is dropped in about
                # 15 s (and its bot may reconnect), instead of holding its identity forever
                ("grpc.keepalive_time_ms", _KEEPALIVE_MS),
                ("grpc.keepalive_timeout_ms", _KEEPALIVE_TIMEOUT_MS),
                ("grpc.keepalive_permit_without_calls", 1),
                ("grpc.http2.max_pings_without_data", 0),
            ]
        )
        server.add_generic_rpc_handlers((self._service.handler(),))
        health_servicer = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
        )
        bound = 0 if host is None else _listen(server, f"{host}:{port}")
        if unix_socket is not None:
            _listen(server, f"unix:{unix_socket}")
        await server.start()
        if unix_socket is not None:
            os.chmod(unix_socket, 0o666)  # noqa: PTH101, S103 - a sandboxed bot may run as another user
        await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
        await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
        self._server = server
        self._log.info(
            "referee listening",
            address=None if host is None else f"{host}:{bound}",
            socket=None if unix_socket is None else str(unix_socket),
        )
        return bound

    async def stop(self, grace: float = 1.0) -> None:
        """End every bot stream and stop serving; return once gRPC's tasks for the calls are done."""
        self._service.close_all()
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None
            await _calls_settled()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = self._timer_at = None

    async def wait_for_bot(self, name: str, *, timeout: float) -> None:  # noqa: ASYNC109 - the facade's shape
        """Wait until bot ``name`` has said hello; TimeoutError naming it otherwise."""
        link = self._link(name)
        try:
            await asyncio.wait_for(link.hello.wait(), timeout)
        except TimeoutError:
            msg = f"bot {name!r} did not connect within {timeout:g} s"
            raise TimeoutError(msg) from None

    def is_connected(self, name: str) -> bool:
        """Whether bot ``name`` has a live stream now."""
        return self._link(name).connected

    def take_refusal(self, name: str) -> tuple[RefusalReason, str] | None:
        """Why the referee refused a Hello with bot ``name``'s token since it last connected, if it did.

        The reason and the message the Refusal carried, recorded before it was sent (so a
        bot process that exits over it has its reason here); taken once, then None.
        """
        link = self._link(name)
        refusal, link.refusal = link.refusal, None
        return refusal

    def _link(self, name: str) -> BotLink:
        try:
            return self._links[name]
        except KeyError:
            msg = f"no bot called {name!r} (registered: {', '.join(sorted(self._links))})"
            raise KeyError(msg) from None

    # -- sessions --------------------------------------------------------------------------

    async def play_session(self, spec: SessionSpec) -> SessionOutcome:
        """Play one session to its end. Faults are data in the outcome, never exceptions.

        ValueError, before anything is played, when a seated bot's Hello did not list a
        decision kind the session's profile asks (the hello check judges the referee's own
        profile; a session of another profile is judged here).
        """
        table = spec.table
        if table in self._sessions:
            msg = f"table {table!r} is already playing"
            raise ValueError(msg)
        for name in dict.fromkeys(spec.seats):
            decisions = self._link(name).decisions
            missing = None if decisions is None else missing_decisions(spec.profile, decisions)
            if missing is not None:
                msg = f"bot {name!r} cannot sit at table {table!r}: {missing}"
                raise ValueError(msg)
        log = self._log.bind(table=table)
        log.info("session started", profile=spec.profile.name, seed=spec.seed, seats=list(spec.seats))
        done = self._sessions[table] = self._running().create_future()
        self._encoders[table] = RequestEncoder(table)
        try:
            self._feed(self.arbiter.open, spec, self.now())
            outcome: SessionOutcome = await done
        finally:
            if table in self.arbiter.playing:  # cancelled: the table closes to every bot seated
                self._feed(self.arbiter.abort, table, self.now())
            del self._sessions[table]
            del self._encoders[table]
        log.info(
            "session over",
            balances=list(outcome.record.balances),
            winners=list(outcome.record.winners),
            faults=len(outcome.faults),
            disqualified=list(outcome.disqualified),
        )
        return outcome

    # -- what the streams bring (called by the service) ------------------------------------

    def welcome(self, link: BotLink) -> bytes:
        """The Welcome message for ``link``'s bot: who it is here, the rules and clocks announced."""
        return welcome_message(
            bot_id=self._shown[link.name],
            profile=self.profile,
            time_limits=self.time_limits,
            max_outstanding=link.state.max_outstanding,
            server_version=SERVER_VERSION,
        )

    def link_of(self, token: str) -> BotLink | None:
        """The link of the bot whose token this is."""
        return self._by_token.get(token)

    def attach(self, link: BotLink, hello: Hello) -> StreamState:
        """A stream said hello for ``link``'s bot: the core sends what it holds in flight first.

        A bot that still has a stream (a stale one, say, after its network froze) takes over
        with the new one: the old stream ends as a disconnect, and the new one carries on.
        """
        old = link.stream
        if old is not None:
            self.detach(link, old, "replaced by a new connection")
        link.decisions = hello.decisions
        self.arbiter.attach(link.name, max_batch=hello.max_batch, listening=hello.events)
        return link.attach(notices_in_batch=hello.notices_in_batch)

    def detach(self, link: BotLink, stream: StreamState, reason: str) -> None:
        """``stream`` ended for ``reason``: if it was the bot's, a disconnect where it sits."""
        if link.detach(stream):
            self._feed(self.arbiter.detach, link.name, self.now(), reason)

    def answers(self, link: BotLink, answers: Iterable[tuple[int, str]]) -> None:
        """Answers from ``link``'s bot, in the order they came (with a reading of its CPU, on that clock)."""
        self._feed(self.arbiter.answers, link.name, answers, self.now(), link.read_cpu())
        link.answered()

    def _charge_cpu(self, name: str, cpu: float) -> None:
        """A reading of bot ``name``'s CPU before requests leave for it: what it outran is late."""
        self._feed(self.arbiter.read_cpu, name, cpu, self.now())

    def cut_off(self, link: BotLink) -> bool:
        """Whether ``link``'s connection sent more answers to unknown requests than allowed."""
        return self.arbiter.cut_off(link.name)

    def written(self, link: BotLink) -> None:
        """The requests last taken for ``link``'s bot are written: their clocks run from now."""
        self.arbiter.written(link.name, self.now())

    def connection_fault(self, link: BotLink, kind: FaultKind, detail: str) -> None:
        """A fault of ``link``'s connection itself (a malformed message, say)."""
        self._feed(self.arbiter.connection_fault, link.name, kind, detail, self.now())

    # -- carrying out what the core decided ------------------------------------------------

    def now(self) -> float:
        """The referee's clock for the core: the event loop's, in milliseconds."""
        return self._running().time() * 1000

    def _running(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop

    def _feed(self, core_input: Callable[_P, list[Output]], *args: _P.args, **kwargs: _P.kwargs) -> None:
        """Give the core one input and carry out its outputs.

        An exception here is a bug of the referee, not a bot's doing: every session playing
        ends with it (their ``play_session`` raises it) rather than waiting forever.
        """
        try:
            self.carry_out(core_input(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - handed to every session playing
            self._log.exception("referee error", error=repr(exc))
            for done in self._sessions.values():
                if not done.done():
                    done.set_exception(exc)

    def carry_out(self, outputs: list[Output]) -> None:
        """Do what the core's outputs say, in order; then set the timer for the next deadline."""
        links = self._links
        for item in outputs:
            if type(item) is Ask:
                links[item.bot].wake()
            elif type(item) is Tell:
                links[item.bot].send_events(
                    [
                        told_to_proto(told, table=item.table, seat=item.seat).SerializeToString()
                        for told in item.items
                    ]
                )
            elif type(item) is Faulted:
                self._faulted(item)
            elif type(item) is Closed:
                links[item.bot].notify(closed_notice(item))
                if item.reason is CloseReason.DISQUALIFIED:
                    self._log.warning("disqualified", bot=item.bot, table=item.table, detail=item.message)
            elif type(item) is Finished:
                done = self._sessions.get(item.table)
                if done is not None and not done.done():
                    done.set_result(item.outcome)
            elif type(item) is Unseated:
                fault = item.fault
                self.faults.append(fault)
                self._log.warning("fault", kind=str(fault.kind), bot=fault.bot, detail=fault.detail)
            else:
                assert_never(item)
        self._arm()

    def _faulted(self, faulted: Faulted) -> None:
        """Log the fault and notify its bot. A late one is logged at info level (``nap -v`` shows it).

        Lateness is the clock's to judge, and a busy machine makes many late answers, of
        every bot: a tournament sums them up in one line at the end of its run
        (:mod:`tournaments.stats.load_check`), rather than a warning for each between its
        progress lines. Every other fault is a bot's own doing: a warning.
        """
        fault = faulted.fault
        log = self._log.info if fault.kind is FaultKind.LATE else self._log.warning
        log(
            "fault",
            kind=str(fault.kind),
            bot=fault.bot,
            table=fault.table,
            seat=fault.seat,
            deal=fault.deal,
            decision=fault.decision,
            elapsed_ms=fault.elapsed_ms,
            detail=fault.detail,
            count=faulted.count,
            limit=faulted.limit,
        )
        self._links[fault.bot].notify(fault_notice(faulted))

    def _arm(self) -> None:
        """Set the one timer for the core's next deadline (or grace period's end)."""
        at = self.arbiter.wake_at
        if at == self._timer_at:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = at
        self._timer = None if at is None else self._running().call_at(at / 1000, self._tick)

    def _tick(self) -> None:
        """The timer is due: first let what the streams already brought in be handled.

        The read of an answer that arrived just before a deadline resumes its task one or
        two turns of the event loop after the timer's turn; deadlines are judged only after
        that, so that no answer the referee already holds is charged as late.
        """
        self._timer = self._timer_at = None
        loop = self._running()
        loop.call_soon(loop.call_soon, self._expire)

    def _expire(self) -> None:
        now = self.now()
        links = self._links
        readings = {
            name: cpu for name in self.arbiter.cpu_due(now) if (cpu := links[name].read_cpu()) is not None
        }
        self._feed(self.arbiter.tick, now, readings)
        for link in self._links.values():
            if link.state.gone:
                link.forget()
