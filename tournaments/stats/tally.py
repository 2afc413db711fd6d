"""The standings' running totals: what each finished session adds, so that standings never reread sessions.

Standings (:mod:`tournaments.stats.standings`) are a function of a few sums: per bot, its
blocks and the sums and sums of squares of its block figures (mean chips and mean win
share per session in each block); per pair of bots, the sums and sums of squares of their
paired differences over the blocks they shared, and the seat pairings they met in (for the
Bradley-Terry rating); per bot and contract, declarations made and attempted; and counts.
A :class:`Tally` holds those sums. :func:`session_change` says what one more session
changes in them, given what its block held before: a block figure moves when a session of
its block comes in, so the change takes the old figure out and puts the new one in.

Every figure is an exact integer, in units of one over the tally's ``scale``:
:func:`scale_for` the largest table, ``lcm(1..k)`` for tables of ``k`` seats (420 for 7),
so that a block's mean over its 1 to ``k`` sessions of whole chips is a whole number of
``1/scale``. Chips are in ``1/scale``; win shares in ``1/scale`` per session and
``1/scale**2`` as block means; wins of the rating in half-wins. Taking a figure out is
therefore exact, any order of sessions gives the same totals, and the totals the store
keeps (in the same transaction as each session) equal the ones recomputed from every
session, bit for bit. Tallies at different scales add up at the least common one
(:meth:`Tally.merged`); the scale stays small for small tables, so that the sums of
squares stay far inside SQLite's 64-bit integers.

The rotation check (:mod:`tournaments.stats.rotation_check`) adds one figure per bot and
complete block, its rotation edge ``D`` (:func:`rotation_edge_units`): how much better the
bot did, against the others holding the same hands, on the board's later plays than on
its first. Its sums are in 1/:data:`ROTATION_UNIT` chip whatever the tally's scale: the
edge of a block of ``k`` seats has ``(k - 1)**2`` in its denominator, not ``k``, and 3600
is a multiple of it for every ``k`` from 2 to 7. An edge of 100 chips a session is 360,000
units, its square 1.3e11: a million such blocks stay inside 64-bit integers.

The module is pure: no IO.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import defaultdict
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from tournaments.results import Declaration, SessionResult

__all__ = [
    "POOL_COLUMNS",
    "ROTATION_UNIT",
    "BlockSeat",
    "BotTotals",
    "ContractTotals",
    "PairTotals",
    "PoolRecord",
    "SessionChange",
    "Tally",
    "rotation_edge_units",
    "scale_for",
    "session_change",
    "tally_of",
]


ROTATION_UNIT = 3600
"""The rotation edges' units, 1/3600 chip: a multiple of ``(k - 1)**2`` for every table of 2 to 7 seats."""


def scale_for(seats: int) -> int:
    """The units of a tally whose tables have at most ``seats`` seats: ``lcm(1..seats)``."""
    return math.lcm(*range(1, seats + 1))


@dataclass(frozen=True, slots=True)
class BlockSeat:
    """One bot's sessions of one block so far: how many, its chips, its win shares (in 1/scale).

    For the rotation edge (:func:`rotation_edge_units`): ``first_chips`` are its chips in
    rotation 0 (None until that session is in), ``hand_chips`` the sum, over the block's
    sessions so far, of the chips at the seat it held in rotation 0 (whoever held it),
    both in whole chips.
    """

    sessions: int
    chips: int
    wins: int
    first_chips: int | None = None
    hand_chips: int = 0

    def chips_figure(self, scale: int) -> int:
        """The block's mean chips per session, in 1/scale chips."""
        return self.chips * scale // self.sessions

    def wins_figure(self, scale: int) -> int:
        """The block's mean win share per session, in 1/scale**2."""
        return self.wins * scale // self.sessions


@dataclass(frozen=True, slots=True)
class PoolRecord:
    """What a bot did as declarer in the pool variants, over all its declarations.

    ``pools`` counts the declarations in which it took the pool, for ``pool_chips`` chips
    in all; ``widows`` those with a widow to take or leave, of which it took
    ``widows_taken`` and made ``widows_taken_made``, and in ``widows_peeked`` it had paid
    to see the widow before bidding; ``cards_exchanged`` is the sum of the
    cards it had exchanged before the auctions it went on to win. All zeros: nothing of
    a pool variant (:attr:`empty`).
    """

    pools: int = 0
    pool_chips: int = 0
    widows: int = 0
    widows_taken: int = 0
    widows_taken_made: int = 0
    widows_peeked: int = 0
    cards_exchanged: int = 0

    @classmethod
    def of(cls, declarations: Sequence[Declaration]) -> PoolRecord:
        """The figures of one seat's ``declarations`` in a session."""
        widows = [d for d in declarations if d.widow_taken is not None]
        return cls(
            pools=sum(d.pool_chips > 0 for d in declarations),
            pool_chips=sum(d.pool_chips for d in declarations),
            widows=len(widows),
            widows_taken=sum(bool(d.widow_taken) for d in widows),
            widows_taken_made=sum(bool(d.widow_taken) and d.made for d in widows),
            widows_peeked=sum(bool(d.peeked) for d in widows),
            cards_exchanged=sum(d.exchanged for d in declarations),
        )

    @property
    def empty(self) -> bool:
        """Whether every figure is 0."""
        return self == PoolRecord()


@dataclass(slots=True)
class BotTotals:
    """One bot's sums; see the module notes for the units (every field an integer, ``scale`` the tally's)."""

    sessions: int = 0
    blocks: int = 0
    chips: int = 0
    """Sum over blocks of the block's mean chips, in 1/scale."""
    chips_sq: int = 0
    wins: int = 0
    """Sum over blocks of the block's mean win share, in 1/scale**2."""
    wins_sq: int = 0
    expected: int = 0
    """Sum over sessions of 1/table size (the win share chance gives), in 1/scale."""
    faults: int = 0
    beats: int = 0
    """Seat pairings won, in half-wins (a draw is one)."""
    pools: int = 0
    """The pool figures (:class:`PoolRecord`) from here to ``exchanged``, one column each."""
    pool_chips: int = 0
    widows: int = 0
    widows_taken: int = 0
    widows_taken_made: int = 0
    widows_peeked: int = 0
    exchanged: int = 0
    asked: int = 0
    """Decisions asked of the bot (:attr:`~tournaments.results.SeatResult.asked`), summed over sessions."""
    substituted: int = 0
    """Of those, the ones the referee played for it."""
    cpu_us: int = 0
    """The CPU its decisions were charged on the CPU clock, in microseconds, summed over sessions."""
    clocked: int = 0
    """Its asked decisions on the CPU clock, summed over sessions."""
    rotation_blocks: int = 0
    """Complete blocks, each giving one rotation edge (:func:`rotation_edge_units`)."""
    rotation_edge: int = 0
    """Sum over complete blocks of the rotation edge, in 1/:data:`ROTATION_UNIT` chip."""
    rotation_edge_sq: int = 0

    @property
    def pool(self) -> PoolRecord:
        """The pool figures of these sums."""
        return PoolRecord(**{figure: getattr(self, column) for figure, column in POOL_COLUMNS.items()})

    def add(self, other: BotTotals) -> None:
        """Add ``other``'s sums to these."""
        for name in BOT_FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def rescaled(self, factor: int) -> BotTotals:
        """These sums in units ``factor`` times smaller.

        The rotation edges stay as they are: they are in 1/:data:`ROTATION_UNIT` in every
        tally, so tallies of any scales add them as they are.
        """
        return dataclasses.replace(
            self,
            chips=self.chips * factor,
            chips_sq=self.chips_sq * factor**2,
            wins=self.wins * factor**2,
            wins_sq=self.wins_sq * factor**4,
            expected=self.expected * factor,
        )


POOL_COLUMNS: Mapping[str, str] = {
    **{f.name: f.name for f in fields(PoolRecord) if f.name != "cards_exchanged"},
    "cards_exchanged": "exchanged",
}
"""Each :class:`PoolRecord` figure and the :class:`BotTotals` field (the store's column) that sums it."""

BOT_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(BotTotals))
"""The names of :class:`BotTotals`' sums, in order (the store's columns)."""


@dataclass(slots=True)
class PairTotals:
    """Two bots (``bot`` < ``opponent`` by name): ``bot``'s block figure minus ``opponent``'s, summed.

    The sums run over the blocks the two shared.

    ``diff`` and ``diff_sq`` are in 1/scale chips; ``meetings`` counts the seat pairings of
    the two in every session they shared.
    """

    blocks: int = 0
    diff: int = 0
    diff_sq: int = 0
    meetings: int = 0

    def add(self, other: PairTotals) -> None:
        """Add ``other``'s sums to these."""
        self.blocks += other.blocks
        self.diff += other.diff
        self.diff_sq += other.diff_sq
        self.meetings += other.meetings

    def rescaled(self, factor: int) -> PairTotals:
        """These sums in units ``factor`` times smaller."""
        return dataclasses.replace(self, diff=self.diff * factor, diff_sq=self.diff_sq * factor**2)


@dataclass(slots=True)
class ContractTotals:
    """A bot's declarations of one contract: how many it made, how many it attempted."""

    made: int = 0
    attempted: int = 0

    def add(self, other: ContractTotals) -> None:
        """Add ``other``'s counts to these."""
        self.made += other.made
        self.attempted += other.attempted


Pair = tuple[str, str]
"""Two bots, in name order."""


@dataclass(frozen=True, slots=True)
class SessionChange:
    """What one session changes: its block's seats after it, and what to add to each sum.

    ``new_block`` says that the session is its block's first (one more block played);
    the sums are in 1/``scale``.
    """

    scale: int
    block: dict[str, BlockSeat]
    new_block: bool
    bots: dict[str, BotTotals]
    pairs: dict[Pair, PairTotals]
    contracts: dict[tuple[str, str], ContractTotals]
    faults: int


@dataclass(slots=True, eq=False)
class Tally:  # noqa: PLW1641 - mutable, so unhashable: defining __eq__ sets __hash__ to None
    """The sums of a set of sessions (one tournament, or several added together), in 1/``scale``.

    Two tallies are equal when their sums are, whatever their units.
    """

    scale: int = 1
    sessions: int = 0
    blocks: int = 0
    faults: int = 0
    """Fault records (every fault the referee logged)."""
    bots: dict[str, BotTotals] = field(default_factory=dict)
    pairs: dict[Pair, PairTotals] = field(default_factory=dict)
    contracts: dict[tuple[str, str], ContractTotals] = field(default_factory=dict)

    def apply(self, change: SessionChange) -> None:
        """Add one session's change (at this tally's scale)."""
        if change.scale != self.scale:
            msg = f"a change in 1/{change.scale} added to a tally in 1/{self.scale}"
            raise ValueError(msg)
        self.sessions += 1
        self.blocks += change.new_block
        self.faults += change.faults
        for bot, totals in change.bots.items():
            self.bots.setdefault(bot, BotTotals()).add(totals)
        for pair, pair_totals in change.pairs.items():
            self.pairs.setdefault(pair, PairTotals()).add(pair_totals)
        for key, contract in change.contracts.items():
            self.contracts.setdefault(key, ContractTotals()).add(contract)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tally):
            return NotImplemented
        scale = math.lcm(self.scale, other.scale)
        mine, theirs = Tally(scale=scale).merged(self), Tally(scale=scale).merged(other)
        return (mine.sessions, mine.blocks, mine.faults, mine.bots, mine.pairs, mine.contracts) == (
            theirs.sessions,
            theirs.blocks,
            theirs.faults,
            theirs.bots,
            theirs.pairs,
            theirs.contracts,
        )

    def merged(self, other: Tally) -> Tally:
        """These sums and ``other``'s together, at the least scale both convert to exactly."""
        scale = math.lcm(self.scale, other.scale)
        total = Tally(scale=scale)
        for tally in (self, other):
            factor = scale // tally.scale
            total.sessions += tally.sessions
            total.blocks += tally.blocks
            total.faults += tally.faults
            for bot, totals in tally.bots.items():
                total.bots.setdefault(bot, BotTotals()).add(totals.rescaled(factor))
            for pair, pair_totals in tally.pairs.items():
                total.pairs.setdefault(pair, PairTotals()).add(pair_totals.rescaled(factor))
            for key, contract in tally.contracts.items():
                total.contracts.setdefault(key, ContractTotals()).add(contract)
        return total


def session_change(result: SessionResult, before: Mapping[str, BlockSeat], *, scale: int) -> SessionChange:
    """What ``result`` adds to sums in 1/``scale``, its block having held ``before`` (empty: none yet).

    Raises ``ValueError`` when one bot sits in two seats (its chips against itself would
    mean nothing), or when ``scale`` cannot hold the table's means exactly.
    """
    if scale % scale_for(result.table_size):
        msg = f"a table of {result.table_size} seats cannot be counted in 1/{scale}"
        raise ValueError(msg)
    if len(set(result.bots)) != len(result.bots):
        msg = (
            f"a bot sits in two seats of tournament {result.tournament}, block "
            f"{result.block}, rotation {result.rotation}: {', '.join(result.bots)}"
        )
        raise ValueError(msg)
    seats = result.table_size
    expected = scale // seats
    block = dict(before)
    bots: dict[str, BotTotals] = {}
    for position, seat in enumerate(result.seats):
        old = block.get(seat.bot)
        new = BlockSeat(
            sessions=1 if old is None else old.sessions + 1,
            chips=seat.chips + (0 if old is None else old.chips),
            wins=_win_units(seat.win_share, scale) + (0 if old is None else old.wins),
            first_chips=seat.chips if result.rotation == 0 else (None if old is None else old.first_chips),
            hand_chips=result.seats[(position - result.rotation) % seats].chips
            + (0 if old is None else old.hand_chips),
        )
        block[seat.bot] = new
        pool = PoolRecord.of(seat.declarations)
        bots[seat.bot] = BotTotals(
            sessions=1,
            blocks=int(old is None),
            chips=new.chips_figure(scale) - (0 if old is None else old.chips_figure(scale)),
            chips_sq=new.chips_figure(scale) ** 2 - (0 if old is None else old.chips_figure(scale) ** 2),
            wins=new.wins_figure(scale) - (0 if old is None else old.wins_figure(scale)),
            wins_sq=new.wins_figure(scale) ** 2 - (0 if old is None else old.wins_figure(scale) ** 2),
            expected=expected,
            faults=seat.faults,
            **{column: getattr(pool, figure) for figure, column in POOL_COLUMNS.items()},
            asked=seat.asked,
            substituted=seat.substituted,
            cpu_us=seat.cpu_us,
            clocked=seat.clocked,
        )
    if _completes(result, block):
        for seat in result.seats:
            edge = rotation_edge_units(block[seat.bot], seats)
            totals = bots[seat.bot]
            totals.rotation_blocks, totals.rotation_edge, totals.rotation_edge_sq = 1, edge, edge * edge
    pairs: dict[Pair, PairTotals] = {}
    for first, second in itertools.combinations(result.seats, 2):
        if first.chips != second.chips:
            bots[first.bot if first.chips > second.chips else second.bot].beats += 2
        else:
            bots[first.bot].beats += 1
            bots[second.bot].beats += 1
        a, b = sorted((first.bot, second.bot))
        old_diff = _difference(before, a, b, scale)
        new_diff = _difference(block, a, b, scale)
        assert new_diff is not None  # noqa: S101 - both just sat in the block
        pairs[a, b] = PairTotals(
            blocks=int(old_diff is None),
            diff=new_diff - (old_diff or 0),
            diff_sq=new_diff**2 - (old_diff or 0) ** 2,
            meetings=1,
        )
    contracts: dict[tuple[str, str], ContractTotals] = defaultdict(ContractTotals)
    for seat in result.seats:
        for declaration in seat.declarations:
            contracts[seat.bot, declaration.contract].add(ContractTotals(int(declaration.made), 1))
    return SessionChange(
        scale=scale,
        block=block,
        new_block=not before,
        bots=bots,
        pairs=pairs,
        contracts=dict(contracts),
        faults=len(result.faults),
    )


def _completes(result: SessionResult, block: Mapping[str, BlockSeat]) -> bool:
    """Whether ``result`` completed its block: its ``k`` bots have ``k`` sessions each, rotation 0 among them.

    Every session of a block seats all its bots, so they reach ``k`` sessions together, in
    one session: each block's edges are added once.
    """
    seats = result.table_size
    return seats >= 2 and all(
        block[bot].sessions == seats and block[bot].first_chips is not None for bot in result.bots
    )


def rotation_edge_units(seat: BlockSeat, table_size: int) -> int:
    """A bot's rotation edge ``D`` over its complete block, in 1/:data:`ROTATION_UNIT` chip.

    With ``c[r][s]`` the chips of seat ``s`` in rotation ``r`` of a block of ``k`` seats,
    and ``s_b(r)`` the seat of bot ``b`` in rotation ``r``: seat ``s`` holds the same cards
    in every rotation, so ``b``'s duplicate edge at rotation ``r`` is its result with that
    hand against the others' results with it, ``e(r) = c[r][s] - mean over r' != r of
    c[r'][s]`` at ``s = s_b(r)``, and ``D = mean over r >= 1 of e(r) - e(0)``: how much
    better ``b`` does on a board already played before than on its first play.

    Incrementally: write ``S_s`` for the sum over rotations of ``c[r][s]``, so that
    ``e(r) = (k c[r][s] - S_s) / (k - 1)``. The sum of ``e(r)`` over all ``k`` rotations
    is ``(k T - sum over s of S_s) / (k - 1) = k T / (k - 1)``, with ``T`` the bot's
    chips over the block, since every session sums to zero. Then ``D = (k T / (k - 1) -
    e(0)) / (k - 1) - e(0) = k T / (k - 1)**2 - k e(0) / (k - 1)``, and with ``F =
    c[0][s_b(0)]`` (``first_chips``) and ``H = S_{s_b(0)}`` (``hand_chips``, the total of the
    hand it held first), ``e(0) = (k F - H) / (k - 1)``, so::

        D = k (T - k F + H) / (k - 1)**2

    exactly, from three integers. ``(k - 1)**2`` divides 3600 at 2 to 7 seats, so the
    result is exact there; at more seats (a house profile allows 8) it is rounded down to
    1/3600. Identical deterministic bots give exactly 0; a session that did not sum to
    zero would break the identity. Raises ``ValueError`` before rotation 0 is in.
    """
    if seat.first_chips is None:
        msg = "a rotation edge needs the block's rotation 0"
        raise ValueError(msg)
    k = table_size
    return k * (seat.chips - k * seat.first_chips + seat.hand_chips) * ROTATION_UNIT // (k - 1) ** 2


def _win_units(share: float, scale: int) -> int:
    """A win share (1/w for one of w co-winners, else 0) in 1/scale; exact when w divides the scale."""
    units = round(share * scale)
    if abs(units - share * scale) > 1e-6:
        msg = f"win share {share} is not a multiple of 1/{scale}"
        raise ValueError(msg)
    return units


def _difference(block: Mapping[str, BlockSeat], a: str, b: str, scale: int) -> int | None:
    """``a``'s block figure minus ``b``'s in 1/scale chips (None: not both in the block yet)."""
    first, second = block.get(a), block.get(b)
    if first is None or second is None:
        return None
    return first.chips_figure(scale) - second.chips_figure(scale)


def tally_of(results: Iterable[SessionResult]) -> Tally:
    """The sums of ``results``, folded one session at a time as the store does.

    In 1/:func:`scale_for` the largest table among them.
    """
    results = list(results)
    tally = Tally(scale=scale_for(max((result.table_size for result in results), default=1)))
    blocks: dict[tuple[int, int], dict[str, BlockSeat]] = {}
    for result in results:
        key = (result.tournament, result.block)
        change = session_change(result, blocks.get(key, {}), scale=tally.scale)
        blocks[key] = change.block
        tally.apply(change)
    return tally
