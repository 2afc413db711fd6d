"""A referee and its bot processes, playing blocks: one process's share of a tournament.

A :class:`BlockHost` starts a referee on a Unix-domain socket of its own, and for each
local bot entry one process per rotation of a block (``table_size`` of them, each
serving many tables at once), every process with a fresh token; then it plays blocks
(:meth:`BlockHost.play_block`): a block's rotations one after another, rotation ``r``
by each bot's process ``r``. So no bot process ever sees a board twice: every dealt card
is shown by the end of a deal, and a process that played a board's rotation 0 would
know every hand of its rotation 1. Each process's Welcome names it after its bot, so
nothing it receives tells it which rotation it plays. With a sandbox
(:mod:`tournaments.play.sandbox`) each process runs isolated and reaches the referee through
the socket bound into its sandbox. Where cgroups can be made
(:mod:`tournaments.play.containment`), each process, started at the host's start or
entered later (:meth:`BlockHost.enter`), runs in a group of its own with the run's limits
for its whole tree and an equal share of the CPU. The referee clocks every local bot
process in its own CPU (its group's count, or ``/proc``'s), a remote bot on the wall.

For each finished session the host encodes the log
(:func:`~tournaments.store.logs.encode_log`) and hands the result and the log's bytes to
``deliver`` (:meth:`BlockHost.play`): the runner commits both to the store in one
transaction in the same process. A worker, in a process of its own or on Ray, plays
:meth:`BlockHost.play_block` itself and sends each session to the runner as a message
(:mod:`tournaments.play.executors.block_worker`).

:class:`Hosting` says where the referee also listens on TCP and which tokens the remote
bots (entries without a command, :func:`remote_bot`) connect with: a remote bot is one
connection, which plays every rotation.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from referee.server import Referee
from tournaments.errors import EntryStartError, RunnerError
from tournaments.plan.entries import BotEntry
from tournaments.play.blocks import BlockRun, FinishedSession, finish_session
from tournaments.play.bots import BotProcess, new_token
from tournaments.play.containment import alive, host_cgroups
from tournaments.play.sandbox import Sandbox
from tournaments.play.tables import HostTables, TableFollower, TableInPlay
from tournaments.store.logs import encode_log

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from referee.server import ServerLimits, SessionOutcome, SessionSpec
    from tournaments.plan.config import TournamentConfig
    from tournaments.play.sandbox import SandboxSpec
    from tournaments.results import SessionResult


@dataclass(frozen=True, slots=True)
class Hosting:
    """Where the referee listens, and the tokens of remote bots.

    An entry with an empty command is a *remote* bot: no process is started for it; it
    must connect by itself to ``host:port`` with the token given here (or one made up and
    reported through ``announce``) within the tournament's connect timeout.
    ``announce(port, tokens)`` is called once the referee listens.
    """

    host: str = "127.0.0.1"
    port: int = 0
    tokens: Mapping[str, str] = field(default_factory=dict)
    announce: Callable[[int, Mapping[str, str]], None] | None = None


@dataclass(frozen=True, slots=True)
class WorkerSetup:
    """What a worker (a local process or a Ray worker) needs to host its share of one tournament.

    Sent once to each worker as it starts: the worker builds a :class:`BlockHost` from it.
    """

    config: TournamentConfig
    tournament: int
    logs_root: Path
    limits: ServerLimits
    log_level: int = 0
    """The runner's structlog level, which the worker's own log lines follow."""
    sandbox: SandboxSpec | None = None
    """How the bots are isolated (None: they run as plain processes)."""


def first_failure(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception of a task group's failure, nested groups opened.

    A task group fails with all its tasks' exceptions in a group; the first is the one
    that stopped the others, and is what the caller reports (one line, not a group).
    """
    first = group.exceptions[0]
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first


def remote_bot(name: str) -> BotEntry:
    """An entrant that runs elsewhere and connects to the referee with its token."""
    return BotEntry(name=name, version="remote", command=(), content_hash="remote")


def quiet_logger(level: int = logging.WARNING) -> Any:  # noqa: ANN401 - a structlog bound logger
    """The referee's logger during a tournament: warnings and worse only (faults, crashes) by default.

    At ``logging.INFO`` or below (``nap -v``) also its progress: sessions, and each late
    fault. ``NOTSET`` (a run whose caller configured no logging) is the default's.
    """
    shown = logging.WARNING if level == logging.NOTSET else min(level, logging.WARNING)
    return structlog.wrap_logger(
        structlog.PrintLogger(file=sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(max(shown, logging.INFO)),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.dev.ConsoleRenderer(colors=False),
        ],
    )


class BlockHost:
    """One referee and, per local bot entry of ``config``'s tournament, one process per rotation.

    ``hosting`` says where the referee also listens on TCP (for remote bots: none by
    default) and gives the tokens of entries without a command (remote bots, which
    connect by themselves). ``bot_log_suffix`` tells apart the bot logs of several hosts
    of one tournament. ``sandbox`` isolates the bot processes (None: plain processes);
    ``contain`` puts each in a cgroup of its own where one can be made. ``log_level`` is
    the referee's (:func:`quiet_logger`): the run's own, ``logging.INFO`` with ``nap -v``.
    """

    def __init__(  # noqa: PLR0913 - keywords
        self,
        config: TournamentConfig,
        *,
        tournament: int,
        logs_root: Path,
        limits: ServerLimits,
        hosting: Hosting | None = None,
        bot_log_suffix: str = "",
        sandbox: SandboxSpec | None = None,
        lanes: int | None = None,
        log_level: int = logging.WARNING,
        contain: bool = True,
    ) -> None:
        self.config = config
        self.tournament = tournament
        self.logs_root = logs_root
        self.profile = config.profile
        """The rules, one object for every block played here."""
        self.referee = Referee(
            limits=limits,
            logger=quiet_logger(log_level),
            profile=self.profile,
            time_limits=config.time_limits,
        )
        self._hosting = hosting
        self._suffix = bot_log_suffix
        self._sandbox = sandbox
        self._lanes = config.table_size if lanes is None else lanes
        self._cgroups = host_cgroups() if contain else None
        self._folder: Path | None = None
        self._bots: dict[str, str] = {}
        """Each referee identity's bot: ``peel#2`` is peel's process for rotation 2."""
        self._laned: set[str] = set()
        """The bots with one process per rotation (every local bot)."""
        self.processes: list[BotProcess] = []
        self._made_sandbox: Sandbox | None = None
        self._starting = asyncio.Semaphore(_STARTING_AT_ONCE)
        self._entering: dict[str, asyncio.Future[None]] = {}
        """The entries being started for a block (:meth:`enter`), each once."""
        self._entered: dict[str, int] = {}
        self._base: dict[str, str] = {}
        """Each local bot's identities' stem at the referee: its name, or ``name~2`` once entered again."""
        self.follower = TableFollower()
        """The tables in play here, for a spectator (:meth:`tables`)."""

    async def start(self) -> int:
        """Start the referee and every bot process; all must connect. Returns the TCP port (0: none).

        Raises RunnerError (one line) when the sandbox cannot be made or a bot cannot
        start or connect; whatever was started is stopped again.
        """
        referee, config, hosting = self.referee, self.config, self._hosting
        self._made_sandbox = None if self._sandbox is None else Sandbox(self._sandbox)
        self._folder = socket_folder()
        try:
            port = await referee.start(
                host=None if hosting is None else hosting.host,
                port=0 if hosting is None else hosting.port,
                unix_socket=self._folder / "referee.sock",
            )
        except BaseException:
            self._remove_folder()
            raise
        remote: dict[str, str] = {}
        local: list[BotProcess] = []
        for entry in config.bots:
            if not entry.command:
                given = None if hosting is None else hosting.tokens.get(entry.name)
                remote[entry.name] = given or new_token()
                referee.add_bot(name=entry.name, token=remote[entry.name])
                self._bots[entry.name] = entry.name
                continue
            local += self._lanes_of(entry)
        if hosting is not None and hosting.announce is not None:
            hosting.announce(port, remote)
        seconds = config.connect_timeout_s
        results = await asyncio.gather(
            *(self._start_process(p) for p in local),
            *(self._await_remote(name, seconds) for name in remote),
            return_exceptions=True,
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            await self.stop()
            first = errors[0]
            if isinstance(first, RunnerError):
                raise first
            raise RunnerError(str(first)) from first
        return port

    def _lanes_of(self, entry: BotEntry) -> list[BotProcess]:
        """Register ``entry``'s processes, one per rotation, with the referee (not started yet)."""
        if self._folder is None:
            msg = "a BlockHost seats bots once it has started"
            raise RuntimeError(msg)
        socket = self._folder / "referee.sock"
        bots = self.logs_root / f"t{self.tournament}" / "bots"
        self._laned.add(entry.name)
        entered = self._entered[entry.name] = self._entered.get(entry.name, 0) + 1
        base = self._base[entry.name] = entry.name if entered == 1 else f"{entry.name}~{entered}"
        processes = []
        limits = self.config.bot_limits
        for lane in range(self._lanes):
            identity = _identity(base, lane)
            token = new_token()
            cgroup = None
            if self._cgroups is not None:
                try:
                    cgroup = self._cgroups.bot(identity, limits)
                except OSError as exc:
                    msg = (
                        f"bot {entry.name}: cannot make its {self._cgroups.kind} group: {exc.strerror or exc}"
                    )
                    raise RunnerError(msg) from exc
            process = BotProcess(
                entry,
                identity=identity,
                address=f"unix:{socket}",
                token=token,
                log_path=bots / f"{entry.name}{self._suffix}-r{lane}.log",
                max_restarts=self.config.max_restarts,
                sandbox=self._made_sandbox,
                cgroup=cgroup,
                limits=limits,
            )
            self.referee.add_bot(name=identity, token=token, shown_as=entry.name, cpu=process.cpu_meter)
            self._bots[identity] = entry.name
            processes.append(process)
        self.processes += processes
        return processes

    async def _start_process(self, process: BotProcess) -> None:
        async with self._starting:  # each start gets its share of the CPU: its timeout measures it alone
            await process.start(self.referee, connect_timeout=self.config.connect_timeout_s)

    async def enter(self, entries: Sequence[BotEntry]) -> None:
        """Start the processes of every entry in ``entries`` this host does not play yet, one per rotation.

        For a host whose bots come and go (an arena's ladder): each entry is started once,
        however many blocks ask for it at once. Raises :class:`~tournaments.errors.EntryStartError`
        (one line, naming the entry) when one cannot start or connect: its processes are
        stopped again, and the next block that asks for it tries again.
        """
        starting = []
        for entry in entries:
            task = self._entering.get(entry.name)
            if task is None:
                if entry.name in self._laned:
                    continue
                task = self._entering[entry.name] = asyncio.ensure_future(self._enter(entry))
            starting.append(task)
        for task in starting:
            await asyncio.shield(task)

    async def _enter(self, entry: BotEntry) -> None:
        processes = self._lanes_of(entry)
        try:
            starts = (self._start_process(process) for process in processes)
            results = await asyncio.gather(*starts, return_exceptions=True)
            failed = next((r for r in results if isinstance(r, BaseException)), None)
            if failed is not None:
                await self._leave(entry.name)
                line = str(failed).splitlines()[0] if str(failed) else type(failed).__name__
                raise EntryStartError(line, entry=entry.name)
        finally:
            self._entering.pop(entry.name, None)

    async def retire(self, names: Sequence[str]) -> None:
        """Stop the processes of the entries ``names`` (no block may seat them any more)."""
        for name in names:
            await self._leave(name)

    async def _leave(self, name: str) -> None:
        leaving = [p for p in self.processes if self._bots.get(p.identity) == name]
        self.processes = [p for p in self.processes if p not in leaving]
        self._laned.discard(name)
        await asyncio.gather(*(p.stop() for p in leaving), return_exceptions=True)

    async def _await_remote(self, name: str, seconds: float) -> None:
        try:
            await self.referee.wait_for_bot(name, timeout=seconds)
        except TimeoutError:
            msg = f"remote bot {name} did not connect within {seconds:g} s"
            raise RunnerError(msg) from None

    async def play_block(
        self, run: BlockRun, on_session: Callable[[FinishedSession], Awaitable[None]]
    ) -> None:
        """Play the block's remaining rotations one after another, rotation ``r`` by each bot's process ``r``.

        ``on_session`` is awaited with each session as soon as it is over, before the next
        rotation starts: the tournament commits there, so a crash loses at most the
        sessions in flight. Nothing of a finished session is kept here meanwhile: with
        hundreds of blocks in flight, what they held would be a large part of what the
        garbage collector walks.
        """
        follower = self.follower
        for rotation in run.rotations:
            spec = run.session(rotation)
            follower.started(
                TableInPlay(
                    table=spec.table,
                    block=run.index,
                    rotation=rotation,
                    bots=spec.seats,
                    deals=run.profile.deals_per_session,
                )
            )
            outcome = None
            try:
                outcome = await self.referee.play_session(self._seated(spec, rotation))
            finally:
                follower.ended(spec.table, None if outcome is None else outcome.record)
            await on_session(finish_session(run, rotation, self._named(outcome)))

    def tables(self) -> HostTables:
        """The tables in play on this host and their public events, for a spectator."""
        return HostTables(self.follower, self.referee.arbiter.record)

    def _seated(self, spec: SessionSpec, rotation: int) -> SessionSpec:
        """The session with each local bot's seat given to its process for ``rotation``."""
        laned, base = self._laned, self._base
        seats = tuple(_identity(base[bot], rotation) if bot in laned else bot for bot in spec.seats)
        return dataclasses.replace(spec, seats=seats)

    def _named(self, outcome: SessionOutcome) -> SessionOutcome:
        """The outcome with each fault's process named after its bot."""
        bots = self._bots
        faults = tuple(
            dataclasses.replace(fault, bot=bots.get(fault.bot, fault.bot)) for fault in outcome.faults
        )
        return dataclasses.replace(outcome, faults=faults)

    async def play(self, run: BlockRun, deliver: Callable[[SessionResult, bytes], None]) -> None:
        """Play the block's rotations; deliver each session with its log, encoded."""

        async def finished(session: FinishedSession) -> None:
            key = session.result
            data = encode_log(session.log, tournament=self.tournament, block=key.block, rotation=key.rotation)
            deliver(session.result, data)

        await self.play_block(run, finished)

    async def stop(self) -> None:
        """Stop the bots first (so none is restarted), then the referee; remove its socket and groups."""
        await asyncio.gather(*(p.stop() for p in self.processes), return_exceptions=True)
        with contextlib.suppress(Exception):
            await self.referee.stop(grace=0.5)
        self._remove_folder()
        if self._cgroups is not None:
            await asyncio.to_thread(self._cgroups.close)

    def _remove_folder(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def _identity(stem: str, rotation: int) -> str:
    """The referee's identity for a bot's process that plays ``rotation`` (never shown to the bot)."""
    return f"{stem}#{rotation}"


_STARTING_AT_ONCE = max(2, os.cpu_count() or 1)
"""Bot processes a host starts at once: a Python bot needs about half a second of CPU to start,
and dozens started together on a small machine would each take long enough to time out."""
_SOCKET_PATH_MAX = 100
"""Longer Unix socket paths do not fit ``sockaddr_un`` (108 bytes on Linux, 104 on macOS)."""


SOCKET_FOLDER = re.compile(r"nap-referee-(\d+)-\w+")
"""The name of a referee's socket folder: ``nap-referee-<pid>-<random>``, after the process it is for."""


def socket_folder() -> Path:
    """A new private folder for the referee's socket, named after this process (:data:`SOCKET_FOLDER`).

    The folders of processes that are gone are removed first: a process stopped by
    ``kill -9`` cannot remove its own (:func:`remove_orphan_socket_folders`).
    """
    parent = Path(_short_temp() or tempfile.gettempdir())
    remove_orphan_socket_folders(parent)
    return Path(tempfile.mkdtemp(prefix=f"nap-referee-{os.getpid()}-", dir=parent))


def remove_orphan_socket_folders(parent: Path) -> list[Path]:
    """Remove the socket folders in ``parent`` that are this user's and whose process is gone; those removed.

    A folder of a live process (a recycled pid included), another user's, or of an older
    name that says no process, is left alone.
    """
    removed = []
    for folder in parent.glob("nap-referee-*"):
        named = SOCKET_FOLDER.fullmatch(folder.name)
        try:
            if named is None or folder.stat().st_uid != os.getuid() or alive(int(named[1])):
                continue
        except OSError:  # gone meanwhile
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _short_temp() -> str | None:
    """The temporary folder for the referee's socket: the usual one, or ``/tmp`` where that is too long."""
    usual = tempfile.gettempdir()
    return usual if len(usual) + 40 < _SOCKET_PATH_MAX else "/tmp"  # noqa: S108 - a private folder in it
