"""What every executor is: a way to play blocks that hands each finished session back to the runner.

The runner owns the schedule, the store and the progress bar; an :class:`Executor` only
plays the blocks it is given and calls ``deliver(result, log)`` for each finished
session, ``log`` being the session's log encoded (:func:`tournaments.store.logs.encode_log`).
``deliver`` commits the session with its log in one transaction: the runner's process
alone writes the store, whichever executor played it.

An executor is a frozen value, chosen for one run (``--executor``); :meth:`Executor.open`
starts whatever it needs (processes, a Ray instance) as :class:`Players`, which play the
blocks handed to them, and stops it again on the way out, however the run ends. A
tournament hands them all its blocks (:func:`play_blocks`); an arena's ladder hands them
blocks as it chooses them, for as long as it runs. The executor tells the runner which
workers are playing, and whenever that changes, through :attr:`PlayContext.report`
(``nap tournament status`` shows it). It hands :attr:`PlayContext.tables` a source of the
tables in play (:mod:`tournaments.play.tables`), or one that says why there is none: the
runner passes it on to the run's observers
(:meth:`~tournaments.play.observers.RunObserver.tables`), who ask it only while someone watches.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tournaments.play.host import first_failure

if TYPE_CHECKING:
    from collections.abc import Sequence
    from contextlib import AbstractAsyncContextManager

    from tournaments.plan.entries import BotEntry
    from tournaments.play.blocks import BlockRun
    from tournaments.play.host import Hosting, WorkerSetup
    from tournaments.play.tables import TableSource
    from tournaments.results import SessionResult

__all__ = ["Deliver", "Executor", "PlayContext", "Players", "Usage", "play_blocks"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """What is playing a tournament's blocks: the executor, how many workers now, and where, in words.

    ``str()`` reads ``ray, 2 Ray workers on a local Ray instance with 2 CPUs, 1 lost``.
    """

    executor: str
    """``local`` or ``ray``."""
    workers: int
    """Workers playing blocks now, each a referee with its own bot processes."""
    description: str
    """The workers and where they run: ``2 worker processes on this machine``, ..."""
    lost: int = 0
    """Workers lost so far in this run (their blocks played by others)."""
    resume_flags: tuple[str, ...] = ()
    """What ``nap tournament resume N`` needs to play on the same executor (``--executor ray ...``)."""

    def __str__(self) -> str:
        lost = f", {self.lost} lost" if self.lost else ""
        return f"{self.executor}, {self.description}{lost}"


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayContext:
    """Everything about one run that an executor needs besides the blocks.

    ``setup`` is sent to every worker; ``hosting`` says where a referee in the runner's own
    process listens (and the remote bots' tokens); ``report`` is told the :class:`Usage`
    whenever the workers in play change. ``tables`` is handed the source of the tables in
    play once they can be asked (None: nobody is told).
    """

    setup: WorkerSetup
    hosting: Hosting
    report: Callable[[Usage], None]
    tables: Callable[[TableSource], None] | None = None


Deliver = Callable[["SessionResult", bytes], None]
"""What an executor hands each finished session to, with its encoded log: the runner's commit."""


class Players(Protocol):
    """An executor started: its workers (a referee and bot processes each), playing the blocks handed them.

    :meth:`play` plays one block on one of its workers (the least busy) and returns once its
    last rotation is delivered; many calls run at once, up to :attr:`capacity` blocks
    usefully. A tournament hands it its blocks from :attr:`capacity` lanes
    (:func:`play_blocks`); an arena's ladder hands it each block as it chooses it, with
    the entries the block seats that the workers were not started with.
    """

    @property
    def capacity(self) -> int:
        """How many blocks it plays at once, all its workers together."""

    def tables(self) -> TableSource:
        """The tables its workers play now, for a spectator (or one that says why there are none)."""

    async def play(self, run: BlockRun, deliver: Deliver, *, entries: Sequence[BotEntry] = ()) -> None:
        """Play ``run``'s rotations in turn on one worker, delivering each session once, with its log.

        ``entries`` are bots the block seats beyond those the workers started with: a worker
        starts each (one process per rotation) the first time a block of its seats it.
        Raises :class:`~tournaments.errors.EntryStartError` when one of them cannot start (the
        block is not played), RunnerError (one line) when the workers cannot go on, and
        whatever ``deliver`` raises, as it is.
        """

    async def retire(self, names: Sequence[str]) -> None:
        """Stop the processes of entries no block will seat again, on every worker."""


class Executor(Protocol):
    """Where blocks are played: worker processes here, or Ray workers on a cluster."""

    @property
    def name(self) -> str:
        """``local`` or ``ray``: the ``--executor`` that chooses it."""

    def resume_flags(self) -> tuple[str, ...]:
        """The ``nap tournament resume`` options that play the rest of a run the same way."""

    def open(self, context: PlayContext, *, blocks: int | None) -> AbstractAsyncContextManager[Players]:
        """Start the workers (their referees and the bots of ``context``), and stop them on the way out.

        ``blocks`` is how many blocks the run plays (fewer workers start for fewer
        blocks), or None for a run that goes on until it is stopped (an arena's ladder).
        Raises RunnerError (one line) when they cannot start.
        """


async def play_blocks(
    executor: Executor, runs: Sequence[BlockRun], deliver: Deliver, *, context: PlayContext
) -> None:
    """Play every block of ``runs`` on ``executor`` and deliver each session once, with its log.

    Raises RunnerError (one line) when the blocks cannot be played (a bot that cannot
    start, workers that keep dying), and whatever ``deliver`` raises as it is; the first
    failure stops the other blocks, and the workers are stopped in every case.
    """
    if not runs:
        return
    async with executor.open(context, blocks=len(runs)) as players:
        queue = iter(runs)

        async def lane() -> None:
            for run in queue:
                await players.play(run, deliver)

        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(min(players.capacity, len(runs))):
                    group.create_task(lane())
        except* Exception as failed:  # noqa: BLE001 - raised again, as itself
            raise first_failure(failed) from None
