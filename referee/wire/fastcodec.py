"""The referee's fast encoder: a decision request as protobuf wire bytes, built from cached parts.

:func:`referee.wire.codec.request_to_proto` builds a message field by field and gRPC then
serializes it; at tens of thousands of decisions a second that is most of the referee's
time. This module writes the same bytes directly. The protobuf wire format is a plain
concatenation of fields (tag, then a varint or a length and bytes), so a view is mostly
a join of pieces that never change (a card in a hand, a bid, a played card) or only grow
during a deal (the completed tricks, the bids). :class:`RequestEncoder` keeps one table's
growing parts and appends to them as the deal advances.

Every byte comes from the one seat's view given (a :class:`~referee.rules.SeatView`, or
the same fields as a tuple from :func:`referee.rules.view_fields`): a cached part is
reused only while the view holds an equal value, and the other caches are small
per-value tables; nothing of another seat's view can leak into a request. The output is
byte-for-byte what ``request_to_proto(...).SerializeToString()`` gives (fields in number
order, defaults left out), which tests/test_codec.py checks over many random sessions.
Every tag comes from the generated descriptors (:func:`referee.wire.protowire.field_tag`),
read once at import.

The pool variants' view fields (``pool`` to ``widow_taken``, after ``active``) are
written only when one is set, so a view of any other profile costs what it did before they
existed (a few identity and truth tests).

The transport's other messages are built here too, already serialized: a Batch
(:func:`batch_message`, or :func:`batch_of` from :meth:`RequestEncoder.batch_entry`
entries) and the notices that go alone or inside one (:class:`Notice`,
:func:`fault_notice`, :func:`closed_notice`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, NamedTuple

from referee.rules import (
    BID_NAMES,
    CARDS,
    DECLINE_EXCHANGE,
    DECLINE_WIDOW,
    PEEP,
    Bid,
    Phase,
    TakeWidow,
    ViewFields,
)
from referee.wire._gen.nap.v1 import nap_pb2
from referee.wire.codec import closed_to_proto, fault_to_proto
from referee.wire.memo import Memo
from referee.wire.protowire import field_tag, length_delimited, varint, zigzag
from referee.wire.seatview import LATER_FORMS, PHASE_TO_WIRE, WRITTEN_BY_HAND

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from referee.match import Closed, Faulted
    from referee.rules import Card, SeatView, Suit, TrickWon
    from referee.rules.actions import Action
    from referee.wire.seatview import FieldForm

__all__ = [
    "Notice",
    "RequestEncoder",
    "bank_field",
    "batch_message",
    "batch_of",
    "closed_notice",
    "deadline_field",
    "encode_request",
    "fault_notice",
    "length_delimited",
    "varint",
]


def _string(tag: bytes, text: str) -> bytes:
    return length_delimited(tag, text.encode())


def _uint(tag: bytes, value: int) -> bytes:
    """A varint field, left out (b"") at its default 0 as proto3 does."""
    return tag + varint(value) if value else b""


def _packed(tag: bytes, values: bytes) -> bytes:
    return length_delimited(tag, values) if values else b""


# -- tags, read from the generated descriptors once (protowire.field_tag) --------------------

_REQUEST_ID: Final = field_tag(nap_pb2.DecisionRequest, "request_id")
_REQUEST_TABLE: Final = field_tag(nap_pb2.DecisionRequest, "table")
_REQUEST_SEAT_TAG: Final = field_tag(nap_pb2.DecisionRequest, "seat")
_REQUEST_DEADLINE: Final = field_tag(nap_pb2.DecisionRequest, "deadline_ms")
_REQUEST_VIEW: Final = field_tag(nap_pb2.DecisionRequest, "view")
_REQUEST_LEGAL: Final = field_tag(nap_pb2.DecisionRequest, "legal_actions")
_REQUEST_BANK: Final = field_tag(nap_pb2.DecisionRequest, "time_bank_ms")

_VIEW_TABLE: Final = field_tag(nap_pb2.SeatView, "table")
_VIEW_SEAT_TAG: Final = field_tag(nap_pb2.SeatView, "seat")
_VIEW_SIZE: Final = field_tag(nap_pb2.SeatView, "number_of_seats")
_VIEW_PROFILE: Final = field_tag(nap_pb2.SeatView, "profile")
_VIEW_DEAL: Final = field_tag(nap_pb2.SeatView, "deal_number")
_VIEW_DEALS: Final = field_tag(nap_pb2.SeatView, "deals_in_session")
_VIEW_DEALER: Final = field_tag(nap_pb2.SeatView, "dealer")
_VIEW_PHASE: Final = field_tag(nap_pb2.SeatView, "phase")
_VIEW_TO_ACT: Final = field_tag(nap_pb2.SeatView, "to_act")
_VIEW_HAND: Final = field_tag(nap_pb2.SeatView, "hand")
_VIEW_BIDS: Final = field_tag(nap_pb2.SeatView, "bids")
_VIEW_DECLARER: Final = field_tag(nap_pb2.SeatView, "declarer")
_VIEW_CONTRACT: Final = field_tag(nap_pb2.SeatView, "contract")
_VIEW_TRUMP: Final = field_tag(nap_pb2.SeatView, "trump")
_VIEW_CURRENT: Final = field_tag(nap_pb2.SeatView, "current_trick")
_VIEW_COMPLETED: Final = field_tag(nap_pb2.SeatView, "completed_tricks")
_VIEW_TRICKS_WON: Final = field_tag(nap_pb2.SeatView, "tricks_won")
_VIEW_BALANCES: Final = field_tag(nap_pb2.SeatView, "balances")
_VIEW_ACTIVE: Final = field_tag(nap_pb2.SeatView, "active")
_VIEW_POOL: Final = field_tag(nap_pb2.SeatView, "pool")
_VIEW_EXCHANGED: Final = field_tag(nap_pb2.SeatView, "exchanged")
_VIEW_PEEKED: Final = field_tag(nap_pb2.SeatView, "peeked")
_VIEW_WIDOW: Final = field_tag(nap_pb2.SeatView, "widow")
_VIEW_DRAWN: Final = field_tag(nap_pb2.SeatView, "drawn")
_VIEW_DISCARDED: Final = field_tag(nap_pb2.SeatView, "discarded")
_VIEW_WIDOW_TAKEN: Final = field_tag(nap_pb2.SeatView, "widow_taken")

_BID_SEAT: Final = field_tag(nap_pb2.SeatBid, "seat")
_BID_BID: Final = field_tag(nap_pb2.SeatBid, "bid")
_PLAYED_SEAT: Final = field_tag(nap_pb2.PlayedCard, "seat")
_PLAYED_CARD: Final = field_tag(nap_pb2.PlayedCard, "card")
_TRICK_LEADER: Final = field_tag(nap_pb2.Trick, "leader")
_TRICK_CARDS: Final = field_tag(nap_pb2.Trick, "cards")
_TRICK_WINNER: Final = field_tag(nap_pb2.Trick, "winner")

_BATCH_REQUESTS: Final = field_tag(nap_pb2.Batch, "requests")
_BATCH_EVENTS: Final = field_tag(nap_pb2.Batch, "events")
_BATCH_CLOSED: Final = field_tag(nap_pb2.Batch, "closed")
_BATCH_FAULTS: Final = field_tag(nap_pb2.Batch, "faults")
_MESSAGE_BATCH: Final = field_tag(nap_pb2.RefereeMessage, "batch")
_MESSAGE_CLOSED: Final = field_tag(nap_pb2.RefereeMessage, "table_closed")
_MESSAGE_FAULT: Final = field_tag(nap_pb2.RefereeMessage, "fault")

# -- pieces that never change ----------------------------------------------------------------

_SEATS: Final = 64
"""Seats the per-seat tables below cover (a table has at most 52 seats: one card each)."""
_HAND: Final[dict[Card, bytes]] = {card: _string(_VIEW_HAND, card.text) for card in CARDS}
"""SeatView.hand entries."""
_LEGAL: Final[dict[Action, bytes]] = {card: _string(_REQUEST_LEGAL, card.text) for card in CARDS}
"""DecisionRequest.legal_actions entries."""
_LEGAL.update({Bid(name): _string(_REQUEST_LEGAL, name) for name in BID_NAMES})
_LEGAL.update(
    {action: _string(_REQUEST_LEGAL, str(action)) for action in (PEEP, DECLINE_EXCHANGE, DECLINE_WIDOW)}
)
_LEGAL.update({TakeWidow(card): _string(_REQUEST_LEGAL, str(TakeWidow(card))) for card in CARDS})
_CAP: Final = 50_000
"""Entries a memo of values that may not come back (balances, milliseconds, exchanges) holds at most."""
_SMALL_CAP: Final = 4_096
"""Entries a memo of a small set of values (a table's seats, tricks won) holds at most."""
_EXCHANGES: Final[Memo[Action, bytes]] = Memo(lambda action: _string(_REQUEST_LEGAL, str(action)), limit=_CAP)
"""DecisionRequest.legal_actions entries of exchanges (too many to list ahead)."""
_DRAWN: Final[dict[Card, bytes]] = {card: _string(_VIEW_DRAWN, card.text) for card in CARDS}
"""SeatView.drawn entries."""
_DISCARDED: Final[dict[Card, bytes]] = {card: _string(_VIEW_DISCARDED, card.text) for card in CARDS}
"""SeatView.discarded entries."""
_WIDOW: Final[dict[Card, bytes]] = {card: _string(_VIEW_WIDOW, card.text) for card in CARDS}
"""SeatView.widow."""
_WIDOW_TAKEN: Final = {taken: _VIEW_WIDOW_TAKEN + varint(int(taken)) for taken in (False, True)}
"""SeatView.widow_taken (an optional bool: sent when set, false too)."""
_LEADER: Final = tuple(_uint(_TRICK_LEADER, seat) for seat in range(_SEATS))
"""Trick.leader, by seat."""
_PLAYED: Final = tuple(
    tuple(
        length_delimited(_TRICK_CARDS, _uint(_PLAYED_SEAT, seat) + _string(_PLAYED_CARD, card.text))
        for card in CARDS
    )
    for seat in range(_SEATS)
)
"""Trick.cards entries: a PlayedCard, by seat then card index."""
_BIDS: Final = tuple(
    {
        Bid(name): length_delimited(_VIEW_BIDS, _uint(_BID_SEAT, seat) + _string(_BID_BID, name))
        for name in BID_NAMES
    }
    for seat in range(_SEATS)
)
"""SeatView.bids entries: a SeatBid, by seat then bid."""
_REQUEST_SEAT: Final = tuple(_uint(_REQUEST_SEAT_TAG, seat) for seat in range(_SEATS))
"""DecisionRequest.seat, by seat."""
_VIEW_SEAT: Final = tuple(_uint(_VIEW_SEAT_TAG, seat) for seat in range(_SEATS))
"""SeatView.seat, by seat."""
_PLAY: Final = Phase.PLAY


_STATE: Final = {
    phase: {
        to_act: _uint(_VIEW_PHASE, number) + (b"" if to_act is None else _VIEW_TO_ACT + varint(to_act))
        for to_act in (None, *range(_SEATS))
    }
    for phase, number in PHASE_TO_WIRE.items()
}
"""SeatView.phase and to_act, by phase, then by seat to act (an encoder keeps its phase's entry:
hashing an Enum is a Python call)."""
_COUNTS: Final[Memo[tuple[int, ...], bytes]] = Memo(
    lambda counts: _packed(_VIEW_TRICKS_WON, b"".join(varint(n) for n in counts)), limit=_SMALL_CAP
)
"""SeatView.tricks_won, packed."""
_BALANCES: Final[Memo[tuple[int, ...], bytes]] = Memo(
    lambda balances: _packed(_VIEW_BALANCES, b"".join(varint(zigzag(n)) for n in balances)), limit=_CAP
)
"""SeatView.balances, packed zigzag."""
_ACTIVE: Final[Memo[tuple[tuple[int, ...], int], bytes]] = Memo(
    lambda key: _packed(_VIEW_ACTIVE, bytes(1 if seat in key[0] else 0 for seat in range(key[1]))),
    limit=_SMALL_CAP,
)
"""SeatView.active, packed booleans, by (seats in play, table size)."""


def _contract(declarer: int | None, contract: str | None, trump: Suit | None) -> bytes:
    """SeatView.declarer, contract and trump."""
    found = b"" if declarer is None else _VIEW_DECLARER + varint(declarer)
    if contract:
        found += _string(_VIEW_CONTRACT, contract)
    if trump is not None:
        found += _string(_VIEW_TRUMP, trump.letter)
    return found


def _totals(
    tricks_won: tuple[int, ...], balances: tuple[int, ...], seats: tuple[int, ...], size: int
) -> bytes:
    """SeatView.tricks_won, balances and active: the view's last fields."""
    return _COUNTS[tricks_won] + _BALANCES[balances] + _ACTIVE[seats, size]


def _pool_fields(  # noqa: PLR0913 - the view's pool fields, in field order
    *,
    pool: int,
    exchanged: bytes,
    peeked: tuple[int, ...],
    widow: Card | None,
    drawn: tuple[Card, ...],
    discarded: tuple[Card, ...],
    widow_taken: bool | None,
) -> bytes:
    """SeatView.pool to widow_taken: the pool variants' fields, after ``active`` (``exchanged`` encoded)."""
    return b"".join(
        (
            _uint(_VIEW_POOL, pool),
            exchanged,
            _packed(_VIEW_PEEKED, b"".join([varint(seat) for seat in peeked])),
            b"" if widow is None else _WIDOW[widow],
            b"".join([_DRAWN[card] for card in drawn]),
            b"".join([_DISCARDED[card] for card in discarded]),
            b"" if widow_taken is None else _WIDOW_TAKEN[widow_taken],
        )
    )


def _legal_with_exchanges(actions: tuple[Action, ...]) -> bytes:
    """DecisionRequest.legal_actions of the exchange round: exchanges are encoded once and cached."""
    exchanges = _EXCHANGES
    return b"".join([_LEGAL.get(action) or exchanges[action] for action in actions])


def _plays(plays: tuple[tuple[int, Card], ...]) -> bytes:
    """Trick.cards of ``plays``."""
    return b"".join([_PLAYED[seat][card.index] for seat, card in plays])


def _trick(trick: TrickWon) -> bytes:
    """A completed trick as a SeatView.completed_tricks entry."""
    plays = trick.plays
    body = b"".join((_LEADER[plays[0][0]], _plays(plays), _TRICK_WINNER, varint(trick.winner)))
    return length_delimited(_VIEW_COMPLETED, body)


_WRITTEN: Final = len(WRITTEN_BY_HAND)


def _later_writes(
    forms: tuple[FieldForm, ...], names: tuple[str, ...]
) -> tuple[tuple[int, Callable[[Any], bytes]], ...]:
    """Each later field's place among ``names`` (a view's fields) and its writer, in their numbers' order.

    TypeError for one whose form has no writer (a form of its own): write it by hand.
    """
    places = {name: place for place, name in enumerate(names)}
    writes = []
    for form in sorted(forms, key=lambda form: form.number):
        if form.write is None:
            text = f"SeatView.{form.name} has a form of its own: write it by hand in RequestEncoder"
            raise TypeError(text)
        writes.append((places[form.name], form.write))
    return tuple(writes)


_LATER: Final = _later_writes(LATER_FORMS, ViewFields._fields)
"""The fields declared after ``legal_actions``: where each is and how it is written."""


class RequestEncoder:
    """Encodes one table's decision requests; keeps the parts of its views that only grow.

    One encoder per table (its id is fixed). Not thread-safe; cheap to make. Each cached
    part is kept with the view value it was encoded from and reused only while the next
    view holds an equal value (the rules engine hands out the same tuple while a part is
    unchanged, so the test is mostly one identity check); a part that grew by one entry is
    extended rather than encoded again.
    """

    __slots__ = (
        "_bids",
        "_bids_bytes",
        "_contract",
        "_contract_key",
        "_current",
        "_current_key",
        "_deal",
        "_deal_key",
        "_exchanged",
        "_exchanged_bytes",
        "_hands",
        "_phase",
        "_request_table",
        "_states",
        "_totals",
        "_totals_key",
        "_trick",
        "_trick_plays",
        "_tricks",
        "_tricks_bytes",
        "_view_table",
    )

    def __init__(self, table: str) -> None:
        self._view_table = _string(_VIEW_TABLE, table)
        self._request_table = _string(_REQUEST_TABLE, table)
        self._deal_key: tuple[int, str, int, int, int] | None = None
        self._deal = b""
        self._phase: Phase | None = None
        self._states: dict[int | None, bytes] = {}
        """``_STATE``'s entry of ``_phase``."""
        self._hands: dict[int, tuple[tuple[Card, ...], bytes]] = {}
        self._bids: tuple[tuple[int, Bid], ...] = ()
        self._bids_bytes = b""
        self._contract_key: tuple[int | None, str | None, Suit | None] = (None, None, None)
        self._contract = b""
        self._trick: tuple[tuple[int, Card], ...] = ()
        self._trick_plays = b""
        self._current_key: int | None = -1
        """The seat to act when ``_current`` was encoded (its leader while the trick is empty)."""
        self._current = b""
        self._tricks: tuple[TrickWon, ...] = ()
        self._tricks_bytes = b""
        self._totals_key: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int] | None = None
        self._totals = b""
        self._exchanged: tuple[int, ...] = ()
        self._exchanged_bytes = b""

    def view(self, view: SeatView) -> bytes:
        """The SeatView message's bytes (as ``view_to_proto(view, table=...)`` serializes)."""
        return self.view_of(view.fields())

    def _view_written(self, fields: tuple[Any, ...]) -> bytes:
        """:meth:`view_of` of SeatView's fields up to ``legal_actions``, each written here by hand."""
        (
            profile,
            size,
            seat,
            seats,
            number,
            deals,
            dealer,
            phase,
            to_act,
            hand,
            bids,
            declarer,
            contract,
            trump,
            trick,
            tricks,
            tricks_won,
            balances,
            pool,
            exchanged,
            peeked,
            widow,
            drawn,
            discarded,
            widow_taken,
            _,  # the legal actions: the request's, not the view's
        ) = fields  # SeatView's fields in its order (tests/test_codec.py checks the bytes)
        key = self._deal_key
        if (
            key is None
            or number != key[2]
            or dealer != key[4]
            or deals != key[3]
            or profile != key[1]
            or size != key[0]
        ):
            self._deal_key = (size, profile, number, deals, dealer)
            self._deal = b"".join(
                (
                    _uint(_VIEW_SIZE, size),
                    _string(_VIEW_PROFILE, profile),
                    _uint(_VIEW_DEAL, number),
                    _uint(_VIEW_DEALS, deals),
                    _uint(_VIEW_DEALER, dealer),
                )
            )
        if phase is not self._phase:
            self._phase = phase
            self._states = _STATE[phase]
        state = self._states[to_act]
        held = self._hands.get(seat)
        if held is None or held[0] != hand:
            held = self._hands[seat] = (hand, b"".join([_HAND[card] for card in hand]))
        if bids is not self._bids:
            self._bid_bytes(bids)
        settled = self._contract_key
        if declarer != settled[0] or contract is not settled[1] or trump is not settled[2]:
            self._contract_key = (declarer, contract, trump)
            self._contract = _contract(declarer, contract, trump)
        current = self._current_bytes(trick, to_act) if phase is _PLAY else b""
        if tricks is not self._tricks:
            self._trick_bytes(tricks)
        totals = self._totals_key
        if (
            totals is None
            or tricks_won is not totals[0]
            or balances is not totals[1]
            or seats is not totals[2]
            or size != totals[3]
        ):
            totals = self._totals_key = (tricks_won, balances, seats, size)
            self._totals = _totals(*totals)
        if exchanged is not self._exchanged:  # the same tuple all deal long until a seat exchanges
            self._exchanged = exchanged
            self._exchanged_bytes = (
                _packed(_VIEW_EXCHANGED, b"".join([varint(count) for count in exchanged]))
                if any(exchanged)
                else b""
            )
        pooled = self._exchanged_bytes
        if pool or pooled or peeked or drawn or discarded or widow is not None or widow_taken is not None:
            pooled = _pool_fields(
                pool=pool,
                exchanged=pooled,
                peeked=peeked,
                widow=widow,
                drawn=drawn,
                discarded=discarded,
                widow_taken=widow_taken,
            )
        return b"".join(
            (
                self._view_table,
                _VIEW_SEAT[seat],
                self._deal,
                state,
                held[1],
                self._bids_bytes,
                self._contract,
                current,
                self._tricks_bytes,
                self._totals,
                pooled,
            )
        )

    def _view_and_later(self, fields: ViewFields) -> bytes:
        """:meth:`view_of` when SeatView has fields after ``legal_actions``: those in their forms, last.

        Their numbers come after those of the fields written by hand.
        """
        later = b"".join([write(fields[place]) for place, write in _LATER])
        return self._view_written(fields[:_WRITTEN]) + later

    view_of = _view_and_later if _LATER else _view_written
    """:meth:`view` of the view with these fields (:func:`referee.rules.view_fields`).

    The fields up to ``legal_actions`` are written by hand; any declared after it, through
    their forms (:data:`referee.wire.seatview.LATER_FORMS`), until a bench says to write
    them here too. Chosen once, at import: with no later field it costs nothing.
    """

    def _bid_bytes(self, bids: tuple[tuple[int, Bid], ...]) -> None:
        """SeatView.bids, extended by the new bid when the auction moved on by one."""
        known = self._bids
        if bids != known:
            if bids and bids[:-1] == known:
                seat, bid = bids[-1]
                self._bids_bytes += _BIDS[seat][bid]
            else:
                self._bids_bytes = b"".join([_BIDS[seat][bid] for seat, bid in bids])
        self._bids = bids

    def _current_bytes(self, trick: tuple[tuple[int, Card], ...], to_act: int | None) -> bytes:
        """SeatView.current_trick, extended by a card played; awaiting a lead, the seat to act leads."""
        if to_act == self._current_key and trick == self._trick:
            return self._current
        known = self._trick
        if trick and trick[:-1] == known:
            seat, card = trick[-1]
            plays = self._trick_plays + _PLAYED[seat][card.index]
        else:
            plays = _plays(trick)
        leader = _LEADER[trick[0][0] if trick else to_act or 0]
        self._trick, self._trick_plays, self._current_key = trick, plays, to_act
        self._current = encoded = length_delimited(_VIEW_CURRENT, leader + plays)
        return encoded

    def _trick_bytes(self, tricks: tuple[TrickWon, ...]) -> None:
        """SeatView.completed_tricks, extended by the new trick when one was won."""
        known = self._tricks
        if tricks != known:
            if tricks and tricks[:-1] == known:
                self._tricks_bytes += _trick(tricks[-1])
            else:
                self._tricks_bytes = b"".join([_trick(trick) for trick in tricks])
        self._tricks = tricks

    def request(self, view: SeatView, *, request_id: int) -> tuple[bytes, bytes]:
        """The request for the seat to act in ``view``, in two parts around its deadline.

        The DecisionRequest is ``head + deadline_field(ms) + tail`` (see
        :func:`deadline_field`): the deadline is filled in when the request is sent, since
        a re-sent request carries what is left of it. ``tail`` holds the view, the legal
        actions and nothing else; the time bank goes after it (:func:`bank_field`).
        """
        return self.request_of(view.fields(), request_id=request_id)

    def request_of(self, fields: ViewFields, *, request_id: int) -> tuple[bytes, bytes]:
        """:meth:`request` for the view with these fields (:func:`referee.rules.view_fields`)."""
        head = b"".join((_REQUEST_ID, varint(request_id), self._request_table, _REQUEST_SEAT[fields.seat]))
        legal = fields.legal_actions
        try:
            actions = b"".join([_LEGAL[action] for action in legal])
        except KeyError:
            actions = _legal_with_exchanges(legal)
        view = self.view_of(fields)
        return head, b"".join((_REQUEST_VIEW, varint(len(view)), view, actions))

    def batch_entry(self, fields: ViewFields, *, request_id: int, deadline_ms: int, bank_ms: int) -> bytes:
        """The request for the view with these fields as one Batch.requests entry (for :func:`batch_of`).

        ``deadline_ms`` and ``bank_ms`` are what the request carries (see :meth:`request`).
        """
        head, tail = self.request_of(fields, request_id=request_id)
        deadline = deadline_field(deadline_ms)
        bank = bank_field(bank_ms)
        size = len(head) + len(deadline) + len(tail) + len(bank)
        return b"".join((_BATCH_REQUESTS, varint(size), head, deadline, tail, bank))


_DEADLINES: Final[Memo[int, bytes]] = Memo(lambda ms: _uint(_REQUEST_DEADLINE, ms), limit=_CAP)
"""DecisionRequest.deadline_ms, by ms."""
_BANKS: Final[Memo[int, bytes]] = Memo(lambda ms: _uint(_REQUEST_BANK, ms), limit=_CAP)
"""DecisionRequest.time_bank_ms, by ms."""


def deadline_field(deadline_ms: int) -> bytes:
    """DecisionRequest.deadline_ms."""
    return _DEADLINES[deadline_ms]


def bank_field(time_bank_ms: int) -> bytes:
    """DecisionRequest.time_bank_ms."""
    return _BANKS[time_bank_ms]


def encode_request(  # noqa: PLR0913 - the request's fields, keywords
    view: SeatView,
    *,
    table: str,
    request_id: int,
    deadline_ms: int,
    time_bank_ms: int,
    encoder: RequestEncoder | None = None,
) -> bytes:
    """A DecisionRequest's bytes: what ``request_to_proto(...)`` serializes to."""
    head, tail = (encoder or RequestEncoder(table)).request(view, request_id=request_id)
    return head + deadline_field(deadline_ms) + tail + bank_field(time_bank_ms)


def batch_message(requests: list[bytes], events: list[bytes], notices: Sequence[bytes] | bytes = ()) -> bytes:
    """A RefereeMessage holding a Batch of serialized DecisionRequests and TableEvents, and notices.

    ``requests`` and ``events`` are serialized DecisionRequest and TableEvent messages.
    ``notices`` are the :attr:`Notice.in_batch` bytes of the notices that ride in this
    batch, in the order they came: a list of them, or those bytes already joined into one
    (the Batch.closed and Batch.faults entries may come in any order).
    """
    return batch_of([length_delimited(_BATCH_REQUESTS, request) for request in requests], events, notices)


def batch_of(entries: list[bytes], events: list[bytes], notices: Sequence[bytes] | bytes = ()) -> bytes:
    """:func:`batch_message` of requests already framed as Batch.requests entries.

    ``entries`` are :meth:`RequestEncoder.batch_entry` results; the list is not changed.
    """
    parts = entries + [length_delimited(_BATCH_EVENTS, event) for event in events]
    if isinstance(notices, bytes):
        parts.append(notices)
    else:
        parts += notices
    return length_delimited(_MESSAGE_BATCH, b"".join(parts))


class Notice(NamedTuple):
    """A notice (a Fault or a TableClosed) encoded both ways the transport may send it.

    A bot that said ``Hello.notices_in_batch`` gets it in its next Batch: pass
    ``in_batch`` to :func:`batch_message`; any other bot gets ``alone``, a RefereeMessage
    of its own.
    """

    alone: bytes
    """A whole RefereeMessage (its ``fault`` or ``table_closed``)."""
    in_batch: bytes
    """One Batch.faults or Batch.closed entry (field bytes, not a message)."""


def fault_notice(faulted: Faulted) -> Notice:
    """The Fault notice of ``faulted`` (as :func:`referee.wire.codec.fault_to_proto` encodes it)."""
    body = fault_to_proto(faulted).SerializeToString()
    return Notice(length_delimited(_MESSAGE_FAULT, body), length_delimited(_BATCH_FAULTS, body))


def closed_notice(closed: Closed) -> Notice:
    """The TableClosed notice of ``closed`` (as :func:`referee.wire.codec.closed_to_proto` encodes it)."""
    body = closed_to_proto(closed).SerializeToString()
    return Notice(length_delimited(_MESSAGE_CLOSED, body), length_delimited(_BATCH_CLOSED, body))
