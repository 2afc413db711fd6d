"""Which bots sit at which table, in which seats, on which deals: the tournament's plan.

The unit of play is the **duplicate block**: one board set (the deals of a session, the
rules profile's ``deals_per_session``, 8 by default, all dealt from one board seed)
played ``k`` times at a ``k``-seat table, the bots moving one seat round the table each
time. ``k`` must be a table size the rules allow (:func:`check_table_size`: the
profile's ``min_players`` to ``max_players``; Nap's 3 to 7 without a profile). Over a
block every bot holds every seat's hand once, so card luck cancels and identical bots
score exactly zero.

Tables are chosen so that every pair of bots meets equally often. When the tournament
is long enough, that means every ``k``-subset of the entrants, each once per full cycle;
the blocks left over after the last full cycle (or all of them, for a short tournament)
are chosen greedily, then improved by a seeded local search, to keep appearances within
one of each other and pair meetings as even as the search finds (exact balance is not
always possible: two 3-bot tables from 4 bots must share a pair). Seat order within
each table is chosen to even out who sits next after whom, since in Nap that decides
who plays after whom in every trick.

Everything here is a pure function of its arguments: the same entrants, table size,
session count and seed always give the same plan, on any machine and in any process.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from referee.rules import Profile

MIN_TABLE_SIZE = 3
MAX_TABLE_SIZE = 7
"""Nap's table sizes (3 to 7 players), for a plan made without a rules profile; a profile
may allow fewer (two-to-five: 3 to 6; a short pack deals to fewer seats)."""

_SEED_BITS = 63
"""Derived seeds fit a signed 64-bit integer, so SQLite and protobuf ``int64`` hold them."""

_SEARCH_STEPS_PER_TABLE = 400
"""Budget of the local search that evens out pair meetings, in tried exchanges per table."""

_SEARCH_STEPS_MAX = 200_000
"""Hard cap on tried exchanges, so a plan of thousands of blocks stays quick to make."""

_SEARCH_PATIENCE = 2000
"""The local search stops after this many tried exchanges in a row that did not help."""

_MAX_SEAT_ORDERS = 120
"""Cyclic seat orders considered per table: all of them up to six seats, a sample at seven."""


def derive_seed(seed: int, *labels: object) -> int:
    """Derive a seed in ``[0, 2**63)`` from ``seed`` and a path of labels.

    Stable across runs, processes and machines (SHA-256, not ``hash()``, which is salted
    per process). Labels are rendered with ``repr()``, so ``1`` and ``"1"`` differ; use
    ints and strings, whose ``repr()`` is stable.
    """
    text = "\x1f".join([repr(seed), *(repr(label) for label in labels)])
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - _SEED_BITS)


@dataclass(frozen=True, slots=True)
class BlockSpec:
    """One duplicate block: a board set and the bots who play it at one table.

    ``bots`` is the seat order of rotation 0 (seat 0 first). ``board_seed`` deals the
    block's deals (the profile's deals per session, 8 by default) and depends only on the
    tournament seed and ``index``, never on the bots, so two tournaments with one seed
    deal the same cards.
    """

    index: int
    board_seed: int
    bots: tuple[str, ...]

    @property
    def table_size(self) -> int:
        """Number of seats at the table, which is also the number of rotations."""
        return len(self.bots)

    @property
    def rotations(self) -> range:
        """The rotations of the block, ``0 .. table_size - 1``: one session each."""
        return range(len(self.bots))

    def seating(self, rotation: int) -> tuple[str, ...]:
        """Return the bot at each seat in ``rotation``; each rotation moves every bot one seat up.

        The bot at seat ``s`` in rotation 0 sits at seat ``(s + rotation) % k``, so over the
        ``k`` rotations each bot sits in every seat once, and each bot keeps the same
        neighbours throughout the block.
        """
        k = len(self.bots)
        if rotation not in range(k):
            msg = f"rotation {rotation} out of range for a {k}-seat block (0..{k - 1})"
            raise ValueError(msg)
        return tuple(self.bots[(seat - rotation) % k] for seat in range(k))


def schedule(
    entrants: Sequence[str],
    *,
    table_size: int,
    sessions: int,
    seed: int,
    profile: Profile | None = None,
) -> tuple[BlockSpec, ...]:
    """Plan ``ceil(sessions / table_size)`` duplicate blocks for ``entrants``.

    Each block yields ``table_size`` sessions, so the plan holds at least ``sessions``
    sessions (rounded up to whole blocks). Full cycles of all ``table_size``-subsets come
    first, each cycle in a seeded order; any remaining blocks are balanced greedily.

    Raises ``ValueError`` when ``profile`` (without one, Nap: 3 to 7) does not allow the
    table size (:func:`check_table_size`), when it exceeds the number of entrants, when
    an entrant is listed twice, or when ``sessions`` is not positive.
    """
    bots = _validate(entrants, table_size=table_size, sessions=sessions, profile=profile)
    blocks = math.ceil(sessions / table_size)
    rng = random.Random(derive_seed(seed, "schedule"))
    subsets = list(itertools.combinations(bots, table_size))
    cycles, remainder = divmod(blocks, len(subsets))
    tables: list[tuple[str, ...]] = []
    for _ in range(cycles):
        tables.extend(rng.sample(subsets, len(subsets)))
    tables.extend(_balanced_tables(bots, table_size, remainder, rng))
    orders = _seat_orders(tables, rng)
    return tuple(
        BlockSpec(index=index, board_seed=derive_seed(seed, "board", index), bots=order)
        for index, order in enumerate(orders)
    )


def match_schedule(  # noqa: PLR0913 - keywords, as schedule's
    candidate: str,
    opponents: Sequence[str],
    *,
    table_size: int,
    sessions: int,
    seed: int,
    profile: Profile | None = None,
) -> tuple[BlockSpec, ...]:
    """Plan ``ceil(sessions / table_size)`` blocks, each seating ``candidate`` with ``k - 1`` opponents.

    With exactly ``k - 1`` opponents (the baseline's copies) every block seats them all;
    with a larger pool, the opponents' ``(k - 1)``-subsets come round in seeded full
    cycles, then balanced rounds, as in :func:`schedule`. Seat order is varied as there,
    and the board seeds are :func:`schedule`'s: a match and a tournament with one seed
    deal the same cards in block after block.

    Raises ``ValueError`` as :func:`schedule` does, and when ``candidate`` is also an
    opponent or there are fewer than ``k - 1`` opponents.
    """
    pool = tuple(opponents)
    bots = _validate((candidate, *pool), table_size=table_size, sessions=sessions, profile=profile)
    blocks = math.ceil(sessions / table_size)
    rng = random.Random(derive_seed(seed, "match"))
    if table_size - 1 == len(pool):
        tables = [bots] * blocks
    else:
        subsets = list(itertools.combinations(pool, table_size - 1))
        cycles, remainder = divmod(blocks, len(subsets))
        chosen: list[tuple[str, ...]] = []
        for _ in range(cycles):
            chosen.extend(rng.sample(subsets, len(subsets)))
        chosen.extend(_balanced_tables(pool, table_size - 1, remainder, rng))
        tables = [(candidate, *subset) for subset in chosen]
    orders = _seat_orders(tables, rng)
    return tuple(
        BlockSpec(index=index, board_seed=derive_seed(seed, "board", index), bots=order)
        for index, order in enumerate(orders)
    )


def check_table_size(table_size: int, profile: Profile | None = None) -> None:
    """Raise ``ValueError`` (one line) unless the rules allow tables of ``table_size`` seats.

    The rules are ``profile``'s (its ``min_players`` to ``max_players``), else Nap's (3 to
    7). A profile's pack must deal every seat a hand: a short pack allows fewer seats,
    and the message says so.
    """
    if profile is None:
        if not MIN_TABLE_SIZE <= table_size <= MAX_TABLE_SIZE:
            msg = (
                f"table size {table_size} is not allowed: Nap is played by "
                f"{MIN_TABLE_SIZE} to {MAX_TABLE_SIZE} players"
            )
            raise ValueError(msg)
        return
    if not profile.min_players <= table_size <= profile.max_players:
        msg = (
            f"table size {table_size} is not allowed by the rules profile {profile.name}: "
            f"{profile.min_players} to {profile.max_players} players"
        )
        if table_size * profile.hand_size > profile.pack_size:
            most = profile.pack_size // profile.hand_size
            msg += f" (its {profile.pack_size}-card pack deals {profile.hand_size} cards to at most {most})"
        raise ValueError(msg)


def _validate(
    entrants: Sequence[str], *, table_size: int, sessions: int, profile: Profile | None
) -> tuple[str, ...]:
    bots = tuple(entrants)
    check_table_size(table_size, profile)
    if table_size > len(bots):
        msg = f"table size {table_size} exceeds the number of entrants ({len(bots)})"
        raise ValueError(msg)
    repeated = sorted(bot for bot, count in Counter(bots).items() if count > 1)
    if repeated:
        msg = f"entrants listed more than once: {', '.join(repeated)}"
        raise ValueError(msg)
    if sessions < 1:
        msg = f"sessions must be at least 1, got {sessions}"
        raise ValueError(msg)
    return bots


def _balanced_tables(bots: tuple[str, ...], k: int, count: int, rng: random.Random) -> list[tuple[str, ...]]:
    """``count`` tables: appearances within one of each other, pair meetings near even.

    A seeded greedy pass builds the tables; a seeded local search then exchanges bots
    between two tables at a time (which leaves every bot's appearances unchanged),
    accepting an exchange when it does not raise the sum of fourth powers of each pair's
    distance from the average meeting count. The fourth power, unlike the square, makes
    the search pull in the extremes first, so it mostly narrows the max-min spread.
    """
    tables = [list(table) for table in _greedy_tables(bots, k, count, rng)]
    if count < 2:
        return [tuple(table) for table in tables]
    meetings = _pair_meetings(bots, tables)
    pairs, total = len(meetings), sum(meetings.values())

    def cost(m: int) -> int:
        return (pairs * m - total) ** 4

    failures = 0
    for _ in range(min(_SEARCH_STEPS_PER_TABLE * count, _SEARCH_STEPS_MAX)):
        i, j = rng.sample(range(count), 2)
        outgoing = [bot for bot in tables[i] if bot not in tables[j]]
        if not outgoing:
            continue
        x = rng.choice(outgoing)
        y = rng.choice([bot for bot in tables[j] if bot not in tables[i]])
        change = _exchange(tables[i], tables[j], x, y)
        delta = sum(cost(meetings[p] + d) - cost(meetings[p]) for p, d in change.items())
        failures = 0 if delta < 0 else failures + 1
        if failures > _SEARCH_PATIENCE:
            break
        if delta <= 0:
            tables[i][tables[i].index(x)] = y
            tables[j][tables[j].index(y)] = x
            for pair, d in change.items():
                meetings[pair] += d
    return [tuple(table) for table in tables]


def _exchange(first: list[str], second: list[str], x: str, y: str) -> Counter[frozenset[str]]:
    """How pair meetings change when ``x`` (of ``first``) and ``y`` (of ``second``) swap.

    Bots seated at both tables keep meeting both ``x`` and ``y``, so only the bots
    unique to one table count.
    """
    change: Counter[frozenset[str]] = Counter()
    for stay, leaver, joiner, other in ((first, x, y, second), (second, y, x, first)):
        for bot in stay:
            if bot != leaver and bot not in other:
                change[frozenset((leaver, bot))] -= 1
                change[frozenset((joiner, bot))] += 1
    return change


def _greedy_tables(bots: tuple[str, ...], k: int, count: int, rng: random.Random) -> list[tuple[str, ...]]:
    """Build tables one bot at a time, each time taking the least-seen, least-met bot.

    A bot with fewer appearances always goes first, which keeps appearances within one
    of each other after every table; among equals, the bot who has met the players
    already seated least often wins, and a seeded shuffle breaks remaining ties.
    """
    appearances = dict.fromkeys(bots, 0)
    meetings: Counter[frozenset[str]] = Counter()
    tables: list[tuple[str, ...]] = []
    for _ in range(count):
        order = rng.sample(bots, len(bots))
        table: list[str] = []
        for _seat in range(k):
            candidates = [bot for bot in order if bot not in table]
            table.append(
                min(
                    candidates,
                    key=lambda bot: (
                        appearances[bot],
                        max((meetings[frozenset((bot, s))] for s in table), default=0),
                        sum(meetings[frozenset((bot, s))] for s in table),
                    ),
                )
            )
        for bot in table:
            appearances[bot] += 1
        for pair in itertools.combinations(table, 2):
            meetings[frozenset(pair)] += 1
        tables.append(tuple(table))
    return tables


def _pair_meetings(bots: tuple[str, ...], tables: Iterable[Sequence[str]]) -> dict[frozenset[str], int]:
    """How often each unordered pair of ``bots`` shares a table, zeros included."""
    meetings = {frozenset(pair): 0 for pair in itertools.combinations(bots, 2)}
    for table in tables:
        for pair in itertools.combinations(table, 2):
            meetings[frozenset(pair)] += 1
    return meetings


def _seat_orders(tables: Sequence[tuple[str, ...]], rng: random.Random) -> list[tuple[str, ...]]:
    """Seat each table so that who sits next after whom is spread evenly over the plan.

    In Nap the seat order decides who plays after whom in every trick, and rotation
    keeps a block's neighbours fixed, so the variety has to come from block to block.
    For each table, among its cyclic seat orders (all, or a seeded sample at seven
    seats), take the one whose (seat, next seat) pairs have occurred least so far; then
    turn it by a seeded offset so the first seat is not always the same bot.
    """
    next_to: Counter[tuple[str, str]] = Counter()
    orders: list[tuple[str, ...]] = []
    for table in tables:
        first, *rest = table
        cyclic = [(first, *perm) for perm in itertools.permutations(rest)]
        if len(cyclic) > _MAX_SEAT_ORDERS:
            cyclic = rng.sample(cyclic, _MAX_SEAT_ORDERS)
        else:
            rng.shuffle(cyclic)
        order = min(cyclic, key=lambda o: sum(next_to[pair] for pair in _neighbours(o)))
        next_to.update(_neighbours(order))
        turn = rng.randrange(len(order))
        orders.append(order[turn:] + order[:turn])
    return orders


def _neighbours(order: tuple[str, ...]) -> list[tuple[str, str]]:
    """Each (bot, bot in the next seat) pair of a cyclic seat order, last seat to first."""
    return [(order[i], order[(i + 1) % len(order)]) for i in range(len(order))]
