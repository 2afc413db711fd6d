"""The ladder's loop: choose tables, play each as a complete block, count it once it is complete.

A :class:`Ladder` keeps as many blocks in play as its players hold
(:attr:`Players.capacity`: the executor's workers times the blocks each plays at once).
Each time a place frees up it asks :func:`tournaments.stats.ladder.choose_tables` for the
next tables, given every entry on the ladder with its rating and blocks so far, stores
each as a block of the ladder's tournament (so a restart knows it), and hands it to the
players with the entries it seats. Every session is committed as it comes back, with
its log, by the arena's one store; a block counts (for the ratings, and for its cards to
become public) only once its last rotation is in.

When a placement block completes and its entry has all its placement blocks, the entry is
``placed`` with its provisional rating, and its owner's versions beyond the arena's
``keep`` retire (their results stay). An entry whose processes cannot start leaves the
ladder (refused, with why) and the block it was seated at is abandoned: it never counts.

A restart first finishes the blocks an earlier run left incomplete (the rotations not yet
stored, with the same deals), so a kill -9 loses at most the sessions in play and counts
nothing twice. The loop plays only while some submitted entry is on the ladder.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from referee.match import TimeLimits
from tournaments.arena.settings import ANCHORS
from tournaments.errors import EntryStartError, RunnerError
from tournaments.plan.entries import BUILTIN_BOTS, BotEntry
from tournaments.plan.scheduler import derive_seed
from tournaments.play.blocks import BlockRun
from tournaments.play.entrants import entry_from_row
from tournaments.stats.ladder import LadderEntry, choose_tables, pair_meetings
from tournaments.store.arena import BlockKind, LadderBlock

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tournaments.arena.service import Arena
    from tournaments.play.executors.base import Players
    from tournaments.results import SessionResult
    from tournaments.store.arena import Submission

__all__ = ["Ladder"]

_log = structlog.get_logger("nap.arena")


@dataclass(slots=True)
class _State:
    """What the loop knows of the ladder's blocks, loaded once and kept up to date as it adds them."""

    next_index: int = 0
    blocks: Counter[str] = field(default_factory=Counter)
    placements: Counter[str] = field(default_factory=Counter)
    tables: list[tuple[str, ...]] = field(default_factory=list)


class Ladder:
    """Plays the arena's ladder with ``players`` until cancelled (see the module notes)."""

    def __init__(self, arena: Arena, players: Players) -> None:
        self._arena = arena
        self._players = players
        self._wake = asyncio.Event()
        self._playing: dict[int, asyncio.Task[None]] = {}
        self._seated: dict[int, tuple[str, ...]] = {}
        """The entries at each block in play."""
        self._handed: set[str] = set()
        """The submitted entries handed to the players so far (their processes may be running)."""
        self._state = _State()

    def wake(self) -> None:
        """Something changed on the ladder (an entry started placing): choose tables again."""
        self._wake.set()

    async def run(self) -> None:
        """Play until cancelled; the blocks in play are cancelled with it (their sessions so far kept)."""
        arena = self._arena
        arena.tables = self._players.tables()
        store, ladder = arena.store, arena.ladder
        blocks = store.ladder_blocks(ladder)
        state = self._state
        state.next_index = max((b.index for b in blocks), default=-1) + 1
        for block in blocks:
            if block.abandoned is None:
                self._chosen(block.bots, block.kind, block.placing)
        try:
            for block in store.ladder_blocks(ladder, complete=False):
                self._start(block)
            while True:
                self._fill()
                self._wake.clear()
                waiting = asyncio.ensure_future(self._wake.wait())
                try:
                    await asyncio.wait(
                        {waiting, *self._playing.values()}, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    waiting.cancel()
                for index, task in list(self._playing.items()):
                    if task.done():
                        del self._playing[index]
                        del self._seated[index]
                        task.result()  # a failure of the arena itself (the store, a worker) ends the loop
                await self._retire_gone()
        finally:
            for task in self._playing.values():
                task.cancel()
            await asyncio.gather(*self._playing.values(), return_exceptions=True)
            self._playing.clear()
            arena.tables = None

    def _chosen(self, bots: Sequence[str], kind: str, placing: str | None) -> None:
        state = self._state
        state.blocks.update(bots)
        state.tables.append(tuple(bots))
        if kind == "placement" and placing is not None:
            state.placements[placing] += 1

    def _fill(self) -> None:
        """Choose and start as many blocks as there are free places (none while no entry is submitted)."""
        arena = self._arena
        free = self._players.capacity - len(self._playing)
        on_ladder = arena.store.submissions(statuses=("placing", "placed"))
        if free <= 0 or not on_ladder:
            return
        entries = self._entries(on_ladder)
        settings = arena.settings
        state = self._state
        tables = choose_tables(
            entries,
            count=free,
            sizes=settings.table_sizes,
            meetings=pair_meetings(state.tables),
            seed=derive_seed(arena.meta.seed, "tables"),
            first_table=state.next_index,
        )
        placing = {entry.name for entry in entries if entry.placing}
        chosen = []
        for offset, seats in enumerate(tables):
            index = state.next_index + offset
            placed = next((name for name in seats if name in placing), None)
            kind: BlockKind = "placement" if placed is not None else "ladder"
            seed = derive_seed(arena.meta.seed, "board", index)
            chosen.append((index, seed, seats, kind, placed))
        if not chosen:
            return
        arena.store.add_ladder_blocks(arena.ladder, chosen)
        state.next_index += len(chosen)
        for index, seed, seats, kind, placed in chosen:
            self._chosen(seats, kind, placed)
            block = LadderBlock(
                index=index,
                board_seed=seed,
                bots=seats,
                kind=kind,
                placing=placed,
                sessions=0,
                abandoned=None,
            )
            self._start(block)

    def _entries(self, on_ladder: Sequence[Submission]) -> list[LadderEntry]:
        """Every entry the ladder may seat, with what the board and the blocks so far say of it."""
        board = self._arena.leaderboard()
        state = self._state
        wanted = self._arena.settings.placement_blocks
        entries = []
        for name, owner, placing in (
            *((anchor, None, False) for anchor in ANCHORS),
            *((s.entry or "", s.owner, s.status == "placing") for s in on_ladder),
        ):
            row = board.row(name)
            rating = None if row is None or row.rating is None else row.rating
            entries.append(
                LadderEntry(
                    name=name,
                    owner=owner,
                    rating=None if rating is None else rating.mean,
                    half_width=None if rating is None else rating.half_width,
                    blocks=state.blocks[name],
                    placing=placing,
                    placement_left=max(0, wanted - state.placements[name]) if placing else 0,
                )
            )
        return entries

    def _start(self, block: LadderBlock) -> None:
        self._seated[block.index] = block.bots
        self._handed.update(name for name in block.bots if name not in ANCHORS)
        self._playing[block.index] = asyncio.create_task(
            self._play(block), name=f"ladder block {block.index}"
        )

    async def _retire_gone(self) -> None:
        """Stop the processes of the entries that left the ladder, once no block in play seats them."""
        seated = {name for seats in self._seated.values() for name in seats}
        on_ladder = {s.entry for s in self._arena.store.submissions(statuses=("placing", "placed"))}
        gone = sorted(name for name in self._handed if name not in on_ladder and name not in seated)
        if gone:
            await self._players.retire(gone)
            self._handed.difference_update(gone)

    async def _play(self, block: LadderBlock) -> None:
        """Play the block's rotations not yet stored; once complete, count it."""
        arena = self._arena
        store = arena.store
        done = store.rotations_stored(arena.ladder, block.index)
        settings = arena.settings
        run = BlockRun(
            tournament=arena.ladder,
            index=block.index,
            board_seed=block.board_seed,
            bots=block.bots,
            profile=settings.profile,
            time_limits=TimeLimits(decision_ms=settings.decision_ms),
            rotations=tuple(r for r in range(len(block.bots)) if r not in done),
        )
        entries = [self._entry(name) for name in block.bots if name not in ANCHORS]

        def deliver(result: SessionResult, log: bytes) -> None:
            store.record_session(result, log=log)

        try:
            await self._players.play(run, deliver, entries=entries)
        except EntryStartError as exc:
            store.abandon_block(block.index, str(exc))
            self._leave(exc.entry, f"it could not start on the ladder: {exc}")
            _log.warning("ladder block abandoned", block=block.index, entry=exc.entry, reason=str(exc))
            return
        self._completed(block)

    def _entry(self, name: str) -> BotEntry:
        """The bot entry that plays ``name`` (an anchor's built-in one, or a submission's unpacked folder)."""
        if name in BUILTIN_BOTS:
            return BUILTIN_BOTS[name]
        row = self._arena.store.bot(name)
        submission = self._arena.store.entry(name)
        if submission is None:
            msg = f"ladder entry {name} has no submission"
            raise RunnerError(msg)
        return entry_from_row(row, self._arena.folder / "bots" / str(submission.id))

    def _completed(self, block: LadderBlock) -> None:
        """A block is complete: it counts; a placement that it finishes places its entry."""
        arena = self._arena
        arena.block_done()
        if block.kind != "placement" or block.placing is None:
            return
        submission = arena.store.entry(block.placing)
        if submission is None or submission.status != "placing":
            return
        wanted = arena.settings.placement_blocks
        if arena.store.placement_blocks_complete(arena.ladder, block.placing) < wanted:
            return
        row = arena.leaderboard(fresh=True).row(block.placing)
        rating = None if row is None or row.rating is None else row.rating
        shown = "no rating" if rating is None else _shown(rating.mean, rating.half_width, rating.n)
        arena.store.update_submission(
            submission.id, status="placed", rating=None if rating is None else rating.to_json()
        )
        arena.store.add_step(submission.id, "placed", f"provisional rating {shown}")
        self._retire_beyond_keep(submission.owner)
        arena.block_done()

    def _retire_beyond_keep(self, owner: str) -> None:
        """Retire ``owner``'s placed entries beyond the arena's ``keep`` latest (their results stay)."""
        arena = self._arena
        placed = arena.store.submissions(owner=owner, statuses=("placed",))
        for old in placed[: max(0, len(placed) - arena.settings.keep)]:
            arena.store.update_submission(
                old.id, status="retired", reason=f"newer versions of {owner}'s took its place"
            )
            arena.store.add_step(old.id, "retired", f"{arena.settings.keep} newer versions are on the ladder")

    def _leave(self, entry: str, reason: str) -> None:
        arena = self._arena
        submission = arena.store.entry(entry)
        if submission is None:  # an anchor that cannot start: the arena cannot play at all
            raise RunnerError(reason)
        arena.store.update_submission(submission.id, status="refused", reason=reason)
        arena.store.add_step(submission.id, "refused", reason)
        arena.block_done()


def _shown(mean: float, half_width: float | None, blocks: int) -> str:
    spread = "" if half_width is None else f" ± {half_width:.1f}"
    return f"{mean:+.1f}{spread} chips a session against the anchors, over {blocks} blocks"
