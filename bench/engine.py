"""Benchmark of the rules engine against a bare deal loop: deals per second (one core).

The engine loop shuffles each deal's deck with a private generator, deals it and bids and
plays it to the end by uniform random legal choices through the public API
(``legal_actions`` / ``apply``), events and record included.

The bare loop is the yardstick: random legal deals of the default profile (heather)
written as one throwaway function over card numbers, with no records, views or events.
It draws from its generator as the engine loop does (one shuffle per deal, one draw per
decision), so from one seed both loops hold the same auctions and make the same number
of decisions, which the benchmark checks.

Prints, for each table size, the best of several repeats of each loop and the ratio
engine / bare from the same run (the engine's share of a bare loop's speed). Speeds are
per second of this process's CPU time, so that other work on a busy machine counts less
than it would against the wall clock; the loops also take turns for the same reason.

    python bench/engine.py [--deals 20000] [--repeats 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import TYPE_CHECKING

from referee.rules import CARDS, DEFAULT_PROFILE, Deal

if TYPE_CHECKING:
    from collections.abc import Callable

SEATS = (4, 7)

_BARE_CALLS = ((-1, 0, 1, 2), (-1, 1, 2), (-1, 2), (-1, 3), (-1,))
"""Heather's auction for the bare loop: the calls allowed after each highest bid (none first).

-1 is a pass; 0..3 are Three, Four, Nap and Wellington (only over Nap).
"""
_BARE_TRICKS = (3, 4, 5, 5)
"""Tricks each of heather's contracts needs."""
_BARE_STAKES = (3, 4, 5, 10)
"""Chips per opponent for each of heather's contracts, won or lost alike."""


def engine_loop(seats: int, deals: int, seed: int) -> int:
    """Play ``deals`` random deals through the engine; return the decisions made."""
    rng = random.Random(seed)
    deck = list(CARDS)
    decisions = 0
    for number in range(deals):
        rng.shuffle(deck)
        deal = Deal(DEFAULT_PROFILE, deck=deck, dealer=number % seats, table_size=seats)
        while not deal.over:
            legal = deal.legal_actions()
            deal.apply(legal[int(rng.random() * len(legal))])
        decisions += deal.action_count
    return decisions


def bare_loop(seats: int, deals: int, seed: int) -> int:  # noqa: C901 - one flat throwaway loop, on purpose
    """Play ``deals`` random heather deals with no engine; return the decisions made.

    A card is its pack index (suit * 13 + rank - 2), so a higher number of the same suit
    is a higher card. Each seat takes five cards straight off the shuffled deck and its
    hand stays unsorted: with uniform random choices the deals are the engine's deals in
    distribution, not one by one. Eldest speaks first; the declarer leads and its first
    card's suit is trump; all passing scores nothing.
    """
    rng = random.Random(seed)
    rand = rng.random
    deck = list(range(52))
    orders = [[(dealer + step) % seats for step in range(1, seats + 1)] for dealer in range(seats)]
    decisions = 0
    for number in range(deals):
        rng.shuffle(deck)
        hands = [deck[top : top + 5] for top in range(0, 5 * seats, 5)]
        high = declarer = -1
        for seat in orders[number % seats]:
            calls = _BARE_CALLS[high + 1]
            call = calls[int(rand() * len(calls))]
            if call >= 0:
                high, declarer = call, seat
        decisions += seats
        if declarer < 0:
            continue
        won = [0] * seats
        leader = declarer
        trump = -1
        for _ in range(5):
            hand = hands[leader]
            best = hand[int(rand() * len(hand))]
            hand.remove(best)
            led = best // 13
            if trump < 0:
                trump = led
            best_suit = led
            winner = leader
            for step in range(1, seats):
                seat = (leader + step) % seats
                hand = hands[seat]
                legal = [card for card in hand if card // 13 == led] or hand
                card = legal[int(rand() * len(legal))]
                hand.remove(card)
                suit = card // 13
                if suit == best_suit:
                    if card > best:
                        best, winner = card, seat
                elif suit == trump:
                    best, best_suit, winner = card, suit, seat
            won[winner] += 1
            leader = winner
        decisions += 5 * seats
        stake = _BARE_STAKES[high] if won[declarer] >= _BARE_TRICKS[high] else -_BARE_STAKES[high]
        payments = [-stake] * seats
        payments[declarer] = stake * (seats - 1)
    return decisions


def timed(loop: Callable[[int, int, int], int], seats: int, deals: int, seed: int) -> tuple[float, int]:
    """Deals per CPU second of one run of ``loop``, and the decisions it made."""
    start = time.process_time()
    decisions = loop(seats, deals, seed)
    return deals / (time.process_time() - start), decisions


def compare(seats: int, deals: int, repeats: int) -> dict[str, float]:
    """The best deals/s of each loop over ``repeats`` runs, the two loops taking turns (seeds 0, 1, ...)."""
    engine = bare = 0.0
    for seed in range(repeats):
        engine_rate, engine_decisions = timed(engine_loop, seats, deals, seed)
        bare_rate, bare_decisions = timed(bare_loop, seats, deals, seed)
        if engine_decisions != bare_decisions:
            msg = (
                f"{seats} seats, seed {seed}: {engine_decisions} decisions (engine), {bare_decisions} (bare)"
            )
            raise SystemExit(msg)
        engine, bare = max(engine, engine_rate), max(bare, bare_rate)
    return {"engine": engine, "bare": bare, "ratio": engine / bare}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args()
    results = {seats: compare(seats, args.deals, args.repeats) for seats in SEATS}
    if args.json:
        print(json.dumps({"profile": DEFAULT_PROFILE.name, "repeats": args.repeats, "seats": results}))
        return
    profile = DEFAULT_PROFILE.name
    print(f"rules engine against a bare loop, profile {profile}, random legal play, best of {args.repeats}")
    for seats, row in results.items():
        print(
            f"  {seats} seats: engine {row['engine']:>9,.0f} deals/s  bare {row['bare']:>9,.0f} deals/s"
            f"  engine/bare {row['ratio']:.1%}"
        )


if __name__ == "__main__":
    main()
