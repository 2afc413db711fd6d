"""Benchmark of whole tournaments: four random bots at 4-seat tables, over gRPC.

Runs a real tournament (worker processes, one per core by default, each a referee on a
Unix-domain socket with its own process per bot and rotation, 16 in all; a SQLite store,
logs included, in a temporary folder) and prints sessions/s, decisions/s and the CPU time
per decision of the runner and of the workers with their bots (with ``--workers 1``: of the referee, in this
process, and of the bot processes), twice: with forced moves played by the referee
without asking (the tournament default) and with every decision asked. Then it plays
the same blocks with the same bots called in-process (no referee, no gRPC, no store)
for comparison. ``--profile`` plays with one worker, the referee in this process under
cProfile, and prints where its time goes. The target is 10,000 sessions in under 60 s
(~167 sessions/s).

    python bench/tournament.py [--sessions 2000] [--workers 2] [--concurrency 128] [--profile]
    python bench/tournament.py --sessions 10000 --forced skip --skip-in-process
    python bench/tournament.py --sessions 10000 --forced skip --skip-in-process --executor ray
    python bench/tournament.py --sessions 2000 --forced skip --skip-in-process --sandbox both

``--sandbox`` isolates the bots as ``nap tournament run --sandbox`` does (``auto`` by
default); ``both`` plays without isolation, then with it, to show what it costs.

``--executor ray`` plays the blocks on Ray workers (a local Ray instance started for the
run, or the cluster at ``--ray-address``; docs/scaling.md). With either executor the CPU
per session of every process of the run is read from /proc (a Ray worker is no child of
this process, so ``getrusage`` misses it): this process, the referees (workers), the bots
and Ray's own processes. With Ray, the driver's CPU per committed session follows, its
commits apart.

The store's commits (each with its session's log) are timed apart (SQLite in WAL mode with
``synchronous=NORMAL``: no fsync per commit); ``--store-dir /dev/shm`` puts the store on
tmpfs to take the disk out entirely.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import os
import pstats
import resource
import tempfile
import threading
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, cast

from rich.progress import Progress

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE
from referee.server import tune_collector
from tournaments.cli.progress import ConsoleObserver
from tournaments.plan.config import DEFAULT_CONCURRENCY, TournamentConfig
from tournaments.plan.entries import example_bot
from tournaments.plan.scheduler import schedule
from tournaments.play.blocks import BlockRun, play_block_in_process
from tournaments.play.executors.local import LocalExecutor
from tournaments.play.executors.ray import RayExecutor
from tournaments.play.runner import RunOptions, default_workers, run_tournament
from tournaments.store.database import Store
from tournaments.store.logs import decode_log

if TYPE_CHECKING:
    from tournaments.play.executors.base import Executor
    from tournaments.results import SessionResult

BOTS = tuple(example_bot("random", name=f"random-{i}") for i in range(1, 5))


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


class _TimedStore:
    """The store, with the time spent in ``record_session`` (on the event loop) and the log bytes added up."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.seconds = 0.0
        self.commits = 0
        self.log_bytes = 0
        self.first: float | None = None
        """When the first session was committed (``time.perf_counter``)."""

    def record_session(self, result: SessionResult, *, log: bytes) -> int:
        start = time.perf_counter()
        try:
            return self._store.record_session(result, log=log)
        finally:
            self.seconds += time.perf_counter() - start
            self.commits += 1
            self.log_bytes += len(log)
            if self.first is None:
                self.first = start

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401 - everything else passes through
        return getattr(self._store, name)


class _ProcessTree:
    """The CPU time of every process under this one (Ray's included), sampled from /proc.

    A Ray worker is the child of a raylet, not of this process, and is killed rather than
    reaped, so ``RUSAGE_CHILDREN`` misses it; this thread reads ``/proc/<pid>/stat`` of
    each descendant every ``every_s`` and keeps the last figure of each (a process that
    lives less than that is missed). Its own CPU is counted apart, to be taken off this
    process's.
    """

    _TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self, *, every_s: float = 0.5) -> None:
        self._every_s = every_s
        self._seen: dict[tuple[int, int], float] = {}
        self._kinds: dict[tuple[int, int], str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample_until_stopped, daemon=True)
        self.own_cpu = 0.0

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def cpu(self) -> float:
        """CPU seconds of the descendants seen so far (not this process)."""
        return sum(self._seen.values())

    def by_kind(self) -> dict[str, float]:
        """CPU seconds of the descendants by kind: ``bots``, ``referees`` (workers), ``ray`` (Ray's own)."""
        kinds: dict[str, float] = defaultdict(float)
        for key, cpu in self._seen.items():
            kinds[self._kinds[key]] += cpu
        return dict(kinds)

    def _sample_until_stopped(self) -> None:
        while True:
            start = time.thread_time()
            self._sample()
            self.own_cpu += time.thread_time() - start
            if self._stop.wait(self._every_s):
                self._sample()
                return

    def _sample(self) -> None:
        stats: dict[int, tuple[int, int, float]] = {}  # pid: ppid, start time, CPU seconds
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            cpu = (int(fields[11]) + int(fields[12])) / self._TICK
            stats[int(entry.name)] = (int(fields[1]), int(fields[19]), cpu)
        ours = {os.getpid()}
        grew = True
        while grew:
            found = {pid for pid, (ppid, _, _) in stats.items() if ppid in ours} - ours
            grew = bool(found)
            ours |= found
        for pid in ours - {os.getpid()}:
            _, started, cpu = stats[pid]
            self._seen[pid, started] = cpu
            if self._kinds.get((pid, started), "ray") == "ray":  # a Ray worker is idle until an actor's
                self._kinds[pid, started] = _kind(pid)


def _kind(pid: int) -> str:
    """``bots``, ``referees`` (a local or Ray worker) or ``ray`` (Ray's own processes, idle workers)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "ray"
    if "clients." in command:
        return "bots"
    if "tournaments.play.executors.workers" in command or command.startswith("ray::BlockWorker"):
        return "referees"
    return "ray"


def over_grpc(  # noqa: PLR0913 - the options
    sessions: int,
    *,
    seed: int,
    concurrency: int,
    ask_forced: bool,
    profile: bool,
    store_dir: str | None,
    workers: int,
    executor: Executor,
    sandbox: str,
) -> None:
    on_ray = isinstance(executor, RayExecutor)
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
        sandbox=sandbox,
    )
    with tempfile.TemporaryDirectory(prefix="nap-bench-", dir=store_dir) as folder:
        root = Path(folder)
        with Store.open(root / "nap.db") as raw_store:
            store = _TimedStore(raw_store)
            profiler = cProfile.Profile() if profile else None
            referee_cpu = _cpu(resource.RUSAGE_SELF)
            start = time.perf_counter()
            with Progress(disable=True) as progress, _ProcessTree() as tree:
                if profiler is not None:
                    profiler.enable()
                tournament = run_tournament(
                    config,
                    store=cast("Store", store),
                    logs_root=root / "logs",
                    options=RunOptions(observers=(ConsoleObserver(progress),), executor=executor),
                )
                if profiler is not None:
                    profiler.disable()
            total = time.perf_counter() - start
            to_first = (store.first or start) - start
            referee_cpu = _cpu(resource.RUSAGE_SELF) - referee_cpu - tree.own_cpu
            # from /proc: an isolated bot is reaped inside its sandbox, so RUSAGE_CHILDREN misses it
            bots_cpu = tree.cpu
            rows = raw_store.find_sessions(tournament=tournament)
            results = raw_store.session_results(tournament)
            decisions = asked = 0
            for row in rows:
                log = decode_log(raw_store.log(row.id), name=f"session {row.id}")
                deals = cast("list[list[dict[str, Any]]]", log["decisions"])
                decisions += sum(len(deal) for deal in deals)
                asked += sum(1 for deal in deals for d in deal if not d.get("forced"))
        stamps = sorted(datetime.fromisoformat(row.finished_at) for row in rows)
        playing = (stamps[-1] - stamps[0]).total_seconds()
    faults = sum(len(r.faults) for r in results)
    n = len(rows)
    mode = "asked" if ask_forced else "played by the referee, not asked"
    print(
        f"over gRPC, forced moves {mode}: {n:,} sessions, {decisions:,} decisions "
        f"({asked:,} asked), concurrency {concurrency}, {workers} {executor.name} worker(s), "
        f"--sandbox {sandbox}, {faults} faults"
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
    print(f"  start to first commit (start-up):   {to_first:6.1f} s")
    _print_tree(n, here=referee_cpu, tree=tree)
    if on_ray:
        _print_driver(n, driver_cpu=referee_cpu, store=store)
        return
    here, children = (
        ("referee", "bot processes")
        if workers == 1
        else ("runner (store, progress)", "workers (referees) and their bot processes")
    )
    print(
        f"  CPU per asked decision: {here} {referee_cpu / asked * 1e6:.1f} us, {children} "
        f"{bots_cpu / asked * 1e6:.1f} us (with their start-up); per session "
        f"{(referee_cpu + bots_cpu) / n * 1e3:.1f} ms"
    )
    print(
        f"  store commits on the event loop (log included): {store.seconds:.1f} s "
        f"({store.seconds / max(1, store.commits) * 1e3:.2f} ms each, "
        f"{store.log_bytes / max(1, store.commits):,.0f} bytes of log)"
    )
    if profiler is not None:
        _print_profile(profiler)


def _print_tree(n: int, *, here: float, tree: _ProcessTree) -> None:
    kinds = ", ".join(f"{kind} {cpu / n * 1e3:.1f} ms" for kind, cpu in sorted(tree.by_kind().items()))
    print(
        f"  CPU per session, every process of the run (/proc, sampled): "
        f"{(here + tree.cpu) / n * 1e3:.1f} ms: this process {here / n * 1e3:.1f} ms, {kinds}"
    )


def _print_driver(n: int, *, driver_cpu: float, store: _TimedStore) -> None:
    """The Ray driver's cost per committed session: what bounds a cluster's rate."""
    per_session = driver_cpu / n * 1e3
    committing = store.seconds / n * 1e3
    print(
        f"  Ray driver CPU per committed session: {per_session:.2f} ms (all of it: Ray's receiving, "
        f"progress, ...), of which store commit (log included) {committing:.2f} ms wall; "
        f"at most {1e3 / per_session:,.0f} sessions/s on one driver core"
    )


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
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="who plays the blocks: worker processes here, or Ray workers (needs nap-arena[ray])",
    )
    parser.add_argument(
        "--ray-address", default=None, help="with --executor ray: the cluster to join (default: a local one)"
    )
    parser.add_argument(
        "--sandbox",
        choices=("auto", "on", "off", "both"),
        default="auto",
        help="isolate the bots (as nap tournament run --sandbox); both: off, then on",
    )
    args = parser.parse_args()
    tune_collector()  # as nap tournament run does: with one worker the referee plays in this process
    executor: Executor = (
        LocalExecutor() if args.executor == "local" else RayExecutor(address=args.ray_address)
    )
    sandboxes = ("off", "on") if args.sandbox == "both" else (args.sandbox,)
    for ask_forced, sandbox in itertools.product(
        {"skip": (False,), "ask": (True,), "both": (False, True)}[args.forced], sandboxes
    ):
        over_grpc(
            args.sessions,
            seed=args.seed,
            concurrency=args.concurrency,
            ask_forced=ask_forced,
            profile=args.profile,
            store_dir=args.store_dir,
            workers=1 if args.profile else args.workers,
            executor=executor,
            sandbox=sandbox,
        )
    if not args.skip_in_process:
        in_process(args.sessions, seed=args.seed)


if __name__ == "__main__":
    main()
