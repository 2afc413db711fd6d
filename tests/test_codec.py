"""The codec turns views, requests, told events, notices and profiles into wire messages and back exactly.

The fast encoder (requests, batches, notices) writes byte for byte what protobuf writes
for the codec's messages, with tags read from the descriptors.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import pickle
import random
import re
import typing
from typing import TYPE_CHECKING

import pytest
from google.protobuf import descriptor_pb2, wrappers_pb2
from google.protobuf.descriptor import FieldDescriptor

from referee.match import Closed, CloseReason, Fault, Faulted, FaultKind, SeatPenalized
from referee.rules import (
    PACKS_BY_TABLE,
    PROFILES,
    AllPassed,
    Card,
    DealSettled,
    DealStarted,
    Event,
    Penalized,
    Penalty,
    Phase,
    Profile,
    SeatEvent,
    SeatView,
    Session,
    parse_action,
)
from referee.wire import nap_pb2
from referee.wire.codec import (
    closed_to_proto,
    event_from_proto,
    fault_kind_from_proto,
    fault_kind_to_proto,
    fault_to_proto,
    profile_to_proto,
    request_to_proto,
    told_to_proto,
    view_from_proto,
    view_to_proto,
)
from referee.wire.fastcodec import (
    Notice,
    RequestEncoder,
    batch_message,
    closed_notice,
    encode_request,
    fault_notice,
)
from referee.wire.fastdecode import LazySeatView, ViewDecoder
from referee.wire.protowire import I32, I64, LEN, VARINT, field_tag, wire_type

if TYPE_CHECKING:
    from google.protobuf.message import Message

FIELD_NAMES = [field.name for field in dataclasses.fields(SeatView)]

POOL_PROFILES = [
    PROFILES["purchase"],
    PROFILES["ecarte"],
    PROFILES["peep"],
    dataclasses.replace(PROFILES["ecarte"], name="ecarte-32", pack_size=32, max_players=5, starting_chips=6),
    dataclasses.replace(PROFILES["peep"], name="peep-free", peep_fee=0, pool_claim="three"),
    dataclasses.replace(
        PROFILES["purchase"],
        name="purchase-by-table",
        pack_sizes=PACKS_BY_TABLE,
        starting_chips=6,
        rebuy=True,
    ),
]
"""The pool variants (exchanges, peeps, the widow), with a short-pack Écarté on short stacks
(seats that cannot pay), a Peep Nap whose peeps are free and whose pool goes to any made
contract (claimed often), and a Purchase Nap with packs sized by the table and rebuys."""

WIRE_PROFILES = [
    *PROFILES.values(),
    dataclasses.replace(PROFILES["heather"], name="heather-32", pack_size=32, max_players=6),
    dataclasses.replace(PROFILES["seven-card"], name="seven-card-36", pack_size=36, max_players=5),
    *POOL_PROFILES[3:],
]
"""Every built-in profile (seven-card Nap and the pool variants among them), two short packs
(Ace down to 7, to 6) and two more pool variants."""


def _sessions(count: int) -> list[tuple[Session, list[tuple[Event, ...]]]]:
    """Random sessions over every profile and table size, with the events of each step."""
    rng = random.Random(2024)
    out = []
    for index in range(count):
        profile = WIRE_PROFILES[index % len(WIRE_PROFILES)]
        size = rng.randint(profile.min_players, profile.max_players)
        session = Session(profile, table_size=size, seed=rng.randrange(10**6))
        steps = [session.opening]
        while not session.over:
            seat = session.to_act
            assert seat is not None
            legal = session.legal_actions()
            if session.deal.phase is Phase.PLAY and rng.random() < 0.02:
                steps.append(session.apply(Penalty(seat)))
            else:
                steps.append(session.apply(rng.choice(legal)))
        out.append((session, steps))
    return out


@functools.cache
def wire_sessions() -> list[tuple[Session, list[tuple[Event, ...]]]]:
    """Sixty random sessions, played once on first use (not at import: the quick run uses none)."""
    return _sessions(60)


@pytest.mark.slow
def test_views_round_trip_over_random_sessions() -> None:
    """Every seat's view at every step survives the wire (requests carry legal actions)."""
    rng = random.Random(7)
    checked = 0
    for profile_index in range(30):
        profile = WIRE_PROFILES[profile_index % len(WIRE_PROFILES)]
        size = rng.randint(profile.min_players, profile.max_players)
        session = Session(profile, table_size=size, seed=profile_index)
        while True:
            for seat in range(size):
                view = session.view(seat)
                if seat == session.to_act:
                    msg = request_to_proto(view, table="t", request_id=9, deadline_ms=100, time_bank_ms=50)
                    wire = nap_pb2.DecisionRequest.FromString(msg.SerializeToString())
                    assert wire.legal_actions == [str(a) for a in view.legal_actions]
                    assert view_from_proto(wire) == view
                else:
                    msg_view = view_to_proto(view, table="t")
                    wire_view = nap_pb2.SeatView.FromString(msg_view.SerializeToString())
                    assert view_from_proto(wire_view) == view
                checked += 1
            if session.over:
                break
            session.apply(rng.choice(session.legal_actions()))
    assert checked > 1000


def test_view_marks_the_current_trick_and_optional_seats() -> None:
    """While a lead is awaited the current trick names the leader; seat 0 is not 'unset'."""
    session = Session(PROFILES["heather"], table_size=3, seed=1)
    while session.deal.phase is Phase.BIDDING:
        legal = session.legal_actions()
        session.apply(legal[1] if len(legal) > 1 and not session.deal.bids else legal[0])
    view = session.view(0)
    msg = view_to_proto(view, table="x")
    assert msg.HasField("current_trick")
    assert msg.current_trick.leader == view.to_act
    assert not msg.current_trick.cards
    assert msg.HasField("declarer")
    assert msg.active == [True, True, True]


def _chip_profile(*, rebuy: bool) -> Profile:
    """A finite-chip profile with a short stack, so that seats run out (and are eliminated or rebuy)."""
    return dataclasses.replace(PROFILES["full-ladder"], name="short-stack", starting_chips=8, rebuy=rebuy)


TOLD_PROFILES = [*WIRE_PROFILES, _chip_profile(rebuy=False), _chip_profile(rebuy=True)]


def _as_told(item: SeatEvent, kind: FaultKind) -> SeatEvent | SeatPenalized:
    """What the match core tells: the engine's Penalized becomes a SeatPenalized with its fault."""
    if isinstance(item.event, Penalized):
        return SeatPenalized(item.event.seat, item.deal, kind)
    return item


EVERY_EVENT = {kind.__name__ for kind in typing.get_args(Event)}
"""Every kind of engine event (the told-events test goes on until it has seen each on the wire)."""


class TestToldEvents:
    """told_to_proto encodes what a seat is told; event_from_proto gives the engine event back."""

    @pytest.mark.slow
    def test_every_seat_is_told_every_event_over_random_sessions(self) -> None:  # noqa: C901 - one walk, every kind
        """Each seat's told events, of every kind, survive the wire with their deal and context."""
        rng = random.Random(2025)
        faults = random.Random(7)  # apart, so that the sessions do not change with the fault kinds
        kinds: set[str] = set()
        checked = 0
        for index in range(400):  # until every kind of event was told, 45 sessions at least
            if index >= 45 and kinds == EVERY_EVENT:
                break
            profile = TOLD_PROFILES[index % len(TOLD_PROFILES)]
            size = rng.randint(profile.min_players, profile.max_players)
            session = Session(profile, table_size=size, seed=index)
            table = f"t{index}"
            deal, events = 0, session.opening
            while True:
                fault = faults.choice(list(FaultKind))
                penalized = None
                for seat in range(size):
                    for item in session.tell(seat, events, deal=deal):
                        told = _as_told(item, fault)
                        wire = nap_pb2.TableEvent.FromString(
                            told_to_proto(told, table=table, seat=seat).SerializeToString()
                        )
                        assert (wire.table, wire.seat, wire.deal_number) == (table, seat, item.deal)
                        assert event_from_proto(wire) == item.event
                        kinds.add(type(item.event).__name__)
                        checked += 1
                        if isinstance(item.event, DealStarted):
                            assert item.deal == item.event.deal == len(session.deals) - 1
                            hand = [card.text for card in session.view(seat).hand]
                            assert list(wire.deal_started.hand) == hand
                            others = {
                                card.text
                                for other in range(size)
                                if other != seat
                                for card in session.view(other).hand
                            }
                            assert not others & set(wire.deal_started.hand)
                        elif isinstance(item.event, DealSettled):
                            assert tuple(wire.deal_settled.balances) == session.balances
                            assert wire.deal_settled.HasField("faulting_seat") == (penalized is not None)
                            assert wire.deal_settled.faulting_seat == (penalized or 0)
                        elif isinstance(told, SeatPenalized):
                            assert wire.seat_penalized.fault == fault_kind_to_proto(fault)
                            assert wire.seat_penalized.penalty == nap_pb2.PENALTY_REVOKE
                            assert wire.seat_penalized.substitute_action == ""
                            penalized = told.seat
                if session.over:
                    break
                deal = len(session.deals) - 1
                if session.deal.phase is Phase.PLAY and rng.random() < 0.03:
                    events = session.apply(Penalty(session.to_act))  # type: ignore[arg-type]
                else:
                    events = session.apply(rng.choice(session.legal_actions()))
        assert kinds == EVERY_EVENT
        assert checked > 20_000

    def test_context_comes_from_the_seat_event(self) -> None:
        """DealStarted carries the seat's hand; DealSettled balances and the faulting seat (0 too)."""
        hand = (Card("AS"), Card("10H"))
        started = told_to_proto(SeatEvent(3, DealStarted(3, 1, (0, 1, 2)), hand=hand), table="t", seat=2)
        assert (started.table, started.seat, started.deal_number) == ("t", 2, 3)
        assert list(started.deal_started.hand) == ["AS", "10H"]
        assert list(started.deal_started.seats_in_play) == [0, 1, 2]
        settled = told_to_proto(
            SeatEvent(
                3,
                DealSettled(0, "nap", 2, made=False, payments=(-10, 5, 5)),
                balances=(1, 2, -3),
                faulting_seat=0,
            ),
            table="t",
            seat=1,
        )
        assert list(settled.deal_settled.balances) == [1, 2, -3]
        assert settled.deal_settled.HasField("faulting_seat")
        assert settled.deal_settled.faulting_seat == 0
        no_declarer = told_to_proto(
            SeatEvent(0, DealSettled(None, None, 0, None, (0, 0, 0))), table="t", seat=1
        )
        assert not no_declarer.deal_settled.HasField("declarer")
        assert not no_declarer.deal_settled.HasField("faulting_seat")
        assert event_from_proto(no_declarer) == DealSettled(None, None, 0, None, (0, 0, 0))
        all_passed = told_to_proto(SeatEvent(0, AllPassed()), table="t", seat=0)
        assert all_passed.WhichOneof("event") == "all_passed"
        assert event_from_proto(all_passed) == AllPassed()

    @pytest.mark.parametrize("kind", list(FaultKind))
    def test_penalty_notices(self, kind: FaultKind) -> None:
        """A substitution carries its action (no engine event); a revoke comes back as Penalized."""
        substituted = told_to_proto(SeatPenalized(2, 4, kind, parse_action("10S")), table="t", seat=0)
        assert (substituted.seat, substituted.deal_number) == (0, 4)
        penalty = substituted.seat_penalized
        assert (penalty.seat, penalty.fault, penalty.penalty, penalty.substitute_action) == (
            2,
            fault_kind_to_proto(kind),
            nap_pb2.PENALTY_SUBSTITUTE,
            "10S",
        )
        assert event_from_proto(substituted) is None
        revoked = told_to_proto(SeatPenalized(0, 1, kind), table="t", seat=1)
        assert revoked.WhichOneof("event") == "seat_penalized"
        assert revoked.seat_penalized.substitute_action == ""
        assert (revoked.seat_penalized.penalty, revoked.seat_penalized.fault) == (
            nap_pb2.PENALTY_REVOKE,
            fault_kind_to_proto(kind),
        )
        assert event_from_proto(revoked) == Penalized(0)
        assert event_from_proto(nap_pb2.TableEvent(table="t")) is None

    def test_the_engines_penalized_is_not_told_as_it_is(self) -> None:
        """It lacks the fault's kind: the match core tells a SeatPenalized instead."""
        with pytest.raises(TypeError, match="SeatPenalized"):
            told_to_proto(SeatEvent(0, Penalized(1)), table="t", seat=0)


class TestFaultsAndClosedTables:
    """Faults and closed tables become the nap.v1 notices, alone or in a batch, byte for byte."""

    def test_fault_kinds_map_one_to_one_by_name(self) -> None:
        wire_kinds = {value.number for value in nap_pb2.FaultKind.DESCRIPTOR.values} - {0}
        assert {fault_kind_to_proto(kind) for kind in FaultKind} == wire_kinds
        for kind in FaultKind:
            number = fault_kind_to_proto(kind)
            assert nap_pb2.FaultKind.Name(number) == f"FAULT_KIND_{kind.name}"
            assert fault_kind_from_proto(number) is kind
        assert fault_kind_from_proto(nap_pb2.FAULT_KIND_UNSPECIFIED) is None
        assert fault_kind_from_proto(99) is None

    @pytest.mark.parametrize("seat", [None, 0, 3])
    def test_fault_to_proto(self, seat: int | None) -> None:
        fault = Fault(
            kind=FaultKind.ILLEGAL,
            bot="bot-a",
            table="t7",
            seat=seat,
            deal=2,
            decision=5,
            elapsed_ms=12.5,
            detail="must follow suit: hearts",
        )
        msg = fault_to_proto(Faulted(fault, count=2, limit=3, request_id=300_000, action="QS"))
        assert msg.HasField("seat") == (seat is not None)
        assert msg == nap_pb2.Fault(
            kind=nap_pb2.FAULT_KIND_ILLEGAL,
            request_id=300_000,
            table="t7",
            seat=seat,
            action="QS",
            message="must follow suit: hearts",
            fault_count=2,
            fault_limit=3,
        )

    @pytest.mark.parametrize("reason", list(CloseReason))
    def test_closed_to_proto(self, reason: CloseReason) -> None:
        msg = closed_to_proto(Closed("t1", "bot-a", reason, "bye"))
        assert (msg.table, msg.message) == ("t1", "bye")
        assert nap_pb2.TableClosedReason.Name(msg.reason) == f"TABLE_CLOSED_REASON_{reason.name}"

    @pytest.mark.parametrize("seat", [None, 0, 2])
    @pytest.mark.parametrize("kind", list(FaultKind))
    def test_fault_notices_alone_and_in_a_batch(self, kind: FaultKind, seat: int | None) -> None:
        fault = Fault(
            kind=kind,
            bot="b",
            table="t",
            seat=seat,
            deal=None,
            decision=None,
            elapsed_ms=None,
            detail="détail ✓" * 30,
        )
        faulted = Faulted(fault, count=1, limit=0, request_id=2**40 if seat else 0, action="")
        notice = fault_notice(faulted)
        assert isinstance(notice, Notice)
        wire = fault_to_proto(faulted)
        assert notice.alone == nap_pb2.RefereeMessage(fault=wire).SerializeToString()
        assert notice.in_batch == nap_pb2.Batch(faults=[wire]).SerializeToString()
        assert (
            batch_message([], [], notice.in_batch)
            == nap_pb2.RefereeMessage(batch=nap_pb2.Batch(faults=[wire])).SerializeToString()
        )

    @pytest.mark.parametrize("message", ["", "session over", "x" * 300])
    @pytest.mark.parametrize("reason", list(CloseReason))
    def test_closed_notices_alone_and_in_a_batch(self, reason: CloseReason, message: str) -> None:
        closed = Closed("table-9", "b", reason, message)
        notice = closed_notice(closed)
        wire = closed_to_proto(closed)
        assert notice.alone == nap_pb2.RefereeMessage(table_closed=wire).SerializeToString()
        assert notice.in_batch == nap_pb2.Batch(closed=[wire]).SerializeToString()


@pytest.mark.parametrize("profile", WIRE_PROFILES, ids=lambda profile: profile.name)
def test_profile_to_proto(profile: Profile) -> None:
    msg = profile_to_proto(profile)
    assert msg.name == profile.name
    assert [c.bid for c in msg.contracts] == [c.name for c in profile.contracts]
    assert msg.parameters["fault_policy"] == profile.fault_policy.value
    assert msg.parameters["deals_per_session"] == str(profile.deals_per_session)
    assert msg.parameters["deal_pattern"] == ("4,3" if profile.hand_size == 7 else "3,2")
    assert msg.parameters["pack_size"] == str(profile.pack_size)
    assert msg.parameters["pack_sizes"] == ",".join(f"{n}:{cards}" for n, cards in profile.pack_sizes)
    assert (msg.min_seats, msg.max_seats, msg.hand_size) == (
        profile.min_players,
        profile.max_players,
        profile.hand_size,
    )


def test_bad_texts_raise_value_error() -> None:
    msg = view_to_proto(Session(PROFILES["heather"], table_size=3, seed=0).view(0), table="t")
    msg.hand.append("ZZ")
    with pytest.raises(ValueError, match="not a card"):
        view_from_proto(msg)


@pytest.mark.slow
def test_fast_encoder_writes_the_codec_bytes() -> None:
    """The referee's fast encoder gives byte for byte what the codec's messages serialize to."""
    rng = random.Random(11)
    checked = 0
    for index in range(40):
        profile = WIRE_PROFILES[index % len(WIRE_PROFILES)]
        size = rng.randint(profile.min_players, profile.max_players)
        session = Session(profile, table_size=size, seed=index)
        table = f"t{index}-b{index * 7}"
        encoder = RequestEncoder(table)
        while not session.over:
            for seat in range(size):
                view = session.view(seat)
                assert encoder.view(view) == view_to_proto(view, table=table).SerializeToString()
            view = session.view(session.to_act)  # type: ignore[arg-type]
            request_id = rng.choice([1, 127, 128, 300_000, 2**40])
            deadline_ms, bank = rng.choice([(0, 0), (1000, 0), (70_000, 3000)])
            expected = request_to_proto(
                view, table=table, request_id=request_id, deadline_ms=deadline_ms, time_bank_ms=bank
            )
            fast = encode_request(
                view,
                table=table,
                request_id=request_id,
                deadline_ms=deadline_ms,
                time_bank_ms=bank,
                encoder=encoder,
            )
            assert fast == expected.SerializeToString()
            checked += 1
            if session.deal.phase is Phase.PLAY and rng.random() < 0.02:
                session.apply(Penalty(session.to_act))  # type: ignore[arg-type]
            else:
                session.apply(rng.choice(session.legal_actions()))
    assert checked > 3000


POOL_FIELDS = ("pool", "exchanged", "peeked", "widow", "drawn", "discarded", "widow_taken")
"""SeatView's fields of the pool variants (20 and up)."""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["purchase", "ecarte", "peep"])
def test_fast_encoder_writes_the_codec_bytes_in_the_pool_variants(name: str) -> None:
    """Every decision of seeded Purchase, Écarté and Peep sessions: the same request bytes both ways.

    The sessions go through every new phase and field (exchanges, peeps, the widow seen and
    taken, chips in the pool), which the decoded requests must show.
    """
    profile = PROFILES[name]
    rng = random.Random(name)
    seen: set[str] = set()
    phases: set[Phase] = set()
    checked = 0
    for seed in range(12):
        size = profile.min_players + seed % (profile.max_players - profile.min_players + 1)
        session = Session(profile, table_size=size, seed=seed)
        table = f"{name}-{seed}"
        encoder = RequestEncoder(table)
        while not session.over:
            seat = session.to_act
            assert seat is not None
            fields = session.view_fields(seat)
            view = session.view(seat)
            head, tail = encoder.request_of(fields, request_id=checked + 1)
            expected = request_to_proto(
                view, table=table, request_id=checked + 1, deadline_ms=0, time_bank_ms=0
            )
            data = expected.SerializeToString()
            assert head + tail == data
            wire = nap_pb2.DecisionRequest.FromString(data)
            assert view_from_proto(wire) == view
            assert ViewDecoder().request(wire) == view
            seen.update(field.name for field, _ in wire.view.ListFields() if field.name in POOL_FIELDS)
            phases.add(view.phase)
            checked += 1
            legal = session.legal_actions()
            # peep and take the widow more often than chance would, to see them on the wire
            wanted = [
                a
                for a in legal
                if str(a) == "peep" or (str(a).startswith("widow:") and str(a) != "widow:none")
            ]
            session.apply(rng.choice(wanted) if wanted and rng.random() < 0.5 else rng.choice(legal))
    assert checked > 300
    if name == "peep":
        assert seen >= {"pool", "peeked", "widow", "discarded", "widow_taken"}
        assert Phase.WIDOW in phases
    else:
        assert seen >= {"pool", "exchanged", "drawn", "discarded"}
        assert Phase.EXCHANGE in phases


@pytest.mark.slow
def test_views_without_a_pool_are_what_they_were() -> None:
    """In profiles without exchanges or a widow no pool field is ever sent: the bytes of before."""
    for session, _ in wire_sessions():
        if session.profile.has_pool:
            continue
        replayed = Session(
            session.profile,
            table_size=session.table_size,
            seed=session.seed,
            decks=[deal.deck for deal in session.deals],
        )
        for deal in session.deals:
            for action in deal.actions:
                seat = replayed.to_act
                assert seat is not None
                head, tail = RequestEncoder("t").request_of(replayed.view_fields(seat), request_id=1)
                view = nap_pb2.DecisionRequest.FromString(head + tail).view
                assert {field.name for field, _ in view.ListFields()}.isdisjoint(POOL_FIELDS)
                replayed.apply(action)


@pytest.mark.slow
def test_fast_encoder_writes_the_codec_bytes_from_view_fields() -> None:
    """The referee's path (a view's fields, no SeatView built) gives the same fields and bytes."""
    for session, _ in wire_sessions()[:20]:
        replayed = Session(
            session.profile,
            table_size=session.table_size,
            seed=session.seed,
            decks=[deal.deck for deal in session.deals],
        )
        encoder = RequestEncoder("t")
        for deal in session.deals:
            for action in deal.actions:
                seat = replayed.to_act
                assert seat is not None
                fields = replayed.view_fields(seat)
                view = replayed.view(seat)
                assert fields == view.fields()
                assert SeatView(*fields) == view
                head, tail = encoder.request_of(fields, request_id=300_000)
                assert head + tail == encode_request(
                    view, table="t", request_id=300_000, deadline_ms=0, time_bank_ms=0
                )
                replayed.apply(action)


def test_fast_batches_write_the_codec_bytes() -> None:
    """A batch of request, event and notice bytes is what protobuf writes for the same Batch."""
    rng = random.Random(4)
    session = Session(PROFILES["heather"], table_size=4, seed=3)
    for size in (0, 1, 3, 200):  # a batch past 127 bytes (and 16 KiB) has a longer length
        requests, events = [], []
        for number in range(size):
            seat = session.to_act
            assert seat is not None
            requests.append(
                request_to_proto(
                    session.view(seat), table="t", request_id=number + 1, deadline_ms=500, time_bank_ms=number
                )
            )
            deal = len(session.deals) - 1
            events += [
                told_to_proto(item, table="t", seat=1)
                for item in session.tell(1, session.apply(rng.choice(session.legal_actions())), deal=deal)
            ]
            if session.over:
                session = Session(PROFILES["heather"], table_size=4, seed=number)
        every_faulted = [
            Faulted(
                Fault(
                    kind=kind,
                    bot="b",
                    table="t",
                    seat=seat,
                    deal=0,
                    decision=0,
                    elapsed_ms=1.0,
                    detail=kind.value,
                ),
                1,
                3,
            )
            for kind, seat in zip(FaultKind, itertools.cycle([None, 0, 1, 2, 3]), strict=False)
        ]
        faults = [fault_to_proto(faulted) for faulted in every_faulted]
        closed = [closed_to_proto(Closed(f"t{n}", "b", reason)) for n, reason in enumerate(CloseReason)]
        notices = [closed_notice(Closed(f"t{n}", "b", reason)) for n, reason in enumerate(CloseReason)]
        notices += [fault_notice(faulted) for faulted in every_faulted]
        data = batch_message(
            [r.SerializeToString() for r in requests],
            [e.SerializeToString() for e in events],
            b"".join(notice.in_batch for notice in notices),
        )
        batch = nap_pb2.Batch(requests=requests, events=events, closed=closed, faults=faults)
        assert data == nap_pb2.RefereeMessage(batch=batch).SerializeToString()
        assert data == batch_message(
            [r.SerializeToString() for r in requests],  # or as a list
            [e.SerializeToString() for e in events],
            [notice.in_batch for notice in notices],
        )
        assert (
            batch_message([r.SerializeToString() for r in requests], [])
            == nap_pb2.RefereeMessage(batch=nap_pb2.Batch(requests=requests)).SerializeToString()
        )
        # in the order they came (faults and closed tables mixed), the same Batch
        rng.shuffle(notices)
        mixed = nap_pb2.RefereeMessage.FromString(
            batch_message(
                [r.SerializeToString() for r in requests], [], b"".join(n.in_batch for n in notices)
            )
        )
        assert sorted(mixed.batch.closed, key=str) == sorted(closed, key=str)
        assert sorted(mixed.batch.faults, key=str) == sorted(faults, key=str)
        assert list(mixed.batch.requests) == requests


def _message_types() -> list[type[Message]]:
    """Every message class of nap.v1, nested ones (map entries) included, and a few with fixed-size fields."""
    out: list[type[Message]] = [wrappers_pb2.DoubleValue, wrappers_pb2.FloatValue, descriptor_pb2.FileOptions]
    pending = [getattr(nap_pb2, name) for name in nap_pb2.DESCRIPTOR.message_types_by_name]
    while pending:
        message = pending.pop()
        out.append(message)
        pending += [getattr(message, nested.name) for nested in message.DESCRIPTOR.nested_types]
    return out


_SAMPLES = {
    FieldDescriptor.TYPE_STRING: "x",
    FieldDescriptor.TYPE_BYTES: b"x",
    FieldDescriptor.TYPE_BOOL: True,
    FieldDescriptor.TYPE_DOUBLE: 1.5,
    FieldDescriptor.TYPE_FLOAT: 1.5,
    FieldDescriptor.TYPE_SINT32: -3,
    FieldDescriptor.TYPE_SINT64: -3,
}


class TestFieldTags:
    """protowire.field_tag gives, from the descriptors, the tags protobuf itself writes."""

    @pytest.mark.parametrize("message", _message_types(), ids=lambda m: m.DESCRIPTOR.full_name)
    def test_each_fields_tag_is_what_protobuf_writes(self, message: type[Message]) -> None:
        for field in message.DESCRIPTOR.fields:
            if field.type == FieldDescriptor.TYPE_GROUP:
                continue
            msg = message()
            entry = field.message_type
            if entry is not None:
                if entry.GetOptions().map_entry:
                    key = entry.fields_by_name["key"]
                    value = entry.fields_by_name["value"]
                    if value.type == FieldDescriptor.TYPE_MESSAGE:
                        getattr(msg, field.name)[_SAMPLES.get(key.type, 1)].SetInParent()
                    else:
                        getattr(msg, field.name)[_SAMPLES.get(key.type, 1)] = _SAMPLES.get(value.type, 1)
                elif field.is_repeated:
                    getattr(msg, field.name).add()
                else:
                    getattr(msg, field.name).SetInParent()
            elif field.is_repeated:
                getattr(msg, field.name).append(_SAMPLES.get(field.type, 1))
            else:
                setattr(msg, field.name, _SAMPLES.get(field.type, 1))
            data = msg.SerializeToString()
            assert data.startswith(field_tag(message, field.name)), field.full_name
            assert len(data) > len(field_tag(message, field.name))

    def test_tags_of_the_hot_path(self) -> None:
        """A few tags by hand, multi-byte ones included, as the encoder once typed them."""
        assert field_tag(nap_pb2.DecisionRequest, "request_id") == b"\x08"
        assert field_tag(nap_pb2.SeatView, "bids") == b"\x5a"
        assert field_tag(nap_pb2.SeatView, "to_act") == b"\x48"
        assert field_tag(nap_pb2.SeatView, "completed_tricks") == b"\x82\x01"
        assert field_tag(nap_pb2.SeatView, "balances") == b"\x92\x01"  # packed sint32
        assert field_tag(nap_pb2.RefereeMessage, "fault") == b"\x2a"

    def test_wire_types(self) -> None:
        assert wire_type(FieldDescriptor.TYPE_UINT32) == VARINT
        assert wire_type(FieldDescriptor.TYPE_UINT32, packed=True) == LEN
        assert wire_type(FieldDescriptor.TYPE_ENUM) == VARINT
        assert wire_type(FieldDescriptor.TYPE_MESSAGE) == LEN
        assert wire_type(FieldDescriptor.TYPE_DOUBLE) == I64
        assert wire_type(FieldDescriptor.TYPE_FIXED32) == I32
        with pytest.raises(ValueError, match="group"):
            wire_type(FieldDescriptor.TYPE_GROUP)

    def test_a_field_that_is_not_there(self) -> None:
        with pytest.raises(KeyError, match=re.escape("nap.v1.SeatView has no field 'hands'")):
            field_tag(nap_pb2.SeatView, "hands")


@pytest.mark.slow
def test_fast_decoder_gives_the_codec_views() -> None:
    """The SDK's incremental decoder gives the views view_from_proto gives, deal after deal."""
    rng = random.Random(5)
    decoder = ViewDecoder()
    checked = 0
    for index in range(30):
        profile = WIRE_PROFILES[index % len(WIRE_PROFILES)]
        size = rng.randint(profile.min_players, profile.max_players)
        session = Session(profile, table_size=size, seed=100 + index)
        table = f"d{index % 3}"  # tables ids come back after forget()
        while not session.over:
            view = session.view(session.to_act)  # type: ignore[arg-type]
            wire = nap_pb2.DecisionRequest.FromString(
                request_to_proto(
                    view,
                    table=table,
                    request_id=1,
                    deadline_ms=10,
                    time_bank_ms=0,
                ).SerializeToString()
            )
            assert decoder.request(wire) == view_from_proto(wire) == view
            checked += 1
            session.apply(rng.choice(session.legal_actions()))
        decoder.forget(table)
    assert checked > 1000


def _wire_requests(session: Session, table: str) -> list[tuple[nap_pb2.DecisionRequest, SeatView]]:
    """Every decision request of a played-out session, parsed from its bytes, with its view."""
    rng = random.Random(0)
    out: list[tuple[nap_pb2.DecisionRequest, SeatView]] = []
    while not session.over:
        view = session.view(session.to_act)  # type: ignore[arg-type]
        data = request_to_proto(
            view, table=table, request_id=len(out) + 1, deadline_ms=10, time_bank_ms=0
        ).SerializeToString()
        out.append((nap_pb2.DecisionRequest.FromString(data), view))
        session.apply(rng.choice(session.legal_actions()))
    return out


class TestLazyViews:
    """ViewDecoder.request gives LazySeatViews: the eager views, decoded when first read."""

    @pytest.mark.slow
    def test_lazy_views_equal_the_eager_ones_whenever_they_are_read(self) -> None:
        """Read at once, later, out of order or never: every field is the codec's, over many sessions."""
        rng = random.Random(11)
        decoder = ViewDecoder()
        checked = 0
        for index in range(40):
            profile = WIRE_PROFILES[index % len(WIRE_PROFILES)]
            size = rng.randint(profile.min_players, profile.max_players)
            table = f"z{index % 2}"  # the same ids come back after forget()
            kept: list[tuple[SeatView, SeatView]] = []
            for wire, view in _wire_requests(Session(profile, table_size=size, seed=200 + index), table):
                lazy = decoder.request(wire)
                assert isinstance(lazy, LazySeatView)
                assert lazy.legal_actions == view.legal_actions
                roll = rng.random()
                if roll < 0.4:
                    assert lazy == view_from_proto(wire) == view
                    assert view == lazy
                    assert hash(lazy) == hash(view)
                    checked += 1
                elif roll < 0.8:
                    kept.append((lazy, view))
            rng.shuffle(kept)
            for number, (lazy, view) in enumerate(kept):
                if number == len(kept) // 2:
                    decoder.forget(table)  # the session is over: its table id comes back
                assert [getattr(lazy, name) for name in FIELD_NAMES] == [
                    getattr(view, name) for name in FIELD_NAMES
                ]
                assert lazy == view
                checked += 1
            decoder.forget(table)
        assert checked > 2000

    def test_views_made_before_a_table_id_comes_back_stay_right(self) -> None:
        """A view of an old session read after a new one took its table id is still the old view."""
        decoder = ViewDecoder()
        old = _wire_requests(Session(PROFILES["heather"], table_size=4, seed=1), "t")
        unread = [decoder.request(wire) for wire, _ in old]
        decoder.forget("t")
        for wire, view in _wire_requests(Session(PROFILES["heather"], table_size=4, seed=2), "t"):
            assert decoder.request(wire) == view
        assert unread == [view for _, view in old]

    def test_only_the_legal_actions_are_decoded_up_front(self) -> None:
        """A bad card in the hand raises at the first read of a field (phase alone does not)."""
        session = Session(PROFILES["heather"], table_size=4, seed=3)
        wire, view = _wire_requests(session, "t")[0]
        wire.view.hand[0] = "1X"
        lazy = ViewDecoder().request(wire)
        assert lazy.legal_actions == view.legal_actions
        assert lazy.phase is view.phase
        for _ in range(2):  # and again at the next read
            with pytest.raises(ValueError, match="1X"):
                _ = lazy.hand
        wire.legal_actions[0] = "bogus"
        with pytest.raises(ValueError, match="bogus"):
            ViewDecoder().request(wire)

    def test_a_lazy_view_is_a_seat_view_for_every_use(self) -> None:
        """Properties, replace, repr, copies and pickles see the decoded fields; other names raise."""
        session = Session(PROFILES["heather"], table_size=4, seed=4)
        decoder = ViewDecoder()
        for wire, view in _wire_requests(session, "t")[10:13]:
            assert decoder.request(wire).played == view.played
            assert decoder.request(wire).visible_cards == view.visible_cards
            assert dataclasses.replace(decoder.request(wire), hand=()) == dataclasses.replace(view, hand=())
            assert repr(decoder.request(wire)) == "Lazy" + repr(view)
            assert copy.copy(decoder.request(wire)) == view
            assert pickle.loads(pickle.dumps(decoder.request(wire))) == view  # noqa: S301 - our own bytes
            assert {decoder.request(wire), view} == {view}
            assert decoder.request(wire) != view_to_proto(view, table="t")
            with pytest.raises(AttributeError, match="no_such_field"):
                _ = decoder.request(wire).no_such_field  # type: ignore[attr-defined]


def test_a_profile_survives_the_wire_house_rules_included() -> None:
    """What the Welcome announces is the profile itself: the SDK hands it to every bot."""
    from referee.rules import PROFILES, ProfileError  # noqa: PLC0415
    from referee.wire.codec import profile_from_proto  # noqa: PLC0415
    from tests.rules_helpers import EVERY_PARAMETER_CHANGED  # noqa: PLC0415

    house = dataclasses.replace(
        PROFILES["full-ladder"], name="pub", pack_size=32, max_players=6, deals_per_session=4
    )
    by_table = dataclasses.replace(PROFILES["peep"], name="pub-by-table", pack_sizes=((3, 28), (7, 40)))
    for profile in (*PROFILES.values(), house, by_table, by_table.at_table(7), EVERY_PARAMETER_CHANGED):
        assert profile_from_proto(profile_to_proto(profile)) == profile
    assert profile_to_proto(by_table).parameters["pack_sizes"] == "3:28,7:40"
    broken = profile_to_proto(house)
    broken.parameters["pack_size"] = "30"
    with pytest.raises(ProfileError, match="not a valid profile"):
        profile_from_proto(broken)
    older = profile_to_proto(house)
    del older.parameters["pack_sizes"]  # a referee from before packs sized by the table
    assert profile_from_proto(older) == house
    for text in ("3:30", "3", "9:40", "x:28"):
        wrong = profile_to_proto(by_table)
        wrong.parameters["pack_sizes"] = text
        with pytest.raises(ProfileError, match="not a valid profile"):
            profile_from_proto(wrong)
