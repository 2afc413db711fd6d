"""Referee throughput: decisions per second and per-decision latency with real bot processes.

    .venv/bin/python bench/server.py [--tables 64] [--seconds 8] [--bots 4] [--clock cpu]

Starts the referee in this process and four random-bot processes (tests/bots/random_bot.py,
raw gRPC), then keeps ``--tables`` 4-seat sessions running at once for about ``--seconds``,
twice: with the bots declaring max_batch 64 (batched) and max_batch 1 (one at a time).
Prints decisions/s, the referee-measured latency (request sent -> answer received)
p50/p99, and the CPU time per decision of the referee (this process) and of the bot
processes together. Every decision is asked (forced moves too), as raw gRPC would.
With ``--clock cpu`` each bot process is clocked in its CPU, as a tournament's local bots
are: it runs in a cgroup of its own where one can be made (else its CPU is read from
``/proc``), and the referee reads its CPU as requests leave and answers come. ``--batches``
picks the runs (``64,1`` by default). Not a test: figures depend on the machine (and on
what else runs on it).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import itertools
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from referee.rules import DEFAULT_PROFILE
from referee.server import Referee, ServerLimits, SessionSpec, TimeLimits, tune_collector

REPO = Path(__file__).resolve().parent.parent


def _register(
    referee: Referee, names: list[str], pids: dict[str, int], *, cpu_clock: bool
) -> tuple[Any, list[Any]]:
    """Register the bots; on the CPU clock each gets a cgroup (where one can be made) and a meter.

    Imported here: the wall clock's run is the same on a Nap Arena from before the CPU clock.
    """
    if not cpu_clock:
        for name in names:
            referee.add_bot(name=name, token=f"t-{name}")
        return None, [None] * len(names)
    from tournaments.plan.isolation import BotLimits  # noqa: PLC0415
    from tournaments.play.containment import ProcessTreeCpu, host_cgroups  # noqa: PLC0415

    cgroups = host_cgroups()
    groups = [None if cgroups is None else cgroups.bot(name, BotLimits()) for name in names]
    for name, group in zip(names, groups, strict=True):
        meter = group.cpu_ms if group is not None else ProcessTreeCpu(functools.partial(pids.get, name))
        referee.add_bot(name=name, token=f"t-{name}", cpu=meter)
    return cgroups, groups


async def run(*, max_batch: int, tables: int, seconds: float, bots: int, cpu_clock: bool) -> None:
    referee = Referee(limits=ServerLimits(max_outstanding=64, fault_limit=0))
    names = [f"bot{i}" for i in range(bots)]
    pids: dict[str, int] = {}
    cgroups, groups = _register(referee, names, pids, cpu_clock=cpu_clock)
    port = await referee.start()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    processes = []
    for index, (name, group) in enumerate(zip(names, groups, strict=True)):
        argv = [
            sys.executable,
            str(REPO / "tests" / "bots" / "random_bot.py"),
            "--address",
            f"127.0.0.1:{port}",
            "--token",
            f"t-{name}",
            "--max-batch",
            str(max_batch),
            "--seed",
            str(index),
        ]
        process = await asyncio.create_subprocess_exec(
            *(argv if group is None else group.command(argv)), env=env
        )
        pids[name] = process.pid
        processes.append(process)
    try:
        for name in names:
            await referee.wait_for_bot(name, timeout=30)
        counter = itertools.count()
        latencies: list[float] = []
        decisions = 0
        faults = 0
        deadline = time.perf_counter() + seconds

        async def lane() -> None:
            nonlocal decisions, faults
            while time.perf_counter() < deadline:
                number = next(counter)
                spec = SessionSpec(
                    table=f"bench-{number}",
                    profile=DEFAULT_PROFILE,
                    seed=number,
                    seats=tuple(names[:4]),
                    time_limits=TimeLimits(decision_ms=10_000),
                )
                outcome = await referee.play_session(spec)
                faults += len(outcome.faults)
                for deal in outcome.decisions:
                    decisions += len(deal)
                    latencies.extend(d.latency_ms for d in deal)

        started = time.perf_counter()
        cpu = _cpu(resource.RUSAGE_SELF)
        await asyncio.gather(*(lane() for _ in range(tables)))
        elapsed = time.perf_counter() - started
        referee_cpu = _cpu(resource.RUSAGE_SELF) - cpu
        latencies.sort()
        p50 = statistics.median(latencies)
        p99 = latencies[int(len(latencies) * 0.99)]
        clock = "" if not cpu_clock else f", CPU clock ({'/proc' if cgroups is None else cgroups.kind})"
        print(
            f"max_batch {max_batch:>2}{clock}: {decisions / elapsed:>8.0f} decisions/s "
            f"({decisions} in {elapsed:.1f} s, {tables} tables at once, {bots} bot processes), "
            f"latency p50 {p50:.2f} ms, p99 {p99:.2f} ms, faults {faults}"
        )
    finally:
        before = _cpu(resource.RUSAGE_CHILDREN)
        for process in processes:
            process.terminate()
            await process.wait()
        await referee.stop(0.2)
        if cgroups is not None:
            cgroups.close()
    bots_cpu = _cpu(resource.RUSAGE_CHILDREN) - before
    print(
        f"             CPU per decision: referee {referee_cpu / decisions * 1e6:.1f} us, "
        f"bot processes {bots_cpu / decisions * 1e6:.1f} us (with their start-up)"
    )


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--bots", type=int, default=4)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="the bots' decision clock")
    parser.add_argument("--batches", default="64,1", help="the bots' max_batch in each run, in order")
    args = parser.parse_args()
    import logging  # noqa: PLC0415

    import structlog  # noqa: PLC0415 - quiet the per-session log lines for the benchmark

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    tune_collector()  # as every process that hosts a referee does
    for max_batch in (int(size) for size in args.batches.split(",")):
        asyncio.run(
            run(
                max_batch=max_batch,
                tables=args.tables,
                seconds=args.seconds,
                bots=args.bots,
                cpu_clock=args.clock == "cpu",
            )
        )


if __name__ == "__main__":
    main()
