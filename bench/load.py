"""Fair timing under load: many tables at once, bots that use a set share of their clock.

    .venv/bin/python bench/load.py [--tables 1000] [--seconds 60] [--share 0.3 0.6] [--sdk]

Starts the referee in this process and four bot processes (this file, run with
``--as-bot``), keeps ``--tables`` 4-seat sessions of one deal each running at once for
about ``--seconds``, and has every bot take, for each decision, a time between the two
``--share`` fractions of the decision's limit before answering (asynchronously: a bot
holds many decisions at once). The bots speak raw gRPC, so that the figures are the
referee's; with ``--sdk`` they are Python SDK bots whose ``async def decide`` sleeps, so
that the SDK's share of the harness is in them too. The time a decision takes is a function of where its
table stands, so this process knows the bot's own share of every latency it measured.

Prints the late faults (with bots well inside their clocks, every one is the harness's
doing), the latency the harness added to the bots' own time (the referee's measured
latency minus the bot's chosen time: p50, p99, max), the referee's peak memory and its
longest garbage-collection pause. Not a test: figures depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import itertools
import os
import resource
import statistics
import sys
import time
import zlib
from pathlib import Path

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


def sdk_bot(address: str, token: str, low: float, high: float, decision_ms: int) -> None:
    """The same bot on the Python SDK: an ``async def decide`` that sleeps its share."""
    from clients.sdk import Bot, Options, run  # noqa: PLC0415 - only the bot processes need it
    from referee.rules import SeatView  # noqa: PLC0415

    class Sleeper(Bot):
        async def decide(self, view: SeatView) -> object:  # type: ignore[override]
            actions = len(view.bids) + sum(len(t.plays) for t in view.tricks) + len(view.trick)
            delay = think_ms(
                self.table, view.deal_number, actions, low=low, high=high, decision_ms=decision_ms
            )
            await asyncio.sleep(delay / 1000)
            legal = view.legal_actions
            return legal[zlib.crc32(f"{self.table}/{actions}".encode()) % len(legal)]

    run(Sleeper, name="sleeper", options=Options(address=address, token=token, name="sleeper", max_batch=256))


# -- the referee ---------------------------------------------------------------------------


@dataclasses.dataclass
class Tally:
    """What the run measured."""

    decisions: int = 0
    sessions: int = 0
    late: int = 0
    other_faults: int = 0
    added_ms: list[float] = dataclasses.field(default_factory=list)
    gc_pause_ms: float = 0.0
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


async def run(args: argparse.Namespace) -> Tally:  # noqa: C901 - one run, start to end
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--share", type=float, nargs=2, default=(0.3, 0.6), metavar=("LOW", "HIGH"))
    parser.add_argument("--decision-ms", type=int, default=1000)
    parser.add_argument("--sdk", action="store_true", help="bots on the Python SDK instead of raw gRPC")
    parser.add_argument("--as-bot", metavar="ADDRESS", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.as_bot:
        low, high = args.share
        if args.sdk:
            sdk_bot(args.as_bot, args.token, low, high, args.decision_ms)
        asyncio.run(bot(args.as_bot, args.token, low, high, args.decision_ms))
        return
    import logging  # noqa: PLC0415

    import structlog  # noqa: PLC0415 - quiet the per-session log lines for the benchmark

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    tune_collector()
    started = time.perf_counter()
    tally = asyncio.run(run(args))
    elapsed = time.perf_counter() - started
    added = sorted(tally.added_ms) or [0.0]
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    low, high = args.share
    print(
        f"{args.tables} tables at once, {'SDK' if args.sdk else 'raw gRPC'} bots thinking "
        f"{low:.0%}-{high:.0%} of {args.decision_ms} ms: "
        f"{tally.sessions} sessions, {tally.decisions} decisions in {elapsed:.0f} s"
    )
    print(f"  late faults: {tally.late} (other faults: {tally.other_faults})")
    print(
        f"  latency the harness added to the bots' own time: p50 {statistics.median(added):.1f} ms, "
        f"p99 {added[int(len(added) * 0.99)]:.1f} ms, max {added[-1]:.1f} ms"
    )
    lag = sorted(tally.loop_lag_ms) or [0.0]
    print(
        f"  referee: peak memory {peak_mib:.0f} MiB, "
        f"longest full garbage collection {tally.gc_pause_ms:.0f} ms, "
        f"event loop lag p99 {lag[int(len(lag) * 0.99)]:.1f} ms, max {lag[-1]:.1f} ms"
    )


if __name__ == "__main__":
    main()
