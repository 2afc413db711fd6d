"""The rotation check: a bot whose results improve on boards played before is flagged.

A block plays one board set ``k`` times at a table of ``k`` seats, the bots moved one seat
each rotation. Every dealt card is shown by the end of a deal, so a bot process that played
a board and remembers it knows every hand the next time round. Isolation stops that for
bots the harness runs; a remote bot cannot be isolated, so the standings watch for it.

The statistic is each bot's rotation edge ``D`` over a complete block
(:func:`tournaments.tally.rotation_edge_units`): its result with a hand against the other
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

The module is pure: the test, and the words the standings files and the console use for it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

from tournaments.stats import Estimate, t_quantile

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tournaments.standings import BotStanding, Standings

__all__ = [
    "ALPHA",
    "METHOD",
    "MIN_BLOCKS",
    "fair_play_lines",
    "flag_warnings",
    "rotation_flags",
    "rotation_test_json",
    "tested",
    "warning",
]

ALPHA: Final = 0.01
"""The family-wise false-positive rate: the chance that any honest bot of the standings is flagged."""

MIN_BLOCKS: Final = 10
"""Complete blocks a bot needs before it is tested: fewer give a t test on too little."""

METHOD: Final = (
    "one-sided Student t test of mean rotation edge > 0 over complete blocks, Bonferroni over the bots tested"
)
"""The test in words, as standings.json names it."""

SECURITY_DOC: Final = "docs/security.md"
"""Where the threat model is told, which the warning points to."""


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


def _edge(edge: Estimate) -> str:
    """``+8.10 ± 3.20``, or the mean alone where there is no interval."""
    return f"{edge.mean:+.2f}" + ("" if edge.half_width is None else f" ± {edge.half_width:.2f}")


def warning(line: BotStanding) -> str:
    """The plain sentence said of a flagged bot."""
    edge = line.rotation_edge
    assert edge is not None  # noqa: S101 - a flagged bot has complete blocks
    return (
        f"{line.bot} does better on boards it has seen played before: {_edge(edge)} chips a session "
        f"over {edge.n} blocks (one-sided t test, {ALPHA:.0%} false-positive rate over all bots); "
        f"a bot that remembers boards does this; see {SECURITY_DOC}"
    )


def flag_warnings(standings: Standings) -> list[str]:
    """One :func:`warning` per flagged bot, in the standings' order (none: nobody flagged)."""
    return [warning(line) for line in standings.bots if line.rotation_flagged]


def fair_play_lines(standings: Standings) -> tuple[str, list[str], list[str]]:
    """The "Fair play" section: an introduction, one item per bot, and the warnings.

    Each item is the bot's rotation edge with its 95% interval over complete blocks, or why
    there is none; the warnings are :func:`flag_warnings`.
    """
    intro = (
        "Edge on boards played before: each bot's chips a session on a board's later rotations "
        "less on its first, both against the others' results with the same hands (95% interval "
        f"over complete blocks). A bot is tested from {MIN_BLOCKS} complete blocks, one-sided, "
        f"at a {ALPHA:.0%} false-positive rate over all bots."
    )
    items = []
    for line in standings.bots:
        edge = line.rotation_edge
        if edge is None:
            items.append(f"{line.bot}: no complete block yet")
            continue
        caveat = edge.caveat
        text = f"{line.bot}: {_edge(edge)} chips a session over {edge.n} block{'s' if edge.n > 1 else ''}"
        if caveat is not None and edge.n > 1:
            text += f" ({caveat})"
        if not tested(edge):
            text += "; not tested"
        items.append(text + ("; flagged" if line.rotation_flagged else ""))
    return intro, items, flag_warnings(standings)
