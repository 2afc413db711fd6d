"""The Python bot SDK: batch handling (pure), the stream (against a fake referee), and
real bot processes against the real referee on 127.0.0.1:0."""

# ruff: noqa: S105, S106 - test tokens are not secrets
# ruff: noqa: ARG001, ARG002 - fake servicer scripts and bots keep the interface's signatures

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc  # type: ignore[import-untyped] # no types-grpcio in the dev dependencies
import grpc.aio  # type: ignore[import-untyped]
import pytest

from clients.bots.peel import PeelBot
from clients.bots.random_bot import RandomBot
from clients.sdk import Bot, Card, Dispatcher, ExitCode, Options, SeatView, serve
from clients.sdk.bot import decide_or_fallback, wants_events
from clients.sdk.dispatch import FLUSH_AFTER, Answering
from referee.rules import (
    PASS,
    Action,
    Bid,
    Exchange,
    Profile,
    Session,
    TakeWidow,
    fallback_action,
    get_profile,
    parse_action,
)
from referee.wire import nap_pb2
from referee.wire.botstream import Answer, Answers, Batch, answers_message, read_batch
from referee.wire.codec import profile_to_proto, request_to_proto, told_to_proto, view_from_proto
from referee.wire.stubs import nap_pb2_grpc

REPO = Path(__file__).resolve().parent.parent
HEATHER = get_profile("heather")


# ---------------------------------------------------------------------------- helpers


def _requests(count: int, *, tables: int = 1, seed: int = 1) -> list[nap_pb2.DecisionRequest]:
    """``count`` real decision requests from ``tables`` sessions (the first seat to act)."""
    out = []
    for number in range(count):
        table = number % tables
        session = Session(HEATHER, table_size=4, seed=seed + table)
        for _ in range(number // tables):
            session.apply(session.legal_actions()[0])
        seat = session.to_act
        assert seat is not None
        out.append(
            request_to_proto(
                session.view(seat),
                table=f"t{table}",
                request_id=100 + number,
                deadline_ms=1000,
                time_bank_ms=0,
            )
        )
    return out


def _batch(requests: list[nap_pb2.DecisionRequest], events: list[nap_pb2.TableEvent] = ()) -> nap_pb2.Batch:  # type: ignore[assignment]
    return nap_pb2.Batch(requests=requests, events=list(events))


def _read(requests: list[nap_pb2.DecisionRequest], events: list[nap_pb2.TableEvent] = ()) -> Batch:  # type: ignore[assignment]
    """The batch as the SDK's connection reads it off the stream."""
    return read_batch(_batch(requests, events))


def _sent(answers: object) -> nap_pb2.BotMessage | None:
    """The Answers message the connection writes for ``answers`` (a dispatcher's reply, a part taken)."""
    if answers is None:
        return None
    assert isinstance(answers, tuple)
    return nap_pb2.BotMessage.FromString(answers_message(answers))


class Raising(Bot):
    def decide(self, view: SeatView) -> Action:
        msg = "boom"
        raise RuntimeError(msg)


class Illegal(Bot):
    def decide(self, view: SeatView) -> Action:
        return Bid("blucher")


class Listening(Bot):
    def __init__(self) -> None:
        self.events: list[object] = []

    def on_event(self, event: Any) -> None:
        self.events.append(event)


def _still() -> float:
    """A clock that does not move: no batch runs past the flush delay."""
    return 0.0


class Gates:
    """Gates for ``count`` awaitable decisions, one per table (``t0``, ``t1``...).

    Each decision waits until all ``count`` have started (so they can only finish if
    they run at the same time), then until its table's gate opens.
    """

    def __init__(self, count: int, *, raising: frozenset[int] = frozenset()) -> None:
        self.count = count
        self.raising = raising
        """Tables whose decision raises once its gate opens."""
        self.started = 0
        self.all_started = asyncio.Event()
        self.open = [asyncio.Event() for _ in range(count)]


class Gated(Bot):
    def __init__(self, gates: Gates) -> None:
        self.gates = gates

    async def decide(self, view: SeatView) -> Action:  # type: ignore[override]
        gates = self.gates
        gates.started += 1
        if gates.started == gates.count:
            gates.all_started.set()
        await gates.all_started.wait()
        number = int(self.table.removeprefix("t"))
        await gates.open[number].wait()
        if number in gates.raising:
            msg = "boom"
            raise RuntimeError(msg)
        return view.legal_actions[0]


class Ticking(Bot):
    """Takes 3 ms of ``clock`` (a fake one) per decision."""

    def __init__(self, clock: list[float]) -> None:
        self.clock = clock

    def decide(self, view: SeatView) -> Action:
        self.clock[0] += 0.003
        return view.legal_actions[0]


class Sleepy(Bot):
    """Decides in twice the SDK's flush delay (really sleeping: it blocks the event loop)."""

    def decide(self, view: SeatView) -> Action:
        time.sleep(2 * FLUSH_AFTER)
        return view.legal_actions[0]


def _ids(message: nap_pb2.BotMessage | None) -> list[int]:
    assert message is not None
    return [answer.request_id for answer in message.answers.answers]


# ---------------------------------------------------------------------------- dispatcher


class TestBatches:
    def test_a_batch_of_many_tables_gets_one_answers_message(self) -> None:
        """Six requests from three tables, decided within the flush delay: one Answers with six
        answers, each legal, ids echoed."""
        requests = _requests(6, tables=3)
        made: list[Bot] = []

        def factory() -> Bot:
            made.append(PeelBot())
            return made[-1]

        dispatcher = Dispatcher(factory, clock=_still)
        reply = _sent(dispatcher.handle_batch(_read(requests)))
        assert isinstance(reply, nap_pb2.BotMessage)
        assert reply.WhichOneof("kind") == "answers"
        answers = reply.answers.answers
        assert [a.request_id for a in answers] == [r.request_id for r in requests]
        for answer, request in zip(answers, requests, strict=True):
            assert answer.action in request.legal_actions
        assert dispatcher.stats.decisions == 6
        assert dispatcher.tables == {"t0", "t1", "t2"}
        assert {(bot.table, bot.seat) for bot in made} == {(r.table, r.seat) for r in requests}
        assert len(made) == len({(r.table, r.seat) for r in requests})

    def test_one_bot_per_table_and_seat_until_the_table_closes(self) -> None:
        made = []

        def factory() -> Bot:
            made.append(RandomBot(seed=1))
            return made[-1]

        dispatcher = Dispatcher(factory)
        requests = _requests(1)
        dispatcher.handle_batch(_read(requests))
        dispatcher.handle_batch(_read(requests))
        assert len(made) == 1
        dispatcher.close_table("t0")
        assert dispatcher.tables == frozenset()
        dispatcher.handle_batch(_read(requests))
        assert len(made) == 2

    def test_a_batch_without_requests_needs_no_answer(self) -> None:
        assert Dispatcher(Bot).handle_batch(read_batch(nap_pb2.Batch())) is None

    def test_a_bot_exception_answers_the_lowest_legal_action_and_is_counted(self) -> None:
        lines: list[str] = []
        dispatcher = Dispatcher(Raising, log=lines.append)
        reply = _sent(dispatcher.handle_batch(_read(_requests(1))))
        assert isinstance(reply, nap_pb2.BotMessage)
        assert reply.answers.answers[0].action == "pass"
        assert dispatcher.stats.errors == 1
        assert "boom" in lines[0]
        assert "table t0" in lines[0]

    def test_an_illegal_answer_is_replaced(self) -> None:
        lines: list[str] = []
        dispatcher = Dispatcher(Illegal, log=lines.append)
        session = Session(HEATHER, table_size=4, seed=3)
        while session.deal.phase.value == "bidding":
            session.apply(PASS if session.deal.bids else Bid("three"))
        seat = session.to_act
        assert seat is not None
        request = request_to_proto(
            session.view(seat), table="x", request_id=7, deadline_ms=100, time_bank_ms=0
        )
        reply = _sent(dispatcher.handle_batch(_read([request])))
        assert isinstance(reply, nap_pb2.BotMessage)
        expected = fallback_action(session.legal_actions())
        assert reply.answers.answers[0].action == str(expected)
        assert dispatcher.stats.illegal == 1
        assert "blucher" in lines[0]

    def test_events_reach_bots_that_listen_and_only_those(self) -> None:
        session = Session(HEATHER, table_size=4, seed=1)
        [opening] = session.tell(0, session.opening, deal=0)
        event = told_to_proto(opening, table="t0", seat=0)
        listening = Dispatcher(Listening)
        listening.handle_batch(_read([], [event]))
        bot = listening.bot("t0", 0)
        assert isinstance(bot, Listening)
        assert len(bot.events) == 1
        assert wants_events(Listening)
        assert wants_events(functools.partial(Listening))
        assert not wants_events(PeelBot)
        assert not wants_events(lambda: RandomBot(seed=2))

    def test_views_kept_by_a_bot_read_right_later(self) -> None:
        """The SDK's views are decoded when read: one read after its table closed is still right."""
        kept: list[SeatView] = []

        class Keeping(Bot):
            def decide(self, view: SeatView) -> Action:
                kept.append(view)
                return view.legal_actions[0]

        dispatcher = Dispatcher(Keeping)
        session = Session(HEATHER, table_size=4, seed=5)
        requests: list[nap_pb2.DecisionRequest] = []
        while not session.over:
            seat = session.to_act
            assert seat is not None
            requests.append(
                request_to_proto(
                    session.view(seat),
                    table="t",
                    request_id=len(requests) + 1,
                    deadline_ms=1000,
                    time_bank_ms=0,
                )
            )
            reply = _sent(dispatcher.handle_batch(_read(requests[-1:])))
            assert isinstance(reply, nap_pb2.BotMessage)
            session.apply(parse_action(reply.answers.answers[0].action))
        dispatcher.close_table("t")
        assert len(kept) == len(requests) > 30
        assert kept == [view_from_proto(request) for request in requests]

    def test_a_view_that_does_not_decode_is_a_bot_error_only_for_bots_that_read_it(self) -> None:
        """A malformed hand fails the bot that reads the hand (lowest legal action), not one that does not."""
        request = _requests(1)[0]
        request.view.hand[0] = "1X"
        lines: list[str] = []
        reading = Dispatcher(PeelBot, log=lines.append)
        reply = _sent(reading.handle_batch(_read([request])))
        assert isinstance(reply, nap_pb2.BotMessage)
        assert reply.answers.answers[0].action == "pass"
        assert reading.stats.errors == 1
        assert "1X" in lines[0]
        random_bots = Dispatcher(RandomBot)
        reply = _sent(random_bots.handle_batch(_read([request])))
        assert isinstance(reply, nap_pb2.BotMessage)
        assert reply.answers.answers[0].action in request.legal_actions
        assert random_bots.stats.errors == 0

    def test_the_fallback_is_pass_else_the_lowest_card(self) -> None:
        assert fallback_action((PASS, Bid("three"))) is PASS
        assert fallback_action((Card("AS"), Card("2H"), Card("2C"))) == Card("2C")

    def test_a_bot_in_process_gets_the_same_fallback(self) -> None:
        session = Session(HEATHER, table_size=4, seed=3)
        view = session.view(session.to_act or 0)
        assert decide_or_fallback(Illegal(), view) == (
            fallback_action(view.legal_actions),
            "bot answered Bid('blucher'), not one of the legal actions",
        )
        assert decide_or_fallback(RandomBot(seed=1), view)[1] is None


class TestAnswersAsReady:
    """A batch that is not decided at once is handed over in parts, each answer when it is ready."""

    def test_a_slow_synchronous_batch_is_handed_over_each_time_the_flush_delay_passes(self) -> None:
        """3 ms a decision, 5 ms delay: the answers come two by two, in order, none lost."""
        clock = [0.0]
        requests = _requests(5, tables=5)
        dispatcher = Dispatcher(lambda: Ticking(clock), flush_after=0.005, clock=lambda: clock[0])
        reply = dispatcher.handle_batch(_read(requests))
        assert isinstance(reply, Answering)
        parts = [_ids(_sent(reply.take()))]
        assert reply.take() is None
        while not reply.decided:
            reply.resume()
            parts.append(_ids(_sent(reply.take())))
        assert parts == [[100, 101], [102, 103], [104]]
        assert reply.finished
        assert dispatcher.stats.decisions == 5

    def test_async_decisions_run_at_once_and_each_answer_is_ready_when_it_completes(self) -> None:
        """Four ``async def`` decisions all start (each waits for the others); an answer is
        ready as soon as its decision completes, those completing together come together,
        and one that raises gets the lowest legal action."""
        requests = _requests(4, tables=4)
        lines: list[str] = []

        async def main() -> tuple[list[nap_pb2.BotMessage | None], Dispatcher]:
            gates = Gates(4, raising=frozenset({3}))
            dispatcher = Dispatcher(lambda: Gated(gates), log=lines.append, clock=_still)
            reply = dispatcher.handle_batch(_read(requests))
            assert isinstance(reply, Answering)
            assert reply.decided
            assert reply.take() is None
            await asyncio.wait_for(gates.all_started.wait(), 10)
            parts = []
            for opened in ([2], [0, 1], [3]):
                for number in opened:
                    gates.open[number].set()
                await asyncio.wait_for(reply.wait(), 10)
                parts.append(_sent(reply.take()))
            await asyncio.wait_for(reply.wait(), 10)
            assert reply.finished
            return parts, dispatcher

        parts, dispatcher = asyncio.run(main())
        assert [_ids(part) for part in parts] == [[102], [100, 101], [103]]
        assert parts[2] is not None
        assert parts[2].answers.answers[0].action == "pass"
        assert dispatcher.stats.decisions == 4
        assert dispatcher.stats.errors == 1
        assert "boom" in lines[0]
        assert "table t3" in lines[0]

    def test_an_awaitable_cancelled_under_the_bot_is_a_bot_error(self) -> None:
        """A ``decide`` whose awaitable is cancelled (not the SDK's task) gets the lowest legal action."""

        class Cancelled(Bot):
            def decide(self, view: SeatView) -> Action:
                future: asyncio.Future[Action] = asyncio.get_running_loop().create_future()
                future.cancel()
                return future  # type: ignore[return-value]

        lines: list[str] = []

        async def main() -> tuple[nap_pb2.BotMessage | None, Dispatcher]:
            dispatcher = Dispatcher(Cancelled, log=lines.append)
            reply = dispatcher.handle_batch(_read(_requests(1)))
            assert isinstance(reply, Answering)
            await asyncio.wait_for(reply.wait(), 10)
            return _sent(reply.take()), dispatcher

        message, dispatcher = asyncio.run(main())
        assert message is not None
        assert [answer.action for answer in message.answers.answers] == ["pass"]
        assert dispatcher.stats.errors == 1
        assert "CancelledError" in lines[0]


# ---------------------------------------------------------------------------- fake referee


Script = Callable[
    [AsyncIterator[nap_pb2.BotMessage], grpc.aio.ServicerContext], AsyncIterator[nap_pb2.RefereeMessage]
]


class FakeReferee(nap_pb2_grpc.RefereeServicer):  # type: ignore[misc]
    """A referee whose Play is a script; it records what each stream received."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.streams: list[list[nap_pb2.BotMessage]] = []

    async def Play(  # noqa: N802 - grpc's name
        self,
        request_iterator: AsyncIterator[nap_pb2.BotMessage],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[nap_pb2.RefereeMessage]:
        received: list[nap_pb2.BotMessage] = []
        self.streams.append(received)

        async def recorded() -> AsyncIterator[nap_pb2.BotMessage]:
            async for message in request_iterator:
                received.append(message)
                yield message

        async for message in self.script(recorded(), context):
            yield message


async def _with_fake(fake: FakeReferee, body: Callable[[str], Awaitable[Any]]) -> Any:
    server = grpc.aio.server()
    nap_pb2_grpc.add_RefereeServicer_to_server(fake, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        return await body(f"127.0.0.1:{port}")
    finally:
        await server.stop(0)


def _welcome() -> nap_pb2.RefereeMessage:
    return nap_pb2.RefereeMessage(welcome=nap_pb2.Welcome(protocol_version=1, bot_id="b", max_outstanding=64))


def _options(address: str, **changes: Any) -> Options:
    return Options(address=address, token="secret", name="t", **changes)


class Eager(Bot):
    """A bot of bids and cards only (written before the pool variants): it bids the lowest contract it may."""

    def bid(self, view: SeatView) -> Bid:
        bids = [action for action in view.legal_actions if isinstance(action, Bid)]
        return bids[1] if len(bids) > 1 else bids[0]


class Exchanger(Eager, Listening):
    """Bids like Eager; exchanges its lowest card, peeps when it may, takes the widow for its lowest card."""

    def exchange(self, view: SeatView) -> Exchange:
        return Exchange((min(view.hand, key=lambda card: card.rank),))

    def peep(self, view: SeatView) -> bool:
        return True

    def take_widow(self, view: SeatView) -> TakeWidow:
        return TakeWidow(min(view.hand, key=lambda card: card.rank))


def _play_over_the_wire(
    profile: str, factory: Callable[[], Bot], *, seed: int = 3
) -> tuple[Session, Dispatcher]:
    """Play a four-seat session of ``profile`` through a Dispatcher: each request and each told event
    goes over the wire as the referee sends it, and the answer comes back as text."""
    session = Session(get_profile(profile), table_size=4, seed=seed)
    dispatcher = Dispatcher(factory)
    events, deal = session.opening, 0
    request_id = 0
    while not session.over:
        seat = session.to_act
        assert seat is not None
        told = [
            told_to_proto(item, table="t", seat=other)
            for other in range(4)
            for item in session.tell(other, events, deal=deal)
        ]
        request_id += 1
        request = request_to_proto(
            session.view(seat), table="t", request_id=request_id, deadline_ms=1000, time_bank_ms=0
        )
        reply = _sent(dispatcher.handle_batch(read_batch(nap_pb2.Batch(requests=[request], events=told))))
        assert isinstance(reply, nap_pb2.BotMessage)
        (answer,) = reply.answers.answers
        assert answer.action in request.legal_actions
        deal = len(session.deals) - 1
        events = session.apply(parse_action(answer.action))
    return session, dispatcher


class TestPoolDecisions:
    """The pool variants' decisions reach a Bot's exchange, peep and take_widow; each declines by default."""

    @pytest.mark.parametrize("profile", ["purchase", "ecarte", "peep"])
    def test_a_bot_of_bids_and_cards_declines_them(self, profile: str) -> None:
        session, dispatcher = _play_over_the_wire(profile, Eager)
        actions = [str(action) for deal in session.deals for action in deal.actions]
        assert "peep" not in actions
        assert {action for action in actions if action.startswith(("exchange:", "widow:"))} == (
            {"widow:none"} if profile == "peep" else {"exchange:none"}
        )
        assert dispatcher.stats.errors == dispatcher.stats.illegal == 0

    @pytest.mark.parametrize("profile", ["ecarte", "peep"])
    def test_a_bot_that_answers_them_is_heard_and_sees_their_events(self, profile: str) -> None:
        """Its exchanges, peeps and widows are played as it chose; on_event gets the pool's events."""
        bots: list[Exchanger] = []

        def factory() -> Exchanger:
            bots.append(Exchanger())
            return bots[-1]

        session, dispatcher = _play_over_the_wire(profile, factory)
        actions = [str(action) for deal in session.deals for action in deal.actions]
        told = {type(event).__name__ for bot in bots for event in bot.events}
        assert dispatcher.stats.errors == dispatcher.stats.illegal == 0
        if profile == "peep":
            assert "peep" in actions
            assert any(action.startswith("widow:") and action != "widow:none" for action in actions)
            assert {"WidowPeeked", "WidowTaken", "ChipsPaid"} <= told
        else:
            assert any(action.startswith("exchange:") and action != "exchange:none" for action in actions)
            assert {"CardsExchanged", "ChipsPaid"} <= told


class TestStream:
    def test_hello_then_answers_to_the_batch_then_ok(self) -> None:
        """The fake sends one Batch of five requests from five tables: five answers come back."""
        requests = _requests(5, tables=5)
        answers: list[nap_pb2.Answer] = []

        async def script(
            incoming: AsyncIterator[nap_pb2.BotMessage], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[nap_pb2.RefereeMessage]:
            hello = await anext(incoming)
            assert hello.hello.token == "secret"
            assert hello.hello.protocol_version == 1
            assert hello.hello.max_batch == 256
            assert hello.hello.notices_in_batch
            assert not hello.hello.events
            assert list(hello.hello.decisions) == ["exchange", "peep", "widow"]  # Bot declines each
            yield _welcome()
            yield nap_pb2.RefereeMessage(batch=_batch(requests))
            while len(answers) < 5:  # one Answers message, unless the machine stalled the bot
                answers.extend((await anext(incoming)).answers.answers)
            for table in range(5):
                yield nap_pb2.RefereeMessage(table_closed=nap_pb2.TableClosed(table=f"t{table}"))

        async def body(address: str) -> ExitCode:
            return await asyncio.wait_for(serve(PeelBot, _options(address)), 10)

        assert asyncio.run(_with_fake(FakeReferee(script), body)) is ExitCode.OK
        assert sorted(answer.request_id for answer in answers) == [r.request_id for r in requests]

    def test_async_decisions_run_at_once_and_each_answer_leaves_when_ready(self) -> None:
        """Ten ``async def`` decisions in one batch: all start at once (each waits until all
        ten have), and each answer is sent as soon as it is ready: the fake lets decision
        i + 1 finish only once it has received the answer to decision i."""
        requests = _requests(10, tables=10)
        gates = Gates(10)
        received: list[nap_pb2.BotMessage] = []

        async def script(
            incoming: AsyncIterator[nap_pb2.BotMessage], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[nap_pb2.RefereeMessage]:
            await anext(incoming)
            yield _welcome()
            yield nap_pb2.RefereeMessage(batch=_batch(requests))
            gates.open[0].set()
            for number in range(1, 11):
                received.append(await anext(incoming))
                if number < 10:
                    gates.open[number].set()

        async def body(address: str) -> ExitCode:
            return await asyncio.wait_for(serve(lambda: Gated(gates), _options(address)), 10)

        assert asyncio.run(_with_fake(FakeReferee(script), body)) is ExitCode.OK
        assert [_ids(message) for message in received] == [[r.request_id] for r in requests]

    def test_a_slow_synchronous_batch_sends_its_first_answers_before_its_last(self) -> None:
        """Three decisions of twice the flush delay each, one after another: the first answers
        reach the referee in an earlier Answers message than the last."""
        requests = _requests(3, tables=3)
        received: list[nap_pb2.BotMessage] = []

        async def script(
            incoming: AsyncIterator[nap_pb2.BotMessage], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[nap_pb2.RefereeMessage]:
            await anext(incoming)
            yield _welcome()
            yield nap_pb2.RefereeMessage(batch=_batch(requests))
            while sum(len(message.answers.answers) for message in received) < 3:
                received.append(await anext(incoming))

        async def body(address: str) -> ExitCode:
            return await asyncio.wait_for(serve(Sleepy, _options(address)), 10)

        assert asyncio.run(_with_fake(FakeReferee(script), body)) is ExitCode.OK
        assert [_ids(message) for message in received] == [[100], [101], [102]]

    def test_bots_get_the_rules_the_referee_announced(self) -> None:
        """House rules (a 32-card pack, four deals) in the Welcome reach every bot as its rules."""
        house = dataclasses.replace(HEATHER, name="pub", pack_size=32, max_players=6, deals_per_session=4)
        seen: list[Profile | None] = []

        class Curious(Bot):
            def decide(self, view: SeatView) -> Action:
                seen.append(self.rules)
                return view.legal_actions[0]

        async def script(
            incoming: AsyncIterator[nap_pb2.BotMessage], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[nap_pb2.RefereeMessage]:
            await anext(incoming)
            welcome = _welcome()
            welcome.welcome.profile.CopyFrom(profile_to_proto(house))
            yield welcome
            yield nap_pb2.RefereeMessage(batch=_batch(_requests(2, tables=2)))
            await anext(incoming)

        async def body(address: str) -> ExitCode:
            return await asyncio.wait_for(serve(Curious, _options(address)), 10)

        asyncio.run(_with_fake(FakeReferee(script), body))
        assert seen == [house, house]

    def test_a_listening_bot_asks_for_events(self) -> None:
        hellos: list[nap_pb2.Hello] = []

        async def script(
            incoming: AsyncIterator[nap_pb2.BotMessage], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[nap_pb2.RefereeMessage]:
            hellos.append((await anext(incoming)).hello)
            yield _welcome()

        async def body(address: str) -> ExitCode:
            return await asyncio.wait_for(serve(Listening, _options(address)), 10)

        assert asyncio.run(_with_fake(FakeReferee(script), body)) is ExitCode.OK
        assert hellos[0].events

    def test_unknown_token_is_refused(self) -> None:
        async def script(
            incoming: AsyncIterator[nap_pb2.BotMessage], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[nap_pb2.RefereeMessage]:
            await anext(incoming)
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token")
            yield _welcome()  # never reached

        async def body(address: str) -> ExitCode:
            return await asyncio.wait_for(serve(PeelBot, _options(address)), 10)

        assert asyncio.run(_with_fake(FakeReferee(script), body)) is ExitCode.REFUSED

    def test_a_refusal_ends_the_bot(self) -> None:
        async def script(
            incoming: AsyncIterator[nap_pb2.BotMessage], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[nap_pb2.RefereeMessage]:
            await anext(incoming)
            yield nap_pb2.RefereeMessage(
                refusal=nap_pb2.Refusal(reason=nap_pb2.REFUSAL_REASON_NO_TABLES, message="tournament over")
            )

        async def body(address: str) -> ExitCode:
            return await asyncio.wait_for(serve(PeelBot, _options(address)), 10)

        assert asyncio.run(_with_fake(FakeReferee(script), body)) is ExitCode.REFUSED

    def test_a_broken_stream_reconnects_with_the_same_token(self) -> None:
        calls = 0

        async def script(
            incoming: AsyncIterator[nap_pb2.BotMessage], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[nap_pb2.RefereeMessage]:
            nonlocal calls
            calls += 1
            await anext(incoming)
            yield _welcome()
            if calls == 1:
                await context.abort(grpc.StatusCode.UNAVAILABLE, "going away")
            yield nap_pb2.RefereeMessage(batch=_batch(_requests(2, tables=2)))
            await anext(incoming)

        async def body(address: str) -> ExitCode:
            return await asyncio.wait_for(serve(PeelBot, _options(address)), 10)

        fake = FakeReferee(script)
        code = asyncio.run(_with_fake(fake, body))
        assert code is ExitCode.OK
        assert calls == 2
        assert [s[0].hello.token for s in fake.streams] == ["secret", "secret"]
        assert len(fake.streams[1]) == 2  # hello, then the answers

    @pytest.mark.slow
    def test_an_unreachable_referee_gives_up_after_the_budget(self) -> None:
        async def body() -> tuple[ExitCode, float]:
            started = time.monotonic()
            code = await serve(PeelBot, _options("127.0.0.1:1", reconnect_for=0.5))
            return code, time.monotonic() - started

        code, took = asyncio.run(body())
        assert code is ExitCode.UNREACHABLE
        assert took < 5


# ---------------------------------------------------------------------------- real processes


def _bot_process(module: str, address: str, token: str, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", f"clients.bots.{module}", "--address", address, "--token", token, *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )


def _finish(proc: subprocess.Popen[str], timeout: float) -> tuple[int, str]:
    """Wait up to ``timeout`` s for a bot process to exit, then kill it; its exit code and stderr.

    Reads both pipes to their end, which closes them (an open one is a ResourceWarning).
    Safe to call again on a process already finished.
    """
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return proc.returncode, err


def _referee_api() -> Any:
    return pytest.importorskip("referee.server")


@pytest.mark.slow
class TestRealReferee:
    def test_bot_processes_play_a_session(self) -> None:
        """Two random and two Peel processes finish a four-seat session on the real referee."""
        server = _referee_api()

        async def main() -> tuple[Any, list[subprocess.Popen[str]]]:
            referee = server.Referee()
            names = ["r1", "r2", "p1", "p2"]
            for name in names:
                referee.add_bot(name=name, token=f"tok-{name}")
            port = await referee.start(port=0)
            address = f"127.0.0.1:{port}"
            procs = [
                _bot_process("random_bot", address, "tok-r1", "--seed", "1"),
                _bot_process("random_bot", address, "tok-r2", "--seed", "2"),
                _bot_process("peel", address, "tok-p1"),
                _bot_process("peel", address, "tok-p2"),
            ]
            try:
                for name in names:
                    await referee.wait_for_bot(name, timeout=20)
                spec = server.SessionSpec(
                    table="s1", profile=HEATHER, seed=5, seats=tuple(names), time_limits=server.TimeLimits()
                )
                outcome = await asyncio.wait_for(referee.play_session(spec), 60)
            finally:
                await referee.stop()
            return outcome, procs

        outcome, procs = asyncio.run(main())
        finished = [_finish(proc, timeout=20) for proc in procs]
        assert outcome.faults == ()
        assert len(outcome.record.deals) == HEATHER.deals_per_session
        assert [code for code, _ in finished] == [0, 0, 0, 0], [err for _, err in finished]

    def test_sigterm_says_goodbye_and_exits_zero(self) -> None:
        server = _referee_api()

        async def main() -> tuple[int, float]:
            referee = server.Referee()
            referee.add_bot(name="r", token="tok-r")
            port = await referee.start(port=0)
            proc = _bot_process("random_bot", f"127.0.0.1:{port}", "tok-r")
            try:
                await referee.wait_for_bot("r", timeout=20)
                proc.send_signal(signal.SIGTERM)
                started = time.monotonic()
                code, _ = await asyncio.to_thread(_finish, proc, 10)
                took = time.monotonic() - started
                for _ in range(50):
                    if not referee.is_connected("r"):
                        break
                    await asyncio.sleep(0.05)
                assert not referee.is_connected("r")
            finally:
                _finish(proc, timeout=0)
                await referee.stop()
            return code, took

        code, took = asyncio.run(main())
        assert code == 0
        assert took < 5

    def test_an_unknown_token_exits_non_zero_with_one_line(self) -> None:
        server = _referee_api()

        async def main() -> tuple[int, str]:
            referee = server.Referee()
            referee.add_bot(name="r", token="tok-r")
            port = await referee.start(port=0)
            proc = _bot_process("peel", f"127.0.0.1:{port}", "wrong")
            try:
                code, err = await asyncio.to_thread(_finish, proc, 20)
            finally:
                _finish(proc, timeout=0)
                await referee.stop()
            return code, err

        code, err = asyncio.run(main())
        assert code == ExitCode.REFUSED
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert "token" in lines[0]
        assert lines[0].startswith("peel: ")


def test_answers_queued_behind_a_write_leave_together_in_the_next() -> None:
    """While one Answers message is being written, those that queue up go out as one message."""
    from clients.sdk.connection import Connection  # noqa: PLC0415

    class SlowCall:
        def __init__(self) -> None:
            self.written: list[list[int]] = []
            self.release = asyncio.Event()

        async def write(self, data: bytes) -> None:
            await self.release.wait()
            message = nap_pb2.BotMessage.FromString(data)
            self.written.append([answer.request_id for answer in message.answers.answers])

    def answers(*ids: int) -> Answers:
        return tuple(Answer(request_id, "pass") for request_id in ids)

    async def scenario() -> list[list[int]]:
        connection = Connection(Options(address="-", token="-", name="t"), Dispatcher(RandomBot), log=print)
        call = SlowCall()
        writes = [asyncio.create_task(connection._write(call, answers(*ids))) for ids in ((1,), (2, 3), (4,))]  # noqa: SLF001
        await asyncio.sleep(0)
        call.release.set()
        assert all(await asyncio.gather(*writes))
        return call.written

    assert asyncio.run(scenario()) == [[1], [2, 3, 4]]


def test_answers_are_written_byte_for_byte_as_protobuf_writes_them() -> None:
    """The SDK writes its Answers by hand: the same bytes as the generated code, for every kind of answer."""
    rng = random.Random(7)
    texts = ["pass", "nap", "10S", "QH", "exchange:2C.3D", "widow:AS", "", "é…" * 50, "x" * 300]
    ids = (0, 1, 127, 128, 1 << 20, 1 << 40)
    for size in (0, 1, 2, 45, 256):
        answers = tuple(Answer(rng.choice(ids), rng.choice(texts)) for _ in range(size))
        expected = nap_pb2.BotMessage()
        expected.answers.SetInParent()
        for answer in answers:
            expected.answers.answers.add(request_id=answer.request_id, action=answer.action)
        assert answers_message(answers) == expected.SerializeToString()
