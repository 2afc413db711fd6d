"""An arena to serve in the web layer's tests: people, an entry, blocks played for real, a bot log.

:func:`build_arena` makes it once per test module (its blocks are played in process by
:func:`tests.arena_helpers.played_block`, with genuine logs); the in-process tests copy it
for each test, the browser tests serve it from a thread. :class:`TablesInPlay` stands for
the ladder's tables in play, replaying a real session's public events up to a point;
:func:`cards_in` finds any card written in a page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pytest

from referee.rules import CARDS, CardPlayed, DealStarted, TrickWon
from tests.arena_helpers import admitted, new_arena, played_block
from tournaments.arena.settings import ArenaSettings
from tournaments.play.tables import TableEvents, TableInPlay, public_events
from tournaments.report.audit import open_log

if TYPE_CHECKING:
    from pathlib import Path

    from referee.rules import Event
    from tournaments.arena.service import Arena

LIMIT = 64 << 10
"""The test arena's upload limit."""
SETTINGS = ArenaSettings(
    sandbox="off", quota=3, pack_limits=replace(ArenaSettings().pack_limits, upload_bytes=LIMIT)
)
ENTRY = "ace.1"
"""Alice's entry, played by peel's policy."""
SEATS = ("random", "peel", "pimc", ENTRY)
POLICIES = {ENTRY: "peel", "pimc": "peel"}
"""pimc's seat played by peel's policy too: the same board in a fraction of the time (pimc searches)."""
OWN_LOG = "ace.1 says: only alice may read this line"
"""What alice's bot wrote to its stderr."""
_CARD_TEXTS = tuple(text for card in CARDS for text in (card.text, card.pretty))


@dataclass(frozen=True, slots=True)
class Built:
    """The arena as built: its folder, its people's tokens and two of its sessions."""

    folder: Path
    admin: str
    alice: str
    bob: str
    complete: int
    """A session of a complete block."""
    unfinished: int
    """A session of a block still in play (one rotation of four stored)."""
    unfinished_block: int


def build_arena(folder: Path) -> Built:
    """An arena in ``folder``: admin, alice (``ace.1``, with a bot log), bob; two blocks and part of one."""
    opened = new_arena(folder, SETTINGS)
    arena = opened.arena
    admin = arena.caller(opened.admin_token)
    alice, bob = arena.add_person(admin, "alice"), arena.add_person(admin, "bob")
    assert admitted(arena, "alice", bot="ace").entry == ENTRY
    for _ in range(2):
        played_block(arena, SEATS, policies=POLICIES)
    block = played_block(arena, SEATS, policies=POLICIES, rotations=(0,))
    logs = arena.folder / "logs" / f"t{arena.ladder}" / "bots"
    logs.mkdir(parents=True)
    (logs / f"{ENTRY}-r0.log").write_text(OWN_LOG + "\n")
    sessions = arena.store.find_sessions(tournament=arena.ladder)
    arena.close()
    assert opened.admin_token is not None
    return Built(
        folder=folder,
        admin=opened.admin_token,
        alice=alice,
        bob=bob,
        complete=next(s.id for s in sessions if s.block == 0),
        unfinished=next(s.id for s in sessions if s.block == block),
        unfinished_block=block,
    )


def cards_in(text: str) -> list[str]:
    """Every card (``QH`` or ``Q♥``) written in ``text`` as a word of its own."""
    return [card for card in _CARD_TEXTS if re.search(rf"(?<![\w♠♥♦♣]){re.escape(card)}(?![\w♠♥♦♣])", text)]


@dataclass
class TablesInPlay:
    """A ladder's tables in play, as :class:`tournaments.play.tables.TableSource` gives them: one table."""

    table: TableInPlay
    played: tuple[Event, ...]
    unavailable: str | None = None

    async def tables(self) -> tuple[TableInPlay, ...]:
        """The one table."""
        return (self.table,)

    async def events(self, table: str, since: int) -> TableEvents | None:
        """Its events so far."""
        if table != self.table.table:
            return None
        return TableEvents(table=table, since=since, events=self.played[since:], over=False)


def in_play(arena: Arena, built: Built) -> TablesInPlay:
    """The unfinished block's stored session as a table in play, two cards into a trick of a later deal."""
    record = open_log(arena.store.log(built.unfinished), name="its log").record
    table = TableInPlay(table="t", block=built.unfinished_block, rotation=0, bots=SEATS, deals=8)
    return TablesInPlay(table, mid_deal(public_events(record)))


def mid_deal(events: tuple[Event, ...]) -> tuple[Event, ...]:
    """The events up to two cards into the third trick of a deal after the first (of the arena's deals)."""
    deals = tricks = cards = 0
    for number, event in enumerate(events):
        if isinstance(event, DealStarted):
            deals, tricks, cards = deals + 1, 0, 0
        elif deals >= 2 and isinstance(event, TrickWon):
            tricks += 1
        elif deals >= 2 and tricks == 2 and isinstance(event, CardPlayed):
            cards += 1
            if cards == 2:
                return events[: number + 1]
    pytest.fail("no deal after the first with three tricks in the sample")
