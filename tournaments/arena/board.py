"""What the ladder's store says: the leaderboard, and one entry's record, recomputed exactly from it.

:func:`leaderboard` reads the complete blocks' figures (:meth:`ArenaStore.block_figures`)
and the standings' sums of the ladder's tournament, and rates every entry with
:func:`tournaments.stats.ladder.ladder_ratings`: the same store always gives the same
board. The entries on it are the anchors and the submissions on the ladder (placing or
placed); a retired version is still rated (its blocks keep linking the others) and shown
apart, unranked. A placing entry is rated once it has a complete block, and ranked once
placed. An entry the referee played most decisions for (it faulted, hung or was
disqualified) is not ranked either: its chips are the referee's play
(:data:`tournaments.stats.standings.UNRANKED_SHARE`).

Nothing here writes, prints or waits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tournaments.arena.settings import ANCHORS
from tournaments.stats.estimates import estimate
from tournaments.stats.ladder import LadderRating, ladder_ratings
from tournaments.stats.standings import BotStanding, HeadToHead, Standings, standings_of

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tournaments.stats.estimates import Estimate
    from tournaments.stats.ladder import BlockFigures
    from tournaments.store.arena import ArenaStore, Submission

__all__ = ["BoardRow", "EntryRecord", "Leaderboard", "entry_record", "leaderboard"]


@dataclass(frozen=True, slots=True)
class BoardRow:
    """One entry's line: who, whose, its rating against the anchors and what it played.

    ``status`` is ``anchor``, ``placing``, ``placed`` or ``retired``; ``rating`` is None
    until the entry has a complete block. ``faults`` and ``sessions`` count every stored
    session (of complete blocks and of those in play).
    """

    rank: int | None
    entry: str
    owner: str | None
    bot: str
    version: str
    status: str
    rating: Estimate | None
    blocks: int
    sessions: int
    faults: int
    rotation_flagged: bool
    unranked: bool

    def to_json(self) -> dict[str, Any]:
        """The row as the API serves it."""
        return {
            "rank": self.rank,
            "entry": self.entry,
            "owner": self.owner,
            "bot": self.bot,
            "version": self.version,
            "status": self.status,
            "rating": None if self.rating is None else self.rating.to_json(),
            "blocks": self.blocks,
            "sessions": self.sessions,
            "faults": self.faults,
            "rotation_flagged": self.rotation_flagged,
            "unranked": self.unranked,
        }


@dataclass(frozen=True, slots=True)
class Leaderboard:
    """The ladder now: ``rows`` (anchors and entries on the ladder, ranked first), ``retired`` apart."""

    rows: tuple[BoardRow, ...]
    retired: tuple[BoardRow, ...]
    blocks: int
    """Complete blocks: the only ones that count."""
    sessions: int
    standings: Standings
    """The ladder's sums as a tournament's standings (faults, the rotation check), blocks in play too."""
    figures: tuple[BlockFigures, ...]
    """The complete blocks' figures, the only ones results are read from."""

    def row(self, entry: str) -> BoardRow | None:
        """``entry``'s row, on the ladder or retired; None if it has none."""
        return next((row for row in (*self.rows, *self.retired) if row.entry == entry), None)

    def to_json(self) -> dict[str, Any]:
        """The board as the API serves it."""
        return {
            "blocks": self.blocks,
            "sessions": self.sessions,
            "entries": [row.to_json() for row in self.rows],
            "retired": [row.to_json() for row in self.retired],
        }


def leaderboard(store: ArenaStore, ladder: int) -> Leaderboard:
    """The leaderboard the store holds now (see the module notes)."""
    submissions = {s.entry: s for s in store.submissions() if s.entry is not None}
    standings = standings_of(store.tally([ladder]))
    lines = {line.bot: line for line in standings.bots}
    on_ladder = [*ANCHORS, *(e for e, s in submissions.items() if s.status in {"placing", "placed"})]
    unranked = {name for name, line in lines.items() if line.unranked}
    rankable = [
        e for e in on_ladder if (e in ANCHORS or submissions[e].status == "placed") and e not in unranked
    ]
    figures = store.block_figures(ladder)
    try:
        rated = {r.entry: r for r in ladder_ratings(figures, anchors=ANCHORS, ranked=rankable)}
    except ValueError:  # no anchor has played yet: nothing is rated
        rated = {}
    blocks = _blocks_by_entry(figures)
    rows = [
        _row(name, submissions.get(name), rated.get(name), lines.get(name), blocks.get(name, 0))
        for name in on_ladder
    ]
    rows.sort(key=_display_order)
    retired = [
        _row(name, submission, rated.get(name), lines.get(name), blocks.get(name, 0))
        for name, submission in submissions.items()
        if submission.status == "retired"
    ]
    retired.sort(key=_display_order)
    return Leaderboard(
        rows=tuple(rows),
        retired=tuple(retired),
        blocks=len(figures),
        sessions=standings.sessions,
        standings=standings,
        figures=tuple(figures),
    )


def _blocks_by_entry(figures: Iterable[BlockFigures]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for block in figures:
        for name in block.chips:
            counts[name] = counts.get(name, 0) + 1
    return counts


def _row(
    name: str,
    submission: Submission | None,
    rating: LadderRating | None,
    line: BotStanding | None,
    blocks: int,
) -> BoardRow:
    return BoardRow(
        rank=None if rating is None else rating.rank,
        entry=name,
        owner=None if submission is None else submission.owner,
        bot=name if submission is None else submission.name or name,
        version="built in" if submission is None else submission.version or "",
        status="anchor" if submission is None else submission.status,
        rating=None if rating is None else rating.value,
        blocks=blocks,
        sessions=0 if line is None else line.sessions,
        faults=0 if line is None else line.faults,
        rotation_flagged=line is not None and line.rotation_flagged,
        unranked=line is not None and line.unranked,
    )


def _display_order(row: BoardRow) -> tuple[bool, int, float, str]:
    """Ranked rows by rank and rating, then the rated ones by rating, then the others by name."""
    rating = float("-inf") if row.rating is None else row.rating.mean
    return (row.rank is None, row.rank or 0, -rating, row.entry)


@dataclass(frozen=True, slots=True)
class EntryRecord:
    """One entry's page: its row, its owner's other versions of the bot, its results against each opponent.

    ``versus`` holds, per opponent it shared complete blocks with, its mean chips per
    session more than that opponent over those blocks, with the interval;
    ``faults`` counts its faults by kind.
    """

    row: BoardRow
    submission: Submission | None
    versions: tuple[Submission, ...]
    versus: tuple[HeadToHead, ...]
    faults: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        """The entry as the API serves it: nothing private (the caller adds the admission's public steps)."""
        return {
            **self.row.to_json(),
            "submission": None if self.submission is None else self.submission.id,
            "versions": [
                {"entry": v.entry, "version": v.version, "status": v.status, "submitted_at": v.submitted_at}
                for v in self.versions
            ],
            "versus": [
                {"opponent": h.opponent, "difference": h.difference.to_json(), "los": h.los}
                for h in self.versus
            ],
            "faults": self.faults,
        }


def _versus(figures: Iterable[BlockFigures], entry: str) -> tuple[HeadToHead, ...]:
    """``entry`` against each opponent it shared complete blocks with: its chips a session more, per block."""
    differences: dict[str, list[float]] = {}
    for block in figures:
        mine = block.chips.get(entry)
        if mine is None:
            continue
        for opponent, theirs in block.chips.items():
            if opponent != entry:
                differences.setdefault(opponent, []).append(mine - theirs)
    return tuple(
        HeadToHead(bot=entry, opponent=opponent, difference=estimate(values))
        for opponent, values in sorted(differences.items())
    )


def entry_record(store: ArenaStore, ladder: int, board: Leaderboard, entry: str) -> EntryRecord | None:
    """``entry``'s record on ``board`` (None: no such entry on the ladder, now or before)."""
    row = board.row(entry)
    if row is None:
        return None
    submission = store.entry(entry)
    versions: tuple[Submission, ...] = ()
    if submission is not None:
        versions = tuple(
            s
            for s in store.submissions(owner=submission.owner)
            if s.name == submission.name and s.entry is not None
        )
    versus = _versus(board.figures, entry)
    return EntryRecord(
        row=row,
        submission=submission,
        versions=versions,
        versus=versus,
        faults=store.fault_kinds(ladder, entry),
    )
