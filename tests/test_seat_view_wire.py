"""Each SeatView field travels in the form its type says, and a field on one side only is refused.

:class:`~referee.rules.SeatView` is the one declaration of a view's fields; the referee's
:class:`~referee.rules.ViewFields` are made from it, and :mod:`referee.wire.seatview`
reads from it how each field travels in nap.v1 SeatView. These tests hold that table to
the dataclass and the proto, and show that a field declared after ``legal_actions`` (as a
new one is) goes through the codec, the fast encoder and decoder and the stdio bridge's
JSON with no edit of theirs.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from google.protobuf import wrappers_pb2
from google.protobuf.descriptor import FieldDescriptor

from clients.stdio.jsonlines import encode_request
from referee.rules import PROFILES, Card, Phase, SeatView, Session, Suit, ViewFields
from referee.wire import fastcodec, fastdecode, nap_pb2
from referee.wire.codec import request_to_proto, view_from_proto, view_to_proto
from referee.wire.fastcodec import RequestEncoder
from referee.wire.seatview import LATER_FORMS, VIEW_FORMS, FieldForm, WireField, typed_form, view_forms

FIELD_NAMES = tuple(field.name for field in dataclasses.fields(SeatView))


def _in_play(profile: str = "heather", *, seed: int = 3, seats: int = 4) -> SeatView:
    """The view of the seat to act, a few cards into a deal's play."""
    session = Session(PROFILES[profile], table_size=seats, seed=seed)
    while session.deal.phase is not Phase.PLAY or len(session.deal.trick) < 2:
        legal = session.legal_actions()
        opening = session.deal.phase is Phase.BIDDING and not session.deal.bids
        session.apply(legal[-1] if opening else legal[0])
    seat = session.to_act
    assert seat is not None
    return session.view(seat)


def test_the_referees_fields_are_the_views_own() -> None:
    """ViewFields is made from SeatView: the same names, in the same order, and a view's values."""
    assert ViewFields._fields == FIELD_NAMES
    view = _in_play()
    assert SeatView(*view.fields()) == view
    assert view.fields().hand == view.hand


def test_every_field_has_one_form_and_every_wire_field_one_view_field() -> None:
    """In SeatView's order; legal_actions travel in the request, the table is the message's own."""
    in_view = tuple(name for name in FIELD_NAMES if name != "legal_actions")
    assert tuple(form.name for form in VIEW_FORMS) == in_view
    wire = [field.name for field in nap_pb2.SeatView.DESCRIPTOR.fields]
    assert sorted(form.wire for form in VIEW_FORMS) == sorted(set(wire) - {"table"})
    later = FIELD_NAMES[FIELD_NAMES.index("legal_actions") + 1 :]
    assert tuple(form.name for form in LATER_FORMS) == later  # the fast paths write the others by hand


class TestFormsFromTypes:
    """A plain field's form is its type's: alone, optional or in a tuple; cards as text, suits as letters."""

    @pytest.mark.parametrize(
        ("name", "value", "wire"),
        [
            ("pool", 7, 7),
            ("to_act", 0, 0),  # seat 0 is set, not left out
            ("to_act", None, None),
            ("contract", "nap", "nap"),
            ("contract", None, ""),
            ("widow", Card("QH"), "QH"),
            ("widow", None, ""),
            ("trump", Suit.parse("S"), "S"),
            ("widow_taken", False, False),
            ("widow_taken", None, None),
            ("hand", (Card("10S"), Card("AC")), ["10S", "AC"]),
            ("balances", (-3, 0, 3), [-3, 0, 3]),
            ("table_size", 5, 5),
        ],
    )
    def test_a_value_goes_on_the_wire_and_back(self, name: str, value: object, wire: object) -> None:
        form = next(form for form in VIEW_FORMS if form.name == name)
        changed: dict[str, Any] = {name: value}
        view = dataclasses.replace(_in_play(), **changed)
        msg = nap_pb2.SeatView()
        form.put(msg, view)
        if wire is None:
            assert not msg.HasField(form.wire)
        else:
            on_wire = getattr(msg, form.wire)
            assert (list(on_wire) if isinstance(wire, list) else on_wire) == wire
        assert form.get(nap_pb2.SeatView.FromString(msg.SerializeToString())) == value

    def test_text_that_is_no_card_or_suit_raises_value_error(self) -> None:
        by_name = {form.name: form for form in VIEW_FORMS}
        with pytest.raises(ValueError, match="not a card"):
            by_name["widow"].get(nap_pb2.SeatView(widow="ZZ"))
        with pytest.raises(ValueError, match="not a suit"):
            by_name["trump"].get(nap_pb2.SeatView(trump="X"))

    @pytest.mark.parametrize("hint", [tuple[int, ...], int | None, dict[str, int]])
    def test_a_type_that_the_wire_field_cannot_carry_is_refused(self, hint: object) -> None:
        """A uint32 carries an int: not a tuple, nor a None (it has no presence), nor a dict."""
        with pytest.raises(TypeError, match=r"SeatView\.pool \(.*\) has no form as nap\.v1 SeatView\.pool"):
            typed_form("pool", hint, WireField.of("pool"))

    def test_each_writer_writes_what_protobuf_writes(self) -> None:
        """A form's bytes for a value (what a later field sends by) are protobuf's for the field alone."""
        written = {form.name: form for form in VIEW_FORMS if form.write is not None}
        own = {"phase", "seats_in_play", "bids", "trick", "tricks", "exchanged"}  # written by hand
        assert {form.name for form in VIEW_FORMS} - set(written) == own
        values: dict[str, set[object]] = {name: set() for name in written}
        for number, profile in enumerate(PROFILES.values()):
            session = Session(profile, table_size=profile.min_players + number % 2, seed=number)
            while not session.over:
                view = session.view(session.to_act or 0)
                for form in written.values():
                    msg = nap_pb2.SeatView()
                    form.put(msg, view)
                    value = getattr(view, form.name)
                    assert form.write is not None
                    assert form.write(value) == msg.SerializeToString(), (form.name, value)
                    values[form.name].add(value)
                session.apply(session.legal_actions()[-1])
        assert all(len(seen) > 1 for seen in values.values())  # each field with two values at least

    @pytest.mark.parametrize(
        ("message", "kind", "hint", "value"),
        [
            (wrappers_pb2.Int32Value, FieldDescriptor.TYPE_INT32, int, -5),
            (wrappers_pb2.Int64Value, FieldDescriptor.TYPE_INT64, int, -(1 << 40)),
            (wrappers_pb2.UInt64Value, FieldDescriptor.TYPE_UINT64, int, 1 << 40),
            (wrappers_pb2.BoolValue, FieldDescriptor.TYPE_BOOL, bool, True),
            (wrappers_pb2.StringValue, FieldDescriptor.TYPE_STRING, str, "é"),
            (wrappers_pb2.Int32Value, FieldDescriptor.TYPE_INT32, int, 0),
        ],
    )
    def test_numbers_of_every_kind_are_written_as_protobuf_writes_them(
        self, message: Any, kind: int, hint: object, value: object
    ) -> None:
        """Negative int32 and int64 (ten bytes), large ones, booleans, texts; 0 left out."""
        wire = WireField("value", kind, 1, repeated=False, presence=False, packed=False)
        form = typed_form("value", hint, wire)
        assert form.write is not None
        assert form.write(value) == message(value=value).SerializeToString()


def _stand_in(
    *, drop: str = "", add: tuple[str, str] | None = None, retype: tuple[str, str] | None = None
) -> type:
    """A dataclass standing in for a changed SeatView: a field dropped, added at the end or retyped."""
    specs = [
        (field.name, retype[1] if retype and retype[0] == field.name else field.type)
        for field in dataclasses.fields(SeatView)
        if field.name != drop
    ]
    return dataclasses.make_dataclass("SeatView", [*specs, *([add] if add else [])], frozen=True)


class TestOneSideOnly:
    """A field added to SeatView without its nap.v1 field, or the other way round, stops the import."""

    def test_the_view_of_today_has_every_form(self) -> None:
        forms = view_forms(_stand_in())
        assert [(form.name, form.wire) for form in forms] == [(form.name, form.wire) for form in VIEW_FORMS]

    def test_a_view_field_without_a_wire_field(self) -> None:
        with pytest.raises(TypeError, match=r"SeatView\.dealt_by has no field 'dealt_by' in nap\.v1"):
            view_forms(_stand_in(add=("dealt_by", "int")))

    def test_a_wire_field_that_no_view_field_fills(self) -> None:
        with pytest.raises(TypeError, match=r"\['pool'\] carry no SeatView field"):
            view_forms(_stand_in(drop="pool"))

    def test_a_view_field_of_a_type_with_no_form(self) -> None:
        with pytest.raises(TypeError, match=r"SeatView\.peeked .* has no form"):
            view_forms(_stand_in(retype=("peeked", "tuple[tuple[int, int], ...]")))


def _later_form() -> FieldForm:
    """The form of a field ``again`` declared after legal_actions, carried (for the test) by ``pool``."""
    return typed_form("again", int, WireField.of("pool"))


class Extended(ViewFields):
    """A view's fields with one more, ``again``, declared after the last (its value last)."""

    __slots__ = ()

    @property
    def again(self) -> object:
        return self[-1]


class TestALaterField:
    """A field declared after legal_actions goes through the fast paths in its form, written nowhere else."""

    def test_the_fast_encoder_writes_it(self, monkeypatch: pytest.MonkeyPatch) -> None:
        later = fastcodec._later_writes((*LATER_FORMS, _later_form()), (*FIELD_NAMES, "again"))  # noqa: SLF001 - as at import
        monkeypatch.setattr(fastcodec, "_LATER", later)
        view = _in_play()
        assert view.pool == 0
        fields = tuple.__new__(Extended, (*view.fields(), 7))
        data = RequestEncoder("t")._view_and_later(fields)  # noqa: SLF001 - the path a later field takes
        expected = view_to_proto(dataclasses.replace(view, pool=7), table="t")
        assert nap_pb2.SeatView.FromString(data) == expected

    def test_a_later_field_with_a_form_of_its_own_is_written_by_hand(self) -> None:
        """Only a form read from a type has a writer: the fast encoder refuses the others."""
        own = next(form for form in VIEW_FORMS if form.name == "bids")
        with pytest.raises(TypeError, match=r"SeatView\.bids has a form of its own: write it by hand"):
            fastcodec._later_writes((own,), FIELD_NAMES)  # noqa: SLF001 - what the import runs

    def test_the_fast_decoder_reads_it(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(fastdecode, "LATER_FORMS", (*LATER_FORMS, _later_form()))
        view = _in_play()
        wire = view_to_proto(dataclasses.replace(view, pool=7), table="t")

        def build(**fields: Any) -> dict[str, Any]:
            return fields

        seen = fastdecode._Seen()  # noqa: SLF001 - the decoder's state of one seat
        decoded = fastdecode._decode(wire, seen, phase=view.phase, legal=(), build=build)  # noqa: SLF001 - its one reading
        assert decoded.pop("again") == 7
        assert SeatView(**decoded) == dataclasses.replace(view, pool=7, legal_actions=())


def test_the_json_view_is_the_wire_view_field_by_field() -> None:
    """The stdio bridge's view object has every nap.v1 SeatView field, in order, as the wire has it."""
    view = _in_play("peep", seats=3, seed=1)
    request = request_to_proto(view, table="t", request_id=5, deadline_ms=9, time_bank_ms=0)
    line = json.loads(encode_request(request))["view"]
    assert list(line) == [field.name for field in nap_pb2.SeatView.DESCRIPTOR.fields]
    wire = view_to_proto(view, table="t")
    assert line["phase"] == "play"
    cards = wire.current_trick.cards
    assert line["current_trick"]["cards"] == [{"seat": card.seat, "card": card.card} for card in cards]
    assert line["current_trick"]["winner"] is None
    assert line["declarer"] == view.declarer
    assert line["exchanged"] == [0, 0, 0]
    assert view_from_proto(wire) == dataclasses.replace(view, legal_actions=())
