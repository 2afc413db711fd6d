"""No peer can make the referee do unbounded work, hold memory or stall: gRPC end to end.

Raw clients in this process speak to a real referee on 127.0.0.1:0: one plays honestly at
its own table, another abuses its connection (a flood of answers, an action of
megabytes, a message over the size cap, a stream that never says hello, a stale stream
that a reconnect takes over). Each abuse is bounded: it is faulted once, with bounded
text, and the honest table never notices.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import TYPE_CHECKING

import grpc  # type: ignore[import-untyped]  # grpcio ships no stubs
import pytest

from referee.match import FaultKind, SessionSpec, TimeLimits
from referee.rules import DEFAULT_PROFILE
from referee.server import Referee, ServerLimits
from referee.wire import nap_pb2

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


pytestmark = pytest.mark.slow

LIMITS = ServerLimits(max_outstanding=4, fault_limit=0, reconnect_grace_s=0.5, max_unknown_answers=8)
"""Once an abuser's stream ends, its seats fail after half a second and its table plays out."""


class RawBot:
    """One Play stream, spoken by hand: hello, then read messages and write what the test says."""

    def __init__(self, port: int, token: str) -> None:
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self.call = self.channel.stream_stream(
            "/nap.v1.Referee/Play", request_serializer=lambda data: data, response_deserializer=None
        )()
        self.token = token

    async def hello(self, *, max_batch: int = 4) -> nap_pb2.RefereeMessage:
        message = nap_pb2.BotMessage()
        message.hello.token = self.token
        message.hello.protocol_version = 1
        message.hello.max_batch = max_batch
        await self.call.write(message.SerializeToString())
        return await self.read()

    async def read(self) -> nap_pb2.RefereeMessage:
        data = await self.call.read()
        assert data is not grpc.aio.EOF
        return nap_pb2.RefereeMessage.FromString(data)

    async def request(self) -> nap_pb2.DecisionRequest:
        """The next decision request (skipping events and notices)."""
        while True:
            message = await self.read()
            if message.WhichOneof("kind") == "batch" and message.batch.requests:
                return message.batch.requests[0]

    async def answer(self, pairs: list[tuple[int, str]]) -> None:
        message = nap_pb2.BotMessage()
        for request_id, action in pairs:
            message.answers.answers.add(request_id=request_id, action=action)
        await self.call.write(message.SerializeToString())

    async def ended(self) -> grpc.StatusCode:
        """Read until the stream ends; its status."""
        with contextlib.suppress(grpc.aio.AioRpcError):
            while await self.call.read() is not grpc.aio.EOF:
                pass
        return await self.call.code()

    async def play(self) -> None:
        """Answer every request with its first legal action until the stream ends."""
        with contextlib.suppress(grpc.aio.AioRpcError, AssertionError):
            while True:
                message = await self.read()
                if message.WhichOneof("kind") == "batch" and message.batch.requests:
                    await self.answer([(r.request_id, r.legal_actions[0]) for r in message.batch.requests])

    async def close(self) -> None:
        self.call.cancel()
        await self.channel.close()


@contextlib.asynccontextmanager
async def referee(limits: ServerLimits = LIMITS) -> AsyncIterator[tuple[Referee, int]]:
    ref = Referee(limits=limits)
    for name in ("honest", "abuser"):
        ref.add_bot(name=name, token=f"t-{name}")
    port = await ref.start()
    try:
        yield ref, port
    finally:
        await ref.stop(0.2)


def _spec(table: str, bot: str) -> SessionSpec:
    return SessionSpec(table, DEFAULT_PROFILE, 3, (bot,) * 4, TimeLimits(decision_ms=30_000))


def test_a_message_with_more_answers_than_requests_held_is_malformed_and_ends_the_stream() -> None:
    async def scenario() -> None:
        async with referee() as (ref, port):
            honest = RawBot(port, "t-honest")
            await honest.hello()
            asyncio.get_running_loop().create_task(honest.play())
            clean = asyncio.create_task(ref.play_session(_spec("clean", "honest")))
            abuser = RawBot(port, "t-abuser")
            await abuser.hello()
            table = asyncio.create_task(ref.play_session(_spec("abused", "abuser")))
            request = await abuser.request()
            await abuser.answer([(request.request_id + 1 + i, "pass") for i in range(200_000)])
            assert await asyncio.wait_for(abuser.ended(), 30) == grpc.StatusCode.INVALID_ARGUMENT
            outcome = await asyncio.wait_for(table, 60)
            assert outcome.faults[0].kind is FaultKind.MALFORMED
            assert outcome.faults[0].detail == "more than 4 answers in one message, more than it may hold"
            assert outcome.faults[1].kind is FaultKind.DISCONNECT
            assert (await asyncio.wait_for(clean, 60)).faults == ()
            await honest.close()
            await abuser.close()

    asyncio.run(scenario())


def test_a_connection_that_keeps_answering_requests_it_does_not_hold_is_cut_off() -> None:
    async def scenario() -> None:
        async with referee() as (ref, port):
            abuser = RawBot(port, "t-abuser")
            await abuser.hello()
            table = asyncio.create_task(ref.play_session(_spec("abused", "abuser")))
            request = await abuser.request()
            for start in range(0, 10_000, 4):
                try:
                    await abuser.answer([(request.request_id + 10 + start + i, "pass") for i in range(4)])
                except (grpc.aio.AioRpcError, asyncio.InvalidStateError):  # cut off: as its write or after it
                    break
            await asyncio.wait_for(abuser.ended(), 30)  # (its status depends on when it last wrote)
            await abuser.close()
            outcome = await asyncio.wait_for(table, 60)
            connection = [fault for fault in outcome.faults if fault.seat is None]
            kinds = [fault.kind for fault in connection]
            assert kinds == [FaultKind.UNKNOWN_REQUEST] * LIMITS.max_unknown_answers + [FaultKind.DISCONNECT]
            assert connection[-1].detail == "cut off: too many answers to requests it does not hold"

    asyncio.run(scenario())


def test_an_action_of_megabytes_is_malformed_and_echoed_short() -> None:
    async def scenario() -> None:
        async with referee() as (ref, port):
            abuser = RawBot(port, "t-abuser")
            await abuser.hello()
            table = asyncio.create_task(ref.play_session(_spec("abused", "abuser")))
            request = await abuser.request()
            await abuser.answer([(request.request_id, "x" * (2200 * 1024))])
            while (notice := await abuser.read()).WhichOneof("kind") != "fault":
                assert notice.ByteSize() < 10_000
            assert notice.fault.kind == nap_pb2.FAULT_KIND_MALFORMED
            assert len(notice.fault.action) < 200
            assert len(notice.fault.message) < 400
            await abuser.close()
            outcome = await asyncio.wait_for(table, 60)
            assert outcome.faults[0].kind is FaultKind.MALFORMED
            assert len(outcome.faults[0].detail) < 400
            assert FaultKind.DISCONNECT not in {f.kind for f in outcome.faults[:1]}

    asyncio.run(scenario())


def test_a_message_over_the_size_cap_is_an_oversized_fault() -> None:
    async def scenario() -> None:
        async with referee(replace(LIMITS, max_message_bytes=64 * 1024)) as (ref, port):
            abuser = RawBot(port, "t-abuser")
            await abuser.hello()
            table = asyncio.create_task(ref.play_session(_spec("abused", "abuser")))
            request = await abuser.request()
            await abuser.answer([(request.request_id, "x" * 100_000)])
            assert await asyncio.wait_for(abuser.ended(), 30) == grpc.StatusCode.RESOURCE_EXHAUSTED
            await abuser.close()
            outcome = await asyncio.wait_for(table, 60)
            assert [f.kind for f in outcome.faults][:2] == [FaultKind.OVERSIZED, FaultKind.DISCONNECT]
            assert "more than the 65536 accepted" in outcome.faults[0].detail

    asyncio.run(scenario())


def test_a_hello_over_the_size_cap_is_refused_with_its_size() -> None:
    """No bot to charge a fault to yet: refused (BAD_HELLO, as docs/protocol.md says), unread."""

    async def scenario() -> None:
        async with referee(replace(LIMITS, max_message_bytes=64 * 1024)) as (_, port):
            big = RawBot(port, "t-abuser")
            message = nap_pb2.BotMessage()
            message.hello.token = big.token
            message.hello.protocol_version = 1
            message.hello.bot_name = "x" * 100_000
            await big.call.write(message.SerializeToString())
            refusal = nap_pb2.RefereeMessage.FromString(await asyncio.wait_for(big.call.read(), 30)).refusal
            assert refusal.reason == nap_pb2.REFUSAL_REASON_BAD_HELLO
            size = message.ByteSize()
            assert refusal.message == f"a first message of {size} bytes, more than the 65536 accepted"
            await big.close()

    asyncio.run(scenario())


def test_a_stream_that_never_says_hello_is_let_go() -> None:
    async def scenario() -> None:
        async with referee(replace(LIMITS, hello_timeout_s=0.2)) as (_, port):
            idle = RawBot(port, "t-abuser")
            refusal = nap_pb2.RefereeMessage.FromString(await asyncio.wait_for(idle.call.read(), 30))
            assert refusal.refusal.reason == nap_pb2.REFUSAL_REASON_BAD_HELLO
            assert "no Hello within 0.2 s" in refusal.refusal.message
            await idle.close()

    asyncio.run(scenario())


def test_a_reconnect_takes_over_from_a_stale_stream() -> None:
    """The first stream hangs (reads nothing more); the bot reconnects with its token and plays on."""

    async def scenario() -> None:
        async with referee() as (ref, port):
            stale = RawBot(port, "t-abuser")
            await stale.hello()
            table = asyncio.create_task(ref.play_session(_spec("abused", "abuser")))
            first = await stale.request()
            fresh = RawBot(port, "t-abuser")
            welcome = await fresh.hello()
            assert welcome.welcome.bot_id == "abuser"
            again = await fresh.request()
            assert again.request_id == first.request_id  # the same request, sent again
            asyncio.get_running_loop().create_task(fresh.play())
            await fresh.answer([(again.request_id, again.legal_actions[0])])
            outcome = await asyncio.wait_for(table, 60)
            assert [f.kind for f in outcome.faults] == [FaultKind.DISCONNECT]
            assert outcome.faults[0].detail == "replaced by a new connection"
            assert await asyncio.wait_for(stale.ended(), 30) == grpc.StatusCode.OK
            await stale.close()
            await fresh.close()

    asyncio.run(scenario())


def test_a_long_goodbye_is_cut_before_it_is_stored() -> None:
    async def scenario() -> None:
        async with referee() as (ref, port):
            abuser = RawBot(port, "t-abuser")
            await abuser.hello()
            table = asyncio.create_task(ref.play_session(_spec("abused", "abuser")))
            await abuser.request()
            message = nap_pb2.BotMessage()
            message.goodbye.reason = "bye" * (1024 * 1024)
            await abuser.call.write(message.SerializeToString())
            await asyncio.wait_for(abuser.ended(), 30)
            await abuser.close()
            outcome = await asyncio.wait_for(table, 60)
            assert outcome.faults[0].kind is FaultKind.DISCONNECT
            assert len(outcome.faults[0].detail) < 200

    asyncio.run(scenario())
