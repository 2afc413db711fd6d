"""Fair timing under load: many tables at once, bots that use a set share of their clock.

    .venv/bin/python bench/load.py [--sessions 3000] [--workers 2] [--concurrency 500]
    .venv/bin/python bench/load.py --referee-only [--tables 1000] [--seconds 60] [--sdk]

By default it measures what a tournament does: a real ``nap tournament run`` (``-k 3 -w 2
-j 500 --decision-ms 1000 -n 3000``: eight-deal sessions, two workers, 500 blocks in
flight on each, so 1,000 tables at once), isolation as ``--sandbox`` says, between three
Python SDK bots whose ``async def decide`` sleeps, for each decision, a time between the
two ``--share`` fractions of the decision's limit (a bot holds many decisions at once).
The time a decision takes is a function of where its table stands (the table's id, the
deal, the actions so far), so this process knows the bot's own share of every latency
the session logs record. It reads them from the tournament's database afterwards, and
times every garbage-collection pass of the tournament's own processes (the runner and its
workers) through a ``sitecustomize`` on their ``PYTHONPATH``.

``--referee-only`` is the older, narrower bench: the referee in this process, four bot
processes (raw gRPC, or ``--sdk``), sessions of one deal; no workers, no store, no
isolation. It shows the referee's part alone.

Prints the late faults (with bots well inside their clocks, every one is the harness's
doing), the latency the harness added to the bots' own time (the measured latency minus
the bot's chosen time: p50, p99, max), the longest garbage-collection pause (on the
clock, and in the pass's own CPU: on two cores the clock also counts waiting for one;
a process's last passes after ``atexit`` hold no table and are not counted) and the CPU
the run took. Not a test: figures depend on the machine.

What it did not see, once: isolated bots (the default, ``--sandbox auto``) do not get
this process's environment, so their garbage-collection passes went untimed and their
CPU uncounted, and a run that reported no late fault here had hundreds in the same
tournament played by hand: the bots' own pauses (their collector's, up to 232 ms, and
the wait for a core beside a thousand tables) were charged to them on the wall clock.
Now each bot times its own passes and prints them to its log as it ends (the bench reads
them there, sandbox or not), the referee records each decision's CPU (the bots' CPU per
decision is printed from the standings), and the late faults are split by clock: a
sleeping bot spends next to no CPU, so on the CPU clock only the wall-clock backstop
could make it late, and every late fault left is the harness's or the machine's.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import dataclasses
import gc
import itertools
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any

from referee.match import FaultKind, SessionOutcome, SessionSpec, TimeLimits
from referee.rules import DEFAULT_PROFILE
from referee.server import Referee, ServerLimits, tune_collector

REPO = Path(__file__).resolve().parent.parent
BOTS = 4
PROFILE = dataclasses.replace(DEFAULT_PROFILE, name="heather-one-deal", deals_per_session=1)
"""Sessions of one deal: many sessions end and start during a run, as in a tournament."""


def think_ms(  # noqa: PLR0913 - where the table stands, and the share of the clock, as keywords
    table: str, deal: int, actions: int, *, low: float, high: float, decision_ms: int
) -> float:
    """The time a bot takes for the decision at this point of a table (the bench recomputes it)."""
    fraction = zlib.crc32(f"{table}/{deal}/{actions}".encode()) / 0xFFFFFFFF
    return (low + (high - low) * fraction) * decision_ms


# -- the bot -------------------------------------------------------------------------------


async def bot(address: str, token: str, low: float, high: float, decision_ms: int) -> None:
    """Answer every request with a legal action after the chosen share of the clock."""
    import grpc  # type: ignore[import-untyped]  # noqa: PLC0415 - only the bot processes need it

    from referee.wire import nap_pb2  # noqa: PLC0415

    channel = grpc.aio.insecure_channel(address)
    call = channel.stream_stream(
        "/nap.v1.Referee/Play", request_serializer=bytes, response_deserializer=None
    )()
    hello = nap_pb2.BotMessage()
    hello.hello.token = token
    hello.hello.protocol_version = 1
    hello.hello.max_batch = 256
    await call.write(hello.SerializeToString())
    loop = asyncio.get_running_loop()
    ready: list[tuple[int, str]] = []
    wake = asyncio.Event()

    async def writer() -> None:
        """One writer for the stream (gRPC takes one write at a time): what is ready, each ms."""
        while True:
            await wake.wait()
            await asyncio.sleep(0.001)  # answers due in the same millisecond go together
            wake.clear()
            message = nap_pb2.BotMessage()
            for request_id, action in ready:
                message.answers.answers.add(request_id=request_id, action=action)
            ready.clear()
            await call.write(message.SerializeToString())

    def answer(request_id: int, action: str) -> None:
        ready.append((request_id, action))
        wake.set()

    writing = loop.create_task(writer())
    while (data := await call.read()) is not grpc.aio.EOF:
        message = nap_pb2.RefereeMessage.FromString(data)
        for request in message.batch.requests:
            view = request.view
            actions = len(view.bids) + sum(len(t.cards) for t in view.completed_tricks)
            actions += len(view.current_trick.cards)
            delay = think_ms(
                request.table, view.deal_number, actions, low=low, high=high, decision_ms=decision_ms
            )
            legal = request.legal_actions
            choice = legal[zlib.crc32(f"{request.table}/{actions}".encode()) % len(legal)]
            loop.call_later(delay / 1000, answer, request.request_id, choice)
    writing.cancel()


BOT_GC = "bench-gc: "
"""Starts the line in which an SDK bot prints its garbage-collection passes as it ends (its log)."""


def time_own_collections() -> None:
    """Time this process's collector passes and print them to stdout as it ends (a bot's log)."""
    began = [0.0, 0.0]
    seen = {"passes": 0, "longest": 0.0, "longest_cpu": 0.0, "over_100_ms": 0}

    def timed(phase: str, info: dict[str, int]) -> None:
        del info
        if phase == "start":
            began[:] = time.perf_counter(), time.thread_time()
            return
        ms, cpu_ms = (time.perf_counter() - began[0]) * 1000, (time.thread_time() - began[1]) * 1000
        seen["passes"] += 1
        seen["longest"] = max(seen["longest"], ms)
        seen["longest_cpu"] = max(seen["longest_cpu"], cpu_ms)
        seen["over_100_ms"] += ms > 100

    def report() -> None:
        print(BOT_GC + json.dumps(seen), flush=True)

    gc.callbacks.append(timed)
    atexit.register(report)


def sdk_bot(address: str, token: str, low: float, high: float, decision_ms: int) -> None:
    """The same bot on the Python SDK: an ``async def decide`` that sleeps its share."""
    from clients.sdk import Bot, Options, run  # noqa: PLC0415 - only the bot processes need it
    from referee.rules import SeatView  # noqa: PLC0415

    time_own_collections()

    class Sleeper(Bot):
        async def decide(self, view: SeatView) -> object:  # type: ignore[override]
            actions = len(view.bids) + sum(len(t.plays) for t in view.tricks) + len(view.trick)
            delay = think_ms(
                self.table, view.deal_number, actions, low=low, high=high, decision_ms=decision_ms
            )
            await asyncio.sleep(delay / 1000)
            legal = view.legal_actions
            return legal[zlib.crc32(f"{self.table}/{actions}".encode()) % len(legal)]

    if address == "-":  # started by a tournament: the referee's address and token are in the environment
        run(Sleeper, name="sleeper", argv=[])
    run(Sleeper, name="sleeper", options=Options(address=address, token=token, name="sleeper", max_batch=256))


# -- the referee ---------------------------------------------------------------------------


@dataclasses.dataclass
class Tally:
    """What the run measured."""

    decisions: int = 0
    sessions: int = 0
    late: int = 0
    late_by: dict[str, int] = dataclasses.field(default_factory=dict)
    """The late faults by how they were late: on the wall clock, on a bot's CPU, on the backstop."""
    other_faults: int = 0
    added_ms: list[float] = dataclasses.field(default_factory=list)
    gc_pause_ms: float = 0.0
    bot_cpu: dict[str, float] = dataclasses.field(default_factory=dict)
    """Each bot's CPU per decision on the CPU clock (ms), from the store."""
    loop_lag_ms: list[float] = dataclasses.field(default_factory=list)
    """How late the referee's event loop woke a 10 ms sleeper, each time (its own delays)."""

    def count(self, outcome: SessionOutcome, spec: SessionSpec, low: float, high: float) -> None:
        self.sessions += 1
        self.late += sum(1 for fault in outcome.faults if fault.kind is FaultKind.LATE)
        self.other_faults += sum(1 for fault in outcome.faults if fault.kind is not FaultKind.LATE)
        limit = spec.time_limits.decision_ms
        for deal_number, deal in enumerate(outcome.decisions):
            for index, decision in enumerate(deal):
                self.decisions += 1
                if decision.fault is None:
                    own = think_ms(spec.table, deal_number, index, low=low, high=high, decision_ms=limit)
                    self.added_ms.append(decision.latency_ms - own)


async def referee_only(args: argparse.Namespace) -> Tally:  # noqa: C901 - one run, start to end
    low, high = args.share
    referee = Referee(limits=ServerLimits(fault_limit=0))
    names = [f"bot{i}" for i in range(BOTS)]
    for name in names:
        referee.add_bot(name=name, token=f"t-{name}")
    port = await referee.start()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, __file__, "--as-bot", f"127.0.0.1:{port}", "--share", str(low), str(high)]
    if args.sdk:
        command.append("--sdk")
    processes = [
        await asyncio.create_subprocess_exec(
            *command, "--token", f"t-{name}", "--decision-ms", str(args.decision_ms), env=env
        )
        for name in names
    ]
    tally = Tally()
    started_gc: list[float] = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started_gc[0] = time.perf_counter()
        elif info.get("generation") == 2:
            tally.gc_pause_ms = max(tally.gc_pause_ms, (time.perf_counter() - started_gc[0]) * 1000)

    gc.callbacks.append(on_gc)
    try:
        for name in names:
            await referee.wait_for_bot(name, timeout=30)
        counter = itertools.count()
        deadline = time.perf_counter() + args.seconds

        async def lane() -> None:
            while time.perf_counter() < deadline:
                number = next(counter)
                spec = SessionSpec(
                    table=f"load-{number}",
                    profile=PROFILE,
                    seed=number,
                    seats=tuple(names),
                    time_limits=TimeLimits(decision_ms=args.decision_ms),
                )
                tally.count(await referee.play_session(spec), spec, low, high)

        async def watch_loop() -> None:
            while time.perf_counter() < deadline:
                before = time.perf_counter()
                await asyncio.sleep(0.01)
                tally.loop_lag_ms.append((time.perf_counter() - before) * 1000 - 10)

        await asyncio.gather(watch_loop(), *(lane() for _ in range(args.tables)))
    finally:
        gc.callbacks.remove(on_gc)
        for process in processes:
            process.terminate()
            await process.wait()
        await referee.stop(0.2)
    return tally


# -- a whole tournament --------------------------------------------------------------------

GC_TIMER = """\
# bench/load.py's timer of garbage-collection passes, in every process that sees it on its path
import atexit, gc, json, os, sys, time

_FOLDER = os.environ.get("NAP_BENCH_GC_DIR")
if _FOLDER:
    _began = [0.0, 0.0]  # the clock and the thread's CPU when a pass began
    _seen = {"passes": 0, "total_ms": 0.0, "over_20_ms": 0, "over_100_ms": 0, "cpu_over_100_ms": 0}
    _seen["longest"] = [0.0, 0.0, 0.0]  # per generation
    _seen["longest_cpu"] = [0.0, 0.0, 0.0]  # the same passes' own CPU: the rest is waiting for a core

    _ended = [False]

    def _write():
        path = os.path.join(_FOLDER, f"{os.getpid()}.json")
        with open(path + ".part", "w") as file:
            json.dump({**_seen, "argv": sys.argv}, file)
        os.replace(path + ".part", path)

    def _the_end():  # the interpreter's last passes, after this, hold no table: not counted
        _ended[0] = True
        _write()

    def _timed(phase, info):
        if _ended[0]:
            return
        if phase == "start":
            _began[:] = time.perf_counter(), time.thread_time()
            return
        ms = (time.perf_counter() - _began[0]) * 1000
        cpu_ms = (time.thread_time() - _began[1]) * 1000
        generation = info["generation"]
        _seen["passes"] += 1
        _seen["total_ms"] += ms
        _seen["longest"][generation] = max(_seen["longest"][generation], ms)
        _seen["longest_cpu"][generation] = max(_seen["longest_cpu"][generation], cpu_ms)
        _seen["over_20_ms"] += ms > 20
        _seen["over_100_ms"] += ms > 100
        _seen["cpu_over_100_ms"] += cpu_ms > 100
        if ms > 20:  # rare: written now, in case the process ends without atexit
            _write()

    gc.callbacks.append(_timed)
    atexit.register(_the_end)
"""


@dataclasses.dataclass
class Collections:
    """The garbage collector's passes in one kind of process (the runner, the workers)."""

    processes: int = 0
    passes: int = 0
    total_ms: float = 0.0
    over_20_ms: int = 0
    over_100_ms: int = 0
    cpu_over_100_ms: int = 0
    longest: list[float] = dataclasses.field(default_factory=lambda: [0.0, 0.0, 0.0])
    """The longest pass of each generation, on the clock."""
    longest_cpu: list[float] = dataclasses.field(default_factory=lambda: [0.0, 0.0, 0.0])
    """The longest pass of each generation, in the CPU of its thread: what the pass itself took,
    without the time its process waited for a core (on two cores, 20 processes wait)."""

    def add(self, seen: dict[str, Any]) -> None:
        self.processes += 1
        self.passes += int(seen["passes"])
        self.total_ms += seen["total_ms"]
        self.over_20_ms += int(seen["over_20_ms"])
        self.over_100_ms += int(seen["over_100_ms"])
        self.cpu_over_100_ms += int(seen["cpu_over_100_ms"])
        self.longest = [max(pair) for pair in zip(self.longest, seen["longest"], strict=True)]
        self.longest_cpu = [max(pair) for pair in zip(self.longest_cpu, seen["longest_cpu"], strict=True)]


def sleeper_folder(root: Path, name: str, args: argparse.Namespace) -> Path:
    """A bot folder whose bot is this file's SDK sleeper, started as a tournament starts bots."""
    folder = root / name
    folder.mkdir()
    shutil.copy(__file__, folder / "bot.py")
    low, high = args.share
    command = ["{python}", "bot.py", "--as-bot", "-", "--sdk", "--share", str(low), str(high)]
    command += ["--decision-ms", str(args.decision_ms)]
    (folder / "nap-bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\ncommand = [{", ".join(json.dumps(part) for part in command)}]\n',
        encoding="utf-8",
    )
    return folder


def read_logs(db: Path, args: argparse.Namespace) -> Tally:
    """The late faults and the latency the harness added, from every session log of the run."""
    from tournaments.plan.scheduler import derive_seed  # noqa: PLC0415
    from tournaments.store.logs import decode_log  # noqa: PLC0415

    low, high = args.share
    tally = Tally()
    with sqlite3.connect(db) as conn:
        for (data,) in conn.execute("SELECT data FROM session_logs"):
            log: dict[str, Any] = decode_log(data, name="session log")
            tally.sessions += 1
            table = f"{derive_seed(log['board_seed'], 'table', log['rotation']):016x}"
            for deal_number, deal in enumerate(log["decisions"]):
                for index, decision in enumerate(deal):
                    if decision.get("forced"):
                        continue
                    tally.decisions += 1
                    if "fault" in decision:
                        continue
                    own = think_ms(
                        table, deal_number, index, low=low, high=high, decision_ms=args.decision_ms
                    )
                    tally.added_ms.append(decision["latency_ms"] - own)
        for kind, detail in conn.execute("SELECT kind, detail FROM faults"):
            if kind == FaultKind.LATE:
                tally.late += 1
                how = "backstop" if "backstop" in detail else "CPU" if "of its CPU" in detail else "wall"
                tally.late_by[how] = tally.late_by.get(how, 0) + 1
            else:
                tally.other_faults += 1
        tally.bot_cpu = {
            bot: cpu_us / clocked / 1000
            for bot, cpu_us, clocked in conn.execute("SELECT bot, cpu_us, clocked FROM bot_totals")
            if clocked
        }
    return tally


def tournament(args: argparse.Namespace) -> tuple[Tally, dict[str, Collections], float, float]:
    """Play the tournament through ``nap tournament run``; its tally, collections, seconds and CPU seconds."""
    with tempfile.TemporaryDirectory(prefix="nap-load-") as temporary:
        root = Path(temporary)
        timer, passes = root / "gc-timer", root / "gc"
        timer.mkdir()
        passes.mkdir()
        (timer / "sitecustomize.py").write_text(GC_TIMER, encoding="utf-8")
        bots = [sleeper_folder(root, f"sleeper-{n}", args) for n in range(1, 4)]
        command = [sys.executable, "-m", "tournaments.cli", "tournament", "run"]
        for folder in bots:
            command += ["--bot", str(folder)]
        command += ["-k", "3", "-w", str(args.workers), "-j", str(args.concurrency), "-n", str(args.sessions)]
        command += ["--decision-ms", str(args.decision_ms), "--sandbox", args.sandbox, "--seed", "1"]
        command += ["--db", str(root / "nap.db"), "--out", str(root / "out")]
        path = os.pathsep.join(filter(None, [str(timer), str(REPO), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path, "NAP_BENCH_GC_DIR": str(passes)}
        print("$ nap " + " ".join(command[3:]), flush=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        played = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=False)  # noqa: S603
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if played.returncode != 0:
            sys.exit(f"nap tournament run failed (exit {played.returncode})")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        collections: dict[str, Collections] = defaultdict(Collections)
        for report in passes.glob("*.json"):
            seen = json.loads(report.read_text(encoding="utf-8"))
            argv = " ".join(seen.pop("argv"))
            kind = "workers" if "executors" in argv else "runner" if "tournament" in argv else "bots"
            if kind != "bots":  # each bot times its own, and prints them to its log
                collections[kind].add(seen)
        for log in (root / "out" / "t1" / "bots").glob("*.log"):
            for line in log.read_text(errors="replace").splitlines():
                if line.startswith(BOT_GC):
                    seen = json.loads(line.removeprefix(BOT_GC))
                    longest, longest_cpu = seen.pop("longest"), seen.pop("longest_cpu")
                    seen |= {"total_ms": 0.0, "over_20_ms": 0, "cpu_over_100_ms": 0}
                    seen |= {"longest": [0.0, 0.0, longest], "longest_cpu": [0.0, 0.0, longest_cpu]}
                    collections["bots"].add(seen)
        return read_logs(root / "nap.db", args), collections, elapsed, cpu


def print_added(tally: Tally) -> None:
    added = sorted(tally.added_ms) or [0.0]
    print(
        f"  latency the harness added to the bots' own time: p50 {statistics.median(added):.1f} ms, "
        f"p99 {added[int(len(added) * 0.99)]:.1f} ms, max {added[-1]:.1f} ms (min {added[0]:.1f} ms)"
    )


def print_tournament(args: argparse.Namespace) -> None:
    tally, collections, elapsed, cpu = tournament(args)
    low, high = args.share
    tables = args.workers * args.concurrency
    print(
        f"{tables} tables at once ({args.workers} workers x {args.concurrency} blocks), "
        f"3 SDK bots thinking {low:.0%}-{high:.0%} of {args.decision_ms} ms, --sandbox {args.sandbox}: "
        f"{tally.sessions} sessions, {tally.decisions} asked decisions in {elapsed:.0f} s"
    )
    by = ", ".join(f"{how} {count}" for how, count in sorted(tally.late_by.items())) or "none"
    print(f"  late faults: {tally.late} ({by}; other faults: {tally.other_faults})")
    print_added(tally)
    per_bot = ", ".join(f"{bot} {ms:.2f} ms" for bot, ms in sorted(tally.bot_cpu.items()))
    print(f"  the bots' own CPU per decision (the referee's CPU clock, their cgroup or /proc): {per_bot}")
    if args.sandbox == "off":
        print(
            f"  CPU of every process of the run: {cpu:.0f} s, "
            f"{cpu / elapsed / (os.cpu_count() or 1):.0%} of the cores, "
            f"{cpu / max(tally.decisions, 1) * 1e6:.0f} us per asked decision"
        )
    else:  # a sandbox's processes are reaped inside it: their CPU does not all reach this process's children
        print(f"  CPU counted: {cpu:.0f} s (runner, workers, part of the isolated bots: see --sandbox off)")
    for kind in ("runner", "workers", "bots"):
        seen = collections.get(kind)
        if seen is None:
            print(f"  garbage collection, {kind}: no figures (the timer did not run there)")
            continue
        print(
            f"  garbage collection, {kind} ({seen.processes} processes): {seen.passes} passes, "
            f"{seen.total_ms / 1000:.1f} s, longest {max(seen.longest):.0f} ms, "
            f"{seen.over_20_ms} over 20 ms, {seen.over_100_ms} over 100 ms "
            f"(longest per generation: {', '.join(f'{ms:.0f}' for ms in seen.longest)} ms); "
            f"in the pass's own CPU: longest {max(seen.longest_cpu):.0f} ms, "
            f"{seen.cpu_over_100_ms} over 100 ms "
            f"(per generation: {', '.join(f'{ms:.0f}' for ms in seen.longest_cpu)} ms)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", "-n", type=int, default=3000, help="sessions of the tournament")
    parser.add_argument("--workers", "-w", type=int, default=2, help="the tournament's worker processes")
    parser.add_argument("--concurrency", "-j", type=int, default=500, help="blocks in flight per worker")
    parser.add_argument("--sandbox", choices=("auto", "on", "off"), default="auto", help="isolate the bots")
    parser.add_argument("--share", type=float, nargs=2, default=(0.3, 0.6), metavar=("LOW", "HIGH"))
    parser.add_argument("--decision-ms", type=int, default=1000)
    parser.add_argument(
        "--referee-only", action="store_true", help="the referee in this process, no tournament"
    )
    parser.add_argument("--tables", type=int, default=1000, help="with --referee-only: tables at once")
    parser.add_argument("--seconds", type=float, default=60.0, help="with --referee-only: how long")
    parser.add_argument(
        "--sdk", action="store_true", help="with --referee-only: SDK bots instead of raw gRPC"
    )
    parser.add_argument("--as-bot", metavar="ADDRESS", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.as_bot:
        low, high = args.share
        if args.sdk:
            sdk_bot(args.as_bot, args.token, low, high, args.decision_ms)
        asyncio.run(bot(args.as_bot, args.token, low, high, args.decision_ms))
        return
    if not args.referee_only:
        print_tournament(args)
        return
    import logging  # noqa: PLC0415

    import structlog  # noqa: PLC0415 - quiet the per-session log lines for the benchmark

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    tune_collector()
    started = time.perf_counter()
    tally = asyncio.run(referee_only(args))
    elapsed = time.perf_counter() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    low, high = args.share
    print(
        f"{args.tables} tables at once, {'SDK' if args.sdk else 'raw gRPC'} bots thinking "
        f"{low:.0%}-{high:.0%} of {args.decision_ms} ms: "
        f"{tally.sessions} sessions, {tally.decisions} decisions in {elapsed:.0f} s"
    )
    print(f"  late faults: {tally.late} (other faults: {tally.other_faults})")
    print_added(tally)
    lag = sorted(tally.loop_lag_ms) or [0.0]
    print(
        f"  referee: peak memory {peak_mib:.0f} MiB, "
        f"longest full garbage collection {tally.gc_pause_ms:.0f} ms, "
        f"event loop lag p99 {lag[int(len(lag) * 0.99)]:.1f} ms, max {lag[-1]:.1f} ms"
    )


if __name__ == "__main__":
    main()
