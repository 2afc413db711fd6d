"""Raw gRPC plumbing shared by the test bots (no SDK): connect, hello, read, answer.

Each bot script is run as ``python tests/bots/<name>.py --address HOST:PORT --token T``.
Messages travel as bytes both ways, so a bot can also send bytes that are not a message.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc  # type: ignore[import-untyped]  # grpcio ships no stubs

from referee.wire import nap_pb2

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine

METHOD = "/nap.v1.Referee/Play"


def arguments(**extra: Any) -> argparse.Namespace:
    """The common command line, plus ``extra`` options (name -> default)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", default=os.environ.get("NAP_REFEREE", "127.0.0.1:50051"))
    parser.add_argument("--token", default=os.environ.get("NAP_TOKEN", ""))
    parser.add_argument("--max-batch", type=int, default=64)
    parser.add_argument("--events", action="store_true")
    parser.add_argument("--dump", default="", help="append every received message here")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--decisions", default="", help="Hello.decisions, comma-separated (default: none, as an old bot)"
    )
    for name, default in extra.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)
    return parser.parse_args()


def _bytes(message: bytes | nap_pb2.BotMessage) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


class Stream:
    """One Play call: ``read()`` gives RefereeMessages (None at the end), ``send`` writes."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.channel = grpc.aio.insecure_channel(args.address)
        self.call = self.channel.stream_stream(
            METHOD, request_serializer=_bytes, response_deserializer=None
        )()
        self.dump = Path(args.dump).open("ab") if args.dump else None  # noqa: SIM115

    async def hello(self) -> nap_pb2.RefereeMessage | None:
        hello = nap_pb2.BotMessage()
        hello.hello.token = self.args.token
        hello.hello.bot_name = "test-bot"
        hello.hello.protocol_version = 1
        hello.hello.max_batch = self.args.max_batch
        hello.hello.events = self.args.events
        if self.args.decisions:
            hello.hello.decisions.extend(self.args.decisions.split(","))
        await self.call.write(hello)
        return await self.read()

    async def read(self) -> nap_pb2.RefereeMessage | None:
        try:
            data = await self.call.read()
        except grpc.aio.AioRpcError:
            return None
        if data is grpc.aio.EOF:
            return None
        if self.dump is not None:
            self.dump.write(struct.pack("<I", len(data)) + data)
            self.dump.flush()
        return nap_pb2.RefereeMessage.FromString(data)

    async def answer(self, pairs: list[tuple[int, str]]) -> None:
        message = nap_pb2.BotMessage()
        for request_id, action in pairs:
            message.answers.answers.add(request_id=request_id, action=action)
        await self.call.write(message)

    async def send_raw(self, data: bytes) -> None:
        await self.call.write(data)

    async def close(self) -> None:
        self.call.cancel()
        await self.channel.close()


Handler = "Callable[[Stream, nap_pb2.DecisionRequest], Awaitable[bool]]"


async def serve(
    args: argparse.Namespace, on_request: Callable[[Stream, nap_pb2.DecisionRequest], Awaitable[bool]]
) -> None:
    """Connect and hand every request to ``on_request`` until the stream ends or it says stop."""
    stream = Stream(args)
    first = await stream.hello()
    if first is None or first.WhichOneof("kind") != "welcome":
        return
    while True:
        message = await stream.read()
        if message is None:
            break
        if message.WhichOneof("kind") != "batch":
            continue
        for request in message.batch.requests:
            if not await on_request(stream, request):
                await stream.close()
                return
    await stream.close()


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run a bot until its stream ends (or it is killed)."""
    asyncio.run(main())
