"""A Bradley-Terry rating fitted on all sessions at once: the same sessions, the same ratings.

Each session is read as the pairwise results of its seats: a seat with more chips than
another beats it, equal chips are a draw (half a win each), so co-winners of a session
are never rated apart by it. The model says seat ``i`` beats seat ``j`` with chance
``p_i / (p_i + p_j)``; the strengths ``p`` are the maximum of its likelihood over every
pair of every session together, found with Hunter's MM iteration (Annals of Statistics
32, 2004), each step followed by the best common scale (which the prior alone decides:
without that, MM crawls towards it, the more slowly the more sessions there are, since
the prior weighs less and less). Since the fit sees only totals (wins and meetings per pair), the order in
which sessions come does not matter: unlike an online update (Elo, TrueSkill, OpenSkill),
the rating of a bot is a function of the set of sessions alone.

A bot that won every pairing would have an infinite strength; to keep every rating
finite, each bot also has one virtual drawn game against a fixed reference of strength 1
(a weak prior, worth one pairing among the hundreds a tournament gives each bot).

Ratings are reported on the Elo scale (``400 log10 p``), centred so that the bots of the
standings average 0: a bot rated 200 above another beats it in about 76% of the seat
pairings they share. There is deliberately no "±": the pairings of a session, and the
sessions of a block, are not independent, so the model's own standard errors would
claim more than the data shows. The chips interval is the one to read for uncertainty.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

_PRIOR_GAMES: Final = 1.0
"""Virtual games each bot plays against the reference of strength 1, all drawn."""

_TOLERANCE: Final = 1e-10
"""The fit stops when no log-strength moves by more than this in one iteration."""

_MAX_ITERATIONS: Final = 100_000

_ELO: Final = 400 / math.log(10)


def bradley_terry(wins: Mapping[str, float], meetings: Mapping[tuple[str, str], int]) -> dict[str, float]:
    """Each bot's Bradley-Terry rating on the Elo scale, the bots averaging 0.

    ``wins`` holds every bot's seat pairings won (a draw counts half), ``meetings`` the
    seat pairings of each two bots (names in order): the totals of the sessions, which
    :mod:`tournaments.stats.tally` keeps, so the ratings do not depend on the sessions' order.
    Bots with the same totals get the same rating, to the last bit.
    """
    bots = sorted(wins)
    if not bots:
        return {}
    opponents: dict[str, list[tuple[str, int]]] = {bot: [] for bot in bots}
    for (a, b), count in sorted(meetings.items()):
        opponents[a].append((b, count))
        opponents[b].append((a, count))
    strength = dict.fromkeys(bots, 1.0)
    for _ in range(_MAX_ITERATIONS):
        updated = {
            bot: (wins[bot] + _PRIOR_GAMES / 2)
            / (
                math.fsum(count / (strength[bot] + strength[other]) for other, count in opponents[bot])
                + _PRIOR_GAMES / (strength[bot] + 1.0)
            )
            for bot in bots
        }
        updated = _rescaled(updated)
        moved = max(abs(math.log(updated[bot] / strength[bot])) for bot in bots)
        strength = updated
        if moved < _TOLERANCE:
            break
    logs = {bot: math.log(strength[bot]) for bot in bots}
    centre = math.fsum(logs.values()) / len(bots)
    return {bot: _ELO * (value - centre) for bot, value in logs.items()}


def _rescaled(strength: dict[str, float]) -> dict[str, float]:
    """The strengths times the common factor that maximises the likelihood (the prior alone decides it).

    Only the virtual games against the reference depend on the strengths' common scale; at
    the best scale they sum to their expected half each: ``sum(p / (p + 1)) == k / 2``.
    Found by bisection on the log-scale, the same factor for every bot.
    """
    logs = [math.log(value) for value in strength.values()]
    low, high = -max(logs) - 60.0, -min(logs) + 60.0
    half = len(logs) / 2
    for _ in range(200):
        middle = (low + high) / 2
        if math.fsum(1 / (1 + math.exp(-(value + middle))) for value in logs) < half:
            low = middle
        else:
            high = middle
        if high - low < 1e-13:
            break
    factor = math.exp((low + high) / 2)
    return {bot: value * factor for bot, value in strength.items()}
