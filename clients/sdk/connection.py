"""The bot's side of the ``nap.v1.Referee/Play`` stream (the only SDK module that imports grpc).

The stream carries bytes both ways: :mod:`referee.wire.botstream` writes what the bot
sends and reads what the referee sends into values, so nothing here touches protobuf.
One :class:`Connection` serves every table of the process over one stream: Hello, then
Welcome or Refusal, then Batches answered by the :class:`~clients.sdk.dispatch.Dispatcher`:
a batch decided at once is one Answers message; a longer one is sent in parts as its
answers are ready (a batch's synchronous decisions are made before the next message is
read; the answers of ``async def`` decisions follow from a task as they complete). A
broken stream (UNAVAILABLE, connection reset) is reopened with the same token after a
short backoff, for a bounded time; an unknown token or a Refusal ends the process with a
one-line error. :meth:`Connection.stop` (wired to SIGTERM and SIGINT by
:func:`clients.sdk.run`) says Goodbye and closes cleanly.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from typing import TYPE_CHECKING, Any, Final

import grpc.aio  # type: ignore[import-untyped]  # no grpc stubs here, as in referee.server

from clients.sdk.dispatch import Answering
from clients.sdk.options import ExitCode, Options
from referee.wire.botstream import (
    PLAY_METHOD,
    Batch,
    Fault,
    Refusal,
    TableClosed,
    Welcome,
    answers_message,
    goodbye_message,
    hello_message,
    read_referee_message,
)
from referee.wire.stream import RefusalReason

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine

    from clients.sdk.dispatch import Dispatcher
    from referee.wire.botstream import Answers

_Call = Any
"""A ``grpc.aio.StreamStreamCall[bytes, bytes]`` (grpc has no types here)."""

_RETRYABLE: Final = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,  # refused, reset, or the referee restarting
        grpc.StatusCode.CANCELLED,  # the referee dropped the call (we never cancel it but to stop)
        grpc.StatusCode.INTERNAL,  # a stream reset mid-message (RST_STREAM)
    }
)
_BACKOFF_FIRST: Final = 0.05
"""Seconds before the first reconnect; doubled each time up to :data:`_BACKOFF_MAX`."""
_BACKOFF_MAX: Final = 1.0
_GOODBYE_GRACE: Final = 2.0
"""Seconds to wait for the referee to end the stream after our Goodbye."""
_REFUSED_SAYS: Final = "the referee refused this bot"
"""How the line a Refusal prints starts (``... (REASON): message`` follows), for whoever reads
the bot's output; ``nap`` takes the reason from its referee (:class:`tournaments.play.bots.BotExit`)."""


class Connection:
    """One bot process's stream to the referee; :meth:`serve` returns the exit code."""

    def __init__(
        self,
        options: Options,
        dispatcher: Dispatcher,
        *,
        log: Callable[[str], None],
    ) -> None:
        self.options = options
        self.dispatcher = dispatcher
        self._log = log
        self._stop = asyncio.Event()
        self._call: _Call | None = None
        self._write_lock = asyncio.Lock()
        self._outbox: list[Answers] = []
        """Answers waiting for the write under way to finish."""
        self._wrote = True
        """Whether the last write went out."""
        self._tasks: set[asyncio.Task[None]] = set()
        self.welcome: Welcome | None = None
        """The referee's last Welcome (profile, time limits, max_outstanding)."""

    def stop(self) -> None:
        """Leave: say Goodbye, close our side, and let :meth:`serve` return OK. Idempotent."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._call is not None:
            self._spawn(self._leave(self._call))

    async def serve(self) -> ExitCode:
        """Connect, play until the referee ends the stream or :meth:`stop`, reconnecting as needed."""
        options = self.options
        async with grpc.aio.insecure_channel(options.address) as channel:
            play = channel.stream_stream(PLAY_METHOD)  # bytes in, bytes out
            give_up_at: float | None = None
            delay = _BACKOFF_FIRST
            reconnecting = False
            while not self._stop.is_set():
                try:
                    code = await self._stream(play, reconnecting=reconnecting)
                except _Retry as retry:
                    now = time.monotonic()
                    if retry.progressed or give_up_at is None:
                        give_up_at = now + options.reconnect_for
                        delay = _BACKOFF_FIRST
                    if now >= give_up_at:
                        self._log(
                            f"referee at {options.address} unreachable for "
                            f"{options.reconnect_for:g} s ({retry.detail}); giving up"
                        )
                        return ExitCode.UNREACHABLE
                    if retry.progressed:
                        self._log(f"stream to the referee broke ({retry.detail}); reconnecting")
                    reconnecting = True
                    await self._sleep(delay * random.uniform(0.5, 1.0))
                    delay = min(delay * 2, _BACKOFF_MAX)
                    continue
                return code
        return ExitCode.OK

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)

    async def _stream(self, play: Callable[[], _Call], *, reconnecting: bool) -> ExitCode:
        options = self.options
        call = play()
        self._call = call
        welcomed = False
        try:
            await call.write(
                hello_message(
                    token=options.token,
                    bot_name=options.name,
                    bot_version=options.version,
                    max_batch=options.max_batch,
                    events=options.events,
                    notices_in_batch=True,  # notices come in the next batch: _play handles them
                    decisions=options.decisions,
                )
            )
            data = await call.read()
            if data is grpc.aio.EOF:
                raise _Retry(detail="the referee ended the stream before answering Hello")
            first = read_referee_message(data)
            if isinstance(first, Refusal):
                return self._refused(first, reconnecting=reconnecting)
            if not isinstance(first, Welcome):
                said = type(first).__name__ if first is not None else "a message this SDK does not know"
                self._log(f"the referee answered Hello with {said}, not a Welcome")
                return ExitCode.ERROR
            welcomed = True
            self.welcome = first
            if first.rules is None:
                self._log(
                    f"the referee's profile could not be read ({first.rules_problem}); bots get no rules"
                )
            self.dispatcher.rules = first.rules
            if self._stop.is_set():
                await self._leave(call)
            return await self._play(call)
        except grpc.aio.AioRpcError as err:
            return self._failed(err, progressed=welcomed)
        except asyncio.CancelledError:
            if self._stop.is_set():
                return ExitCode.OK
            raise
        finally:
            self._call = None

    async def _play(self, call: _Call) -> ExitCode:
        dispatcher = self.dispatcher
        handle = dispatcher.handle_batch
        read = read_referee_message
        while True:
            data = await call.read()
            if data is grpc.aio.EOF:
                return ExitCode.OK
            message = read(data)
            if isinstance(message, Batch):
                reply = handle(message)
                if reply is not None:
                    await self._reply(call, reply)
                # notices ride in the batch (Hello.notices_in_batch), after its requests
                for table in message.closed:
                    dispatcher.close_table(table)
                for fault in message.faults:
                    self._fault(fault)
            elif isinstance(message, TableClosed):
                dispatcher.close_table(message.table)
            elif isinstance(message, Fault):
                self._fault(message)
            # welcome/refusal mid-stream and unknown kinds are ignored (forward compatible)

    async def _reply(self, call: _Call, reply: Answers | Answering | Awaitable[Answers]) -> None:
        """Send what :meth:`Dispatcher.handle_batch` returned for a batch, in the way it asks."""
        if isinstance(reply, tuple):
            await self._write(call, reply)
        elif isinstance(reply, Answering):
            await self._answer(call, reply)
        else:  # a dispatcher that answers a batch at once, later (the stdio bridge)
            self._spawn(self._send_later(call, reply))

    async def _answer(self, call: _Call, answering: Answering) -> None:
        """Send a batch's answers in parts, each as soon as it is ready.

        The batch's synchronous decisions are made here, before the next message is read
        (so its closed tables are closed after them): the dispatcher hands over what it
        decided each time its ``flush_after`` passes, and that part is sent before it goes
        on. The answers of awaitable decisions are sent by a task of their own as they
        complete, while the stream is read on.
        """
        while True:
            answers = answering.take()
            if answers is not None:
                if not await self._write(call, answers):
                    return  # leaving, or the stream broke: the rest would go nowhere
            elif not answering.decided:
                await asyncio.sleep(0)  # no answer yet: let the decisions already started run
            if answering.decided:
                break
            answering.resume()
        if not answering.finished:
            self._spawn(self._send_as_ready(call, answering))

    async def _send_as_ready(self, call: _Call, answering: Answering) -> None:
        """Send the answers of a batch's awaitable decisions as they are ready.

        Answers that complete in the same turn of the event loop, or while the previous
        part is being written, leave together.
        """
        while not answering.finished:
            await answering.wait()
            answers = answering.take()
            if answers is not None and not await self._write(call, answers):
                return

    async def _send_later(self, call: _Call, reply: Awaitable[Answers]) -> None:
        await self._write(call, await reply)

    async def _write(self, call: _Call, answers: Answers) -> bool:
        """Send ``answers`` as one Answers message; False when they cannot go (leaving, or the stream broke).

        One write at a time goes out (gRPC takes no more); answers that queue up behind
        it leave together in the next one, so that a bot answering many tables at once
        sends a few full messages rather than a queue of small ones, each waiting its
        turn. A broken stream needs nothing here: the reader notices it and reconnects.
        """
        if self._stop.is_set():
            return False
        self._outbox.append(answers)
        async with self._write_lock:
            outbox = self._outbox
            if not outbox:
                return self._wrote  # sent with an earlier writer's message
            self._outbox = []
            try:
                await call.write(answers_message(outbox[0] if len(outbox) == 1 else itertools.chain(*outbox)))
            except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
                self._wrote = False
            else:
                self._wrote = True
            return self._wrote

    async def _leave(self, call: _Call) -> None:
        try:
            async with self._write_lock:
                await call.write(goodbye_message("shutting down"))
                await call.done_writing()
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
            call.cancel()
            return
        await asyncio.sleep(_GOODBYE_GRACE)
        call.cancel()  # the referee did not end the stream in time

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _refused(self, refusal: Refusal, *, reconnecting: bool) -> ExitCode:
        if reconnecting and refusal.reason is RefusalReason.ALREADY_CONNECTED:
            # the referee has not yet noticed that our previous stream is gone
            raise _Retry(detail=f"refused: {refusal.code}")
        self._log(f"{_REFUSED_SAYS} ({refusal.code}): {refusal.message}")
        return ExitCode.REFUSED

    def _failed(self, err: grpc.aio.AioRpcError, *, progressed: bool) -> ExitCode:
        code = err.code()
        detail = f"{code.name}: {err.details()}"
        if self._stop.is_set():
            return ExitCode.OK
        if code == grpc.StatusCode.UNAUTHENTICATED:
            self._log(f"the referee rejected the token ({detail})")
            return ExitCode.REFUSED
        if code in _RETRYABLE:
            raise _Retry(detail=detail, progressed=progressed) from err
        self._log(f"the stream to the referee failed ({detail})")
        return ExitCode.ERROR

    def _fault(self, fault: Fault) -> None:
        if fault.count <= 20 or fault.count % 1000 == 0:
            kind = fault.kind.name if fault.kind is not None else "UNSPECIFIED"
            limit = f"/{fault.limit}" if fault.limit else ""
            self._log(
                f"fault {fault.count}{limit} {kind} at table {fault.table}, "
                f"request {fault.request_id}: {fault.message}"
            )


class _Retry(Exception):  # noqa: N818 - a control-flow signal, not an error shown to anyone
    """The stream broke in a way worth reconnecting for."""

    def __init__(self, *, detail: str, progressed: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.progressed = progressed
        """Whether the broken stream had been welcomed (the reconnect budget restarts)."""
