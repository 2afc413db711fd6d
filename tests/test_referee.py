"""The referee plays whole sessions with real bot processes over a real gRPC server.

Behaviours: sessions at 3, 4 and 7 seats replay exactly from their records; no message
a bot receives shows a card its seat may not see; batches respect the outstanding cap;
health and reflection answer; authentication and hello checks; a busy port is one line.
"""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import grpc  # type: ignore[import-untyped]  # grpcio ships no stubs
import pytest
from google.protobuf.descriptor import FieldDescriptor
from grpc_health.v1 import health_pb2, health_pb2_grpc  # type: ignore[import-untyped]
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc  # type: ignore[import-untyped]
from harness import REPO, arena, read_dump, script, sdk_random_bot, spec

from referee.rules import PROFILES, Card, SessionRecord, replay, verify
from referee.server import ServerLimits, SessionOutcome
from referee.server.service import PlayService
from referee.wire import nap_pb2
from referee.wire.stream import RefusalReason

if TYPE_CHECKING:
    from pathlib import Path

    from google.protobuf.message import Message

pytestmark = pytest.mark.slow


def _check_replays(record: SessionRecord) -> None:
    replayed = replay(record)
    assert tuple(replayed.balances) == record.balances
    assert replayed.winners == record.winners
    assert verify(record) == []


def test_full_sessions_at_three_four_and_seven_seats() -> None:
    """Four SDK random bots fill tables of 3, 4 and 7 seats (a bot may hold several seats)."""
    names = ("r0", "r1", "r2", "r3")

    async def scenario() -> None:
        async with arena() as ring:
            for index, name in enumerate(names):
                await ring.bot(name, sdk_random_bot("--seed", str(index)))
            specs = [
                spec(f"s{size}-{seed}", tuple(names[i % 4] for i in range(size)), seed=seed, profile=profile)
                for size, profile in (
                    (3, PROFILES["heather"]),
                    (4, PROFILES["two-to-five"]),
                    (7, PROFILES["heather"]),
                    (5, PROFILES["full-ladder"]),
                )
                for seed in range(3)
            ]
            outcomes = await asyncio.wait_for(
                asyncio.gather(*(ring.referee.play_session(s) for s in specs)), 60
            )
            for session_spec, outcome in zip(specs, outcomes, strict=True):
                record = outcome.record
                assert record.table_size == len(session_spec.seats)
                assert record.winners
                assert outcome.faults == ()
                assert outcome.disqualified == ()
                _check_replays(record)
                assert [[d.action for d in deal] for deal in outcome.decisions] == [
                    [str(a) for a in deal.actions] for deal in record.deals
                ]
                assert all(d.fault is None for deal in outcome.decisions for d in deal)

    asyncio.run(scenario())


@dataclass(frozen=True)
class DealFacts:
    """What really happened in one deal, replayed from its record: what a seat may see is judged by it."""

    dealt: dict[int, frozenset[str]]
    """Each seat's hand as dealt."""
    drawn: dict[int, frozenset[str]]
    """The cards each seat drew from the stock."""
    discarded: dict[int, frozenset[str]]
    """The cards each seat gave up (exchange, widow)."""
    plays: list[tuple[int, str]]
    """Every card played, in order."""
    widow: str | None
    peeked: tuple[int, ...]
    declarer: int | None
    widow_taken: bool | None

    def saw_widow(self, seat: int) -> bool:
        """Whether ``seat`` may see the widow at the end of the deal (it peeped, or took it)."""
        return seat in self.peeked or (self.widow_taken is True and seat == self.declarer)

    def allowed(self, seat: int) -> frozenset[str]:
        """Every card ``seat`` may ever see in this deal (a seat not dealt in: the cards played)."""
        none: frozenset[str] = frozenset()
        cards = (
            self.dealt.get(seat, none)
            | self.drawn.get(seat, none)
            | self.discarded.get(seat, none)
            | {card for _, card in self.plays}
        )
        if self.widow is not None and self.saw_widow(seat):
            cards |= {self.widow}
        return cards


def _facts(record: SessionRecord, number: int) -> DealFacts:
    from referee.rules import Deal  # noqa: PLC0415

    deal_record = record.deals[number]
    deal = Deal(
        record.profile,
        deck=deal_record.deck,
        dealer=deal_record.dealer,
        table_size=record.table_size,
        seats=deal_record.seats,
    )
    dealt = {seat: frozenset(str(card) for card in deal.hands[seat]) for seat in deal_record.seats}
    plays = []
    for action in deal_record.actions:
        seat = deal.to_act
        if isinstance(action, Card):
            assert seat is not None  # someone is to play while cards are played
            plays.append((seat, str(action)))
        deal.apply(action)
    return DealFacts(
        dealt=dealt,
        drawn={seat: frozenset(map(str, deal.drawn[seat])) for seat in deal_record.seats},
        discarded={seat: frozenset(map(str, deal.discarded[seat])) for seat in deal_record.seats},
        plays=plays,
        widow=None if deal.widow is None else str(deal.widow),
        peeked=deal.peeked,
        declarer=deal.declarer,
        widow_taken=deal.widow_taken,
    )


_CARD_TEXT = re.compile(r"^(?:10|[2-9AKQJ])[CDHS]$")


def _cards_in(message: Message) -> set[str]:
    """Every card named anywhere in ``message``: in any string field, actions ("exchange:2C,9H") included."""
    found: set[str] = set()
    for field, value in message.ListFields():
        values = value if field.is_repeated else [value]
        for item in values:
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                found |= _cards_in(item)
            elif field.type == FieldDescriptor.TYPE_STRING:
                found |= {part for part in re.split("[:,]", item) if _CARD_TEXT.match(part)}
    return found


def _check_view(view: nap_pb2.SeatView, facts: DealFacts, hand_size: int) -> None:
    """The view's played cards are a prefix of the deal's plays; its hand, draws, discards, widow its own."""
    seat = view.seat
    seen = [(p.seat, p.card) for t in view.completed_tricks for p in t.cards]
    seen += [(p.seat, p.card) for p in view.current_trick.cards]
    assert seen == facts.plays[: len(seen)]
    own_played = {card for played_by, card in seen if played_by == seat}
    may_hold = facts.dealt[seat] | facts.drawn[seat]
    if view.widow_taken and view.declarer == seat and facts.widow is not None:
        may_hold |= {facts.widow}
    assert set(view.hand) <= may_hold - set(view.discarded) - own_played
    assert len(view.hand) == hand_size - len(own_played)
    assert set(view.drawn) <= facts.drawn[seat]
    assert set(view.discarded) <= facts.discarded[seat]
    if view.widow:
        assert view.widow == facts.widow
        assert seat in view.peeked or (view.declarer == seat and view.widow_taken)


SECRET_TABLES = (
    [(3 + seed % 3, PROFILES["full-ladder"]) for seed in range(12)]
    + [(size, PROFILES["seven-card"]) for size in (3, 4, 5, 6, 7, 7)]
    + [(size, PROFILES[name]) for name in ("purchase", "ecarte", "peep") for size in (3, 4, 5, 7)]
)
"""Table size and profile of each session of the hidden-card test, by seed."""


def test_no_message_shows_a_hidden_card(tmp_path: Path) -> None:  # noqa: C901, PLR0912
    """Every request and event each bot receives names only cards its seat may see.

    Five-card sessions (full-ladder) and seven-card ones (seven cards each, 49 of the 52
    dealt at seven seats), at three to seven seats; and the pool variants (Purchase, Écarté,
    Peep Nap), played by random bots that exchange, peep and take the widow at random:
    never another seat's hand or drawn cards, never a card given up but by the seat that
    gave it, never the widow but to a seat that peeped or the declarer that took it.
    """
    names = ("h0", "h1", "h2")
    dumps = {name: tmp_path / f"{name}.bin" for name in names}

    async def scenario() -> list[SessionOutcome]:
        async with arena() as ring:
            for index, name in enumerate(names):
                await ring.bot(
                    name,
                    script(
                        "random_bot",
                        "--events",
                        "--seed",
                        str(index),
                        "--max-batch",
                        "8",
                        "--decisions",
                        "exchange,peep,widow",
                        "--dump",
                        str(dumps[name]),
                    ),
                )
            specs = [
                spec(
                    f"hid-{seed}",
                    tuple(names[(seed + i) % 3] for i in range(size)),
                    seed=seed,
                    profile=profile,
                )
                for seed, (size, profile) in enumerate(SECRET_TABLES)
            ]
            return list(
                await asyncio.wait_for(asyncio.gather(*(ring.referee.play_session(s) for s in specs)), 120)
            )

    outcomes = asyncio.run(scenario())
    facts: dict[tuple[str, int], DealFacts] = {}
    hand_sizes: dict[str, int] = {}
    seats_of: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    for index, outcome in enumerate(outcomes):
        table = f"hid-{index}"
        record = outcome.record
        hand_sizes[table] = record.profile.hand_size
        for number in range(len(record.deals)):
            facts[(table, number)] = _facts(record, number)
        for seat in range(record.table_size):
            seats_of[table][names[(index + seat) % 3]].add(seat)
    checked = seven_cards = 0
    pool_seen: set[str] = set()
    for name, path in dumps.items():
        for message in read_dump(path):
            if message.WhichOneof("kind") != "batch":
                continue
            for request in message.batch.requests:
                assert request.seat in seats_of[request.table][name]
                deal = facts[(request.table, request.view.deal_number)]
                assert _cards_in(request) <= deal.allowed(request.seat)
                _check_view(request.view, deal, hand_sizes[request.table])
                hand = set(request.view.hand)
                for action in request.legal_actions:
                    if action != "peep" and request.view.phase != nap_pb2.PHASE_BIDDING:
                        assert set(re.split("[:,]", action)) - {"exchange", "widow", "none"} <= hand
                pool_seen.update(field.name for field, _ in request.view.ListFields())
                checked += 1
                seven_cards += len(request.view.hand) == 7
            for event in message.batch.events:
                assert event.seat in seats_of[event.table][name]
                deal = facts[(event.table, event.deal_number)]
                assert _cards_in(event) <= deal.allowed(event.seat)
                kind = event.WhichOneof("event")
                if kind == "deal_started":
                    assert set(event.deal_started.hand) == deal.dealt.get(event.seat, set())
                elif kind == "card_played":
                    assert (event.card_played.seat, event.card_played.card) in deal.plays
                elif kind == "trick_won":
                    for p in event.trick_won.cards:
                        assert (p.seat, p.card) in deal.plays
                elif kind == "cards_exchanged":
                    exchanged = event.cards_exchanged
                    assert exchanged.count == len(deal.drawn[exchanged.seat])
                pool_seen.add(kind or "")
                checked += 1
    assert checked > 1000
    assert seven_cards > 50
    # the pool variants' fields and events did go by (else the checks above prove little)
    assert {"widow", "drawn", "discarded", "exchanged", "peeked", "widow_taken", "pool"} <= pool_seen
    assert {"cards_exchanged", "widow_peeked", "widow_taken", "chips_paid"} <= pool_seen


def test_batches_respect_the_outstanding_cap(tmp_path: Path) -> None:
    """A bot with max_batch 2 never gets more than 2 requests in one batch, across 6 tables."""
    dump = tmp_path / "capped.bin"

    async def scenario() -> None:
        async with arena(ServerLimits(max_outstanding=16)) as ring:
            await ring.bot("capped", script("random_bot", "--max-batch", "2", "--dump", str(dump)))
            specs = [spec(f"cap-{i}", ("capped",) * 4, seed=i) for i in range(6)]
            outcomes = await asyncio.gather(*(ring.referee.play_session(s) for s in specs))
            assert all(not o.faults for o in outcomes)

    asyncio.run(scenario())
    messages = read_dump(dump)
    assert messages[0].welcome.max_outstanding == 2
    sizes = [len(m.batch.requests) for m in messages if m.WhichOneof("kind") == "batch"]
    assert max(sizes) == 2
    assert sum(sizes) > 100


def test_health_reflection_auth_and_hello_checks() -> None:
    """Health says SERVING, reflection lists the service, bad tokens and hellos are turned away."""

    async def scenario() -> None:
        async with arena() as ring:
            ring.referee.add_bot(name="known", token="good-token")  # noqa: S106
            async with grpc.aio.insecure_channel(f"127.0.0.1:{ring.port}") as channel:
                check = health_pb2_grpc.HealthStub(channel).Check
                reply = await check(health_pb2.HealthCheckRequest(service="nap.v1.Referee"))
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
                stub = reflection_pb2_grpc.ServerReflectionStub(channel)
                responses = stub.ServerReflectionInfo(
                    iter([reflection_pb2.ServerReflectionRequest(list_services="")])
                )
                names = [s.name async for r in responses for s in r.list_services_response.service]
                assert "nap.v1.Referee" in names

                async def hello(token: str, version: int = 1) -> nap_pb2.RefereeMessage:
                    call = channel.stream_stream(
                        "/nap.v1.Referee/Play",
                        request_serializer=nap_pb2.BotMessage.SerializeToString,
                        response_deserializer=nap_pb2.RefereeMessage.FromString,
                    )()
                    message = nap_pb2.BotMessage()
                    message.hello.token = token
                    message.hello.protocol_version = version
                    message.hello.max_batch = 4
                    await call.write(message)
                    first: nap_pb2.RefereeMessage = await call.read()
                    if version == 1 and token == "good-token":  # noqa: S105
                        return first
                    call.cancel()
                    return first

                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await hello("wrong")
                assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
                refused = await hello("good-token", version=2)
                assert refused.refusal.reason == nap_pb2.REFUSAL_REASON_PROTOCOL_VERSION
                # the refusal is the referee's value too (what a bot process that exits over it gets)
                taken = ring.referee.take_refusal("known")
                assert taken == (RefusalReason.PROTOCOL_VERSION, refused.refusal.message)
                assert ring.referee.take_refusal("known") is None  # taken once
                await hello("good-token", version=2)  # refused again, then it connects: none to take
                welcome = await hello("good-token")
                assert welcome.welcome.bot_id == "known"
                assert welcome.welcome.profile.name == "heather"
                assert welcome.welcome.max_outstanding == 4
                assert ring.referee.is_connected("known")
                assert ring.referee.take_refusal("known") is None
                again = await hello("good-token")  # a reconnect takes over (tests/test_referee_limits.py)
                assert again.welcome.bot_id == "known"
            ring.referee.add_bot(name="never", token="t-never")  # noqa: S106
            with pytest.raises(TimeoutError, match="'never' did not connect"):
                await ring.referee.wait_for_bot("never", timeout=0.05)

    asyncio.run(scenario())


class TestDecisionKinds:
    """A bot's Hello lists the decisions beyond bids and cards it answers; the profile says what it must."""

    def test_an_old_bot_is_refused_for_purchase_and_plays_heather(self, tmp_path: Path) -> None:
        """An unchanged raw gRPC bot (its Hello lists no decision kinds) is refused at hello for
        Purchase Nap, with the reason and a line naming the kinds and the profile; the same
        bot plays a heather session as it always did."""
        dump = tmp_path / "old.bin"

        async def refused() -> int | None:
            async with arena(profile=PROFILES["purchase"]) as ring:
                await ring.bot("old", script("random_bot", "--dump", str(dump)), wait=False)
                code = await asyncio.wait_for(ring.processes[0].wait(), 30)
                assert not ring.referee.is_connected("old")
                return code

        assert asyncio.run(refused()) == 0
        (message,) = read_dump(dump)
        assert message.refusal.reason == nap_pb2.REFUSAL_REASON_UNSUPPORTED_DECISIONS
        assert message.refusal.message == (
            "profile 'purchase' asks exchange decisions, which this bot's Hello does not list "
            "(Hello.decisions: none)"
        )

        async def plays() -> SessionOutcome:
            async with arena() as ring:
                await ring.bot("old", script("random_bot"))
                return await asyncio.wait_for(ring.referee.play_session(spec("t", ("old",) * 3)), 60)

        outcome = asyncio.run(plays())
        assert outcome.faults == ()
        _check_replays(outcome.record)

    def test_peep_needs_both_its_kinds_and_a_bot_that_lists_them_plays(self, tmp_path: Path) -> None:
        """Listing only "peep" is not enough for Peep Nap (the widow too); listing both, a bot plays it.

        A session of a profile other than the referee's is judged when it starts: a bot
        that cannot answer its decisions makes play_session raise, before anything is played.
        """
        dump = tmp_path / "half.bin"

        async def scenario() -> SessionOutcome:
            async with arena(profile=PROFILES["peep"]) as ring:
                await ring.bot(
                    "half", script("random_bot", "--decisions", "peep", "--dump", str(dump)), wait=False
                )
                await asyncio.wait_for(ring.processes[0].wait(), 30)
                await ring.bot("able", script("random_bot", "--decisions", "exchange,peep,widow,future"))
                outcome = await asyncio.wait_for(
                    ring.referee.play_session(spec("p", ("able",) * 4, profile=PROFILES["peep"])), 60
                )
            async with arena() as ring:
                await ring.bot("old", script("random_bot"))
                with pytest.raises(
                    ValueError, match=r"'old' cannot sit at table 'e'.*'ecarte' asks exchange"
                ):
                    await ring.referee.play_session(spec("e", ("old",) * 3, profile=PROFILES["ecarte"]))
            return outcome

        outcome = asyncio.run(scenario())
        (message,) = read_dump(dump)
        assert message.refusal.reason == nap_pb2.REFUSAL_REASON_UNSUPPORTED_DECISIONS
        assert "'peep' asks widow decisions" in message.refusal.message
        assert "(Hello.decisions: peep)" in message.refusal.message
        assert outcome.faults == ()
        _check_replays(outcome.record)
        assert any(str(action) == "peep" for deal in outcome.record.deals for action in deal.actions)


def test_a_stop_leaves_no_call_for_the_loop_to_cancel(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Once ``stop`` returns, gRPC's task for every call has ended, even for a stream slow to end.

    Else ``asyncio.run`` ending right after the stop (a tournament ending on an error)
    cancels those tasks, and grpc prints a traceback per stream on stderr. Streams whose
    handler is still busy when the grace ends stand for a loaded machine's."""

    async def busy(_service: object, _requests: object, _context: object) -> None:
        await asyncio.sleep(60)

    monkeypatch.setattr(PlayService, "play", busy)

    async def scenario() -> None:
        async with arena() as ring:
            channel = grpc.aio.insecure_channel(f"127.0.0.1:{ring.port}")
            calls = [channel.stream_stream("/nap.v1.Referee/Play")() for _ in range(5)]
            for call in calls:
                await call.write(b"")
            await asyncio.sleep(0.2)  # the calls reach their handlers
            await ring.referee.stop(0.05)
            await channel.close()

    asyncio.run(scenario())
    assert "Traceback" not in capfd.readouterr().err


def test_a_port_in_use_is_one_line_and_exit_2() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "referee.server", "--port", str(port), "--token", "a=b"],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=REPO,
            check=False,
        )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert f"127.0.0.1:{port}" in result.stderr


def test_forced_moves_are_played_without_asking(tmp_path: Path) -> None:
    """With ask_forced False no request has a single legal action; the referee plays those."""
    dump = tmp_path / "forced.bin"

    async def scenario() -> list[SessionOutcome]:
        async with arena() as ring:
            await ring.bot("f0", script("random_bot", "--dump", str(dump)))
            await ring.bot("f1", sdk_random_bot("--seed", "1"))
            specs = [
                replace(spec(f"forced-{seed}", ("f0", "f1", "f0", "f1"), seed=seed), ask_forced=False)
                for seed in range(4)
            ]
            return list(
                await asyncio.wait_for(asyncio.gather(*(ring.referee.play_session(s) for s in specs)), 60)
            )

    outcomes = asyncio.run(scenario())
    forced = 0
    for outcome in outcomes:
        assert outcome.faults == ()
        _check_replays(outcome.record)
        assert [[d.action for d in deal] for deal in outcome.decisions] == [
            [str(a) for a in deal.actions] for deal in outcome.record.deals
        ]
        for decision in (d for deal in outcome.decisions for d in deal):
            if decision.forced:
                forced += 1
                assert decision.latency_ms == 0.0
                assert decision.fault is None
    assert forced > 50
    messages = read_dump(dump)
    requests = [r for m in messages if m.WhichOneof("kind") == "batch" for r in m.batch.requests]
    assert requests
    assert all(len(r.legal_actions) > 1 for r in requests)
    # this bot did not opt in to notices in batches: each TableClosed is a message of its own
    # (the last may still be on its way when the bot is stopped)
    closed = {m.table_closed.table for m in messages if m.WhichOneof("kind") == "table_closed"}
    assert closed
    assert closed <= {f"forced-{seed}" for seed in range(4)}
    assert not any(m.batch.closed for m in messages if m.WhichOneof("kind") == "batch")


def test_an_error_in_the_referee_ends_the_sessions_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in the core is not a bot's fault and must not hang a table: play_session raises it."""
    from referee.match import Match  # noqa: PLC0415

    def broken(self: Match, text: str, elapsed_ms: float, cpu_ms: float | None = None) -> list[object]:
        del self, text, elapsed_ms, cpu_ms
        msg = "boom"
        raise RuntimeError(msg)

    async def scenario() -> None:
        async with arena() as ring:
            await ring.bot("r", sdk_random_bot())
            monkeypatch.setattr(Match, "answered", broken)
            with pytest.raises(RuntimeError, match="boom"):
                await asyncio.wait_for(ring.referee.play_session(spec("t", ("r",) * 4)), 30)

    asyncio.run(scenario())
