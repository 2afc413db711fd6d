"""The rotation check: a bot whose results improve on boards played before is flagged.

A block plays one board set ``k`` times at a table of ``k`` seats, the bots moved one seat
each rotation. Every dealt card is shown by the end of a deal, so a bot process that played
a board and remembers it knows every hand the next time round. Isolation stops that for
bots the harness runs; a remote bot cannot be isolated, so the standings watch for it.

The statistic is each bot's rotation edge ``D`` over a complete block
(:func:`tournaments.stats.tally.rotation_edge_units`): its result with a hand against the other
bots' results with the same hand (a duplicate edge, in which the luck of the hand cancels,
and the seat's position with it, since each seat is one hand), on the rotations after the
first, less the same on the first. An honest bot's ``D`` has mean zero; identical
deterministic bots give exactly 0 in every block; a bot that remembers boards gains on the
later rotations only, and its ``D`` is positive.

The test (:func:`rotation_flags`): a one-sided Student t test of mean ``D > 0`` over the
bot's complete blocks, ``t = mean / (sd / sqrt(n))`` against ``t(1 - ALPHA / m, n - 1)``,
for each of the ``m`` bots tested (Bonferroni), so that the chance that any honest bot of
the standings is flagged is at most :data:`ALPHA`. A bot is tested only from
:data:`MIN_BLOCKS` complete blocks on, and only when its edges vary (an sd of zero, clones
that tie every block, says nothing). ``bench/rotation_flag.py`` measures the false-positive
rate and the power by simulation (docs/statistics.md).

The module is pure. The words the standings files and the console use for the test are
:mod:`tournaments.report.publish`'s (:func:`~tournaments.report.publish.fair_play_lines`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

from tournaments.stats.estimates import Estimate, t_quantile

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "ALPHA",
    "METHOD",
    "MIN_BLOCKS",
    "rotation_flags",
    "rotation_test_json",
    "tested",
]

ALPHA: Final = 0.01
"""The family-wise false-positive rate: the chance that any honest bot of the standings is flagged."""

MIN_BLOCKS: Final = 10
"""Complete blocks a bot needs before it is tested: fewer give a t test on too little."""

METHOD: Final = (
    "one-sided Student t test of mean rotation edge > 0 over complete blocks, Bonferroni over the bots tested"
)
"""The test in words, as standings.json names it."""


def tested(edge: Estimate | None) -> bool:
    """Whether a bot's edges can be tested: at least :data:`MIN_BLOCKS` blocks that vary."""
    return edge is not None and edge.n >= MIN_BLOCKS and edge.sd is not None and edge.sd > 0


def rotation_flags(edges: Mapping[str, Estimate | None]) -> frozenset[str]:
    """The bots whose mean rotation edge is above zero at the family-wise level :data:`ALPHA`.

    ``edges`` holds each bot's estimate of ``D`` over its complete blocks (None: no
    complete block). Of the ``m`` bots :func:`tested`, a bot is flagged when ``mean / (sd /
    sqrt(n)) > t(1 - ALPHA / m, n - 1)``.
    """
    chosen = {bot: edge for bot, edge in edges.items() if edge is not None and tested(edge)}
    flagged = set()
    for bot, edge in chosen.items():
        assert edge.sd is not None  # noqa: S101 - tested() saw it
        t = edge.mean / (edge.sd / math.sqrt(edge.n))
        if t > t_quantile(1 - ALPHA / len(chosen), edge.n - 1):
            flagged.add(bot)
    return frozenset(flagged)


def rotation_test_json() -> dict[str, Any]:
    """The test as standings.json describes it (``rotation_test``)."""
    return {"method": METHOD, "alpha": ALPHA, "min_blocks": MIN_BLOCKS}
