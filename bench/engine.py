"""Benchmark of the rules engine: deals per second with random legal play (one core).

Each deal is shuffled from a private generator, dealt, bid and played to the end by
uniform random legal choices through the public API (``legal_actions`` / ``apply``),
events included. Prints the best of several repeats for each table size.

    python bench/engine.py [--deals 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import random
import time

from referee.rules import CARDS, DEFAULT_PROFILE, Deal


def deals_per_second(seats: int, deals: int, seed: int) -> tuple[float, float]:
    """Deals/s and decisions/s over ``deals`` random deals at ``seats`` seats."""
    rng = random.Random(seed)
    deck = list(CARDS)
    decisions = 0
    start = time.perf_counter()
    for number in range(deals):
        rng.shuffle(deck)
        deal = Deal(DEFAULT_PROFILE, deck=deck, dealer=number % seats, table_size=seats)
        while not deal.over:
            legal = deal.legal_actions()
            deal.apply(legal[int(rng.random() * len(legal))])
        decisions += len(deal.actions)
    elapsed = time.perf_counter() - start
    return deals / elapsed, decisions / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"rules engine, profile {DEFAULT_PROFILE.name}, random legal play, best of {args.repeats}")
    for seats in (4, 7):
        runs = [deals_per_second(seats, args.deals, seed) for seed in range(args.repeats)]
        best = max(runs)
        print(f"  {seats} seats: {best[0]:>9,.0f} deals/s  {best[1]:>10,.0f} decisions/s")


if __name__ == "__main__":
    main()
