"""A referee and its bot processes, playing blocks: one process's share of a tournament.

A :class:`BlockHost` starts a referee, registers every bot entry with a fresh token,
launches one process per local entry (each serving many tables at once) and plays
blocks with :func:`~tournaments.blocks.run_block`. For each finished session it encodes
the log (:func:`~tournaments.logfiles.encode_log`) and hands the result and the log's
bytes to ``deliver``: the runner commits both to the store in one transaction in the same
process, a worker process sends them to the runner (:mod:`tournaments.workers`).

:class:`Hosting` says where the referee listens and which tokens the remote bots (entries
without a command, :func:`remote_bot`) connect with.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from referee.rules import get_profile
from referee.server import Referee
from tournaments.blocks import BlockRun, FinishedSession, run_block
from tournaments.bots import BotEntry, BotProcess, RunnerError, new_token
from tournaments.logfiles import encode_log

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from referee.server import ServerLimits
    from tournaments.config import TournamentConfig
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


def quiet_logger() -> Any:  # noqa: ANN401 - a structlog bound logger
    """The referee's logger during a tournament: warnings and worse only (faults, crashes)."""
    return structlog.wrap_logger(
        structlog.PrintLogger(file=sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.dev.ConsoleRenderer(colors=False),
        ],
    )


class BlockHost:
    """One referee and one process per local bot entry of ``config``'s tournament.

    ``hosting`` says where the referee listens (127.0.0.1, any free port, by default)
    and gives the tokens of entries without a command (remote bots, which connect by
    themselves). ``bot_log_suffix`` tells apart the bot logs of several hosts of one
    tournament.
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
    ) -> None:
        self.config = config
        self.tournament = tournament
        self.logs_root = logs_root
        self.profile = get_profile(config.profile)
        """The rules, one object for every block played here."""
        self.referee = Referee(
            limits=limits, logger=quiet_logger(), profile=self.profile, time_limits=config.time_limits
        )
        self._hosting = hosting
        self._suffix = bot_log_suffix
        self.processes: list[BotProcess] = []

    async def start(self) -> int:
        """Start the referee and every bot; all must connect. Returns the referee's port.

        Raises RunnerError (one line) when a bot cannot start or connect; whatever was
        started is stopped again.
        """
        referee, config, hosting = self.referee, self.config, self._hosting
        port = await (
            referee.start() if hosting is None else referee.start(host=hosting.host, port=hosting.port)
        )
        remote: dict[str, str] = {}
        for entry in config.bots:
            if not entry.command:
                given = None if hosting is None else hosting.tokens.get(entry.name)
                remote[entry.name] = given or new_token()
                referee.add_bot(name=entry.name, token=remote[entry.name])
                continue
            token = new_token()
            referee.add_bot(name=entry.name, token=token)
            self.processes.append(
                BotProcess(
                    entry,
                    address=f"127.0.0.1:{port}",
                    token=token,
                    log_path=(
                        self.logs_root / f"t{self.tournament}" / "bots" / f"{entry.name}{self._suffix}.log"
                    ),
                    max_restarts=config.max_restarts,
                )
            )
        if hosting is not None and hosting.announce is not None:
            hosting.announce(port, remote)
        seconds = config.connect_timeout_s
        results = await asyncio.gather(
            *(p.start(referee, connect_timeout=seconds) for p in self.processes),
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

    async def _await_remote(self, name: str, seconds: float) -> None:
        try:
            await self.referee.wait_for_bot(name, timeout=seconds)
        except TimeoutError:
            msg = f"remote bot {name} did not connect within {seconds:g} s"
            raise RunnerError(msg) from None

    async def play(self, run: BlockRun, deliver: Callable[[SessionResult, bytes], None]) -> None:
        """Play the block's rotations; deliver each session with its log, encoded."""

        async def finished(session: FinishedSession) -> None:
            key = session.result
            data = encode_log(session.log, tournament=self.tournament, block=key.block, rotation=key.rotation)
            deliver(session.result, data)

        await run_block(run, self.referee, finished)

    async def play_all(
        self, runs: Sequence[BlockRun], deliver: Callable[[SessionResult, bytes], None], *, concurrency: int
    ) -> None:
        """Play the blocks with at most ``concurrency`` in flight.

        The first error (a bot's, a log's, or ``deliver``'s own, such as a full database)
        stops them all and is raised as it is.
        """
        queue = iter(runs)

        async def lane() -> None:
            for run in queue:
                await self.play(run, deliver)

        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(min(concurrency, len(runs))):
                    group.create_task(lane())
        except* Exception as failed:  # noqa: BLE001 - raised again, as itself
            raise first_failure(failed) from None

    async def stop(self) -> None:
        """Stop the bots first (so none is restarted), then the referee."""
        await asyncio.gather(*(p.stop() for p in self.processes), return_exceptions=True)
        with contextlib.suppress(Exception):
            await self.referee.stop(grace=0.5)
