"""Standings: what the finished sessions say about each bot, with honest uncertainty.

The independent unit is the duplicate block (one board set played once per seat with the
bots rotated), not the session: the sessions of one block share their cards, so their
results are correlated. Every interval here is therefore computed over blocks. A block
that is still incomplete (a tournament stopped mid-block) counts with the sessions it has.

Conventions:

* A bot's figure for a block is its mean chips per session over that block's sessions.
  Its mean chips per session is the mean of those block figures, so the estimate and its
  interval describe the same quantity even when some block is incomplete.
* Intervals are 95% Student t intervals over blocks. With fewer than two blocks the
  spread cannot be estimated: the interval is ``None`` (shown as "n/a"), never a
  made-up or infinite number.
* Faults are counted from ``SeatResult.faults``.
* The rating is openskill's ``BradleyTerryFull``, fed one match per session in the order
  (tournament, block, rotation, board seed, seating). Unlike the default Plackett-Luce
  model, it never rates co-winners of a session below the bot that came third.

The module is pure: no IO, no clock, and the same results always give the same standings.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from openskill.models import BradleyTerryFull, BradleyTerryFullRating

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from tournaments.results import SessionResult

_EXACT_T_MAX_DF = 1000
"""Up to this many degrees of freedom the t quantile is found from the exact CDF."""

_BISECTION_STEPS = 200


def t_quantile(p: float, df: int) -> float:
    """Return the ``p`` quantile of Student's t distribution with ``df`` degrees of freedom.

    Up to 1000 degrees of freedom this inverts the exact closed-form CDF for integer
    ``df`` (Abramowitz & Stegun 26.7.3-4) by bisection on the angle ``atan(t/sqrt(df))``,
    which is accurate to about 1e-12. Beyond that it uses the Cornish-Fisher expansion
    around the normal quantile (A&S 26.7.5), whose error there is below 1e-9.
    """
    if not 0.0 < p < 1.0:
        msg = f"t quantile needs 0 < p < 1, got {p}"
        raise ValueError(msg)
    if df < 1:
        msg = f"t quantile needs at least 1 degree of freedom, got {df}"
        raise ValueError(msg)
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if df > _EXACT_T_MAX_DF:
        return _cornish_fisher(p, df)
    target = 2.0 * p - 1.0  # P(|T| < t)
    low, high = 0.0, math.pi / 2
    for _ in range(_BISECTION_STEPS):
        mid = (low + high) / 2
        if _central_probability(mid, df) < target:
            low = mid
        else:
            high = mid
        if high - low < 1e-15:
            break
    return math.sqrt(df) * math.tan((low + high) / 2)


def _central_probability(theta: float, df: int) -> float:
    """P(|T| < sqrt(df) tan(theta)) for integer ``df`` (A&S 26.7.3 and 26.7.4)."""
    sin, cos2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for j in range(1, df // 2):
            term *= cos2 * (2 * j - 1) / (2 * j)
            total += term
        return sin * total
    if df == 1:
        return 2 * theta / math.pi
    term, total = 1.0, 1.0
    for j in range(1, (df - 1) // 2):
        term *= cos2 * (2 * j) / (2 * j + 1)
        total += term
    return 2 / math.pi * (theta + sin * math.cos(theta) * total)


def _cornish_fisher(p: float, df: int) -> float:
    z = statistics.NormalDist().inv_cdf(p)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean over ``n`` independent blocks with its 95% half-width.

    ``half_width`` is ``None`` when ``n < 2``: one block says nothing about spread.
    """

    mean: float
    half_width: float | None
    n: int

    @property
    def low(self) -> float | None:
        """Lower end of the 95% interval, or ``None`` when it is undefined."""
        return None if self.half_width is None else self.mean - self.half_width

    @property
    def high(self) -> float | None:
        """Upper end of the 95% interval, or ``None`` when it is undefined."""
        return None if self.half_width is None else self.mean + self.half_width


def estimate(values: Sequence[float]) -> Estimate:
    """Mean of ``values`` with the 95% interval mean +- t(0.975, n-1) * sd / sqrt(n).

    ``sd`` is the sample standard deviation (divisor ``n - 1``). Raises ``ValueError``
    on an empty sequence: there is no mean to report.
    """
    if not values:
        msg = "cannot estimate a mean from no values"
        raise ValueError(msg)
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return Estimate(mean=mean, half_width=None, n=n)
    half = t_quantile(0.975, n - 1) * statistics.stdev(values) / math.sqrt(n)
    return Estimate(mean=mean, half_width=half, n=n)


@dataclass(frozen=True, slots=True)
class ContractRecord:
    """How often a bot declared ``contract`` and how often it made it."""

    contract: str
    made: int
    attempted: int


@dataclass(frozen=True, slots=True)
class Rating:
    """An openskill rating: ``ordinal`` is the cautious ``mu - 3 * sigma``."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """``mu - 3 * sigma``: the rating the bot very probably exceeds."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True, slots=True)
class BotStanding:
    """One bot's line in the standings.

    ``chips`` is mean chips per session, estimated over ``blocks`` blocks. ``win_share``
    is the bot's summed session win shares (ties split) divided by ``sessions``;
    ``expected_win_share`` is what chance alone would give, the mean of ``1/k`` over
    the bot's sessions. ``declarer`` lists contracts in alphabetical order.
    """

    bot: str
    sessions: int
    blocks: int
    chips: Estimate
    win_share: float
    expected_win_share: float
    declarer: tuple[ContractRecord, ...]
    faults: int
    rating: Rating


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """``bot`` against ``opponent`` over the blocks where both sat at the table.

    ``difference`` estimates, per shared block, ``bot``'s mean chips per session minus
    ``opponent``'s; its ``n`` is the number of shared blocks.
    """

    bot: str
    opponent: str
    difference: Estimate


@dataclass(frozen=True, slots=True)
class Standings:
    """The standings of a tournament (or of any set of finished sessions).

    ``bots`` is in ranking order: mean chips descending, then rating ordinal
    descending, then bot id. ``crosstable`` holds one entry per ordered pair of bots
    that shared at least one block, sorted by (bot, opponent).
    """

    bots: tuple[BotStanding, ...]
    crosstable: tuple[HeadToHead, ...]
    sessions: int
    blocks: int

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


BlockKey = tuple[int, int]
"""A block's identity across tournaments: (tournament, block)."""


def compute_standings(results: Sequence[SessionResult]) -> Standings:
    """Compute the standings of ``results``, in any order.

    Raises ``ValueError`` if one bot sits in two seats of the same session, since its
    chips against itself would be meaningless.
    """
    ordered = sorted(results, key=_session_order)
    for result in ordered:
        if len(set(result.bots)) != len(result.bots):
            msg = (
                f"a bot sits in two seats of tournament {result.tournament}, block "
                f"{result.block}, rotation {result.rotation}: {', '.join(result.bots)}"
            )
            raise ValueError(msg)
    block_chips = _block_chips(ordered)
    ratings = _ratings(ordered)
    lines = [_bot_standing(bot, ordered, block_chips[bot], ratings[bot]) for bot in block_chips]
    lines.sort(key=lambda line: (-line.chips.mean, -line.rating.ordinal, line.bot))
    return Standings(
        bots=tuple(lines),
        crosstable=_crosstable(block_chips),
        sessions=len(ordered),
        blocks=len({(result.tournament, result.block) for result in ordered}),
    )


def _session_order(result: SessionResult) -> tuple[int, int, int, int, tuple[str, ...]]:
    return (result.tournament, result.block, result.rotation, result.board_seed, result.bots)


def _block_chips(results: Iterable[SessionResult]) -> dict[str, dict[BlockKey, float]]:
    """Each bot's mean chips per session in each block it played, blocks in play order."""
    chips: dict[str, dict[BlockKey, list[int]]] = defaultdict(lambda: defaultdict(list))
    for result in results:
        for seat in result.seats:
            chips[seat.bot][result.tournament, result.block].append(seat.chips)
    return {
        bot: {block: math.fsum(values) / len(values) for block, values in blocks.items()}
        for bot, blocks in chips.items()
    }


def _ratings(results: Iterable[SessionResult]) -> dict[str, Rating]:
    """Rate every bot with one BradleyTerryFull match per session, in the given order.

    Ranks are competition ranks from chips (1 + the number of seats with more chips), so
    equal chips share a rank; openskill treats a lower rank as a better finish.
    """
    model = BradleyTerryFull()
    current: dict[str, BradleyTerryFullRating] = {}
    for result in results:
        for seat in result.seats:
            if seat.bot not in current:
                current[seat.bot] = model.rating(name=seat.bot)
        players = [current[seat.bot] for seat in result.seats]
        chips = [seat.chips for seat in result.seats]
        ranks = [1.0 + sum(other > mine for other in chips) for mine in chips]
        rated = model.rate([[player] for player in players], ranks=ranks)
        for seat, (player,) in zip(result.seats, rated, strict=True):
            current[seat.bot] = player
    return {bot: Rating(mu=player.mu, sigma=player.sigma) for bot, player in current.items()}


def _bot_standing(
    bot: str,
    results: Sequence[SessionResult],
    block_chips: dict[BlockKey, float],
    rating: Rating,
) -> BotStanding:
    seats = [(result, seat) for result in results for seat in result.seats if seat.bot == bot]
    contracts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for _, seat in seats:
        for declaration in seat.declarations:
            contracts[declaration.contract][0] += int(declaration.made)
            contracts[declaration.contract][1] += 1
    sessions = len(seats)
    return BotStanding(
        bot=bot,
        sessions=sessions,
        blocks=len(block_chips),
        chips=estimate(list(block_chips.values())),
        win_share=math.fsum(seat.win_share for _, seat in seats) / sessions,
        expected_win_share=math.fsum(1 / result.table_size for result, _ in seats) / sessions,
        declarer=tuple(
            ContractRecord(contract=name, made=made, attempted=attempted)
            for name, (made, attempted) in sorted(contracts.items())
        ),
        faults=sum(seat.faults for _, seat in seats),
        rating=rating,
    )


def _crosstable(block_chips: dict[str, dict[BlockKey, float]]) -> tuple[HeadToHead, ...]:
    """Every ordered pair of bots that shared a block, with the per-block difference."""
    entries = []
    for bot in sorted(block_chips):
        for opponent in sorted(block_chips):
            shared = [k for k in block_chips[bot] if k in block_chips[opponent]]
            if bot == opponent or not shared:
                continue
            differences = [block_chips[bot][k] - block_chips[opponent][k] for k in shared]
            entries.append(HeadToHead(bot=bot, opponent=opponent, difference=estimate(differences)))
    return tuple(entries)
