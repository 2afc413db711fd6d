"""Benchmark of the PIMC bot: its solver's speed, its decisions per second, and a match.

- solver: full solves from the declarer's first lead (the lead chooses trump, all five
  tricks) of random deals with a Three bid, at 3, 5 and 7 seats: solves per second,
  mean and worst time per solve;
- bot: decisions per second at the default budget, through whole in-process sessions;
- ``--match N``: duplicate match at 4 seats, pimc / peel / random / random, each seed
  played in the four rotations of the seats; mean chips per session per bot with a
  rough 95% interval over the seeds.

    python bench/pimc.py [--deals 200] [--match N] [--seconds 0.2]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time

from clients.bots.peel import PeelBot
from clients.bots.pimc import Budget, PimcBot, Position, Solver
from clients.bots.random_bot import RandomBot
from clients.sdk import Bot
from clients.sdk.local import play_local
from referee.rules import CARDS, PASS, PROFILES, Action, Bid, Deal, Phase, SeatView

HEATHER = PROFILES["heather"]


def solver_speed(seats: int, deals: int, seed: int, contract: str) -> tuple[float, float, float, float]:
    """Solves per second, mean and worst seconds per solve, mean trick boundaries visited."""
    rng = random.Random(seed)
    profile = PROFILES["full-ladder"]
    times = []
    nodes = 0
    for number in range(deals):
        deck = list(CARDS)
        rng.shuffle(deck)
        deal = Deal(profile, deck=deck, dealer=number % seats, table_size=seats)
        deal.apply(Bid(contract))
        while deal.phase is Phase.BIDDING:
            deal.apply(PASS)
        start = time.perf_counter()
        solver = Solver(Position.from_deal(deal))
        solver.can_make()
        times.append(time.perf_counter() - start)
        nodes += solver.nodes
    return len(times) / sum(times), statistics.fmean(times), max(times), nodes / deals


class Counting(Bot):
    """Times the wrapped bot's decisions."""

    def __init__(self, inner: Bot) -> None:
        self.inner = inner
        self.times: list[float] = []

    def decide(self, view: SeatView) -> Action:
        self.inner.table, self.inner.seat = self.table, self.seat
        start = time.perf_counter()
        action = self.inner.decide(view)
        self.times.append(time.perf_counter() - start)
        return action


def bot_speed(seats: int, sessions: int, budget: Budget) -> tuple[float, float, float]:
    """Decisions per second, mean and worst seconds per decision of one PIMC seat."""
    times: list[float] = []
    for seed in range(sessions):
        pimc = Counting(PimcBot(budget=budget, seed=seed))
        bots: list[Bot] = [pimc, PeelBot(), *(RandomBot(seed=seed * 10 + i) for i in range(seats - 2))]
        play_local(bots, seed=seed, profile=HEATHER)
        times += pimc.times
    return len(times) / sum(times), statistics.fmean(times), max(times)


def match(seeds: int, budget: Budget) -> dict[str, list[float]]:
    """Per seed, each bot kind's mean chips per session over the four rotations."""
    lineup = ("pimc", "peel", "random", "random")
    results: dict[str, list[float]] = {kind: [] for kind in dict.fromkeys(lineup)}
    for seed in range(seeds):
        chips: dict[str, list[int]] = {kind: [] for kind in results}
        for shift in range(4):
            kinds = lineup[shift:] + lineup[:shift]
            bots: list[Bot] = [
                PimcBot(budget=budget, seed=seed) if kind == "pimc"
                else PeelBot() if kind == "peel" else RandomBot(seed=seed * 10 + seat)
                for seat, kind in enumerate(kinds)
            ]
            session = play_local(bots, seed=seed, profile=HEATHER)
            for seat, kind in enumerate(kinds):
                chips[kind].append(session.balances[seat])
        for kind, values in chips.items():
            results[kind].append(statistics.fmean(values))
        print(f"  seed {seed}: " + "  ".join(f"{k} {statistics.fmean(v):+.1f}" for k, v in chips.items()),
              flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=200, help="deals solved per table size")
    parser.add_argument("--sessions", type=int, default=2, help="sessions timed per table size")
    parser.add_argument("--match", type=int, default=0, metavar="N", help="seeds of the duplicate match")
    parser.add_argument("--seconds", type=float, default=Budget().seconds, help="bot time per decision")
    parser.add_argument("--samples", type=int, default=Budget().samples, help="bot samples per decision")
    args = parser.parse_args()
    budget = Budget(samples=args.samples, seconds=args.seconds)
    print(f"solver: {args.deals} full solves from the first lead per row (Three / Misère bid)")
    for seats in (3, 5, 7):
        for contract in ("three", "misere"):
            rate, mean, worst, nodes = solver_speed(seats, args.deals, seats, contract)
            print(f"  {seats} seats {contract:>7}: {rate:>8,.0f} solves/s  mean {mean * 1e3:7.2f} ms  "
                  f"worst {worst * 1e3:8.1f} ms  {nodes:>8,.0f} boundaries/solve")
    print(f"bot: {budget.samples} samples / {budget.seconds} s per decision, profile heather")
    for seats in (3, 5, 7):
        rate, mean, worst = bot_speed(seats, args.sessions, budget)
        print(f"  {seats} seats: {rate:6.1f} decisions/s  mean {mean * 1e3:6.1f} ms  "
              f"worst {worst * 1e3:6.1f} ms")
    if args.match:
        print(f"match: {args.match} seeds x 4 rotations, 4 seats, heather, pimc at {budget.seconds} s")
        results = match(args.match, budget)
        for kind, values in results.items():
            mean = statistics.fmean(values)
            half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else math.nan
            print(f"  {kind:>7}: {mean:+7.2f} chips/session  (95% +/- {half:.2f})")


if __name__ == "__main__":
    main()
