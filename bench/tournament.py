"""Benchmark of whole tournaments: four random-bot processes at 4-seat tables, over gRPC.

Runs a real tournament (worker processes, one per core by default, each a referee on
127.0.0.1:0 with its own process per bot; SQLite store and gzip logs in a temporary
folder) and prints sessions/s, decisions/s and the CPU time per decision of the runner
and of the workers with their bots (with ``--workers 1``: of the referee, in this
process, and of the bot processes), twice: with forced moves played by the referee
without asking (the tournament default) and with every decision asked. Then it plays
the same blocks with the same bots called in-process (no referee, no gRPC, no store)
for comparison. ``--profile`` plays with one worker, the referee in this process under
cProfile, and prints where its time goes. The target is 10,000 sessions in under 60 s
(~167 sessions/s).

    python bench/tournament.py [--sessions 2000] [--workers 2] [--concurrency 128] [--profile]
    python bench/tournament.py --sessions 10000 --forced skip --skip-in-process

The store's commits are timed apart (SQLite in WAL mode with ``synchronous=NORMAL``: no
fsync per commit); ``--store-dir /dev/shm`` puts the store and logs on tmpfs to take the
disk out entirely.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import resource
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from rich.progress import Progress

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE
from tournaments.blocks import BlockRun, play_block_in_process
from tournaments.bots import example_bot
from tournaments.config import DEFAULT_CONCURRENCY, TournamentConfig
from tournaments.logfiles import read_log
from tournaments.runner import RunOptions, default_workers, run_tournament
from tournaments.scheduler import schedule
from tournaments.store import Store

BOTS = tuple(example_bot("random", name=f"random-{i}") for i in range(1, 5))


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


class _TimedStore:
    """The store, with the time spent in ``record_session`` (on the event loop) added up."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.seconds = 0.0
        self.commits = 0

    def record_session(self, *args: Any, **kwargs: Any) -> int:  # noqa: ANN401 - passes through
        start = time.perf_counter()
        try:
            return self._store.record_session(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start
            self.commits += 1

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401 - everything else passes through
        return getattr(self._store, name)


def over_grpc(  # noqa: PLR0913 - the options
    sessions: int,
    *,
    seed: int,
    concurrency: int,
    ask_forced: bool,
    profile: bool,
    store_dir: str | None,
    workers: int,
) -> None:
    config = TournamentConfig(
        name="bench",
        bots=BOTS,
        table_size=4,
        sessions=sessions,
        seed=seed,
        concurrency=concurrency,
        ask_forced=ask_forced,
        time_limits=TimeLimits(decision_ms=5000),
        workers=workers,
    )
    with tempfile.TemporaryDirectory(prefix="nap-bench-", dir=store_dir) as folder:
        root = Path(folder)
        with Store.open(root / "nap.db") as raw_store:
            store = _TimedStore(raw_store)
            profiler = cProfile.Profile() if profile else None
            referee_cpu, bots_cpu = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            with Progress(disable=True) as progress:
                if profiler is not None:
                    profiler.enable()
                tournament = run_tournament(
                    config,
                    store=cast("Store", store),
                    logs_root=root / "logs",
                    options=RunOptions(progress=progress),
                )
                if profiler is not None:
                    profiler.disable()
            total = time.perf_counter() - start
            referee_cpu = _cpu(resource.RUSAGE_SELF) - referee_cpu
            bots_cpu = _cpu(resource.RUSAGE_CHILDREN) - bots_cpu
            rows = raw_store.find_sessions(tournament=tournament)
            results = raw_store.session_results(tournament)
        stamps = sorted(datetime.fromisoformat(row.finished_at) for row in rows)
        playing = (stamps[-1] - stamps[0]).total_seconds()
        decisions = asked = 0
        for row in rows:
            deals = cast("list[list[dict[str, Any]]]", read_log(row.log_path)["decisions"])
            decisions += sum(len(deal) for deal in deals)
            asked += sum(1 for deal in deals for d in deal if not d.get("forced"))
    faults = sum(len(r.faults) for r in results)
    n = len(rows)
    mode = "asked" if ask_forced else "played by the referee, not asked"
    print(
        f"over gRPC, forced moves {mode}: {n:,} sessions, {decisions:,} decisions "
        f"({asked:,} asked), concurrency {concurrency}, {workers} worker(s), {faults} faults"
    )
    print(
        f"  whole run (bots start, play, stop): {total:6.1f} s  {n / total:8.1f} sessions/s  "
        f"{decisions / total:10,.0f} decisions/s"
    )
    if playing > 0:
        print(
            f"  first to last commit:               {playing:6.1f} s  {(n - 1) / playing:8.1f} "
            f"sessions/s  {decisions * (n - 1) / n / playing:10,.0f} decisions/s"
        )
    here, children = (
        ("referee", "four bot processes")
        if workers == 1
        else ("runner (store, progress)", "workers (referees) and their bot processes")
    )
    print(
        f"  CPU per asked decision: {here} {referee_cpu / asked * 1e6:.1f} us, {children} "
        f"{bots_cpu / asked * 1e6:.1f} us (with their start-up); per session "
        f"{(referee_cpu + bots_cpu) / n * 1e3:.1f} ms"
    )
    print(
        f"  store commits on the event loop: {store.seconds:.1f} s "
        f"({store.seconds / max(1, store.commits) * 1e3:.2f} ms each)"
    )
    if profiler is not None:
        _print_profile(profiler)


def _print_profile(profiler: cProfile.Profile) -> None:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    areas: dict[str, float] = defaultdict(float)
    raw = cast("dict[tuple[str, int, str], tuple[int, int, float, float, Any]]", stats.stats)  # type: ignore[attr-defined]
    for (filename, _, function), (_, _, own, _, _) in raw.items():
        areas[_area(filename, function)] += own
    whole = sum(areas.values()) or 1.0
    print("\nreferee process, where the time goes (own time under cProfile, which inflates Python calls):")
    for area, seconds in sorted(areas.items(), key=lambda item: -item[1]):
        print(f"  {area:<52} {seconds:7.2f} s  {seconds / whole:6.1%}")
    stats.sort_stats("tottime").print_stats(25)
    print("\nreferee process, top 25 functions by own time:")
    print(out.getvalue())


_AREAS = (
    ("referee/server/service.py", "gRPC stream reads and writes (service.py, in grpc.aio)"),
    ("referee/server/", "referee tables and links (referee/server)"),
    ("referee/wire/", "encoding requests (referee/wire)"),
    ("referee/rules/", "rules engine: views, actions, deals (referee/rules)"),
    ("tournaments/", "runner: results, logs, store (tournaments)"),
    ("grpc", "grpc.aio internals"),
    ("asyncio", "event loop (asyncio)"),
    ("selectors", "event loop (asyncio)"),
    ("sqlite3", "SQLite commits"),
    ("random.py", "rules engine: shuffles (random)"),
    ("<string>", "dataclass constructors (Decision, SeatView, ...)"),
    ("~", "built-in calls (dict, bytes, list, protobuf) from the above"),
)


def _area(filename: str, function: str) -> str:
    where = f"{filename} {function}"
    for needle, area in _AREAS:
        if needle in where:
            return area
    return "other"


def in_process(sessions: int, *, seed: int) -> None:
    factories = {bot.name: bot.make_bot() for bot in BOTS}
    blocks = schedule([bot.name for bot in BOTS], table_size=4, sessions=sessions, seed=seed)
    profile = DEFAULT_PROFILE
    start = time.perf_counter()
    n = decisions = 0
    for block in blocks:
        spec = BlockRun(
            tournament=1,
            index=block.index,
            board_seed=block.board_seed,
            bots=block.bots,
            profile=profile,
            time_limits=TimeLimits(),
            rotations=tuple(block.rotations),
        )
        for finished in play_block_in_process(spec, factories):
            n += 1
            decisions += sum(len(deal) for deal in finished.log["decisions"])
    elapsed = time.perf_counter() - start
    print(
        f"in-process (same bots and blocks, no gRPC, no store): {n:,} sessions in "
        f"{elapsed:.1f} s  {n / elapsed:8.1f} sessions/s  {decisions / elapsed:10,.0f} "
        "decisions/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY, help="blocks in flight")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--forced",
        choices=("skip", "ask", "both"),
        default="both",
        help="forced moves: played by the referee (skip), asked, or both runs",
    )
    parser.add_argument(
        "--store-dir", default=None, help="folder for the store and logs (default: the system's temp)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=default_workers(),
        help="worker processes, each a referee with its own bots (default: one per core)",
    )
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the referee (played in this process: one worker)"
    )
    parser.add_argument("--skip-in-process", action="store_true")
    args = parser.parse_args()
    for ask_forced in {"skip": (False,), "ask": (True,), "both": (False, True)}[args.forced]:
        over_grpc(
            args.sessions,
            seed=args.seed,
            concurrency=args.concurrency,
            ask_forced=ask_forced,
            profile=args.profile,
            store_dir=args.store_dir,
            workers=1 if args.profile else args.workers,
        )
    if not args.skip_in_process:
        in_process(args.sessions, seed=args.seed)


if __name__ == "__main__":
    main()
