"""Tournaments played on the real runner and store, their blocks in this process: no process is started.

:class:`InProcess` is an executor that plays each block on the match core
(:func:`~tournaments.play.blocks.play_block_in_process`), peel in every seat, so a test not
marked slow can run, stop and resume a whole tournament.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clients.bots.peel import PeelBot
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import example_bot
from tournaments.play.blocks import play_block_in_process
from tournaments.play.tables import NoTables
from tournaments.store.logs import encode_log

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Sequence

    from tournaments.plan.entries import BotEntry
    from tournaments.play.blocks import BlockRun
    from tournaments.play.executors.base import Deliver, PlayContext

BOTS = (example_bot("peel", name="a"), example_bot("peel", name="b"), example_bot("peel", name="c"))
CONFIG = TournamentConfig(name="observed", bots=BOTS, table_size=3, sessions=6, seed=3, sandbox="off")
"""Two blocks of three sessions, played here: nothing is isolated, nothing is started."""
NOT_HERE = NoTables("played in the test's process")


@dataclass(frozen=True, slots=True)
class InProcess:
    """An executor that plays the blocks here, on the match core, peel in every seat, one at a time.

    ``between`` is awaited after each block; ``fails`` is raised once ``after`` blocks are played.
    """

    between: Callable[[], object] | None = None
    fails: BaseException | None = None
    after: int = 0

    @property
    def name(self) -> str:
        return "in-process"

    def resume_flags(self) -> tuple[str, ...]:
        return ()

    @contextlib.asynccontextmanager
    async def open(self, context: PlayContext, *, blocks: int | None) -> AsyncIterator[Here]:
        del blocks
        if context.tables is not None:
            context.tables(NOT_HERE)
        yield Here(self)


@dataclass(slots=True)
class Here:
    """:class:`InProcess`'s players: one block at a time, in this process."""

    executor: InProcess
    played: int = 0
    capacity: int = 1

    def tables(self) -> NoTables:
        return NOT_HERE

    async def play(self, run: BlockRun, deliver: Deliver, *, entries: Sequence[BotEntry] = ()) -> None:
        del entries
        executor = self.executor
        if executor.fails is not None and self.played == executor.after:
            raise executor.fails
        for done in play_block_in_process(run, dict.fromkeys(run.bots, PeelBot)):
            key = done.result
            deliver(
                key, encode_log(done.log, tournament=run.tournament, block=key.block, rotation=key.rotation)
            )
        self.played += 1
        if executor.between is not None:
            waited = executor.between()
            if asyncio.iscoroutine(waited):
                await waited

    async def retire(self, names: Sequence[str]) -> None:
        del names
