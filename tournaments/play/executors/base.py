"""What every executor is: a way to play blocks that hands each finished session back to the runner.

The runner owns the schedule, the store and the progress bar; an :class:`Executor` only
plays the blocks it is given and calls ``deliver(result, log)`` for each finished
session, ``log`` being the session's log encoded (:func:`tournaments.store.logs.encode_log`).
``deliver`` commits the session with its log in one transaction: the runner's process
alone writes the store, whichever executor played it.

An executor is a frozen value, chosen for one run (``--executor``); :meth:`Executor.play`
starts whatever it needs (processes, a Ray instance) and stops it again before it returns,
however it ends. It tells the runner which workers are playing, and whenever that changes,
through :attr:`PlayContext.report` (``nap tournament status`` shows it). It hands
:attr:`PlayContext.tables` a source of the tables in play (:mod:`tournaments.play.tables`),
or one that says why there is none: the runner passes it on to the run's observers
(:meth:`~tournaments.play.observers.RunObserver.tables`), who ask it only while someone watches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tournaments.play.blocks import BlockRun
    from tournaments.play.host import Hosting, WorkerSetup
    from tournaments.play.tables import TableSource
    from tournaments.results import SessionResult

__all__ = ["Executor", "PlayContext", "Usage"]


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


class Executor(Protocol):
    """Plays blocks somewhere and hands each finished session, with its log, to ``deliver``."""

    @property
    def name(self) -> str:
        """``local`` or ``ray``: the ``--executor`` that chooses it."""

    def resume_flags(self) -> tuple[str, ...]:
        """The ``nap tournament resume`` options that play the rest of a run the same way."""

    async def play(
        self,
        runs: Sequence[BlockRun],
        deliver: Callable[[SessionResult, bytes], None],
        *,
        context: PlayContext,
    ) -> None:
        """Play every block of ``runs`` and deliver each session once, with its log.

        Raises RunnerError (one line) when the blocks cannot be played (a bot that cannot
        start, workers that keep dying), and whatever ``deliver`` raises as it is; what was
        started is stopped in every case.
        """
