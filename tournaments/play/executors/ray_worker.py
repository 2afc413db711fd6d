"""A Ray worker: one referee with its own bot processes, playing the blocks the runner sends it.

:class:`BlockWorker` is what the Ray executor (:mod:`tournaments.play.executors.ray`) makes an
actor of, one per CPU of the cluster by default. It is a local worker process's
counterpart: a :class:`~tournaments.play.host.BlockHost` (a referee on a Unix-domain socket and,
per bot entry, one process per rotation, each serving many tables) playing blocks with
:meth:`~tournaments.play.host.BlockHost.play_block`. It writes nothing the runner needs: each finished
session goes back as its result and its log's bytes
(:func:`~tournaments.store.logs.encode_log`), which the runner commits together.

Its bots' own logs stay on its node: under the runner's ``logs`` folder when that path
can be made there (the runner's own machine, or a shared file system), else under the
node's temporary folder (``/tmp/nap-arena/logs``); :meth:`BlockWorker.start` says which.
This module imports no Ray: the executor turns the class into an actor.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from referee.server import tune_collector
from tournaments.play.executors.shipping import NAP_PROTO, local_bots, shipped_proto
from tournaments.play.host import BlockHost
from tournaments.play.sandbox import Sandbox
from tournaments.store.logs import encode_log

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from tournaments.play.blocks import BlockRun, FinishedSession
    from tournaments.play.host import WorkerSetup
    from tournaments.results import SessionResult

__all__ = ["BlockWorker", "WorkerInfo"]

_FALLBACK_LOGS = Path(tempfile.gettempdir()) / "nap-arena" / "logs"
"""Where a Ray worker's bots log when the runner's logs folder cannot be made on its node."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerInfo:
    """Where a started Ray worker runs: for the runner's log lines and for people looking for bot logs."""

    pid: int
    host: str
    """The node's host name."""
    bot_logs: str
    """The folder of this worker's bot logs, on its node."""


class BlockWorker:
    """One Ray worker's referee and bot processes for one tournament (``number`` tells its bot logs apart)."""

    def __init__(self, setup: WorkerSetup, *, number: int) -> None:
        self._setup = setup
        self._number = number
        self._host: BlockHost | None = None
        self._playing: set[asyncio.Task[None]] = set()

    async def start(self) -> WorkerInfo:
        """Build the bot folders on this node if need be, start the referee and every bot.

        Raises RunnerError (one line) when a bot cannot be built, started or connected;
        what was started is stopped again.
        """
        setup = self._setup
        structlog.configure(
            wrapper_class=structlog.make_filtering_bound_logger(setup.log_level),
            logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        )
        tune_collector()
        # Ray's working_dir, where bot folders are unpacked, is this process's folder
        shipped = Path.cwd()
        proto = shipped_proto(shipped)
        if proto is not None:  # this process is the Ray worker's own: its bots inherit it
            os.environ.setdefault(NAP_PROTO, str(proto))
        sandbox = None if setup.sandbox is None else Sandbox(setup.sandbox)
        bots = await asyncio.to_thread(local_bots, setup.config.bots, shipped, sandbox=sandbox)
        logs_root = await asyncio.to_thread(_bot_logs_root, setup)
        host = BlockHost(
            dataclasses.replace(setup.config, bots=bots),
            tournament=setup.tournament,
            logs_root=logs_root,
            limits=setup.limits,
            bot_log_suffix=f"-ray{self._number}",
            sandbox=setup.sandbox,
        )
        await host.start()
        self._host = host
        return WorkerInfo(
            pid=os.getpid(),
            host=socket.gethostname(),
            bot_logs=str(logs_root / f"t{setup.tournament}" / "bots"),
        )

    async def play(self, run: BlockRun) -> AsyncIterator[tuple[SessionResult, bytes]]:
        """Play the block's rotations in turn; yield each session as it ends, with its encoded log."""
        host = self._host
        if host is None:
            msg = "BlockWorker.play before start"
            raise RuntimeError(msg)
        sessions: asyncio.Queue[tuple[SessionResult, bytes] | None] = asyncio.Queue()

        async def finished(session: FinishedSession) -> None:
            key = session.result
            data = await asyncio.to_thread(
                encode_log, session.log, tournament=key.tournament, block=key.block, rotation=key.rotation
            )
            sessions.put_nowait((key, data))

        async def play_block() -> None:
            try:
                await host.play_block(run, finished)
            finally:
                sessions.put_nowait(None)

        playing = asyncio.create_task(play_block())
        self._playing.add(playing)
        playing.add_done_callback(self._playing.discard)
        try:
            while (session := await sessions.get()) is not None:
                yield session
            await playing  # raises what stopped the block, if anything did
        finally:
            playing.cancel()

    async def stop(self) -> None:
        """Stop the blocks still in play (the runner is not waiting for them), the bots, the referee.

        The blocks go first, so that no bot is seen leaving a table in play: that would be
        a fault in a session nobody keeps.
        """
        for task in self._playing:
            task.cancel()
        await asyncio.gather(*self._playing, return_exceptions=True)
        if self._host is not None:
            await self._host.stop()


def _bot_logs_root(setup: WorkerSetup) -> Path:
    """The runner's logs folder when it can be made on this node, else the node's own."""
    try:
        (setup.logs_root / f"t{setup.tournament}" / "bots").mkdir(parents=True, exist_ok=True)
    except OSError:
        return _FALLBACK_LOGS
    return setup.logs_root
