"""An arena at work: its submissions admitted one after another, its ladder played, both kept going.

:func:`run_arena` runs until cancelled (SIGTERM, Ctrl-C). It queues every submission a
person makes (and, at a start, every one an earlier run left on the way in: its admission
starts again from the top) and admits them one at a time
(:func:`tournaments.arena.admission.admit`), so that one bot's build and check never
crowd the ladder; and it plays the ladder (:class:`tournaments.arena.ladder.Ladder`) on
the executor's players, with the bots sandboxed as in a tournament.

The arena keeps serving through its own troubles: a failure of the ladder (a worker that
died, a full disk) is logged in one line and the ladder starts again after a pause, from
the store (its blocks in play resumed where their sessions stopped); a failure while
admitting one submission leaves it queued for the next start and the others go on.
What is wrong now is in :attr:`Arena.trouble <tournaments.arena.service.Arena.trouble>`, for the pages to say.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

import structlog

from referee.server import ServerLimits
from tournaments.arena.admission import admit
from tournaments.arena.ladder import Ladder
from tournaments.errors import ArenaError
from tournaments.play.executors.base import PlayContext
from tournaments.play.host import Hosting, WorkerSetup
from tournaments.play.sandbox import SandboxSpec, choose_sandbox

if TYPE_CHECKING:
    from tournaments.arena.service import Arena
    from tournaments.play.executors.base import Executor, Usage

__all__ = ["RETRY_S", "run_arena"]

RETRY_S = 30.0
"""How long the ladder waits after a failure before it starts again."""

_log = structlog.get_logger("nap.arena")


async def run_arena(
    arena: Arena,
    *,
    executor: Executor,
    limits: ServerLimits | None = None,
    workers: int | None = None,
    retry_s: float = RETRY_S,
) -> None:
    """Admit submissions and play the ladder until cancelled; see the module notes."""
    waiting: asyncio.Queue[int] = asyncio.Queue()
    for submission in arena.store.submissions(statuses=("queued", "building", "checking")):
        waiting.put_nowait(submission.id)
    arena.on_submitted = lambda submission: waiting.put_nowait(submission.id)
    ladders: list[Ladder] = []
    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(_admit_all(arena, waiting, ladders))
            group.create_task(
                _play_ladder(
                    arena,
                    executor=executor,
                    limits=limits or ServerLimits(),
                    workers=workers,
                    retry_s=retry_s,
                    ladders=ladders,
                )
            )
    finally:
        arena.on_submitted = None


async def _admit_all(arena: Arena, waiting: asyncio.Queue[int], ladders: list[Ladder]) -> None:
    """Admit the queued submissions one at a time; a new entry wakes the ladder."""
    while True:
        number = await waiting.get()
        submission = arena.store.submission(number)
        if submission.status not in {"queued", "building", "checking"}:
            continue
        try:
            admitted = await admit(
                submission, store=arena.store, settings=arena.settings, folder=arena.folder
            )
        except ArenaError as exc:  # the arena's own trouble (a full disk): the submission waits for a start
            _log.warning("admission stopped", submission=number, reason=str(exc))
            arena.trouble.now = f"admitting submission {number}: {exc}"
            continue
        arena.changes.moved()
        if admitted.status == "placing":
            for ladder in ladders:
                ladder.wake()


async def _play_ladder(  # noqa: PLR0913 - the pieces of one arena run
    arena: Arena,
    *,
    executor: Executor,
    limits: ServerLimits,
    workers: int | None,
    retry_s: float,
    ladders: list[Ladder],
) -> None:
    """Play the ladder on the executor; after a failure, log it and start again after ``retry_s``."""
    settings = arena.settings
    problem = choose_sandbox(settings.sandbox)
    sandbox = (
        None
        if problem is not None
        else SandboxSpec(limits=settings.bot_limits, hidden=(arena.store.path, arena.folder / "logs"))
    )
    level = _log.bind().get_effective_level()

    def report(usage: Usage) -> None:
        arena.trouble.usage = usage

    context = PlayContext(
        setup=WorkerSetup(
            settings.ladder_config(seed=arena.meta.seed, workers=workers),
            arena.ladder,
            arena.folder / "logs",
            limits,
            log_level=level,
            sandbox=sandbox,
        ),
        hosting=Hosting(),
        report=report,
    )
    while True:
        try:
            async with executor.open(context, blocks=None) as players:
                ladder = Ladder(arena, players)
                ladders.append(ladder)
                arena.trouble.now = None
                try:
                    await ladder.run()
                finally:
                    ladders.remove(ladder)
        except ArenaError as exc:
            line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            arena.trouble.now = f"the ladder stopped: {line}; it starts again in {retry_s:g} s"
            _log.warning("ladder stopped; starting again", reason=line, after_s=retry_s)
        with contextlib.suppress(TimeoutError):
            await asyncio.sleep(retry_s)
