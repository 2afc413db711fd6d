"""The Play servicer: authenticates a bot's stream, then pumps messages both ways.

Requests arrive as raw bytes (the method is registered without a deserializer) so that a
message that does not parse is the referee's to handle: a malformed-message fault and the
end of the stream, instead of an error deep inside gRPC. What a stream brings goes to the
referee's core through a :class:`Hub` (the :class:`~referee.server.app.Referee`); what it
sends comes from the bot's :class:`~referee.server.connection.BotLink`. gRPC status codes
are chosen here and nowhere else.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, Protocol

import grpc  # type: ignore[import-untyped]  # grpcio ships no stubs

from referee.match import FaultKind
from referee.wire.stream import (
    PROTOCOL_VERSION,
    Goodbye,
    Hello,
    RefusalReason,
    missing_decisions,
    read_bot_message,
    refusal_message,
    too_many_answers,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from referee.rules import Profile
    from referee.server.connection import BotLink, StreamState
    from referee.server.limits import ServerLimits

SERVER_VERSION = "nap-arena 0.1.0"
SERVICE_NAME = "nap.v1.Referee"


class Hub(Protocol):
    """What the service needs of the referee."""

    limits: ServerLimits
    profile: Profile
    """The rules the referee plays and announces: a bot must be able to answer its decisions."""

    def link_of(self, token: str) -> BotLink | None:
        """The link of the bot with this token."""

    def welcome(self, link: BotLink) -> bytes:
        """The Welcome for ``link``'s bot, serialized."""

    def attach(self, link: BotLink, hello: Hello) -> StreamState:
        """A stream said hello for the bot."""

    def detach(self, link: BotLink, stream: StreamState, reason: str) -> None:
        """The stream ended."""

    def answers(self, link: BotLink, answers: Iterable[tuple[int, str]]) -> None:
        """The bot answered."""

    def cut_off(self, link: BotLink) -> bool:
        """Whether the bot's connection sent too many answers to unknown requests."""

    def written(self, link: BotLink) -> None:
        """The requests last taken for the bot are written to its stream."""

    def connection_fault(self, link: BotLink, kind: FaultKind, detail: str) -> None:
        """The bot's connection did something wrong."""


class PlayService:
    """Serves ``nap.v1.Referee/Play`` for the bots registered with the referee."""

    def __init__(self, hub: Hub, *, logger: Any) -> None:  # noqa: ANN401 - any structlog-compatible logger
        self._hub = hub
        self._log = logger
        self.stopping = False
        self._streams: set[StreamState] = set()

    def handler(self) -> grpc.GenericRpcHandler:
        """The generic handler that registers Play (bytes in, bytes out)."""
        play = grpc.stream_stream_rpc_method_handler(self.play)
        return grpc.method_handlers_generic_handler(SERVICE_NAME, {"Play": play})

    def close_all(self) -> None:
        """End every attached stream (shutdown)."""
        self.stopping = True
        for stream in list(self._streams):
            stream.closed = True
            stream.wake.set()

    async def play(self, _requests: object, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        """Run one bot stream: hello, welcome, then batches out and answers in."""
        limits = self._hub.limits
        try:
            first = await asyncio.wait_for(context.read(), limits.hello_timeout_s)
        except TimeoutError:
            self._log.warning("bot refused", reason="no hello", peer=context.peer())
            text = f"no Hello within {limits.hello_timeout_s:g} s"
            await context.write(refusal_message(RefusalReason.BAD_HELLO, text))
            return
        if first is grpc.aio.EOF:
            return
        if len(first) > limits.max_message_bytes:  # no bot to charge a fault to yet: refused, unread
            text = f"a first message of {len(first)} bytes, more than the {limits.max_message_bytes} accepted"
            await context.write(refusal_message(RefusalReason.BAD_HELLO, text))
            return
        hello = read_bot_message(first)
        if not isinstance(hello, Hello):
            await context.write(refusal_message(RefusalReason.BAD_HELLO, "the first message must be a Hello"))
            return
        link = self._hub.link_of(hello.token)
        if link is None:
            self._log.warning("bot refused", reason="unknown token", peer=context.peer())
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token")
            return
        refusal = self._check_hello(hello)
        if refusal is not None:
            self._log.warning("bot refused", bot=link.name, reason=refusal[1])
            link.refusal = refusal  # before the bot can read it, and so before it can exit over it
            await context.write(refusal_message(*refusal))
            return
        stream = self._hub.attach(link, hello)
        self._streams.add(stream)
        self._log.info(
            "bot connected",
            bot=link.name,
            bot_name=hello.bot_name,
            bot_version=hello.bot_version,
            max_batch=hello.max_batch,
            events=hello.events,
            decisions=list(hello.decisions),
        )
        await self._pump(context, link, stream)

    async def _pump(
        self, context: grpc.aio.ServicerContext[bytes, bytes], link: BotLink, stream: StreamState
    ) -> None:
        """Write the welcome and then the link's batches, while a task reads the bot's messages."""
        reader = asyncio.create_task(self._read(context, link, stream))
        reason = "stream ended"
        try:
            await context.write(self._hub.welcome(link))
            while True:
                messages = await link.outgoing(stream)
                if not messages:
                    break
                for outgoing in messages:
                    await context.write(outgoing)
                self._hub.written(link)
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
            self._hub.detach(link, stream, reason)
            self._log.info("bot disconnected", bot=link.name, reason=reason)
        if reason.startswith(("malformed", "cut off")):
            context.set_code(grpc.StatusCode.INVALID_ARGUMENT)
            context.set_details(reason)
        elif reason.startswith("oversized"):
            context.set_code(grpc.StatusCode.RESOURCE_EXHAUSTED)
            context.set_details(reason)

    def _check_hello(self, hello: Hello) -> tuple[RefusalReason, str] | None:
        if hello.protocol_version != PROTOCOL_VERSION:
            return (
                RefusalReason.PROTOCOL_VERSION,
                (
                    f"protocol_version {hello.protocol_version} not supported; this referee "
                    f"speaks {PROTOCOL_VERSION}"
                ),
            )
        if hello.max_batch < 1:
            return RefusalReason.BAD_HELLO, "max_batch must be at least 1"
        missing = missing_decisions(self._hub.profile, hello.decisions)
        if missing is not None:
            return RefusalReason.UNSUPPORTED_DECISIONS, missing
        if self.stopping:
            return RefusalReason.SHUTTING_DOWN, "the referee is shutting down"
        return None

    async def _read(
        self, context: grpc.aio.ServicerContext[bytes, bytes], link: BotLink, stream: StreamState
    ) -> str:
        """Read the bot's messages until it leaves; return why the stream should end.

        What one message can make the referee do is bounded: a message over the size cap is
        not read (an ``oversized`` fault), one with more answers than the bot may hold
        requests is refused from its first bytes, unread (``malformed``:
        :func:`~referee.wire.stream.too_many_answers`), and a connection that keeps
        answering requests it does not hold is cut off; each of these ends the stream.
        """
        hub = self._hub
        most_bytes = hub.limits.max_message_bytes
        try:
            while True:
                data = await context.read()
                if data is grpc.aio.EOF:
                    return "the bot closed its side of the stream"
                if len(data) > most_bytes:
                    detail = f"a message of {len(data)} bytes, more than the {most_bytes} accepted"
                    hub.connection_fault(link, FaultKind.OVERSIZED, detail)
                    return f"oversized: {detail}"
                refused = too_many_answers(data, link.state.max_outstanding)
                if refused is not None:
                    hub.connection_fault(link, FaultKind.MALFORMED, refused)
                    return f"malformed: {refused}"
                message = read_bot_message(data)
                if isinstance(message, tuple):
                    hub.answers(link, message)
                    if hub.cut_off(link):
                        return "cut off: too many answers to requests it does not hold"
                elif isinstance(message, Goodbye):
                    return f"goodbye: {message.reason}"
                elif isinstance(message, Hello):
                    hub.connection_fault(link, FaultKind.MALFORMED, "a second Hello")
                else:
                    hub.connection_fault(link, FaultKind.MALFORMED, message.detail)
                    if message.fatal:
                        return f"malformed: {message.detail}"
        finally:
            stream.closed = True
            stream.wake.set()
