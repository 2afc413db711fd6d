"""The Play servicer: authenticates a bot's stream, then pumps messages both ways.

Requests arrive as raw bytes (the method is registered without a deserializer) so that a
message that does not parse is the referee's to handle: a malformed-message fault and the
end of the stream, instead of an error deep inside gRPC. gRPC status codes are chosen
here and nowhere else.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import grpc  # type: ignore[import-untyped]  # grpcio ships no stubs
from google.protobuf.message import DecodeError

from referee.server.faults import FaultKind
from referee.wire import nap_pb2

if TYPE_CHECKING:
    from collections.abc import Callable

    from referee.server.connection import BotLink
    from referee.server.pending import StreamState

PROTOCOL_VERSION = 1
SERVER_VERSION = "nap-arena 0.1.0"
METHOD = "/nap.v1.Referee/Play"


class PlayService:
    """Serves ``nap.v1.Referee/Play`` for the bots registered with the referee."""

    def __init__(self, *, links_by_token: dict[str, BotLink], welcome: Callable[[], nap_pb2.Welcome],
                 logger: Any) -> None:  # noqa: ANN401 - any structlog-compatible logger
        self._links_by_token = links_by_token
        self._welcome = welcome
        self._log = logger
        self.stopping = False
        self._streams: set[StreamState] = set()

    def handler(self) -> grpc.GenericRpcHandler:
        """The generic handler that registers Play (bytes in, bytes out)."""
        play = grpc.stream_stream_rpc_method_handler(self.play)
        return grpc.method_handlers_generic_handler("nap.v1.Referee", {"Play": play})

    def close_all(self) -> None:
        """End every attached stream (shutdown)."""
        self.stopping = True
        for stream in list(self._streams):
            stream.closed = True
            stream.wake.set()

    async def play(  # noqa: C901, PLR0912, PLR0915 - one stream's whole life, read in order
        self, _requests: object, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        """Run one bot stream: hello, welcome, then batches out and answers in."""
        first = await context.read()
        if first is grpc.aio.EOF:
            return
        try:
            message = nap_pb2.BotMessage.FromString(first)
        except DecodeError:
            message = nap_pb2.BotMessage()
        if message.WhichOneof("kind") != "hello":
            await self._refuse(context, nap_pb2.REFUSAL_REASON_BAD_HELLO,
                               "the first message must be a Hello")
            return
        hello = message.hello
        link = self._links_by_token.get(hello.token)
        if link is None:
            self._log.warning("bot refused", reason="unknown token", peer=context.peer())
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token")
        assert link is not None  # noqa: S101 - abort raises
        refusal = self._check_hello(hello, link)
        if refusal is not None:
            self._log.warning("bot refused", bot=link.name, reason=refusal[1])
            await self._refuse(context, *refusal)
            return
        welcome = nap_pb2.RefereeMessage()
        welcome.welcome.CopyFrom(self._welcome())
        welcome.welcome.bot_id = link.name
        stream = link.attach(max_batch=hello.max_batch, wants_events=hello.events,
                             notices_in_batch=hello.notices_in_batch)
        welcome.welcome.max_outstanding = link.max_outstanding
        self._streams.add(stream)
        self._log.info("bot connected", bot=link.name, bot_name=hello.bot_name,
                       bot_version=hello.bot_version, max_batch=hello.max_batch,
                       events=hello.events)
        reader = asyncio.create_task(self._read(context, link, stream))
        reason = "stream ended"
        try:
            await context.write(welcome.SerializeToString())
            while True:
                messages = await link.outgoing(stream)
                if not messages:
                    break
                for outgoing in messages:
                    await context.write(outgoing)
            if not reader.done():
                reason = "referee stopping"
            elif reader.cancelled() or reader.exception() is not None:
                reason = "connection lost"
            else:
                reason = reader.result()
        except (asyncio.CancelledError, grpc.aio.AioRpcError, grpc.aio.UsageError):
            reason = "connection lost"
            raise
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
            self._streams.discard(stream)
            link.detach(stream, reason)
            self._log.info("bot disconnected", bot=link.name, reason=reason)
        if reason.startswith("malformed"):
            context.set_code(grpc.StatusCode.INVALID_ARGUMENT)
            context.set_details(reason)

    def _check_hello(self, hello: nap_pb2.Hello,
                     link: BotLink) -> tuple[nap_pb2.RefusalReason, str] | None:
        if hello.protocol_version != PROTOCOL_VERSION:
            return (nap_pb2.REFUSAL_REASON_PROTOCOL_VERSION,
                    (f"protocol_version {hello.protocol_version} not supported; this referee "
                     f"speaks {PROTOCOL_VERSION}"))
        if hello.max_batch < 1:
            return nap_pb2.REFUSAL_REASON_BAD_HELLO, "max_batch must be at least 1"
        if self.stopping:
            return nap_pb2.REFUSAL_REASON_SHUTTING_DOWN, "the referee is shutting down"
        if link.connected:
            return (nap_pb2.REFUSAL_REASON_ALREADY_CONNECTED,
                    f"{link.name} already has a live connection")
        return None

    @staticmethod
    async def _refuse(context: grpc.aio.ServicerContext[bytes, bytes],
                      reason: nap_pb2.RefusalReason, text: str) -> None:
        message = nap_pb2.RefereeMessage()
        message.refusal.reason = reason
        message.refusal.message = text
        await context.write(message.SerializeToString())

    async def _read(self, context: grpc.aio.ServicerContext[bytes, bytes], link: BotLink,
                    stream: StreamState) -> str:
        """Read the bot's messages until it leaves; return why the stream should end."""
        try:
            while True:
                data = await context.read()
                if data is grpc.aio.EOF:
                    return "the bot closed its side of the stream"
                try:
                    message = nap_pb2.BotMessage.FromString(data)
                except DecodeError:
                    link.report(FaultKind.MALFORMED, "a message that is not a BotMessage")
                    return "malformed: a message that is not a BotMessage"
                kind = message.WhichOneof("kind")
                if kind == "answers":
                    link.on_answers(message.answers.answers)
                elif kind == "goodbye":
                    return f"goodbye: {message.goodbye.reason}"
                else:
                    link.report(FaultKind.MALFORMED,
                                "a second Hello" if kind == "hello" else "an empty BotMessage")
        finally:
            stream.closed = True
            stream.wake.set()
