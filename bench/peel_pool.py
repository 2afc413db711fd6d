"""Measure Peel's pool decisions (exchange, peep, widow): which thresholds win chips.

For each policy of a grid and each seed, one seat plays Peel with that policy and the
others Peel declining everything (no exchange, no peep, no widow); the seat's result is
compared with the same seat in the same seeded session where it too declines everything
(paired: the deals are the same, so most of the luck cancels). The seat rotates with the
seed, the table size runs over ``--seats``. Printed: per policy, the mean gain in chips per
session with a 95% interval over the seeds.

    python bench/peel_pool.py --profile purchase [--seeds 2000] [--seats 3 4 5]
                              [--below 2.1 3.3] [--cards 1 2 3] [--peep -1 0.5 1.0]

Everything is seeded and in-process (``clients.sdk.local.play_local``).
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
from dataclasses import replace

from clients.bots.peel_measure import gains
from clients.bots.peel_pool import DECLINE_ALL, POLICY, PoolPolicy
from referee.rules import Profile, get_profile


def grid(profile: Profile, *, below: list[float], cards: list[int], peep: list[float]) -> list[PoolPolicy]:
    """The policies worth trying under ``profile``: only the parameters it uses vary."""
    if profile.widow:
        return [
            replace(DECLINE_ALL, peep_margin=margin, blind_widow=blind)
            for margin, blind in itertools.product(peep, (False, True))
        ]
    paid = cards if profile.exchange_fee_per_card else [profile.exchange_max]
    return [
        replace(DECLINE_ALL, exchange_below=threshold, paid_cards=count)
        for threshold, count in itertools.product(below, paid)
    ]


def main() -> None:
    """Print the grid's gains for one profile, and the defaults'."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="purchase")
    parser.add_argument("--seeds", type=int, default=2000)
    parser.add_argument("--seats", type=int, nargs="+", default=[3, 4, 5])
    parser.add_argument("--below", type=float, nargs="+", default=[1.5, 2.1, 2.7, 3.3, 4.3, 9.0])
    parser.add_argument("--cards", type=int, nargs="+", default=[1, 2, 3, 5], help="Écarté: cards at most")
    parser.add_argument("--peep", type=float, nargs="+", default=[-1.0, 0.5, 1.0, 1.5, 2.5])
    args = parser.parse_args()
    profile = get_profile(args.profile)
    policies = grid(profile, below=args.below, cards=args.cards, peep=args.peep)
    for policy in [*policies, POLICY]:
        values = gains(profile, policy, seeds=args.seeds, seats=args.seats)
        mean = statistics.fmean(values)
        half = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
        label = "defaults" if policy is POLICY else ""
        print(
            f"{profile.name:9} below={policy.exchange_below:4} cards={policy.paid_cards} "
            f"peep={policy.peep_margin:4} blind={policy.blind_widow!s:5}  "
            f"{mean:+7.2f} ± {half:5.2f} chips/session {label}",
            flush=True,
        )


if __name__ == "__main__":
    main()
