"""Benchmark of whole tournaments: four random-bot processes at 4-seat tables, over gRPC.

Runs a real tournament (in-process referee on 127.0.0.1:0, one process per bot, SQLite
store and gzip logs in a temporary folder) and prints sessions/s and decisions/s, then
plays the same blocks with the same bots called in-process (no referee, no gRPC, no
store) for comparison. ``--profile`` runs the referee process under cProfile and prints
where its time goes. The target is 10,000 sessions in under 60 s (~167 sessions/s).

    python bench/tournament.py [--sessions 2000] [--concurrency 256] [--profile]
    python bench/tournament.py --sessions 10000
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import cast

from rich.progress import Progress

from referee.rules import get_profile
from referee.server import TimeLimits
from tournaments.bots import example_bot
from tournaments.logfiles import read_log
from tournaments.runner import BlockRun, TournamentConfig, play_block_in_process, run_tournament
from tournaments.scheduler import schedule
from tournaments.store import Store

BOTS = tuple(example_bot("random", name=f"random-{i}") for i in range(1, 5))


def over_grpc(sessions: int, *, seed: int, concurrency: int, profile: bool) -> None:
    config = TournamentConfig(name="bench", bots=BOTS, table_size=4, sessions=sessions,
                              seed=seed, concurrency=concurrency,
                              time_limits=TimeLimits(decision_ms=5000))
    with tempfile.TemporaryDirectory(prefix="nap-bench-") as folder:
        root = Path(folder)
        with Store.open(root / "nap.db") as store:
            profiler = cProfile.Profile() if profile else None
            start = time.perf_counter()
            with Progress(disable=True) as progress:
                if profiler is not None:
                    profiler.enable()
                tournament = run_tournament(config, store=store, logs_root=root / "logs",
                                            progress=progress)
                if profiler is not None:
                    profiler.disable()
            total = time.perf_counter() - start
            rows = store.find_sessions(tournament=tournament)
            results = store.session_results(tournament)
        stamps = sorted(datetime.fromisoformat(row.finished_at) for row in rows)
        playing = (stamps[-1] - stamps[0]).total_seconds()
        decisions = 0
        for row in rows:
            deals = cast("list[list[object]]", read_log(row.log_path)["decisions"])
            decisions += sum(len(deal) for deal in deals)
    faults = sum(len(r.faults) for r in results)
    n = len(rows)
    print(f"over gRPC: {n:,} sessions, {decisions:,} decisions, concurrency {concurrency}, "
          f"{faults} faults")
    print(f"  whole run (bots start, play, stop): {total:6.1f} s  {n / total:8.1f} sessions/s  "
          f"{decisions / total:10,.0f} decisions/s")
    if playing > 0:
        print(f"  first to last commit:               {playing:6.1f} s  {(n - 1) / playing:8.1f} "
              f"sessions/s  {decisions * (n - 1) / n / playing:10,.0f} decisions/s")
    if profiler is not None:
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("tottime").print_stats(25)
        print("\nreferee process, top 25 functions by own time:")
        print(out.getvalue())


def in_process(sessions: int, *, seed: int) -> None:
    factories = {bot.name: bot.make_bot() for bot in BOTS}
    blocks = schedule([bot.name for bot in BOTS], table_size=4, sessions=sessions, seed=seed)
    profile = get_profile("heather")
    start = time.perf_counter()
    n = decisions = 0
    for block in blocks:
        spec = BlockRun(tournament=1, index=block.index, board_seed=block.board_seed,
                        bots=block.bots, profile=profile, time_limits=TimeLimits(),
                        rotations=tuple(block.rotations))
        for finished in play_block_in_process(spec, factories):
            n += 1
            decisions += sum(len(deal) for deal in finished.log["decisions"])
    elapsed = time.perf_counter() - start
    print(f"in-process (same bots and blocks, no gRPC, no store): {n:,} sessions in "
          f"{elapsed:.1f} s  {n / elapsed:8.1f} sessions/s  {decisions / elapsed:10,.0f} "
          "decisions/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=256, help="blocks in flight")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="cProfile the referee process")
    parser.add_argument("--skip-in-process", action="store_true")
    args = parser.parse_args()
    over_grpc(args.sessions, seed=args.seed, concurrency=args.concurrency, profile=args.profile)
    if not args.skip_in_process:
        in_process(args.sessions, seed=args.seed)


if __name__ == "__main__":
    main()
