"""The default executor: blocks played on this machine, by worker processes or in the runner's own.

With more than one worker (``--workers``, one per two cores by default) and more than one
block, a :class:`~tournaments.play.executors.workers.WorkerPool` plays them: each worker process is a
referee with its own bot processes, and writes each session's log before sending the
result. With one worker, or with remote bots (``nap serve``, whose bots connect to one
known address), a :class:`~tournaments.play.host.BlockHost` plays them in the runner's process.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tournaments.play.executors.base import PlayContext, Usage
from tournaments.play.executors.workers import WorkerPool
from tournaments.play.host import BlockHost

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tournaments.play.blocks import BlockRun
    from tournaments.results import SessionResult

__all__ = ["LocalExecutor", "default_workers"]


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

    async def play(
        self,
        runs: Sequence[BlockRun],
        deliver: Callable[[SessionResult, bytes], None],
        *,
        context: PlayContext,
    ) -> None:
        """Play ``runs`` in worker processes, or here when one worker is enough or bots are remote."""
        setup = context.setup
        config = setup.config
        workers = config.workers or default_workers()
        remote = any(not bot.command for bot in config.bots)
        if workers > 1 and len(runs) > 1 and not remote:
            count = min(workers, len(runs))
            context.report(
                Usage(
                    executor=self.name, workers=count, description=f"{count} worker processes on this machine"
                )
            )
            pool = WorkerPool(setup, workers=workers)
            if context.tables is not None:
                context.tables(pool.tables())
            await pool.play(runs, deliver, per_worker=config.concurrency)
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
        )
        if context.tables is not None:
            context.tables(host.tables())
        try:
            await host.start()
            await host.play_all(runs, deliver, concurrency=config.concurrency)
        finally:
            await host.stop()
