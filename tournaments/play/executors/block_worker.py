"""A worker: one referee with its own bot processes, playing the blocks the runner sends it.

:class:`BlockWorker` is the worker's end of the conversation
(:mod:`~tournaments.play.executors.worker_messages`), whichever executor carries it: a local
worker process feeds it the messages it reads from its pipe
(:mod:`~tournaments.play.executors.workers`), and the Ray executor
(:mod:`~tournaments.play.executors.ray`) makes an actor of it and calls its methods, one
per CPU of the cluster by default. Either way it is a
:class:`~tournaments.play.host.BlockHost` (a referee on a Unix-domain socket and, per bot
entry, one process per rotation, each serving many tables) playing blocks with
:meth:`~tournaments.play.host.BlockHost.play_block`. It writes nothing the runner needs:
each finished session goes back as its result and its log's bytes
(:func:`~tournaments.store.logs.encode_log`), which the runner commits together.

A Ray worker's bots' own logs stay on its node: under the runner's ``logs`` folder when
that path can be made there (the runner's own machine, or a shared file system), else
under the node's temporary folder (``/tmp/nap-arena/logs``); its :class:`Ready` says which.
This module imports no Ray: the executor turns the class into an actor.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

import structlog

from referee.server import tune_collector
from tournaments.errors import EntryStartError
from tournaments.play.executors.shipping import NAP_PROTO, local_bots, shipped_proto
from tournaments.play.executors.worker_messages import (
    EntryFailed,
    EventsAnswer,
    EventsQuestion,
    Ready,
    SessionPlayed,
    TablesAnswer,
    TablesQuestion,
    WorkerInfo,
)
from tournaments.play.host import BlockHost
from tournaments.play.sandbox import Sandbox
from tournaments.store.logs import encode_log

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from tournaments.plan.entries import BotEntry
    from tournaments.play.blocks import FinishedSession
    from tournaments.play.executors.worker_messages import Answer, PlayBlock, Question, Retire, Start
    from tournaments.play.host import WorkerSetup

__all__ = ["BlockWorker"]

_FALLBACK_LOGS = Path(tempfile.gettempdir()) / "nap-arena" / "logs"
"""Where a Ray worker's bots log when the runner's logs folder cannot be made on its node."""


class BlockWorker:
    """One worker's referee and bot processes for one tournament: the runner's messages, answered."""

    def __init__(self) -> None:
        self._host: BlockHost | None = None
        self._playing: set[asyncio.Task[None]] = set()

    async def start(self, message: Start) -> Ready:
        """Start the referee and every bot (built on this node first, if portable).

        Raises RunnerError (one line) when a bot cannot be built, started or connected;
        what was started is stopped again.
        """
        setup = message.setup
        structlog.configure(
            wrapper_class=structlog.make_filtering_bound_logger(setup.log_level),
            logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        )
        tune_collector()
        bots, logs_root = setup.config.bots, setup.logs_root
        if message.portable_bots:
            bots, logs_root = await _made_local(setup)
        host = BlockHost(
            dataclasses.replace(setup.config, bots=bots),
            tournament=setup.tournament,
            logs_root=logs_root,
            limits=setup.limits,
            bot_log_suffix=message.bot_log_suffix,
            sandbox=setup.sandbox,
            log_level=setup.log_level,
        )
        await host.start()
        self._host = host
        return Ready(
            where=WorkerInfo(
                pid=os.getpid(),
                host=socket.gethostname(),
                bot_logs=str(logs_root / f"t{setup.tournament}" / "bots"),
            )
        )

    async def play(self, message: PlayBlock) -> AsyncIterator[SessionPlayed | EntryFailed]:
        """Play the block's rotations in turn; yield each session as it ends, with its encoded log.

        The entries it seats that this worker does not play yet are started first; when one
        cannot be, the block is not played and the one thing yielded is :class:`EntryFailed`.
        """
        host = self._started()
        try:
            await host.enter(message.entries)
        except EntryStartError as exc:
            yield EntryFailed(block=message.run.index, entry=exc.entry, reason=str(exc))
            return
        sessions: asyncio.Queue[SessionPlayed | None] = asyncio.Queue()

        async def finished(session: FinishedSession) -> None:
            key = session.result
            data = await asyncio.to_thread(
                encode_log, session.log, tournament=key.tournament, block=key.block, rotation=key.rotation
            )
            sessions.put_nowait(SessionPlayed(result=key, log=data))

        async def play_block() -> None:
            try:
                await host.play_block(message.run, finished)
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

    async def retire(self, message: Retire) -> None:
        """Stop the processes of entries no block seats again."""
        await self._started().retire(message.entries)

    async def answer(self, question: Question) -> Answer:
        """A spectator's question about the tables played here, answered (public events only)."""
        tables = self._started().tables()
        match question:
            case TablesQuestion():
                return TablesAnswer(tables=await tables.tables())
            case EventsQuestion(table=table, since=since):
                return EventsAnswer(events=await tables.events(table, since))
            case _:
                assert_never(question)

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

    def _started(self) -> BlockHost:
        if self._host is None:
            msg = "a BlockWorker asked to play or answer before it started"
            raise RuntimeError(msg)
        return self._host


async def _made_local(setup: WorkerSetup) -> tuple[tuple[BotEntry, ...], Path]:
    """The portable entries made local and built on this node, and the root of their bots' logs.

    Ray's working_dir, where the bot folders are unpacked, is this process's folder; a
    ``nap.proto`` shipped with them is the one this process's bots find, unless the node
    sets its own.
    """
    shipped = Path.cwd()
    proto = shipped_proto(shipped)
    if proto is not None:
        os.environ.setdefault(NAP_PROTO, str(proto))
    sandbox = None if setup.sandbox is None else Sandbox(setup.sandbox)
    bots = await asyncio.to_thread(local_bots, setup.config.bots, shipped, sandbox=sandbox)
    return bots, await asyncio.to_thread(_bot_logs_root, setup)


def _bot_logs_root(setup: WorkerSetup) -> Path:
    """The runner's logs folder when it can be made on this node, else the node's own."""
    try:
        (setup.logs_root / f"t{setup.tournament}" / "bots").mkdir(parents=True, exist_ok=True)
    except OSError:
        return _FALLBACK_LOGS
    return setup.logs_root
