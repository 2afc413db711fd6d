"""The codec turns views, requests, events and profiles into wire messages and back exactly."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random

import pytest

from referee.rules import (
    PROFILES,
    AllPassed,
    Card,
    DealSettled,
    DealStarted,
    Event,
    Penalized,
    Penalty,
    Phase,
    SeatView,
    Session,
    parse_action,
)
from referee.wire import nap_pb2
from referee.wire.codec import (
    event_from_proto,
    event_to_proto,
    profile_to_proto,
    request_to_proto,
    seat_penalized_to_proto,
    view_from_proto,
    view_to_proto,
)
from referee.wire.fastcodec import RequestEncoder, batch_message, encode_request
from referee.wire.fastdecode import LazySeatView, ViewDecoder

FIELD_NAMES = [field.name for field in dataclasses.fields(SeatView)]


def _sessions(count: int) -> list[tuple[Session, list[tuple[Event, ...]]]]:
    """Random sessions over every profile and table size, with the events of each step."""
    rng = random.Random(2024)
    out = []
    for index in range(count):
        profile = list(PROFILES.values())[index % len(PROFILES)]
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


SESSIONS = _sessions(60)


def test_views_round_trip_over_random_sessions() -> None:
    """Every seat's view at every step survives the wire (requests carry legal actions)."""
    rng = random.Random(7)
    checked = 0
    for profile_index in range(30):
        profile = list(PROFILES.values())[profile_index % len(PROFILES)]
        size = rng.randint(profile.min_players, profile.max_players)
        session = Session(profile, table_size=size, seed=profile_index)
        while True:
            for seat in range(size):
                view = session.view(seat)
                if seat == session.to_act:
                    msg = request_to_proto(view, table="t", request_id=9, deadline_ms=100,
                                           time_bank_ms=50)
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


def test_events_round_trip() -> None:
    """Every engine event comes back from the wire as the same value."""
    kinds = set()
    for session, steps in SESSIONS:
        for events in steps:
            for event in events:
                msg = event_to_proto(event, table="t", seat=0, deal_number=len(session.deals) - 1)
                wire = nap_pb2.TableEvent.FromString(msg.SerializeToString())
                assert event_from_proto(wire) == event
                kinds.add(type(event).__name__)
    assert {"DealStarted", "BidMade", "AuctionWon", "AllPassed", "CardPlayed", "TrumpChosen",
            "TrickWon", "Penalized", "DealSettled", "SessionOver"} <= kinds


def test_event_context_is_carried() -> None:
    """DealStarted carries the addressed seat's hand; DealSettled balances and the faulting seat."""
    hand = (Card("AS"), Card("10H"))
    started = event_to_proto(DealStarted(3, 1, (0, 1, 2)), table="t", seat=2, deal_number=0,
                             hand=hand)
    assert started.deal_number == 3
    assert list(started.deal_started.hand) == ["AS", "10H"]
    settled = event_to_proto(DealSettled(0, "nap", 2, made=False, payments=(-10, 5, 5)), table="t", seat=1,
                             deal_number=3, balances=(1, 2, -3), faulting_seat=0)
    assert list(settled.deal_settled.balances) == [1, 2, -3]
    assert settled.deal_settled.faulting_seat == 0
    no_declarer = event_to_proto(DealSettled(None, None, 0, None, (0, 0, 0)), table="t",
                                 seat=1, deal_number=0)
    assert not no_declarer.deal_settled.HasField("declarer")
    assert event_from_proto(no_declarer) == DealSettled(None, None, 0, None, (0, 0, 0))
    revoke = event_to_proto(Penalized(2), table="t", seat=0, deal_number=0,
                            fault=nap_pb2.FAULT_KIND_LATE)
    assert revoke.seat_penalized.penalty == nap_pb2.PENALTY_REVOKE
    assert revoke.seat_penalized.fault == nap_pb2.FAULT_KIND_LATE
    assert event_from_proto(event_to_proto(AllPassed(), table="t", seat=0, deal_number=0)) == \
        AllPassed()


def test_substitution_notice_has_no_engine_event() -> None:
    msg = seat_penalized_to_proto(table="t", seat=0, deal_number=1, faulting_seat=2,
                                  fault=nap_pb2.FAULT_KIND_ILLEGAL, substitute=parse_action("2C"))
    assert msg.seat_penalized.penalty == nap_pb2.PENALTY_SUBSTITUTE
    assert msg.seat_penalized.substitute_action == "2C"
    assert event_from_proto(msg) is None
    assert event_from_proto(nap_pb2.TableEvent(table="t")) is None


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_profile_to_proto(name: str) -> None:
    profile = PROFILES[name]
    msg = profile_to_proto(profile)
    assert msg.name == name
    assert [c.bid for c in msg.contracts] == [c.name for c in profile.contracts]
    assert msg.parameters["fault_policy"] == profile.fault_policy.value
    assert msg.parameters["deals_per_session"] == str(profile.deals_per_session)
    assert msg.parameters["deal_pattern"] == "3,2"
    assert (msg.min_seats, msg.max_seats, msg.hand_size) == (
        profile.min_players, profile.max_players, profile.hand_size)


def test_bad_texts_raise_value_error() -> None:
    msg = view_to_proto(Session(PROFILES["heather"], table_size=3, seed=0).view(0), table="t")
    msg.hand.append("ZZ")
    with pytest.raises(ValueError, match="not a card"):
        view_from_proto(msg)


def test_fast_encoder_writes_the_codec_bytes() -> None:
    """The referee's fast encoder gives byte for byte what the codec's messages serialize to."""
    rng = random.Random(11)
    checked = 0
    for index in range(40):
        profile = list(PROFILES.values())[index % len(PROFILES)]
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
            expected = request_to_proto(view, table=table, request_id=request_id,
                                        deadline_ms=deadline_ms, time_bank_ms=bank)
            fast = encode_request(view, table=table, request_id=request_id,
                                  deadline_ms=deadline_ms, time_bank_ms=bank, encoder=encoder)
            assert fast == expected.SerializeToString()
            checked += 1
            if session.deal.phase is Phase.PLAY and rng.random() < 0.02:
                session.apply(Penalty(session.to_act))  # type: ignore[arg-type]
            else:
                session.apply(rng.choice(session.legal_actions()))
    assert checked > 3000


def test_fast_encoder_writes_the_codec_bytes_from_view_fields() -> None:
    """The referee's path (a view's fields, no SeatView built) gives the same fields and bytes."""
    for session, _ in SESSIONS[:20]:
        replayed = Session(session.profile, table_size=session.table_size, seed=session.seed,
                           decks=[deal.deck for deal in session.deals])
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
                assert head + tail == encode_request(view, table="t", request_id=300_000,
                                                     deadline_ms=0, time_bank_ms=0)
                replayed.apply(action)


def test_fast_batches_parse_as_batches() -> None:
    """A batch assembled from request, event and notice bytes parses to the same messages."""
    session = Session(PROFILES["heather"], table_size=4, seed=3)
    requests = [request_to_proto(session.view(session.to_act), table="t", request_id=n,  # type: ignore[arg-type]
                                 deadline_ms=500, time_bank_ms=0) for n in (1, 2)]
    events = [event_to_proto(event, table="t", seat=1, deal_number=0)
              for event in session.opening]
    closed = nap_pb2.TableClosed(table="t", reason=nap_pb2.TABLE_CLOSED_REASON_SESSION_OVER)
    fault = nap_pb2.Fault(kind=nap_pb2.FAULT_KIND_LATE, request_id=5, table="t")
    notices = (b"\x1a" + bytes([closed.ByteSize()]) + closed.SerializeToString()
               + b"\x22" + bytes([fault.ByteSize()]) + fault.SerializeToString())
    data = batch_message([r.SerializeToString() for r in requests],
                         [e.SerializeToString() for e in events], notices)
    message = nap_pb2.RefereeMessage.FromString(data)
    assert list(message.batch.requests) == requests
    assert list(message.batch.events) == events
    assert list(message.batch.closed) == [closed]
    assert list(message.batch.faults) == [fault]


def test_fast_decoder_gives_the_codec_views() -> None:
    """The SDK's incremental decoder gives the views view_from_proto gives, deal after deal."""
    rng = random.Random(5)
    decoder = ViewDecoder()
    checked = 0
    for index in range(30):
        profile = list(PROFILES.values())[index % len(PROFILES)]
        size = rng.randint(profile.min_players, profile.max_players)
        session = Session(profile, table_size=size, seed=100 + index)
        table = f"d{index % 3}"  # tables ids come back after forget()
        while not session.over:
            view = session.view(session.to_act)  # type: ignore[arg-type]
            wire = nap_pb2.DecisionRequest.FromString(request_to_proto(
                view, table=table, request_id=1, deadline_ms=10, time_bank_ms=0,
            ).SerializeToString())
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
        data = request_to_proto(view, table=table, request_id=len(out) + 1, deadline_ms=10,
                                time_bank_ms=0).SerializeToString()
        out.append((nap_pb2.DecisionRequest.FromString(data), view))
        session.apply(rng.choice(session.legal_actions()))
    return out


class TestLazyViews:
    """ViewDecoder.request gives LazySeatViews: the eager views, decoded when first read."""

    def test_lazy_views_equal_the_eager_ones_whenever_they_are_read(self) -> None:
        """Read at once, later, out of order or never: every field is the codec's, over many sessions."""
        rng = random.Random(11)
        decoder = ViewDecoder()
        checked = 0
        for index in range(40):
            profile = list(PROFILES.values())[index % len(PROFILES)]
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
                    getattr(view, name) for name in FIELD_NAMES]
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
