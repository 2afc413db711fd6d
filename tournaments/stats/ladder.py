"""The arena's ladder, pure: ratings against fixed anchors, and which table to play next.

The arena (:mod:`tournaments.arena`) plays complete duplicate blocks at tables it chooses
here, and rates every entry from those blocks alone. Both are functions of their inputs:
no IO, no clock, and the same blocks (or the same state and seed) always give the same
answer, so the leaderboard is recomputed exactly from the store.

**Ratings.** A block's figure for an entry is its mean chips per session over the
block's rotations (every entry of the table held every hand, so the luck of the cards
cancels). The model is additive: an entry has a strength ``s``, and its figure at a table
``T`` is ``s - mean(s over T)`` plus noise. Chips are zero-sum, so the figures of a block
sum to zero, as the model's do. The strengths are the least-squares fit over every block
at once, with the gauge set by the anchors: their strengths average zero. So an entry's
rating ``s`` is the chips per session it takes more than the average anchor at the same
table (``s_i - s_j`` is what ``i`` takes more than ``j`` per session when they sit
together), whatever the table size and whoever else sits there. Entries that never meet
are compared through the ones they met: the fit uses every block.

The 95% interval of each rating is over blocks, the independent unit: the fit's
cluster-robust (sandwich) covariance with one cluster per block, times ``G / (G - 1)``
for ``G`` blocks, and Student's t with the entry's own blocks less one as degrees of
freedom (an entry rated from 4 blocks gets t(3)'s width, as a mean of 4 values would).
From a single block there is no interval, from fewer than
:data:`~tournaments.stats.estimates.FEW_BLOCKS` it carries a warning
(:class:`~tournaments.stats.estimates.Estimate`). Ranks are shared unless the data
separates them: an entry takes the next rank only when its difference from the entry above
(with the covariance of both) has a 95% interval entirely above zero, from at least
:data:`~tournaments.stats.estimates.FEW_BLOCKS` blocks of each. ``bench/ladder.py``
measures the intervals' coverage by simulation.

**Tables** (:func:`choose_tables`). An entry still being placed plays with the anchors
only, until it has its placement blocks. Then, table after table: the entry whose rating
is least certain is seated first (no interval counts as the least certain; blocks already
chosen count as played), and the seats are filled by the entries whose ratings are
closest to its own; every :data:`COVERAGE_EVERY`-th table fills them instead with the
entries it has met least, so that every pair keeps being seated. Two entries of one owner
never share a table (the anchors belong to nobody). The seat order is shuffled by a seeded
generator, so the same state and seed give the same tables.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from tournaments.stats.estimates import FEW_BLOCKS, Estimate, t_quantile

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

__all__ = [
    "COVERAGE_EVERY",
    "BlockFigures",
    "LadderEntry",
    "LadderRating",
    "choose_tables",
    "ladder_ratings",
    "pair_meetings",
]

COVERAGE_EVERY: Final = 4
"""Every this many tables, the first seated entry is joined by those it has met least, not the closest."""

_UNKNOWN_WIDTH: Final = 1e12
"""The uncertainty of a rating with no interval yet: more than any interval's."""


@dataclass(frozen=True, slots=True)
class BlockFigures:
    """One complete block of the ladder: each entry's mean chips per session over its rotations.

    ``chips`` maps each entry at the table to its figure; they sum to zero (chips are
    zero-sum). ``block`` orders the blocks, so that a fit reads them in one order.
    """

    block: int
    chips: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class LadderRating:
    """An entry's rating: chips per session more than the average anchor at the same table.

    ``value`` is the estimate with its 95% interval (its ``n`` is the entry's blocks; its
    ``sd`` is the standard error times ``sqrt(n)``, so that ``sd / sqrt(n)`` is the
    rating's standard error). ``rank`` is shared with the entries the data does not
    separate it from (1 is the best); None for an entry that is rated but not ranked.
    """

    entry: str
    rank: int | None
    value: Estimate


def ladder_ratings(
    blocks: Iterable[BlockFigures], *, anchors: Collection[str], ranked: Collection[str] | None = None
) -> tuple[LadderRating, ...]:
    """Every entry's rating from the complete blocks: the ranked ones best first, then the others.

    Entries are those that sat at some block; every one is rated from every block (so an
    entry that left the ladder still links the others), and those in ``ranked`` (all, when
    None) are ranked among themselves. Raises ValueError when no anchor has played, or when
    some entry is not connected to the anchors through the tables it sat at: its rating
    would mean nothing (the arena seats every entry with the anchors first).
    """
    ordered = sorted(blocks, key=lambda figures: figures.block)
    names = sorted({name for figures in ordered for name in figures.chips})
    if not names:
        return ()
    placed = [name for name in names if name in anchors]
    if not placed:
        msg = "no anchor has played a block: the ratings have no reference"
        raise ValueError(msg)
    _check_connected(ordered, names, placed)
    index = {name: i for i, name in enumerate(names)}
    fit = _fit(ordered, index, [index[name] for name in placed])
    counts = dict.fromkeys(names, 0)
    for figures in ordered:
        for name in figures.chips:
            counts[name] += 1
    estimates = {
        name: _estimate(fit.strength[index[name]], fit.covariance[index[name]][index[name]], counts[name])
        for name in names
    }
    chosen = set(names) if ranked is None else set(ranked)
    order = sorted(names, key=lambda name: (name not in chosen, -estimates[name].mean, name))
    ratings: list[LadderRating] = []
    for position, name in enumerate(order):
        rank: int | None = None
        if name in chosen:
            rank = 1
            if ratings:
                above = ratings[-1]
                shared = min(counts[above.entry], counts[name])
                separated = _separated(fit, index[above.entry], index[name], shared)
                rank = position + 1 if separated else above.rank
        ratings.append(LadderRating(entry=name, rank=rank, value=estimates[name]))
    return tuple(ratings)


@dataclass(frozen=True, slots=True)
class _Fit:
    strength: list[float]
    covariance: list[list[float]]


def _fit(blocks: Sequence[BlockFigures], index: Mapping[str, int], anchors: Sequence[int]) -> _Fit:
    """The least-squares strengths (anchors averaging zero) and their cluster-robust covariance.

    Each block contributes one row per entry at its table: the entry's figure against
    ``s_i - mean(s over the table)``. The gauge is a constraint (a Lagrange multiplier on
    the sum of the anchors' strengths), so the system solved is ``[[X'X, g], [g', 0]]``;
    the top-left block ``A`` of its inverse gives ``s = A X'y`` and the sandwich
    ``A (sum over blocks of X_b'e_b e_b'X_b) A``.
    """
    n = len(index)
    normal = [[0.0] * n for _ in range(n)]
    right = [0.0] * n
    rows: list[list[tuple[dict[int, float], float]]] = []
    for figures in blocks:
        seats = [index[name] for name in figures.chips]
        share = 1.0 / len(seats)
        block_rows = []
        for name, value in figures.chips.items():
            row = dict.fromkeys(seats, -share)
            row[index[name]] += 1.0
            block_rows.append((row, value))
            for j, xj in row.items():
                right[j] += xj * value
                for m, xm in row.items():
                    normal[j][m] += xj * xm
        rows.append(block_rows)
    system = [[*normal[i], 1.0 if i in anchors else 0.0] for i in range(n)]
    system.append([1.0 if j in anchors else 0.0 for j in range(n)] + [0.0])
    inverse = _inverse(system)
    a = [row[:n] for row in inverse[:n]]
    strength = [math.fsum(a[i][j] * right[j] for j in range(n)) for i in range(n)]
    meat = [[0.0] * n for _ in range(n)]
    for block_rows in rows:
        score: dict[int, float] = {}
        for row, value in block_rows:
            residual = value - math.fsum(x * strength[j] for j, x in row.items())
            for j, x in row.items():
                score[j] = score.get(j, 0.0) + x * residual
        for j, sj in score.items():
            meat_j = meat[j]
            for m, sm in score.items():
                meat_j[m] += sj * sm
    clusters = len(blocks)
    correction = clusters / (clusters - 1) if clusters > 1 else 0.0
    am = _product(a, meat)
    covariance = [[value * correction for value in row] for row in _product(am, a)]
    return _Fit(strength=strength, covariance=covariance)


def _estimate(strength: float, variance: float, blocks: int) -> Estimate:
    """The rating as an :class:`Estimate` over the entry's ``blocks`` (no interval from one block)."""
    if blocks < 2:
        return Estimate(mean=strength, half_width=None, n=blocks, sd=None)
    error = math.sqrt(max(variance, 0.0))
    if error == 0.0:
        return Estimate(mean=strength, half_width=None, n=blocks, sd=0.0)
    return Estimate(
        mean=strength,
        half_width=t_quantile(0.975, blocks - 1) * error,
        n=blocks,
        sd=error * math.sqrt(blocks),
    )


def _separated(fit: _Fit, above: int, below: int, blocks: int) -> bool:
    """Whether ``above``'s strength exceeds ``below``'s with a trusted 95% interval above zero.

    As in the standings, an interval from fewer than :data:`FEW_BLOCKS` blocks (the fewer of
    the two entries') separates nothing.
    """
    if blocks < FEW_BLOCKS:
        return False
    c = fit.covariance
    variance = c[above][above] + c[below][below] - 2 * c[above][below]
    if variance <= 0.0:
        return False
    difference = fit.strength[above] - fit.strength[below]
    return difference - t_quantile(0.975, blocks - 1) * math.sqrt(variance) > 0.0


def _check_connected(blocks: Sequence[BlockFigures], names: Sequence[str], anchors: Sequence[str]) -> None:
    """Raise ValueError naming the entries that no chain of shared tables links to an anchor."""
    links: dict[str, set[str]] = {name: set() for name in names}
    for figures in blocks:
        for a, b in itertools.combinations(figures.chips, 2):
            links[a].add(b)
            links[b].add(a)
    reached = set(anchors)
    frontier = list(anchors)
    while frontier:
        for other in links[frontier.pop()]:
            if other not in reached:
                reached.add(other)
                frontier.append(other)
    apart = [name for name in names if name not in reached]
    if apart:
        msg = f"entries never linked to an anchor by a table: {', '.join(apart)}"
        raise ValueError(msg)


def _inverse(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    """The inverse of a square matrix by Gauss-Jordan elimination with partial pivoting."""
    n = len(matrix)
    work = [[*row, *(1.0 if i == j else 0.0 for j in range(n))] for i, row in enumerate(matrix)]
    for column in range(n):
        pivot = max(range(column, n), key=lambda r: abs(work[r][column]))
        if abs(work[pivot][column]) < 1e-12:
            msg = "the ladder's fit is singular: some entry is not linked to the anchors"
            raise ValueError(msg)
        work[column], work[pivot] = work[pivot], work[column]
        lead = work[column][column]
        work[column] = [value / lead for value in work[column]]
        for r in range(n):
            if r != column and work[r][column]:
                factor = work[r][column]
                work[r] = [value - factor * base for value, base in zip(work[r], work[column], strict=True)]
    return [row[n:] for row in work]


def _product(left: Sequence[Sequence[float]], right: Sequence[Sequence[float]]) -> list[list[float]]:
    columns = list(zip(*right, strict=True))
    return [
        [math.fsum(a * b for a, b in zip(row, column, strict=True)) for column in columns] for row in left
    ]


# ---------------------------------------------------------------------------- which table next


@dataclass(frozen=True, slots=True)
class LadderEntry:
    """An entry the ladder may seat: its owner (None for an anchor) and what is known of it.

    ``rating`` and ``half_width`` come from :func:`ladder_ratings` (None: not rated yet, or
    no interval yet); ``blocks`` counts its blocks played and in play. ``placing`` says it is
    not placed yet: it plays placement tables only (with the anchors), ``placement_left``
    more of them, until its placement blocks are played and it has a provisional rating.
    """

    name: str
    owner: str | None
    rating: float | None = None
    half_width: float | None = None
    blocks: int = 0
    placing: bool = False
    placement_left: int = 0

    @property
    def anchor(self) -> bool:
        """Whether this is one of the house's fixed anchors (they belong to nobody)."""
        return self.owner is None


def pair_meetings(tables: Iterable[Sequence[str]]) -> dict[frozenset[str], int]:
    """How often each pair of entries sat at one table, from the tables' seatings."""
    met: dict[frozenset[str], int] = {}
    for seats in tables:
        for a, b in itertools.combinations(sorted(set(seats)), 2):
            key = frozenset((a, b))
            met[key] = met.get(key, 0) + 1
    return met


def choose_tables(  # noqa: PLR0913 - keywords, each a part of the ladder's state
    entries: Sequence[LadderEntry],
    *,
    count: int,
    sizes: Sequence[int],
    meetings: Mapping[frozenset[str], int],
    seed: int,
    first_table: int = 0,
) -> list[tuple[str, ...]]:
    """Up to ``count`` tables to play next, each the entries in rotation 0's seat order.

    ``sizes`` are the table sizes the ladder plays, taken in turn (a size that cannot be
    filled is skipped for a smaller one); ``meetings`` counts the tables each pair shared
    so far; ``first_table`` numbers the first table chosen here among all the ladder's
    tables (it decides which are coverage tables, and seeds the seat order with ``seed``).
    Fewer tables come back when no table can be filled (too few entries, or of too few
    owners). See the module notes for the rules.
    """
    pending = {entry.name: 0 for entry in entries}
    owed = {entry.name: entry.placement_left for entry in entries}
    met = dict(meetings)
    anchors = [entry for entry in entries if entry.anchor]
    tables: list[tuple[str, ...]] = []
    for number in range(first_table, first_table + count):
        table = _next_table(
            entries,
            anchors=anchors,
            pending=pending,
            owed=owed,
            met=met,
            size_order=_size_order(sizes, number),
            coverage=number % COVERAGE_EVERY == COVERAGE_EVERY - 1,
        )
        if table is None:
            break
        seats = list(table)
        random.Random(f"{seed}:{number}").shuffle(seats)
        tables.append(tuple(seats))
        for name in table:
            pending[name] += 1
        for a, b in itertools.combinations(sorted(table), 2):
            key = frozenset((a, b))
            met[key] = met.get(key, 0) + 1
    return tables


def _size_order(sizes: Sequence[int], number: int) -> list[int]:
    """The sizes to try for table ``number``: its turn's size first, then the smaller ones, largest first."""
    ordered = sorted(set(sizes))
    first = ordered[number % len(ordered)]
    return [first, *sorted((s for s in ordered if s < first), reverse=True)]


def _next_table(  # noqa: PLR0913 - the chooser's running state
    entries: Sequence[LadderEntry],
    *,
    anchors: Sequence[LadderEntry],
    pending: dict[str, int],
    owed: dict[str, int],
    met: Mapping[frozenset[str], int],
    size_order: Sequence[int],
    coverage: bool,
) -> tuple[str, ...] | None:
    placed = [e for e in entries if not e.placing]
    for size in size_order:
        placing = [e for e in entries if owed[e.name] > 0]
        if placing and anchors:
            focus = min(placing, key=lambda e: (pending[e.name] + e.blocks, e.name))
            table = _placement_table(focus, anchors, placed, pending=pending, size=size)
            if table is not None:
                owed[focus.name] -= 1
                return table
        if coverage:
            table = _coverage_table(placed, met=met, size=size)
        else:
            least = _least_certain(placed, pending=pending)
            table = None if least is None else _closest_table(least, placed, size=size)
        if table is not None:
            return table
    return None


def _placement_table(
    focus: LadderEntry,
    anchors: Sequence[LadderEntry],
    entries: Sequence[LadderEntry],
    *,
    pending: Mapping[str, int],
    size: int,
) -> tuple[str, ...] | None:
    """``focus`` with the anchors (the least used first); entries rated nearest them fill any seat left."""
    by_use = sorted(anchors, key=lambda a: (pending[a.name], a.name))
    return _seat(
        [focus, *by_use[: size - 1]],
        entries,
        size=size,
        key=lambda e, _seated: (abs(e.rating or 0.0), e.name),
    )


def _least_certain(entries: Sequence[LadderEntry], *, pending: Mapping[str, int]) -> LadderEntry | None:
    """The entry whose rating will be least certain once the blocks chosen so far are played."""
    best: tuple[float, int, str] | None = None
    found = None
    for entry in entries:
        width = _UNKNOWN_WIDTH if entry.half_width is None else entry.half_width
        played = max(entry.blocks, 1)
        expected = width * math.sqrt(played / (played + pending[entry.name]))
        key = (-expected, entry.blocks + pending[entry.name], entry.name)
        if best is None or key < best:
            best, found = key, entry
    return found


def _closest_table(
    focus: LadderEntry, entries: Sequence[LadderEntry], *, size: int
) -> tuple[str, ...] | None:
    """``focus`` and the ``size - 1`` entries of other owners whose ratings are closest to its own."""
    level = focus.rating or 0.0
    return _seat([focus], entries, size=size, key=lambda e, _seated: (abs((e.rating or 0.0) - level), e.name))


def _coverage_table(
    entries: Sequence[LadderEntry], *, met: Mapping[frozenset[str], int], size: int
) -> tuple[str, ...] | None:
    """The pair of entries of different owners that met least, and those that met them least."""

    def together(entry: LadderEntry, seated: Sequence[LadderEntry]) -> tuple[int, str]:
        return (sum(met.get(frozenset((entry.name, s.name)), 0) for s in seated), entry.name)

    pairs = [
        (a, b)
        for a, b in itertools.combinations(sorted(entries, key=lambda e: e.name), 2)
        if a.owner is None or a.owner != b.owner
    ]
    if not pairs:
        return None
    first, second = min(
        pairs,
        key=lambda pair: (met.get(frozenset((pair[0].name, pair[1].name)), 0), pair[0].name, pair[1].name),
    )
    return _seat([first, second], entries, size=size, key=together)


def _seat(
    seated: list[LadderEntry],
    entries: Sequence[LadderEntry],
    *,
    size: int,
    key: Callable[[LadderEntry, Sequence[LadderEntry]], tuple[float | int | str, ...]],
) -> tuple[str, ...] | None:
    """``seated`` joined by the entries of other owners ``key`` puts first, up to ``size`` (None: too few)."""
    owners = {e.owner for e in seated} - {None}
    while len(seated) < size:
        free = [e for e in entries if e not in seated and (e.owner is None or e.owner not in owners)]
        if not free:
            return None
        chosen = min(free, key=lambda e: key(e, seated))
        seated.append(chosen)
        if chosen.owner is not None:
            owners.add(chosen.owner)
    return tuple(e.name for e in seated)
