"""Benchmark of the match's sequential test: false positives, power and sessions, by simulation.

Each run is one ``nap match CANDIDATE BASELINE --sprt D0 D1`` played in process
(:func:`tournaments.play.sprt_simulation.simulate_match`: the library's schedule, block player,
edges and test; no gRPC, no store), with its own match seed, until the test decides.
Three pairs:

- ``clones``: the candidate is the baseline (``--clone random`` or ``pimc``, seeded per
  table and seat, so the seats differ but no seat is better): every H1 is a false positive,
  and the rate should stay near ``alpha`` (a little under: Wald's bounds ignore overshoot);
- ``stronger``: pimc on a fixed budget (``--samples``, no wall clock) against peel: the
  rate of H1 is the power, to be at least ``1 - beta`` when the edge is at least D1.
- ``far``: peel against random, an edge far beyond any D1 worth testing (some 60 chips a
  session): how long the test takes when both hypotheses fit the blocks badly.

For each it prints the verdicts, the mean (and median, 90th percentile) of the blocks
and sessions read, the block values' SD over all runs, and the fixed-size one-sided test
that has the same error rates at that SD: ``((z(1-alpha) + z(1-beta)) sd / (D1 - D0))^2``
blocks. Runs are spread over ``--jobs`` processes; every run replays exactly. Run ``r``
plays the match seed ``seed * 1_000_003 + r``.

``--resample BLOCKS`` is for a pair too slow to play hundreds of whole matches (pimc costs
about a third of a CPU second a session, so 200 whole runs of ``stronger`` take some three
CPU hours; 400 blocks played once, ten CPU minutes): it plays ``BLOCKS`` blocks once (matches of
``CHUNK`` blocks from the seeds ``seed * 1_000_003 + 500_000 + c``, none of them a run's),
then runs the test ``--runs`` times on sequences drawn from those blocks with replacement
(a bootstrap: each run draws block after block until the test decides). Its rates are
those of a candidate whose edge is the played blocks' distribution, mean and spread alike.
``--edges FILE`` keeps the played edges as JSON, and reads them back instead of playing
again when the file exists. ``--log FILE`` appends each whole run to FILE as a JSON line
as soon as it ends; the runs already there are read back and not played again, so a
long benchmark stopped half way resumes (keep one file per pair and settings). ``--first
N`` plays runs ``N`` to ``N + runs - 1``, to split one benchmark over several machines.

    python bench/sprt.py [--pair both] [--runs 200] [--jobs 2] [--d0 0] [--d1 3]
                         [--alpha 0.05] [--beta 0.05] [--min-blocks 10] [--seats 4]
                         [--samples 30] [--clone random] [--seed 0] [--max-blocks 2000]
                         [--resample BLOCKS] [--chunk 10] [--edges FILE] [--log FILE] [--first 0]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import statistics
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from clients.bots.peel import PeelBot
from clients.bots.pimc import Batch, Budget, PimcBot
from clients.bots.random_bot import RandomBot
from tournaments.play.sprt_simulation import SimulatedMatch, play_edges, simulate_match
from tournaments.stats.sprt import SequentialTest, Sprt, SprtState, fixed_sample_blocks

if TYPE_CHECKING:
    from collections.abc import Callable

    from clients.sdk.bot import Bot


def pimc(samples: int) -> Callable[[], Bot]:
    """PIMC on a counted budget and no wall clock: the same choices on any machine."""
    return partial(PimcBot, budget=Budget(samples=samples, seconds=None, batch_seconds=None), batch=Batch())


def pair(name: str, args: argparse.Namespace) -> tuple[Callable[[], Bot], Callable[[], Bot]]:
    """(candidate, baseline) factories of a pair."""
    if name == "stronger":
        return pimc(args.samples), PeelBot
    if name == "far":
        return PeelBot, RandomBot
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


def logged_runs(name: str, args: argparse.Namespace, test: Sprt) -> list[SimulatedMatch]:
    """Runs ``first .. first + runs - 1``: those in ``args.log`` read back, the others played and appended."""
    path: Path | None = args.log
    done: dict[int, SimulatedMatch] = {}
    if path is not None and path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            state = SprtState(test=test, blocks=row["blocks"], llr=row["llr"], verdict=row["verdict"])
            done[row["run"]] = SimulatedMatch(
                seed=row["seed"], table_size=row["seats"], state=state, edges=tuple(row["edges"])
            )
    todo = [run for run in range(args.first, args.first + args.runs) if run not in done]
    with multiprocessing.Pool(args.jobs) as pool:
        for run, match in zip(
            todo, pool.imap(partial(one_run, name, args, test), todo, chunksize=1), strict=True
        ):
            done[run] = match
            if path is not None:
                row = {
                    "run": run,
                    "seed": match.seed,
                    "seats": match.table_size,
                    "blocks": match.state.blocks,
                    "llr": match.state.llr,
                    "verdict": match.state.verdict,
                    "edges": list(match.edges),
                }
                with path.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(row) + "\n")
    return [done[run] for run in range(args.first, args.first + args.runs)]


def one_chunk(name: str, args: argparse.Namespace, chunk: int) -> list[float]:
    """The edges of one match of ``args.chunk`` blocks, played whole (for ``--resample``)."""
    candidate, baseline = pair(name, args)
    return list(
        play_edges(
            candidate,
            baseline,
            seed=args.seed * 1_000_003 + 500_000 + chunk,
            table_size=args.seats,
            max_blocks=args.chunk,
        )
    )


def played_edges(name: str, args: argparse.Namespace) -> list[float]:
    """``args.resample`` blocks played once, or read back from ``args.edges``."""
    path: Path | None = args.edges
    if path is not None and path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
        print(f"  {len(data['edges'])} block edges read from {path} ({data['pair']}, {data['seats']} seats)")
        return [float(edge) for edge in data["edges"]][: args.resample]
    chunks = math.ceil(args.resample / args.chunk)
    with multiprocessing.Pool(args.jobs) as pool:
        parts = pool.map(partial(one_chunk, name, args), range(chunks), chunksize=1)
    edges = [edge for part in parts for edge in part]
    edges = edges[: args.resample]
    if path is not None:
        record = {"pair": name, "seats": args.seats, "samples": args.samples, "seed": args.seed}
        record["edges"] = edges
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return edges


def resampled_run(edges: list[float], args: argparse.Namespace, test: Sprt, run: int) -> SimulatedMatch:
    """One test on blocks drawn from ``edges`` with replacement, until it decides."""
    rng = random.Random(args.seed * 1_000_003 + run)
    sequential = SequentialTest(test)
    drawn: list[float] = []
    while len(drawn) < args.max_blocks:
        drawn.append(rng.choice(edges))
        if sequential.add(drawn[-1]) is not None:
            break
    return SimulatedMatch(seed=run, table_size=args.seats, state=sequential.state, edges=tuple(drawn))


def report(
    name: str, runs: list[SimulatedMatch], test: Sprt, seconds: float, *, played: list[float] | None = None
) -> None:
    """The verdicts and the cost; ``played`` are the blocks a resampled set was drawn from."""
    count = len(runs)
    h1 = sum(r.state.verdict == "H1" for r in runs)
    h0 = sum(r.state.verdict == "H0" for r in runs)
    blocks = sorted(r.state.blocks for r in runs)
    sessions = [r.sessions for r in runs]
    values = played if played is not None else [v for r in runs for v in r.edges]
    sd = statistics.stdev(values)
    fixed = math.ceil(fixed_sample_blocks(test, sd))

    def rate(k: int) -> str:
        p = k / count
        return f"{k}/{count} = {100 * p:.1f}% (± {196 * math.sqrt(p * (1 - p) / count):.1f})"

    drawn = f", drawn from {len(played)} blocks played once" if played is not None else ""
    print(f"{name}: {count} runs{drawn} in {seconds:.0f} s")
    print(f"  H1 accepted {rate(h1)}, H0 accepted {rate(h0)}, undecided {count - h0 - h1}")
    margin = 1.96 * statistics.stdev(blocks) / math.sqrt(count)
    print(
        f"  blocks read: mean {statistics.fmean(blocks):.1f} (± {margin:.1f}), "
        f"median {statistics.median(blocks):g}, 90th percentile {blocks[int(0.9 * (count - 1))]}, "
        f"most {blocks[-1]}"
    )
    seats = runs[0].table_size
    print(
        f"  sessions read: mean {statistics.fmean(sessions):.1f}, "
        f"median {seats * statistics.median(blocks):g}, "
        f"90th percentile {seats * blocks[int(0.9 * (count - 1))]}"
    )
    over = "the blocks played" if played is not None else "all blocks read"
    mean, margin = statistics.fmean(values), 1.96 * sd / math.sqrt(len(values))
    print(f"  edge over {over} ({len(values)}): mean {mean:+.2f} (± {margin:.2f}), block SD {sd:.2f}")
    print(
        f"  fixed-size one-sided test at alpha {test.alpha:g}, beta {test.beta:g}, SD {sd:.2f}: "
        f"{fixed} blocks = {fixed * seats} sessions"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", choices=["clones", "stronger", "far", "both"], default="both")
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
    parser.add_argument("--resample", type=int, default=None, metavar="BLOCKS", help="play once, resample")
    parser.add_argument("--chunk", type=int, default=10, help="with --resample: blocks per match played")
    parser.add_argument("--edges", type=Path, default=None, help="with --resample: played edges, JSON")
    parser.add_argument("--log", type=Path, default=None, help="whole runs as JSON lines; resumes")
    parser.add_argument("--first", type=int, default=0, help="the first run's number (to split a benchmark)")
    args = parser.parse_args()
    test = Sprt(d0=args.d0, d1=args.d1, alpha=args.alpha, beta=args.beta, min_blocks=args.min_blocks)
    print(
        f"SPRT {test.describe()}, min blocks {test.min_blocks}, bounds {test.lower:+.3f} / "
        f"{test.upper:+.3f}; {args.seats} seats; pimc {args.samples} samples, clones {args.clone}"
    )
    names = ["clones", "stronger"] if args.pair == "both" else [args.pair]
    for name in names:
        start = time.perf_counter()
        if args.resample is not None:
            edges = played_edges(name, args)
            runs = [resampled_run(edges, args, test, run) for run in range(args.runs)]
            report(name, runs, test, time.perf_counter() - start, played=edges)
            continue
        report(name, logged_runs(name, args, test), test, time.perf_counter() - start)


if __name__ == "__main__":
    main()
