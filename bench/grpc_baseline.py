"""Raw grpc.aio on this machine: what one stream per bot process moves with no referee and no SDK.

    .venv/bin/python bench/grpc_baseline.py [--seconds 5] [--clients 4] [--window 8]

A reference point for bench/server.py and bench/tournament.py. The server (this process)
registers ``nap.v1.Referee/Play`` as a raw bytes handler, as the referee does, and sends
every stream the same pre-built RefereeMessage: a Batch of copies of one real
DecisionRequest (heather, 4 seats, a seat to play mid-deal, encoded by
referee.wire.codec). ``--clients`` processes each open one stream, say Hello, then parse
every message (RefereeMessage) and answer each of its requests with its first legal action
(one BotMessage with an Answers per batch); the server parses every answer message and
counts the answers. Each stream keeps at most ``--window`` messages in flight.

Run twice: 1 request per message and 64 per message (``--batches`` to change). Prints
decisions/s and messages/s (answer messages received), and the CPU time per decision and
per message of the server and of the client processes (each client counts its own
CPU time from its connection to the end of its stream, so start-up is left out).
Not a test: figures depend on the machine (and on what else runs on it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import grpc  # type: ignore[import-untyped]  # grpcio ships no stubs
import grpc.aio  # type: ignore[import-untyped]

from referee.rules import DEFAULT_PROFILE, Phase, Session
from referee.wire import nap_pb2
from referee.wire.codec import request_to_proto
from referee.wire.fastcodec import batch_message

if TYPE_CHECKING:
    from collections.abc import Sequence

REPO = Path(__file__).resolve().parent.parent
METHOD = "/nap.v1.Referee/Play"
SERVICE = "nap.v1.Referee"


def sample_request() -> bytes:
    """A realistic DecisionRequest: heather, 4 seats, two tricks played, a seat to follow to the third."""
    session = Session(DEFAULT_PROFILE, table_size=4, seed=7)
    while True:  # the first bidder bids highest, the others pass; the play takes the last legal card
        seat = session.to_act
        assert seat is not None  # noqa: S101 - the first deal is not over yet
        view = session.view(seat)
        if view.phase is Phase.PLAY and len(view.tricks) == 2 and view.trick:
            break
        session.apply(view.legal_actions[-1])
    request = request_to_proto(
        view, table="bench-table-0001", request_id=123_456_789, deadline_ms=5000, time_bank_ms=0
    )
    return request.SerializeToString()


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ---------------------------------------------------------------------------- server


@dataclass
class Counts:
    """What the server received, and since when."""

    messages: int = 0
    """Answer messages (BotMessage) received."""
    decisions: int = 0
    """Answers in them."""
    streams: int = 0
    """Streams that said Hello."""
    stopping: bool = False
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when every client has said Hello."""


class BaselineServer:
    """Writes the pre-built batch to every stream while fewer than ``window`` are unanswered."""

    def __init__(self, payload: bytes, *, window: int, clients: int) -> None:
        self.payload = payload
        self.window = window
        self.clients = clients
        self.counts = Counts()

    def handler(self) -> grpc.GenericRpcHandler:
        """Play as a stream of bytes both ways, as the referee registers it."""
        play = grpc.stream_stream_rpc_method_handler(self.play)
        return grpc.method_handlers_generic_handler(SERVICE, {"Play": play})

    async def play(self, _requests: object, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        """One stream: Hello, then batches out (within the window) and answers in."""
        hello = nap_pb2.BotMessage.FromString(await context.read())
        if hello.WhichOneof("kind") != "hello":
            return
        counts = self.counts
        counts.streams += 1
        if counts.streams == self.clients:
            counts.ready.set()
        free = asyncio.Semaphore(self.window)
        reader = asyncio.create_task(self._read(context, free))
        while True:
            await free.acquire()
            if counts.stopping:
                free.release()
                break
            await context.write(self.payload)
        for _ in range(self.window):  # every permit back: every message in flight answered
            await asyncio.wait_for(free.acquire(), 10)
        reader.cancel()

    async def _read(self, context: grpc.aio.ServicerContext[bytes, bytes], free: asyncio.Semaphore) -> None:
        counts = self.counts
        parse = nap_pb2.BotMessage.FromString
        while True:
            data = await context.read()
            if data is grpc.aio.EOF:
                return
            answers = parse(data).answers.answers
            counts.messages += 1
            counts.decisions += len(answers)
            free.release()


async def measure(payload: bytes, *, batch: int, seconds: float, clients: int, window: int) -> None:
    """Serve ``clients`` client processes for ``seconds`` and print the figures."""
    baseline = BaselineServer(payload, window=window, clients=clients)
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((baseline.handler(),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--client", f"127.0.0.1:{port}", env=env, stdout=asyncio.subprocess.PIPE
        )
        for _ in range(clients)
    ]
    counts = baseline.counts
    await asyncio.wait_for(counts.ready.wait(), 60)
    cpu, started = _cpu(), time.perf_counter()
    messages, decisions = counts.messages, counts.decisions
    await asyncio.sleep(seconds)
    server_cpu, elapsed = _cpu() - cpu, time.perf_counter() - started
    messages, decisions = counts.messages - messages, counts.decisions - decisions
    counts.stopping = True
    reports = [json.loads((await process.communicate())[0]) for process in processes]
    await server.stop(1)
    client_cpu = sum(report["cpu"] for report in reports)
    client_decisions = sum(report["decisions"] for report in reports)
    client_messages = sum(report["messages"] for report in reports)
    print(
        f"{batch:>2} per message: {decisions / elapsed:>9,.0f} decisions/s {messages / elapsed:>8,.0f} "
        f"messages/s ({clients} client processes, {window} messages in flight per stream, "
        f"{len(payload):,} bytes per message)"
    )
    print(
        f"               CPU per decision: server {server_cpu / decisions * 1e6:6.1f} us, clients "
        f"{client_cpu / client_decisions * 1e6:6.1f} us; per message: server "
        f"{server_cpu / messages * 1e6:6.1f} us, clients {client_cpu / client_messages * 1e6:6.1f} us"
    )


# ---------------------------------------------------------------------------- client


async def client(address: str) -> None:
    """One bot-like process: parse each batch, answer every request with its first legal action."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(METHOD)()  # bytes both ways, as the server
        cpu = _cpu()
        await call.write(nap_pb2.BotMessage(hello=nap_pb2.Hello(max_batch=64)).SerializeToString())
        parse = nap_pb2.RefereeMessage.FromString
        messages = decisions = 0
        while True:
            data = await call.read()
            if data is grpc.aio.EOF:
                break
            out = nap_pb2.BotMessage()
            add = out.answers.answers.add
            for request in parse(data).batch.requests:
                add(request_id=request.request_id, action=request.legal_actions[0])
            await call.write(out.SerializeToString())
            messages += 1
            decisions += len(out.answers.answers)
        cpu = _cpu() - cpu
    print(json.dumps({"cpu": cpu, "messages": messages, "decisions": decisions}))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured time per run (default: 5)")
    parser.add_argument("--clients", type=int, default=4, help="client processes (default: 4)")
    parser.add_argument("--window", type=int, default=8, help="messages in flight per stream (default: 8)")
    parser.add_argument(
        "--batches",
        type=int,
        nargs="+",
        default=[1, 64],
        help="requests per message, a run each (default: 1 64)",
    )
    parser.add_argument("--client", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.client:
        asyncio.run(client(args.client))
        return
    request = sample_request()
    print(f"one DecisionRequest: {len(request)} bytes; {os.cpu_count()} CPUs")
    for batch in args.batches:
        payload = batch_message([request] * batch, [])
        asyncio.run(
            measure(payload, batch=batch, seconds=args.seconds, clients=args.clients, window=args.window)
        )


if __name__ == "__main__":
    main()
