"""The referee as a library: the facade the tournament runner drives.

:class:`Referee` owns the gRPC server (Play, health and reflection), the bot links, and
the log configuration; ``play_session`` plays one session and many run concurrently.
"""

from __future__ import annotations

import gc
import logging
import socket
import sys
from typing import TYPE_CHECKING, Any

import grpc  # type: ignore[import-untyped]  # grpcio ships no stubs
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc  # type: ignore[import-untyped]
from grpc_reflection.v1alpha import reflection  # type: ignore[import-untyped]

from referee.rules import DEFAULT_PROFILE, Profile
from referee.server.connection import BotLink
from referee.server.limits import ServerLimits, TimeLimits
from referee.server.service import SERVER_VERSION, PlayService
from referee.server.table import Decision, SessionOutcome, SessionSpec, Table
from referee.wire import nap_pb2
from referee.wire.codec import profile_to_proto

if TYPE_CHECKING:
    from referee.server.faults import Fault, FaultKind

__all__ = ["Decision", "Referee", "SessionOutcome", "SessionSpec", "configure_logging",
           "tune_collector"]

SERVICE_NAME = "nap.v1.Referee"


def configure_logging(*, json: bool = False, level: int = logging.INFO) -> None:
    """Set up structlog for the server: human-readable lines by default, JSON on request."""
    renderer: Any = (structlog.processors.JSONRenderer() if json
                     else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()))
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


def tune_collector() -> None:
    """Tune CPython's garbage collector for a process that hosts a referee (call it once).

    A referee makes a few small objects per decision, nearly all freed by reference
    counting; with the default thresholds the collector still runs every 700 allocations
    and walks the long-lived modules again and again: a tenth of a referee's CPU
    (bench/tournament.py). Freezing what is loaded so far and raising the thresholds
    leaves the collector for what it is for: cycles, now and then.
    """
    gc.freeze()
    gc.set_threshold(20_000, 20, 50)


class Referee:
    """A referee server: register bots, start, then play sessions between them.

    ``profile`` and ``time_limits`` are what Welcome announces to every bot; a session
    may still play another profile or clock (each request carries its own view and
    deadline).
    """

    def __init__(self, *, limits: ServerLimits = ServerLimits(), logger: Any = None,  # noqa: ANN401, B008 - frozen default; any structlog logger
                 profile: Profile = DEFAULT_PROFILE,
                 time_limits: TimeLimits = TimeLimits()) -> None:  # noqa: B008 - frozen default
        self.limits = limits
        self.profile = profile
        self.time_limits = time_limits
        self._log = logger if logger is not None else structlog.get_logger("referee")
        self._links: dict[str, BotLink] = {}
        self._by_token: dict[str, BotLink] = {}
        self._tables: set[str] = set()
        self.faults: list[Fault] = []
        """Faults of bots that sat at no table when they made them (connection faults)."""
        self._service = PlayService(links_by_token=self._by_token, welcome=self._welcome,
                                    logger=self._log)
        self._server: grpc.aio.Server | None = None

    def add_bot(self, *, name: str, token: str) -> None:
        """Register a bot entry: ``token`` is its secret, ``name`` its identity."""
        if name in self._links or token in self._by_token:
            msg = f"bot {name!r} or its token is already registered"
            raise ValueError(msg)
        link = BotLink(name, max_outstanding=self.limits.max_outstanding,
                       reconnect_grace_s=self.limits.reconnect_grace_s,
                       orphan_fault=self._orphan_fault,
                       batch_window_s=self.limits.batch_window_s)
        self._links[name] = link
        self._by_token[token] = link

    def _orphan_fault(self, bot: str, kind: FaultKind, detail: str) -> None:
        from referee.server.faults import Fault  # noqa: PLC0415 - only on this rare path

        self.faults.append(Fault(kind, bot, "", None, None, None, None, detail))
        self._log.warning("fault", kind=str(kind), bot=bot, detail=detail)

    def _welcome(self) -> nap_pb2.Welcome:
        return nap_pb2.Welcome(
            protocol_version=1,
            server_version=SERVER_VERSION,
            profile=profile_to_proto(self.profile),
            time_limits=nap_pb2.TimeLimits(decision_ms=self.time_limits.decision_ms,
                                           session_bank_ms=self.time_limits.session_bank_ms),
        )

    async def start(self, *, host: str = "127.0.0.1", port: int = 0) -> int:
        """Start serving; return the bound port. OSError when the address cannot be bound."""
        size = self.limits.max_message_bytes
        server = grpc.aio.server(options=[
            ("grpc.max_receive_message_length", size),
            ("grpc.max_send_message_length", size),
            ("grpc.so_reuseport", 0),
        ])
        server.add_generic_rpc_handlers((self._service.handler(),))
        health_servicer = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
        address = f"{host}:{port}"
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
        await server.start()
        await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
        await health_servicer.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
        self._server = server
        self._log.info("referee listening", address=f"{host}:{bound}")
        return bound

    async def stop(self, grace: float = 1.0) -> None:
        """End every bot stream and stop serving."""
        self._service.close_all()
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None

    async def wait_for_bot(self, name: str, *, timeout: float) -> None:  # noqa: ASYNC109 - the facade's shape
        """Wait until bot ``name`` has said hello; TimeoutError naming it otherwise."""
        import asyncio  # noqa: PLC0415 - keep the module import list about the server

        link = self._link(name)
        try:
            await asyncio.wait_for(link.hello.wait(), timeout)
        except TimeoutError:
            msg = f"bot {name!r} did not connect within {timeout:g} s"
            raise TimeoutError(msg) from None

    def is_connected(self, name: str) -> bool:
        """Whether bot ``name`` has a live stream now."""
        return self._link(name).connected

    def _link(self, name: str) -> BotLink:
        try:
            return self._links[name]
        except KeyError:
            msg = f"no bot called {name!r} (registered: {', '.join(sorted(self._links))})"
            raise KeyError(msg) from None

    async def play_session(self, spec: SessionSpec) -> SessionOutcome:
        """Play one session to its end. Faults are data in the outcome, never exceptions."""
        if spec.table in self._tables:
            msg = f"table {spec.table!r} is already playing"
            raise ValueError(msg)
        links = [self._link(name) for name in spec.seats]
        table = Table(spec, links, limits=self.limits, logger=self._log)
        self._tables.add(spec.table)
        log = self._log.bind(table=spec.table)
        log.info("session started", profile=spec.profile.name, seed=spec.seed,
                 seats=list(spec.seats))
        try:
            outcome = await table.play()
        finally:
            self._tables.discard(spec.table)
        log.info("session over", balances=list(outcome.record.balances),
                 winners=list(outcome.record.winners), faults=len(outcome.faults),
                 disqualified=list(outcome.disqualified))
        return outcome


def port_in_use(host: str, port: int) -> bool:
    """Whether ``host:port`` cannot be bound; probe first, as gRPC core prints a multi-line complaint."""
    if port == 0:
        return False
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False
