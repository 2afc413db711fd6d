"""Made-up blocks for the rotation check's tests: sessions seated as scheduled, with the luck of each hand."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tournaments.plan.scheduler import BlockSpec
from tournaments.results import SeatResult, SessionResult

if TYPE_CHECKING:
    import random
    from collections.abc import Sequence

BOTS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta")


def block_results(
    chips: Sequence[Sequence[int]], bots: Sequence[str], *, block: int = 0, tournament: int = 1
) -> list[SessionResult]:
    """One block's sessions: ``chips[r][s]`` at seat ``s`` of rotation ``r``, the bots seated as scheduled."""
    spec = BlockSpec(index=block, board_seed=1000 + block, bots=tuple(bots))
    results = []
    for rotation, row in enumerate(chips):
        assert sum(row) == 0  # a session is zero-sum
        seating = spec.seating(rotation)
        top = max(row)
        winners = row.count(top)
        seats = tuple(
            SeatResult(seat, bot, value, 1 / winners if value == top else 0.0)
            for seat, (bot, value) in enumerate(zip(seating, row, strict=True))
        )
        results.append(SessionResult(tournament, block, rotation, spec.board_seed, seats))
    return results


def zero_sum(rng: random.Random, seats: int, spread: int) -> list[int]:
    values = [rng.randint(-spread, spread) for _ in range(seats - 1)]
    return [*values, -sum(values)]


def synthetic(
    rng: random.Random,
    *,
    blocks: int,
    seats: int = 4,
    cheater: str | None = None,
    gain: int = 0,
    luck: int = 20,
    noise: int = 8,
) -> list[SessionResult]:
    """Blocks of ``seats`` bots in varied seat orders: the luck of each hand, noise, and a cheater's gain.

    Seat ``s`` is dealt the same luck in every rotation of a block (the same hand); each
    session adds zero-sum noise; from rotation 1 on, ``cheater`` takes ``gain`` from the
    others, ``gain / (seats - 1)`` from each.
    """
    results = []
    for block in range(blocks):
        bots = rng.sample(BOTS[:seats], seats)
        hands = zero_sum(rng, seats, luck)
        chips = []
        for rotation in range(seats):
            row = [hand + extra for hand, extra in zip(hands, zero_sum(rng, seats, noise), strict=True)]
            seating = BlockSpec(index=block, board_seed=0, bots=tuple(bots)).seating(rotation)
            if cheater is not None and rotation > 0:
                row = [
                    value + (gain if bot == cheater else -gain // (seats - 1))
                    for bot, value in zip(seating, row, strict=True)
                ]
            chips.append(row)
        results += block_results(chips, bots, block=block)
    return results
