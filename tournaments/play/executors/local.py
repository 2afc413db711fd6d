"""The default executor: blocks played on this machine, by worker processes or in the runner's own.

With more than one worker (``--workers``, one per two cores by default) and more than one
block, a :class:`~tournaments.play.executors.workers.WorkerPool` plays them: each worker process is a
referee with its own bot processes, and writes each session's log before sending the
result. With one worker, or with remote bots (``nap serve``, whose bots connect to one
known address), a :class:`~tournaments.play.host.BlockHost` plays them in the runner's process
(:class:`HostPlayers`).
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tournaments.play.executors.base import Usage
from tournaments.play.executors.workers import WorkerPool
from tournaments.play.host import BlockHost

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    from tournaments.plan.entries import BotEntry
    from tournaments.play.blocks import BlockRun
    from tournaments.play.executors.base import Deliver, PlayContext, Players
    from tournaments.play.tables import HostTables

__all__ = ["HostPlayers", "LocalExecutor", "default_workers"]


def default_workers() -> int:
    """One worker process per two cores, at least one.

    A worker is one referee (one interpreter, at most one core), and the bot processes it
    starts (one per bot and rotation) need about as much CPU again: in a tournament of the
    built-in bots the referee's side is about half the CPU a session costs. So one worker
    per two cores keeps every core busy; on two cores one worker (in the runner's own
    process) played 3,000 sessions in 68 s where two took 73 s, and 200 in 12.0 s against
    15.2 s (docs/tournaments.md).
    """
    return max(1, (os.cpu_count() or 1) // 2)


@dataclass(frozen=True, slots=True)
class LocalExecutor:
    """Worker processes on this machine, or the runner's own process when one is enough."""

    @property
    def name(self) -> str:
        """``local``."""
        return "local"

    def resume_flags(self) -> tuple[str, ...]:
        """None: resuming plays locally by default."""
        return ()

    @contextlib.asynccontextmanager
    async def open(self, context: PlayContext, *, blocks: int | None) -> AsyncIterator[Players]:
        """Worker processes, or a referee here when one worker is enough or bots are remote.

        Each worker plays up to the config's ``concurrency`` blocks at once, fewer when a
        run has too few blocks to go round evenly.
        """
        setup = context.setup
        config = setup.config
        workers = config.workers or default_workers()
        if blocks is not None:
            workers = min(workers, blocks)
        per_worker = (
            config.concurrency
            if blocks is None
            else max(1, min(config.concurrency, math.ceil(blocks / max(1, workers))))
        )
        remote = any(not bot.command for bot in config.bots)
        if workers > 1 and not remote:
            context.report(
                Usage(
                    executor=self.name,
                    workers=workers,
                    description=f"{workers} worker processes on this machine",
                )
            )
            async with WorkerPool(setup, workers=workers, per_worker=per_worker) as pool:
                if context.tables is not None:
                    context.tables(pool.tables())
                yield pool
            return
        context.report(
            Usage(executor=self.name, workers=1, description="one referee in the runner's process")
        )
        host = BlockHost(
            config,
            tournament=setup.tournament,
            logs_root=setup.logs_root,
            limits=setup.limits,
            hosting=context.hosting,
            sandbox=setup.sandbox,
            log_level=setup.log_level,
        )
        if context.tables is not None:
            context.tables(host.tables())
        try:
            await host.start()
            yield HostPlayers(
                host, capacity=config.concurrency if blocks is None else min(config.concurrency, blocks)
            )
        finally:
            await host.stop()


@dataclass(frozen=True, slots=True)
class HostPlayers:
    """A referee here and its bot processes: :class:`~tournaments.play.executors.base.Players`."""

    host: BlockHost
    capacity: int

    def tables(self) -> HostTables:
        """The tables in play on the host."""
        return self.host.tables()

    async def play(self, run: BlockRun, deliver: Deliver, *, entries: Sequence[BotEntry] = ()) -> None:
        """Start the entries it does not play yet, then play the block."""
        await self.host.enter(entries)
        await self.host.play(run, deliver)

    async def retire(self, names: Sequence[str]) -> None:
        """Stop those entries' processes."""
        await self.host.retire(names)
