"""Standings: what the finished sessions say about each bot, and no more than that.

The independent unit is the duplicate block (one board set played once per seat with the
bots rotated), not the session: the sessions of one block share their cards, so their
results are correlated. Every interval here is therefore computed over blocks. A block
that is still incomplete (a tournament stopped mid-block) counts with the sessions it has.

Conventions:

* A bot's figure for a block is its mean chips per session over that block's sessions.
  Its mean chips per session is the mean of those block figures, so the estimate and its
  interval describe the same quantity even when some block is incomplete. Its win share
  is estimated the same way, from its mean win share in each block.
* Intervals are 95% Student t intervals over blocks (:mod:`tournaments.stats.estimates`). From a
  single block, or from blocks that all gave the same value, there is no interval
  (``None``, shown with the reason), never a made-up, infinite or zero-width one.
* Ranks are tied unless the data separates them: bots are ordered by mean chips, and a
  bot takes the next rank only when its paired difference from the bot above it (over
  the blocks they shared) has a trusted 95% interval entirely above zero; otherwise it
  shares that bot's rank. Each bot carries the paired likelihood of superiority (LOS)
  over the bot below it.
* The rating is a Bradley-Terry fit on every session at once (:mod:`tournaments.stats.rating`),
  so it does not depend on the order of the sessions; it breaks ties in mean chips for
  the order of display, never for the rank.
* Faults are counted from ``SeatResult.faults``. A bot the referee played more than half
  of the decisions for (:data:`UNRANKED_SHARE`: it faulted, hung or was disqualified) is
  listed after the others with no rank: its chips are the referee's play, not its own.
* Each bot's rotation edge (how much better it does on boards played before than on their
  first play, :mod:`tournaments.stats.rotation_check`) is estimated over its complete blocks, and
  a bot whose edge is above zero at a 1% family-wise level is flagged.

Everything above is a function of a few exact sums per bot, pair and contract
(:mod:`tournaments.stats.tally`): :func:`standings_of` reads them, whether the store kept them
as sessions came in (``nap standings`` at any number of sessions) or
:func:`compute_standings` folds them from a list of sessions.

The module is pure: no IO, no clock, and the same results always give the same standings.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tournaments.stats.estimates import (
    FEW_BLOCKS,
    Estimate,
    estimate,
    estimate_from_sums,
    likelihood_of_superiority,
    t_quantile,
)
from tournaments.stats.rating import bradley_terry
from tournaments.stats.rotation_check import rotation_flags
from tournaments.stats.tally import ROTATION_UNIT, PoolRecord, tally_of

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from tournaments.results import SessionResult
    from tournaments.stats.tally import BotTotals, Tally

__all__ = [
    "UNRANKED_SHARE",
    "BotStanding",
    "ContractRecord",
    "Estimate",
    "HeadToHead",
    "Standings",
    "compute_standings",
    "estimate",
    "standings_of",
    "t_quantile",
]


UNRANKED_SHARE = 0.5
"""A bot the referee played more than this share of the asked decisions for is not ranked."""


@dataclass(frozen=True, slots=True)
class ContractRecord:
    """How often a bot declared ``contract`` and how often it made it."""

    contract: str
    made: int
    attempted: int


@dataclass(frozen=True, slots=True)
class BotStanding:
    """One bot's line in the standings.

    ``rank`` is shared by bots the data does not separate (see the module notes), and
    None for a bot that is not ranked (:attr:`unranked`);
    ``los_next`` is the paired likelihood that this bot is better than the next one in
    the standings (None for the last bot, or when the two never varied over shared
    blocks). ``chips`` is mean chips per session and ``win_share`` the share of session
    wins (ties split), each estimated over ``blocks`` blocks; ``expected_win_share`` is
    what chance alone would give, the mean of ``1/k`` over the bot's sessions. ``rating``
    is the Bradley-Terry rating on the Elo scale (the bots average 0). ``declarer``
    lists contracts in alphabetical order; ``pool`` is the declarer's record in the pool
    variants (all zeros elsewhere). ``rotation_edge`` estimates, in chips a session over
    the bot's complete blocks, how much better it did on a board's later rotations than on
    its first (None: no complete block), and ``rotation_flagged`` says that the edge is
    above zero by the rotation check's test (:mod:`tournaments.stats.rotation_check`).
    ``asked`` counts the decisions asked of it and ``substituted`` those the referee
    played for it (both 0 for sessions stored before they were counted); ``cpu_us`` is the
    CPU its decisions were charged on the CPU clock, ``clocked`` how many were on it
    (:attr:`cpu_ms_per_decision`). The CPU is the machine's figure, not the bots' result:
    standings compare without it (as session results do), and the standings files show it
    in their JSON only, so that the rest stays byte for byte the same on any machine and
    under any load.
    """

    bot: str
    rank: int | None
    sessions: int
    blocks: int
    chips: Estimate
    win_share: Estimate
    expected_win_share: float
    declarer: tuple[ContractRecord, ...]
    faults: int
    rating: float
    los_next: float | None = None
    pool: PoolRecord = field(default_factory=PoolRecord)
    rotation_edge: Estimate | None = None
    rotation_flagged: bool = False
    asked: int = 0
    substituted: int = 0
    cpu_us: int = field(default=0, compare=False)
    clocked: int = field(default=0, compare=False)

    @property
    def cpu_ms_per_decision(self) -> float | None:
        """The mean CPU of its decisions on the CPU clock, in ms (None: none was on it)."""
        return self.cpu_us / self.clocked / 1000 if self.clocked else None

    @property
    def played_by_referee(self) -> float | None:
        """The share of its asked decisions the referee played for it (None: none counted)."""
        return self.substituted / self.asked if self.asked else None

    @property
    def unranked(self) -> bool:
        """Whether the referee played over :data:`UNRANKED_SHARE` of its decisions, so it is not ranked."""
        share = self.played_by_referee
        return share is not None and share > UNRANKED_SHARE

    @property
    def declarations(self) -> int:
        """The deals in which the bot was the declarer."""
        return sum(record.attempted for record in self.declarer)

    @property
    def mean_exchanged(self) -> float | None:
        """Mean cards exchanged before the auction per declaration (None: it never declared)."""
        declarations = self.declarations
        return self.pool.cards_exchanged / declarations if declarations else None


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """``bot`` against ``opponent`` over the blocks where both sat at the table.

    ``difference`` estimates, per shared block, ``bot``'s mean chips per session minus
    ``opponent``'s; its ``n`` is the number of shared blocks.
    """

    bot: str
    opponent: str
    difference: Estimate

    @property
    def los(self) -> float | None:
        """The likelihood that ``bot`` is the better of the two (None: no spread to judge by)."""
        return likelihood_of_superiority(self.difference)


@dataclass(frozen=True, slots=True)
class Standings:
    """The standings of a tournament (or of any set of finished sessions).

    ``bots`` is in display order: the ranked bots by mean chips descending, then rating
    descending, then bot id, and after them the unranked ones (:attr:`BotStanding.unranked`)
    in the same order; their ``rank`` says which of them the data separates. ``crosstable`` holds one
    entry per ordered pair of bots that shared at least one block, sorted by (bot,
    opponent). ``has_pool`` says that the sessions were played on a profile with a pool
    (:attr:`referee.rules.Profile.has_pool`), so the declarers' pool records belong in
    the standings even where they are all zeros.
    """

    bots: tuple[BotStanding, ...]
    crosstable: tuple[HeadToHead, ...]
    sessions: int
    blocks: int
    has_pool: bool = False

    @property
    def shows_pool(self) -> bool:
        """Whether to show the declarers' pool records: a profile with a pool, or any of them not empty."""
        return self.has_pool or any(not line.pool.empty for line in self.bots)

    def bot(self, name: str) -> BotStanding:
        """Return the standing of bot ``name``; ``KeyError`` if it never played."""
        for standing in self.bots:
            if standing.bot == name:
                return standing
        raise KeyError(name)

    def versus(self, bot: str, opponent: str) -> HeadToHead | None:
        """Return ``bot``'s record against ``opponent``, ``None`` if they never met."""
        for entry in self.crosstable:
            if entry.bot == bot and entry.opponent == opponent:
                return entry
        return None

    def tied(self, name: str) -> bool:
        """Whether bot ``name`` shares its rank with another bot (an unranked bot shares none)."""
        rank = self.bot(name).rank
        return rank is not None and sum(line.rank == rank for line in self.bots) > 1

    @property
    def unranked(self) -> tuple[BotStanding, ...]:
        """The bots not ranked because the referee played most of their decisions."""
        return tuple(line for line in self.bots if line.unranked)

    @property
    def too_few_blocks(self) -> int | None:
        """The fewest blocks shared by two bots side by side that share a rank, if under :data:`FEW_BLOCKS`.

        Over so few blocks a paired difference is not trusted (:attr:`Estimate.trusted`),
        so the two share a rank however far apart their means are; None when no shared
        rank comes down to that.
        """
        few = [
            entry.difference.n
            for above, line in itertools.pairwise(self.bots)
            if line.rank is not None
            and line.rank == above.rank
            and (entry := self.versus(above.bot, line.bot)) is not None
            and entry.difference.n < FEW_BLOCKS
        ]
        return min(few, default=None)


def compute_standings(results: Iterable[SessionResult], *, has_pool: bool = False) -> Standings:
    """Compute the standings of ``results``, in any order: the order changes nothing.

    ``has_pool``: the sessions' profile has a pool (:attr:`Standings.has_pool`). The same
    as :func:`standings_of` on the sums the store keeps for the same sessions.

    Raises ``ValueError`` if one bot sits in two seats of the same session, since its
    chips against itself would be meaningless.
    """
    return standings_of(tally_of(results), has_pool=has_pool)


def standings_of(tally: Tally, *, has_pool: bool = False) -> Standings:
    """The standings the sums of a :class:`~tournaments.stats.tally.Tally` give (see the module notes)."""
    ratings = bradley_terry(
        {bot: totals.beats / 2 for bot, totals in tally.bots.items()},
        {pair: totals.meetings for pair, totals in tally.pairs.items()},
    )
    crosstable = _crosstable(tally)
    lines = [_bot_standing(bot, totals, tally, ratings[bot]) for bot, totals in tally.bots.items()]
    flagged = rotation_flags({line.bot: line.rotation_edge for line in lines})
    lines = [dataclasses.replace(line, rotation_flagged=line.bot in flagged) for line in lines]
    lines.sort(key=lambda line: (line.unranked, -line.chips.mean, -line.rating, line.bot))
    return Standings(
        bots=_ranked(lines, crosstable),
        crosstable=crosstable,
        sessions=tally.sessions,
        blocks=tally.blocks,
        has_pool=has_pool,
    )


def _bot_standing(bot: str, totals: BotTotals, tally: Tally, rating: float) -> BotStanding:
    return BotStanding(
        bot=bot,
        rank=0,  # set by _ranked
        sessions=totals.sessions,
        blocks=totals.blocks,
        chips=estimate_from_sums(totals.blocks, totals.chips, totals.chips_sq, tally.scale),
        win_share=estimate_from_sums(totals.blocks, totals.wins, totals.wins_sq, tally.scale**2),
        expected_win_share=totals.expected / (tally.scale * totals.sessions),
        declarer=tuple(
            ContractRecord(contract=contract, made=record.made, attempted=record.attempted)
            for (owner, contract), record in sorted(tally.contracts.items())
            if owner == bot
        ),
        faults=totals.faults,
        rating=rating,
        pool=totals.pool,
        rotation_edge=None
        if not totals.rotation_blocks
        else estimate_from_sums(
            totals.rotation_blocks, totals.rotation_edge, totals.rotation_edge_sq, ROTATION_UNIT
        ),
        asked=totals.asked,
        substituted=totals.substituted,
        cpu_us=totals.cpu_us,
        clocked=totals.clocked,
    )


def _ranked(lines: Sequence[BotStanding], crosstable: Sequence[HeadToHead]) -> tuple[BotStanding, ...]:
    """The lines with their ranks (tied unless separated from the line above) and paired LOS.

    The unranked lines (which come last) get no rank, and the LOS of each line is over the
    next line whatever it is.
    """
    pairs = {(entry.bot, entry.opponent): entry for entry in crosstable}
    ranked: list[BotStanding] = []
    for position, line in enumerate(lines):
        after = lines[position + 1] if position + 1 < len(lines) else None
        below = None if after is None else pairs.get((line.bot, after.bot))
        rank: int | None = None
        if not line.unranked:
            rank = 1
            if ranked:
                above = pairs.get((ranked[-1].bot, line.bot))
                separated = (
                    above is not None and above.difference.trusted and (above.difference.low or 0.0) > 0
                )
                rank = position + 1 if separated else ranked[-1].rank
        ranked.append(dataclasses.replace(line, rank=rank, los_next=None if below is None else below.los))
    return tuple(ranked)


def _crosstable(tally: Tally) -> tuple[HeadToHead, ...]:
    """Every ordered pair of bots that shared a block, with the per-block difference."""
    entries = []
    for (a, b), totals in tally.pairs.items():
        if not totals.blocks:
            continue
        for bot, opponent, sign in ((a, b, 1), (b, a, -1)):
            difference = estimate_from_sums(totals.blocks, sign * totals.diff, totals.diff_sq, tally.scale)
            entries.append(HeadToHead(bot=bot, opponent=opponent, difference=difference))
    entries.sort(key=lambda entry: (entry.bot, entry.opponent))
    return tuple(entries)
