"""Benchmark of the PIMC bot: its solver's speed, its decisions per second, and a match.

- solver: full solves from the declarer's first lead (the lead chooses trump, every
  trick: five, or seven with ``--profile seven-card``) of random deals with a Three or
  Misère bid, at 3, 5 and 7 seats: solves per second, mean and worst time per solve;
- bot: decisions per second at the default budget, through whole in-process sessions,
  and the slowest decision against the budget;
- ``--match N``: duplicate match at 4 seats (``--lineup pprr``: pimc / peel / random /
  random, ``pppr``: pimc / peel / peel / random), each seed played in the four rotations
  of the seats, seeds spread over ``--jobs`` processes; mean chips per session per bot
  with a rough 95% interval over the seeds, the contracts pimc and peel declared and how
  often they made them, and pimc's estimated chance of each contract it declared against
  how often it was made (to calibrate ``--caution``).

    python bench/pimc.py [--deals 200] [--sessions 2] [--match N] [--lineup pppr] [--jobs 2]
                         [--samples 120] [--seconds 0.2] [--caution C] [--profile seven-card]

``--deals 0`` / ``--sessions 0`` skip the speed rows; ``--seconds 0`` plays on the sample
budget alone, so that a match replays exactly. ``--profile`` (a built-in name or a
house-rules ``.toml``; default heather, full-ladder for the solver rows) plays every row
under that profile, its hand size and its pack.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import statistics
import time
from dataclasses import dataclass
from functools import partial

from clients.bots.peel import PeelBot
from clients.bots.pimc import Budget, PimcBot, Position, Solver
from clients.bots.random_bot import RandomBot
from clients.sdk import Bot
from clients.sdk.local import play_local
from referee.rules import (
    DEFAULT_PROFILE,
    PASS,
    PROFILES,
    Action,
    Bid,
    Deal,
    Phase,
    Profile,
    SeatView,
    get_profile,
)


def solver_speed(
    seats: int, deals: int, seed: int, contract: str, profile: Profile
) -> tuple[float, float, float, float]:
    """Solves per second, mean and worst seconds per solve, mean trick boundaries visited."""
    rng = random.Random(seed)
    times = []
    nodes = 0
    for number in range(deals):
        deck = list(profile.pack)
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


def bot_speed(seats: int, sessions: int, budget: Budget, profile: Profile) -> tuple[float, float, float]:
    """Decisions per second, mean and worst seconds per decision of one PIMC seat."""
    times: list[float] = []
    for seed in range(sessions):
        pimc = Counting(PimcBot(budget=budget, seed=seed, profile=profile))
        bots: list[Bot] = [
            pimc,
            PeelBot(profile=profile),
            *(RandomBot(seed=seed * 10 + i) for i in range(seats - 2)),
        ]
        play_local(bots, seed=seed, profile=profile)
        times += pimc.times
    return len(times) / sum(times), statistics.fmean(times), max(times)


LINEUPS = {
    "pprr": ("pimc", "peel", "random", "random"),
    "pppr": ("pimc", "peel", "peel", "random"),
}
"""The match lineups at 4 seats, by ``--lineup`` name."""


class Recording(Bot):
    """Records the contracts the wrapped PIMC bot bids, with its estimated chance of each."""

    def __init__(self, inner: PimcBot) -> None:
        self.inner = inner
        self.bids: list[tuple[int, str, float]] = []

    def decide(self, view: SeatView) -> Action:
        self.inner.table, self.inner.seat = self.table, self.seat
        action = self.inner.decide(view)
        if isinstance(action, Bid) and action is not PASS and self.inner.last_chance is not None:
            self.bids.append((view.deal_number, action.name, self.inner.last_chance))
        return action

    def on_event(self, event: object) -> None:
        self.inner.on_event(event)


@dataclass(frozen=True, slots=True)
class SeedResult:
    """One seed of a match: each kind's mean chips over the rotations, and the contracts declared."""

    chips: dict[str, float]
    sessions: int
    declared: list[tuple[str, str, bool]]
    """(kind, contract, made) for every contract a pimc or peel seat played as declarer."""
    estimates: list[tuple[str, float, bool]]
    """(contract, pimc's estimated chance when it bid, made) for every contract pimc played."""


def play_seed(
    seed: int, lineup: tuple[str, ...], budget: Budget, caution: float | None, profile: Profile
) -> SeedResult:
    """Every rotation of ``lineup`` on the deals of ``seed``."""
    seats = len(lineup)
    chips: dict[str, list[int]] = {kind: [] for kind in dict.fromkeys(lineup)}
    declared: list[tuple[str, str, bool]] = []
    estimates: list[tuple[str, float, bool]] = []
    if caution is None:
        caution = PimcBot().caution
    for shift in range(seats):
        kinds = lineup[shift:] + lineup[:shift]
        bots: list[Bot] = [
            Recording(PimcBot(budget=budget, seed=seed, caution=caution, profile=profile))
            if kind == "pimc"
            else PeelBot(profile=profile)
            if kind == "peel"
            else RandomBot(seed=seed * 10 + seat)
            for seat, kind in enumerate(kinds)
        ]
        session = play_local(bots, seed=seed, profile=profile)
        for seat, kind in enumerate(kinds):
            chips[kind].append(session.balances[seat])
        for deal in session.deals:
            declarer, contract, payments = deal.declarer, deal.contract, deal.payments
            if declarer is None or contract is None or payments is None or kinds[declarer] == "random":
                continue
            declared.append((kinds[declarer], contract.name, payments[declarer] > 0))
        for seat, bot in enumerate(bots):
            if isinstance(bot, Recording):
                for number, name, chance in bot.bids:
                    deal = session.deals[number]
                    if deal.declarer == seat and deal.contract is not None and deal.contract.name == name:
                        estimates.append((name, chance, (deal.payments or (0,) * seats)[seat] > 0))
    return SeedResult(
        {kind: statistics.fmean(values) for kind, values in chips.items()}, seats, declared, estimates
    )


def match(  # noqa: PLR0913 - the match's settings, keyword-only
    seeds: int,
    lineup: tuple[str, ...],
    budget: Budget,
    *,
    jobs: int = 1,
    caution: float | None = None,
    profile: Profile = DEFAULT_PROFILE,
) -> list[SeedResult]:
    """Each seed played in every rotation of the seats; seeds spread over ``jobs`` processes."""
    task = partial(play_seed, lineup=lineup, budget=budget, caution=caution, profile=profile)
    results: list[SeedResult] = []
    with multiprocessing.Pool(jobs) as pool:
        for seed, result in enumerate(pool.imap(task, range(seeds))):
            results.append(result)
            chips = "  ".join(f"{kind} {value:+.1f}" for kind, value in result.chips.items())
            print(f"  seed {seed}: {chips}", flush=True)
    return results


def report(results: list[SeedResult]) -> None:
    """Mean chips per session with a 95% interval over the seeds; contracts declared and made."""
    for kind in results[0].chips:
        values = [result.chips[kind] for result in results]
        mean = statistics.fmean(values)
        half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else math.nan
        print(f"  {kind:>7}: {mean:+7.2f} chips/session  (95% +/- {half:.2f})")
    tally: dict[tuple[str, str], tuple[int, int]] = {}
    for result in results:
        for kind, name, made in result.declared:
            count, hits = tally.get((kind, name), (0, 0))
            tally[kind, name] = (count + 1, hits + made)
    sessions = sum(result.sessions for result in results)
    for (kind, name), (count, hits) in sorted(tally.items()):
        print(
            f"  {kind:>5} declared {name:>10}: {count:5d} ({count / sessions:.2f}/session), "
            f"made {hits / count:.0%}"
        )
    buckets: dict[tuple[str, int], tuple[int, float, int]] = {}
    for result in results:
        for name, chance, made in result.estimates:
            key = (name, min(9, int(chance * 10)))
            count, total, hits = buckets.get(key, (0, 0.0, 0))
            buckets[key] = (count + 1, total + chance, hits + made)
    if buckets:
        print("  pimc calibration (contract, estimated chance -> made):")
        for (name, _), (count, total, hits) in sorted(buckets.items()):
            print(f"    {name:>10} est {total / count:.2f} -> made {hits / count:.2f}  (n={count})")


def _seats(profile: Profile, sizes: tuple[int, ...]) -> list[int]:
    """The table sizes of ``sizes`` that ``profile`` allows."""
    return [seats for seats in sizes if profile.min_players <= seats <= profile.max_players]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=200, help="deals solved per table size (0: skip)")
    parser.add_argument(
        "--solver-seats",
        default="3,5,7",
        help="table sizes of the solver rows (seven cards at 7 seats: a misère takes seconds a solve)",
    )
    parser.add_argument("--sessions", type=int, default=2, help="sessions timed per table size (0: skip)")
    parser.add_argument("--match", type=int, default=0, metavar="N", help="seeds of the duplicate match")
    parser.add_argument(
        "--lineup",
        choices=sorted(LINEUPS),
        default="pprr",
        help="match lineup: pprr = pimc/peel/random/random, pppr = pimc/peel/peel/random",
    )
    parser.add_argument("--jobs", type=int, default=1, help="processes playing the match's seeds")
    parser.add_argument("--caution", type=float, default=None, help="pimc's caution (default: the bot's)")
    parser.add_argument(
        "--seconds",
        type=float,
        default=Budget().seconds,
        help="bot time per decision, 0 for none (reproducible)",
    )
    parser.add_argument("--samples", type=int, default=Budget().samples, help="bot samples per decision")
    parser.add_argument(
        "--profile",
        default=None,
        help="rules profile or house-rules .toml (default: full-ladder for the solver, heather for the bot)",
    )
    args = parser.parse_args()
    budget = Budget(samples=args.samples, seconds=args.seconds or None)
    profile = get_profile(args.profile) if args.profile else DEFAULT_PROFILE
    solved = get_profile(args.profile) if args.profile else PROFILES["full-ladder"]
    if args.deals:
        print(
            f"solver: {args.deals} full solves from the first lead per row (Three / Misère bid), "
            f"profile {solved.name}, {solved.hand_size} tricks, {solved.pack_size}-card pack"
        )
        for seats in _seats(solved, tuple(int(n) for n in args.solver_seats.split(","))):
            for contract in ("three", "misere"):
                if not solved.has(contract):
                    continue
                rate, mean, worst, nodes = solver_speed(seats, args.deals, seats, contract, solved)
                print(
                    f"  {seats} seats {contract:>7}: {rate:>8,.0f} solves/s  mean {mean * 1e3:7.2f} ms  "
                    f"worst {worst * 1e3:8.1f} ms  {nodes:>8,.0f} boundaries/solve"
                )
    if args.sessions:
        print(f"bot: {budget.samples} samples / {budget.seconds} s per decision, profile {profile.name}")
        for seats in _seats(profile, (3, 4, 5, 7)):
            rate, mean, worst = bot_speed(seats, args.sessions, budget, profile)
            print(
                f"  {seats} seats: {rate:6.1f} decisions/s  mean {mean * 1e3:6.1f} ms  "
                f"worst {worst * 1e3:6.1f} ms"
            )
    if args.match:
        lineup = LINEUPS[args.lineup]
        print(
            f"match: {args.match} seeds x {len(lineup)} rotations, {'/'.join(lineup)}, "
            f"{profile.name}, pimc at {budget.samples} samples / {budget.seconds} s"
        )
        start = time.perf_counter()
        results = match(args.match, lineup, budget, jobs=args.jobs, caution=args.caution, profile=profile)
        print(f"  {time.perf_counter() - start:.0f} s")
        report(results)


if __name__ == "__main__":
    main()
