"""How Peel's pool decisions are measured: paired play against the same seat declining everything.

Used by ``bench/peel_pool.py`` to choose :data:`clients.bots.peel_pool.POLICY` and by the
tests that check what the chosen policy earns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clients.bots.peel import PeelBot
from clients.bots.peel_pool import DECLINE_ALL
from clients.sdk.local import play_local

if TYPE_CHECKING:
    from collections.abc import Sequence

    from clients.bots.peel_pool import PoolPolicy
    from referee.rules import Profile


def gains(profile: Profile, policy: PoolPolicy, *, seeds: int, seats: Sequence[int]) -> list[int]:
    """Per seed, one seat's chips with ``policy`` less its chips declining everything, in the same session.

    The other seats decline everything; the seat and the table size rotate with the seed.
    """
    out = []
    for seed in range(seeds):
        size = seats[seed % len(seats)]
        seat = (seed // len(seats)) % size
        base = play_local([PeelBot(policy=DECLINE_ALL) for _ in range(size)], seed=seed, profile=profile)
        bots = [PeelBot(policy=policy if s == seat else DECLINE_ALL) for s in range(size)]
        out.append(play_local(bots, seed=seed, profile=profile).balances[seat] - base.balances[seat])
    return out
