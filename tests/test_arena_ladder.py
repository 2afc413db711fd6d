"""The ladder's loop on players that play in this process: placements, retirements, failures, restarts."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from tests.arena_helpers import admitted, new_arena
from tournaments.arena.ladder import Ladder
from tournaments.arena.running import run_arena
from tournaments.arena.settings import ArenaSettings
from tournaments.errors import EntryStartError
from tournaments.plan.entries import BUILTIN_BOTS
from tournaments.play.blocks import play_block_in_process
from tournaments.play.tables import NoTables
from tournaments.store.logs import encode_log

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Sequence
    from pathlib import Path

    from tournaments.arena.service import Arena
    from tournaments.plan.entries import BotEntry
    from tournaments.play.blocks import BlockRun
    from tournaments.play.executors.base import Deliver, PlayContext

QUICK = {"pimc": "peel"}
"""pimc's seat played by peel's policy here: the same tables in a fraction of the time."""


@dataclass
class Here:
    """Players that play each block in this process, every submitted entry with ``plays``' policy.

    ``broken`` entries cannot start. Once ``stop_when()`` says so after a block, the loop is
    cancelled (as a stop would), leaving the other blocks in play where they are.
    """

    arena: Arena
    plays: str = "peel"
    broken: frozenset[str] = frozenset()
    capacity: int = 4
    played: list[tuple[str, ...]] = field(default_factory=list)
    entered: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    freeze: Callable[[BlockRun], int | None] = lambda _run: None
    """How many sessions of a block to deliver before it waits until the loop is cancelled (None: all)."""
    stop_when: Callable[[], bool] | None = None
    on_stop: Callable[[], object] | None = None

    def tables(self) -> NoTables:
        return NoTables("played in the test's process")

    async def play(self, run: BlockRun, deliver: Deliver, *, entries: Sequence[BotEntry] = ()) -> None:
        for entry in entries:
            if entry.name in self.broken:
                msg = f"bot {entry.name} exited with status 1 before connecting"
                raise EntryStartError(msg, entry=entry.name)
            self.entered.append(entry.name)
        await asyncio.sleep(0)
        policies = {
            name: BUILTIN_BOTS[QUICK.get(name, name if name in BUILTIN_BOTS else self.plays)].make_bot()
            for name in run.bots
        }
        frozen = self.freeze(run)
        for number, session in enumerate(play_block_in_process(run, policies)):
            if number == frozen:
                await asyncio.Event().wait()  # until cancelled
            key = session.result
            deliver(
                key,
                encode_log(session.log, tournament=run.tournament, block=key.block, rotation=key.rotation),
            )
            await asyncio.sleep(0)
        self.played.append(run.bots)
        if self.stop_when is not None and self.stop_when() and self.on_stop is not None:
            self.on_stop()

    async def retire(self, names: Sequence[str]) -> None:
        self.retired += names


def run_ladder(
    arena: Arena, players: Here, *, blocks: int = 0, until: Callable[[], bool] | None = None
) -> None:
    """Run the ladder until ``blocks`` blocks were played, or ``until()`` (then cancel it, as a stop does)."""

    async def main() -> None:
        ladder = Ladder(arena, players)
        task = asyncio.ensure_future(ladder.run())
        players.stop_when = until or (lambda: len(players.played) >= blocks)
        players.on_stop = task.cancel
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    opened = new_arena(tmp_path, ArenaSettings(sandbox="off", table_sizes=(4,), placement_blocks=3, keep=1))
    return opened.arena


class TestPlacement:
    """A new entry plays its placement blocks with the anchors, then is placed with its rating."""

    def test_an_entry_is_placed_after_its_placement_blocks_with_the_anchors(self, arena: Arena) -> None:
        placing = admitted(arena, "alice", bot="ace", status="placing")
        players = Here(arena)
        run_ladder(arena, players, blocks=8)
        first = [set(t) for t in players.played[:3]]
        assert first == [{"ace.1", "random", "peel", "pimc"}] * 3
        placed = arena.store.submission(placing.id)
        assert placed.status == "placed"
        assert placed.rating is not None
        assert placed.rating["n"] == 3
        steps = [step for _, step, _ in arena.store.steps(placing.id, private=False)]
        assert steps[-1] == "placed"

    def test_the_ladder_waits_while_no_entry_is_submitted(self, arena: Arena) -> None:
        players = Here(arena)

        async def main() -> None:
            ladder = Ladder(arena, players)
            task = asyncio.ensure_future(ladder.run())
            await asyncio.sleep(0.05)
            assert players.played == []
            assert arena.store.ladder_blocks(arena.ladder) == []
            admitted(arena, "alice", bot="ace", status="placing")
            played = asyncio.Event()
            players.stop_when, players.on_stop = (lambda: True), played.set
            ladder.wake()
            await played.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(main())


class TestOwners:
    """Never two entries of one owner at a table; an owner's older versions retire beyond keep."""

    def test_a_newer_version_placed_retires_the_older_beyond_keep_and_its_processes_stop(
        self, arena: Arena
    ) -> None:
        old = admitted(arena, "alice", bot="ace")
        new = admitted(arena, "alice", bot="ace", status="placing")
        admitted(arena, "bob", bot="bee")
        players = Here(arena)
        run_ladder(arena, players, blocks=14)
        assert arena.store.submission(new.id).status == "placed"
        assert arena.store.submission(old.id).status == "retired"
        assert "ace.1" in players.retired
        for table in players.played:
            owners = [name.split(".")[1] for name in table if "." in name]
            assert not ({"1", "2"} <= set(owners)), table  # alice's two versions never met
        board = arena.leaderboard()
        assert "ace.1" in {row.entry for row in board.retired}


class TestFailures:
    """An entry that cannot start leaves; its block never counts; a stop resumes where it was."""

    def test_an_entry_that_cannot_start_leaves_and_its_block_is_abandoned(self, arena: Arena) -> None:
        bad = admitted(arena, "mallory", bot="bad", status="placing")
        admitted(arena, "alice", bot="ace", status="placing")
        players = Here(arena, broken=frozenset({"bad.1"}))
        run_ladder(arena, players, blocks=6)
        refused = arena.store.submission(bad.id)
        assert refused.status == "refused"
        assert refused.reason is not None
        assert "could not start on the ladder" in refused.reason
        abandoned = [b for b in arena.store.ladder_blocks(arena.ladder) if b.abandoned is not None]
        assert abandoned
        assert all("bad.1" in b.bots for b in abandoned)
        assert all("bad.1" not in table for table in players.played)

    def test_a_restart_finishes_the_blocks_left_in_play_with_the_same_deals(self, arena: Arena) -> None:
        admitted(arena, "alice", bot="ace", status="placing")
        admitted(arena, "bob", bot="bee", status="placing")
        players = Here(arena, capacity=6, freeze=lambda run: 2 if run.index >= 3 else None)
        run_ladder(arena, players, blocks=3)
        unfinished = arena.store.ladder_blocks(arena.ladder, complete=False)
        assert unfinished  # the stop left blocks in play
        kept = {b.index: arena.store.rotations_stored(arena.ladder, b.index) for b in unfinished}
        again = Here(arena, capacity=6)
        run_ladder(arena, again, until=lambda: all(arena.store.block_complete(arena.ladder, i) for i in kept))
        for index, rotations in kept.items():
            assert arena.store.block_complete(arena.ladder, index)
            assert rotations <= arena.store.rotations_stored(arena.ladder, index)


@dataclass(frozen=True)
class HereExecutor:
    """An executor whose players are :class:`Here`'s, one set per start of the ladder."""

    made: list[Here]
    arena: Arena

    @property
    def name(self) -> str:
        return "here"

    def resume_flags(self) -> tuple[str, ...]:
        return ()

    @contextlib.asynccontextmanager
    async def open(self, context: PlayContext, *, blocks: int | None) -> AsyncIterator[Here]:
        del context, blocks
        players = Here(self.arena)
        self.made.append(players)
        yield players


async def until(found: Callable[[], bool]) -> None:
    """Wait until ``found()``: the store says so, and nothing signals a commit."""
    while not found():  # noqa: ASYNC110 - polling the store, which has no event to wait on
        await asyncio.sleep(0.01)


class TestTrouble:
    """The arena keeps serving through its own troubles, losing no finished block."""

    def test_a_full_disk_stops_the_ladder_in_one_line_and_it_plays_again_once_there_is_room(
        self, arena: Arena
    ) -> None:
        admitted(arena, "alice", bot="ace")
        store = arena.store
        made: list[Here] = []

        async def main() -> None:
            running = asyncio.ensure_future(
                run_arena(arena, executor=HereExecutor(made, arena), retry_s=0.05)
            )
            await until(lambda: store.tally([arena.ladder]).sessions >= 8)
            pages = store._conn.execute("PRAGMA page_count").fetchone()[0]  # noqa: SLF001 - the disk fills up
            store._conn.execute(f"PRAGMA max_page_count = {pages}")  # noqa: SLF001
            await until(lambda: arena.trouble.now is not None)
            full = arena.trouble.now
            kept = store.tally([arena.ladder]).sessions
            store._conn.execute("PRAGMA max_page_count = 1073741823")  # noqa: SLF001 - room again
            await until(lambda: store.tally([arena.ladder]).sessions > kept + 8)
            running.cancel()
            with pytest.raises(asyncio.CancelledError):
                await running
            assert full is not None
            assert "database or disk is full" in full
            assert full.endswith("it starts again in 0.05 s")

        asyncio.run(main())
        assert len(made) >= 2  # the ladder started again
        assert arena.trouble.now is None
        complete = store.ladder_blocks(arena.ladder, complete=True)
        assert all(store.block_complete(arena.ladder, b.index) for b in complete)
