"""Benchmark of the match's sequential test: false positives, power and sessions, by simulation.

Each run is one ``nap match CANDIDATE BASELINE --sprt D0 D1`` played in process
(:func:`tournaments.simulate.simulate_match`: the library's schedule, block player,
edges and test; no gRPC, no store), with its own match seed, until the test decides.
Two pairs:

- ``clones``: the candidate is the baseline (``--clone random`` or ``pimc``, seeded per
  table and seat, so the seats differ but no seat is better): every H1 is a false positive,
  and the rate should stay near ``alpha`` (a little under: Wald's bounds ignore overshoot);
- ``stronger``: pimc on a fixed budget (``--samples``, no wall clock) against peel: the
  rate of H1 is the power, to be at least ``1 - beta`` when the edge is at least D1.

For each it prints the verdicts, the mean (and median, 90th percentile) of the blocks
and sessions read, the block values' SD over all runs, and the fixed-size one-sided test
that has the same error rates at that SD: ``((z(1-alpha) + z(1-beta)) sd / (D1 - D0))^2``
blocks. Runs are spread over ``--jobs`` processes; every run replays exactly.

    python bench/sprt.py [--pair both] [--runs 200] [--jobs 2] [--d0 0] [--d1 3]
                         [--alpha 0.05] [--beta 0.05] [--min-blocks 10] [--seats 4]
                         [--samples 30] [--clone random] [--seed 0] [--max-blocks 2000]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import statistics
import time
from functools import partial
from typing import TYPE_CHECKING

from clients.bots.peel import PeelBot
from clients.bots.pimc import Batch, Budget, PimcBot
from clients.bots.random_bot import RandomBot
from tournaments.simulate import simulate_match
from tournaments.sprt import Sprt, fixed_sample_blocks

if TYPE_CHECKING:
    from collections.abc import Callable

    from clients.sdk.bot import Bot
    from tournaments.simulate import SimulatedMatch


def pimc(samples: int) -> Callable[[], Bot]:
    """PIMC on a counted budget and no wall clock: the same choices on any machine."""
    return partial(PimcBot, budget=Budget(samples=samples, seconds=None, batch_seconds=None), batch=Batch())


def pair(name: str, args: argparse.Namespace) -> tuple[Callable[[], Bot], Callable[[], Bot]]:
    """(candidate, baseline) factories of a pair."""
    if name == "stronger":
        return pimc(args.samples), PeelBot
    clone: Callable[[], Bot] = RandomBot if args.clone == "random" else pimc(args.samples)
    return clone, clone


def one_run(name: str, args: argparse.Namespace, test: Sprt, run: int) -> SimulatedMatch:
    candidate, baseline = pair(name, args)
    return simulate_match(
        candidate,
        baseline,
        test=test,
        seed=args.seed * 1_000_003 + run,
        table_size=args.seats,
        max_blocks=args.max_blocks,
    )


def report(name: str, runs: list[SimulatedMatch], test: Sprt, seconds: float) -> None:
    count = len(runs)
    h1 = sum(r.state.verdict == "H1" for r in runs)
    h0 = sum(r.state.verdict == "H0" for r in runs)
    blocks = sorted(r.state.blocks for r in runs)
    sessions = [r.sessions for r in runs]
    values = [v for r in runs for v in r.edges]
    sd = statistics.stdev(values)
    fixed = math.ceil(fixed_sample_blocks(test, sd))
    seats = runs[0].table_size

    def rate(k: int) -> str:
        p = k / count
        return f"{k}/{count} = {100 * p:.1f}% (± {196 * math.sqrt(p * (1 - p) / count):.1f})"

    print(f"{name}: {count} runs in {seconds:.0f} s")
    print(f"  H1 accepted {rate(h1)}, H0 accepted {rate(h0)}, undecided {count - h0 - h1}")
    margin = 1.96 * statistics.stdev(blocks) / math.sqrt(count)
    print(
        f"  blocks read: mean {statistics.fmean(blocks):.1f} (± {margin:.1f}), "
        f"median {statistics.median(blocks):g}, 90th percentile {blocks[int(0.9 * (count - 1))]}, "
        f"most {blocks[-1]}"
    )
    print(
        f"  sessions read: mean {statistics.fmean(sessions):.1f}; edge over all blocks read: "
        f"mean {statistics.fmean(values):+.2f}, block SD {sd:.2f}"
    )
    print(
        f"  fixed-size one-sided test at alpha {test.alpha:g}, beta {test.beta:g}, SD {sd:.2f}: "
        f"{fixed} blocks = {fixed * seats} sessions"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", choices=["clones", "stronger", "both"], default="both")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=max(1, multiprocessing.cpu_count()))
    parser.add_argument("--d0", type=float, default=0.0)
    parser.add_argument("--d1", type=float, default=3.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--min-blocks", type=int, default=Sprt(d0=0, d1=1).min_blocks)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--samples", type=int, default=Budget().samples, help="pimc's samples per decision")
    parser.add_argument("--clone", choices=["random", "pimc"], default="random")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-blocks", type=int, default=2000)
    args = parser.parse_args()
    test = Sprt(d0=args.d0, d1=args.d1, alpha=args.alpha, beta=args.beta, min_blocks=args.min_blocks)
    print(
        f"SPRT {test.describe()}, min blocks {test.min_blocks}, bounds {test.lower:+.3f} / "
        f"{test.upper:+.3f}; {args.seats} seats; pimc {args.samples} samples, clones {args.clone}"
    )
    names = ["clones", "stronger"] if args.pair == "both" else [args.pair]
    for name in names:
        start = time.perf_counter()
        with multiprocessing.Pool(args.jobs) as pool:
            runs = pool.map(partial(one_run, name, args, test), range(args.runs), chunksize=1)
        report(name, runs, test, time.perf_counter() - start)


if __name__ == "__main__":
    main()
