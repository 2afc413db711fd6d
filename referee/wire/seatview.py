"""How each field of a :class:`~referee.rules.SeatView` travels: its nap.v1 SeatView field and form.

:class:`~referee.rules.SeatView` is the one declaration of a view's fields. Each travels
as the nap.v1 SeatView field of its name, in a form read from its type when this module
is imported:

- ``int``, ``str``, ``bool``: the scalar as it is (proto3 leaves out 0, "" and false);
- ``X | None``: left unset for None: a field with presence (``optional``) for a number or
  a bool, an empty string for a text;
- ``tuple[X, ...]``: a repeated field;
- a :class:`~referee.rules.Card` as its text (``"10S"``), a :class:`~referee.rules.Suit`
  as its letter.

The others have a form of their own, written here: ``table_size`` is ``number_of_seats``;
``phase`` the Phase enum; ``seats_in_play`` the ``active`` flags, one per seat; ``bids``
SeatBid messages; ``trick`` the ``current_trick``, sent during play only, with its leader
(the seat to act while a lead is awaited); ``tricks`` the ``completed_tricks``;
``exchanged`` is left empty while every count is 0 (read back as zeros). ``legal_actions``
travel in the DecisionRequest, not in the view.

:data:`VIEW_FORMS` holds the forms in SeatView's order. Making it fails (TypeError, so
nothing imports) for a view field with no nap.v1 field of its name or a type with no form,
and for a nap.v1 field that no view field fills: a field is never on one side only. A new
field of a plain type therefore needs no edit here, and none in the codecs:
:mod:`referee.wire.codec` writes and reads every field through its form, and the fast
encoder and decoder, which write and read the fields up to ``legal_actions`` by hand (for
speed; tests/test_codec.py checks them against the codec byte for byte), take the later
ones through their forms (:data:`LATER_FORMS`): a form read from a type also writes its
field's bytes directly, as protobuf writes them (tests/test_seat_view_wire.py checks each).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from google.protobuf.descriptor import FieldDescriptor

import referee.rules
from referee.rules import BID_NAMES, Bid, Card, Phase, SeatView, Suit, TrickWon, parse_card
from referee.wire._gen.nap.v1 import nap_pb2
from referee.wire.protowire import length_delimited, varint, wire_type, zigzag

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import TypeAlias

    from referee.rules import ViewFields

    AnyView: TypeAlias = SeatView | ViewFields
    """A view, or its fields as the referee encodes them: both read each field by its name."""
    _Convert: TypeAlias = Callable[[Any], Any] | None
    """A conversion of a field's element to or from the wire; None: as it is."""

__all__ = [
    "LATER_FORMS",
    "PHASE_FROM_WIRE",
    "PHASE_TO_WIRE",
    "VIEW_FORMS",
    "FieldForm",
    "WireField",
    "bid_from",
    "card_from",
    "plays_from",
    "suit_from",
    "typed_form",
    "view_forms",
]

PHASE_TO_WIRE: Final[dict[Phase, nap_pb2.Phase]] = {
    Phase.EXCHANGE: nap_pb2.PHASE_EXCHANGE,
    Phase.BIDDING: nap_pb2.PHASE_BIDDING,
    Phase.WIDOW: nap_pb2.PHASE_WIDOW,
    Phase.PLAY: nap_pb2.PHASE_PLAY,
    Phase.OVER: nap_pb2.PHASE_OVER,
}
"""The one mapping of a deal's phase to nap.v1 Phase: the codec's, the fast encoder's and decoder's."""
PHASE_FROM_WIRE: Final[dict[int, Phase]] = {number: phase for phase, number in PHASE_TO_WIRE.items()}
"""nap.v1 Phase numbers back to phases (UNSPECIFIED, or a number unknown here, is missing)."""
_SUIT_FROM: Final = {suit.letter: suit for suit in Suit}
_CARD_FROM: Final[dict[str, Card]] = {}
_BID_FROM: Final = {name: Bid(name) for name in BID_NAMES}


def card_from(text: str) -> Card:
    """The card a wire text names; ValueError if it names none."""
    card = _CARD_FROM.get(text)
    if card is None:
        card = _CARD_FROM[text] = parse_card(text)
    return card


def bid_from(text: str) -> Bid:
    """The bid a wire text names."""
    bid = _BID_FROM.get(text)
    return bid if bid is not None else Bid(text)


def suit_from(text: str) -> Suit:
    """The suit a wire letter names; ValueError if it names none."""
    suit = _SUIT_FROM.get(text)
    return suit if suit is not None else Suit.parse(text)


def plays_from(cards: Iterable[nap_pb2.PlayedCard]) -> tuple[tuple[int, Card], ...]:
    """The (seat, card) plays of a trick's wire cards."""
    return tuple((played.seat, card_from(played.card)) for played in cards)


@dataclass(frozen=True, slots=True)
class FieldForm:
    """How one SeatView field travels in a nap.v1 SeatView message."""

    name: str
    """The SeatView field."""
    wire: str
    """The nap.v1 SeatView field that carries it."""
    put: Callable[[nap_pb2.SeatView, AnyView], None]
    """Writes the field of a view into a message."""
    get: Callable[[nap_pb2.SeatView], Any]
    """Reads the field from a message (ValueError for a text that is no card, suit or phase)."""
    write: Callable[[Any], bytes] | None = None
    """The field's bytes on the wire, given its value: what protobuf writes for it alone (a form
    read from a type has it; the fast encoder writes the others by hand)."""
    number: int = 0
    """The nap.v1 field's number (the wire writes fields in their numbers' order)."""


@dataclass(frozen=True, slots=True)
class WireField:
    """A nap.v1 SeatView field, as a form read from a type needs it."""

    name: str
    kind: int
    """Its ``FieldDescriptor.TYPE_*``."""
    number: int
    repeated: bool
    presence: bool
    """Whether it is ``optional``: set or not, 0 and "" included."""
    packed: bool
    """A repeated number sent as one run of values (proto3's default)."""

    @classmethod
    def of(cls, name: str) -> WireField:
        """nap.v1 SeatView's field ``name`` (KeyError if it has none)."""
        field = nap_pb2.SeatView.DESCRIPTOR.fields_by_name[name]
        return cls(name, field.type, field.number, field.is_repeated, field.has_presence, field.is_packed)

    @property
    def tag(self) -> bytes:
        """What protobuf writes before each of its values (before the run, if packed)."""
        return varint(self.number << 3 | wire_type(self.kind, packed=self.packed))


# -- the forms of their own ------------------------------------------------------------------


def _put_phase(msg: nap_pb2.SeatView, view: AnyView) -> None:
    msg.phase = PHASE_TO_WIRE[view.phase]


def _get_phase(msg: nap_pb2.SeatView) -> Phase:
    phase = PHASE_FROM_WIRE.get(msg.phase)
    if phase is None:
        text = f"view has no phase ({msg.phase})"
        raise ValueError(text)
    return phase


def _put_active(msg: nap_pb2.SeatView, view: AnyView) -> None:
    seats = view.seats_in_play
    msg.active.extend([seat in seats for seat in range(view.table_size)])


def _get_active(msg: nap_pb2.SeatView) -> tuple[int, ...]:
    return tuple(seat for seat, active in enumerate(msg.active) if active)


def _put_bids(msg: nap_pb2.SeatView, view: AnyView) -> None:
    add = msg.bids.add
    for seat, bid in view.bids:
        add(seat=seat, bid=bid.name)


def _get_bids(msg: nap_pb2.SeatView) -> tuple[tuple[int, Bid], ...]:
    return tuple((bid.seat, bid_from(bid.bid)) for bid in msg.bids)


def _put_trick(msg: nap_pb2.SeatView, view: AnyView) -> None:
    if view.phase is not Phase.PLAY:
        return
    trick = view.trick
    current = msg.current_trick
    current.SetInParent()  # sent even when empty: a lead is awaited
    current.leader = trick[0][0] if trick else (view.to_act or 0)
    add_card = current.cards.add
    for seat, card in trick:
        add_card(seat=seat, card=card.text)


def _get_trick(msg: nap_pb2.SeatView) -> tuple[tuple[int, Card], ...]:
    cards = msg.current_trick.cards
    return plays_from(cards) if cards else ()


def _put_tricks(msg: nap_pb2.SeatView, view: AnyView) -> None:
    add_trick = msg.completed_tricks.add
    for won in view.tricks:
        plays = won.plays
        add_card = add_trick(leader=plays[0][0], winner=won.winner).cards.add
        for seat, card in plays:
            add_card(seat=seat, card=card.text)


def _get_tricks(msg: nap_pb2.SeatView) -> tuple[TrickWon, ...]:
    return tuple(
        TrickWon(number, trick.winner, plays_from(trick.cards))
        for number, trick in enumerate(msg.completed_tricks)
    )


def _put_exchanged(msg: nap_pb2.SeatView, view: AnyView) -> None:
    if any(view.exchanged):
        msg.exchanged.extend(view.exchanged)


def _get_exchanged(msg: nap_pb2.SeatView) -> tuple[int, ...]:
    return tuple(msg.exchanged) or (0,) * msg.number_of_seats


_OWN_FORMS: Final = {
    form.name: form
    for form in (
        FieldForm("phase", "phase", _put_phase, _get_phase),
        FieldForm("seats_in_play", "active", _put_active, _get_active),
        FieldForm("bids", "bids", _put_bids, _get_bids),
        FieldForm("trick", "current_trick", _put_trick, _get_trick),
        FieldForm("tricks", "completed_tricks", _put_tricks, _get_tricks),
        FieldForm("exchanged", "exchanged", _put_exchanged, _get_exchanged),
    )
}
"""The fields whose form is not read from their type."""
_RENAMED: Final = {"table_size": "number_of_seats"}
"""Fields carried by a nap.v1 field of another name (and otherwise in the form of their type)."""
_IN_REQUEST: Final = frozenset({"legal_actions"})
"""Fields that travel in the DecisionRequest, beside the view."""
_WHOLE_VIEW: Final = frozenset({"table"})
"""nap.v1 SeatView fields that belong to the message, not to a view field (the table is the request's)."""

# -- the forms read from a field's type -------------------------------------------------------

_NUMBERS: Final = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
    }
)
_ZIGZAG: Final = frozenset({FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SINT64})
_TWOS_COMPLEMENT: Final = frozenset({FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64})
_UINT64: Final = (1 << 64) - 1
_ELEMENTS: Final[dict[object, tuple[frozenset[int], _Convert, _Convert]]] = {
    int: (_NUMBERS, None, None),
    bool: (frozenset({FieldDescriptor.TYPE_BOOL}), None, None),
    str: (frozenset({FieldDescriptor.TYPE_STRING}), None, None),
    Card: (frozenset({FieldDescriptor.TYPE_STRING}), lambda card: card.text, card_from),
    Suit: (frozenset({FieldDescriptor.TYPE_STRING}), lambda suit: suit.letter, suit_from),
}
"""What a field's element type travels as: the nap.v1 types that carry it, and its conversions
to and from the wire (None: as it is)."""


def _number_bytes(kind: int) -> Callable[[int], bytes]:
    """How a number (or a bool) of nap.v1 type ``kind`` is written as a varint."""
    if kind in _ZIGZAG:
        return lambda value: varint(zigzag(value))
    if kind in _TWOS_COMPLEMENT:
        return lambda value: varint(value & _UINT64)  # a negative one is ten bytes long
    return varint  # unsigned, or a bool (an int: True is 1)


def typed_form(name: str, hint: object, wire: WireField) -> FieldForm:  # noqa: C901 - one closure per shape
    """The form of field ``name`` of a plain type ``hint`` (its element alone, optional or in a tuple).

    ``wire`` is the nap.v1 field that carries it. TypeError if it cannot carry ``hint``.
    """
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        element, shape = args[0], "repeated"
    elif origin is types.UnionType and len(args) == 2 and type(None) in args:
        element, shape = args[0] if args[1] is type(None) else args[1], "optional"
    else:
        element, shape = hint, "one"
    found = _ELEMENTS.get(element)
    kind, field, presence = wire.kind, wire.name, wire.presence
    text = kind == FieldDescriptor.TYPE_STRING
    if (
        found is None
        or kind not in found[0]
        or wire.repeated != (shape == "repeated")
        or (shape == "optional" and not presence and not text)
    ):
        message = (
            f"SeatView.{name} ({hint}) has no form as nap.v1 SeatView.{field}: give the field a "
            "plain type that field can carry, or a form of its own in referee/wire/seatview.py"
        )
        raise TypeError(message)
    _, to_wire, from_wire = found
    tag = wire.tag
    number = _number_bytes(kind)

    if shape == "repeated":

        def put(msg: nap_pb2.SeatView, view: AnyView) -> None:
            values = getattr(view, name)
            getattr(msg, field).extend(values if to_wire is None else [to_wire(value) for value in values])

        def get(msg: nap_pb2.SeatView) -> Any:  # noqa: ANN401 - the field's own type
            values = getattr(msg, field)
            return tuple(values) if from_wire is None else tuple([from_wire(value) for value in values])

        def write(value: Any) -> bytes:  # noqa: ANN401 - the field's own type
            values = value if to_wire is None else [to_wire(one) for one in value]
            if text:
                return b"".join([length_delimited(tag, value.encode()) for value in values])
            if wire.packed:
                return length_delimited(tag, b"".join([number(value) for value in values])) if values else b""
            return b"".join([tag + number(value) for value in values])

    else:

        def put(msg: nap_pb2.SeatView, view: AnyView) -> None:
            value = getattr(view, name)
            if value is not None:
                setattr(msg, field, value if to_wire is None else to_wire(value))

        optional = shape == "optional"

        def get(msg: nap_pb2.SeatView) -> Any:  # noqa: ANN401 - the field's own type
            if optional and not (msg.HasField(field) if presence else getattr(msg, field)):
                return None  # unset, or an empty text
            value = getattr(msg, field)
            return value if from_wire is None else from_wire(value)

        def write(value: Any) -> bytes:  # noqa: ANN401 - the field's own type
            if value is None:
                return b""
            if to_wire is not None:
                value = to_wire(value)
            if not (value or presence):
                return b""  # 0, "" and false are left out, unless the field has presence
            return length_delimited(tag, value.encode()) if text else tag + number(value)

    return FieldForm(name, field, put, get, write, wire.number)


def view_forms(view: type[Any] = SeatView) -> tuple[FieldForm, ...]:
    """Every field's form, in the order of ``view`` (SeatView; a test's stand-in for a changed one).

    TypeError for a field with no nap.v1 SeatView field of its name, of a type with no form,
    or for a nap.v1 field that no field fills.
    """
    hints = typing.get_type_hints(view, localns=vars(referee.rules))
    wire_fields = nap_pb2.SeatView.DESCRIPTOR.fields_by_name
    forms: list[FieldForm] = []
    for field in dataclasses.fields(view):
        name = field.name
        if name in _IN_REQUEST:
            continue
        own = _OWN_FORMS.get(name)
        if own is not None:
            forms.append(own)
            continue
        wire = _RENAMED.get(name, name)
        if wire not in wire_fields:
            text = (
                f"SeatView.{name} has no field {wire!r} in nap.v1 SeatView: "
                "add it to proto/nap/v1/nap.proto (and run scripts/gen_protos.py)"
            )
            raise TypeError(text)
        forms.append(typed_form(name, hints[name], WireField.of(wire)))
    unfilled = set(wire_fields) - _WHOLE_VIEW - {form.wire for form in forms}
    if unfilled:
        text = f"nap.v1 SeatView fields {sorted(unfilled)} carry no SeatView field: declare them in SeatView"
        raise TypeError(text)
    return tuple(forms)


VIEW_FORMS: Final = view_forms()
"""How each SeatView field travels (``legal_actions`` aside), in SeatView's order."""
_FIELD_NAMES: Final = tuple(field.name for field in dataclasses.fields(SeatView))
WRITTEN_BY_HAND: Final = _FIELD_NAMES[: _FIELD_NAMES.index("legal_actions") + 1]
"""SeatView's fields up to ``legal_actions``: what the fast encoder and decoder write and read by hand."""
LATER_FORMS: Final = tuple(form for form in VIEW_FORMS if form.name not in WRITTEN_BY_HAND)
"""The forms of the fields declared after ``legal_actions``: the fast encoder writes these with
their forms' writers and the fast decoder reads them with their forms. Their nap.v1 numbers
are above those of every field written by hand (new fields take new numbers), so their bytes
come last."""
