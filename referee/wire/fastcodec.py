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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from referee.rules import BID_NAMES, CARDS, Bid, Phase

if TYPE_CHECKING:
    from referee.rules import Card, SeatView, Suit, TrickWon, ViewFields
    from referee.rules.actions import Action

__all__ = ["RequestEncoder", "batch_message", "encode_request", "length_delimited", "varint"]


def varint(value: int) -> bytes:
    """``value`` (not negative) as a protobuf base-128 varint."""
    if value < _SMALL:
        return _VARINTS[value]
    if value < _THREE_BYTES:  # request ids, once past the table: no loop
        return bytes(((value & 0x7F) | 0x80, ((value >> 7) & 0x7F) | 0x80, value >> 14))
    return _slow_varint(value)


def _slow_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL: Final = 1 << 14
_THREE_BYTES: Final = 1 << 21
_VARINTS: Final = tuple(_slow_varint(value) for value in range(_SMALL))


def _zigzag(value: int) -> int:
    return value << 1 if value >= 0 else (-value << 1) - 1


def length_delimited(tag: bytes, payload: bytes) -> bytes:
    """One length-delimited field: its tag bytes, the payload's length, the payload."""
    size = len(payload)
    return tag + (_VARINTS[size] if size < _SMALL else varint(size)) + payload


def _string(field: int, text: str) -> bytes:
    return length_delimited(varint(field << 3 | 2), text.encode())


def _uint(field: int, value: int) -> bytes:
    """A varint field, left out (b"") at its default 0 as proto3 does."""
    return varint(field << 3) + varint(value) if value else b""


def _packed(field: int, values: bytes) -> bytes:
    return length_delimited(varint(field << 3 | 2), values) if values else b""


# -- pieces that never change ----------------------------------------------------------------

_SEATS: Final = 64
"""Seats the per-seat tables below cover (a table has at most 52 seats: one card each)."""
_HAND: Final[dict[Card, bytes]] = {card: _string(10, card.text) for card in CARDS}
"""SeatView.hand (10) entries."""
_LEGAL: Final[dict[Action, bytes]] = {card: _string(6, card.text) for card in CARDS}
"""DecisionRequest.legal_actions (6) entries."""
_LEGAL.update({Bid(name): _string(6, name) for name in BID_NAMES})
_LEADER: Final = tuple(_uint(1, seat) for seat in range(_SEATS))
"""Trick.leader (1) and PlayedCard.seat (1), by seat."""
_PLAYED: Final = tuple(
    tuple(length_delimited(b"\x12", _LEADER[seat] + _string(2, card.text)) for card in CARDS)
    for seat in range(_SEATS))
"""Trick.cards (2) entries: a PlayedCard, by seat then card index."""
_BIDS: Final = tuple(
    {Bid(name): length_delimited(b"\x5a", _uint(1, seat) + _string(2, name)) for name in BID_NAMES}
    for seat in range(_SEATS))
"""SeatView.bids (11) entries: a SeatBid, by seat then bid."""
_REQUEST_SEAT: Final = tuple(_uint(3, seat) for seat in range(_SEATS))
"""DecisionRequest.seat (3), by seat."""
_VIEW_SEAT: Final = tuple(_uint(2, seat) for seat in range(_SEATS))
"""SeatView.seat (2), by seat."""
_STATE: Final = {(phase, to_act): _uint(8, phase) + (b"" if to_act is None else b"\x48" + varint(to_act))
                 for phase in (1, 2, 3) for to_act in (None, *range(_SEATS))}
"""SeatView.phase (8) and to_act (9), by phase number and seat to act."""
_CONTRACT: dict[tuple[int | None, str | None, Suit | None], bytes] = {}
"""SeatView.declarer (12), contract (13) and trump (14)."""
_COUNTS: dict[tuple[int, ...], bytes] = {}
"""SeatView.tricks_won (17), packed."""
_BALANCES: dict[tuple[int, ...], bytes] = {}
"""SeatView.balances (18), packed zigzag; cleared when it grows large."""
_ACTIVE: dict[tuple[tuple[int, ...], int], bytes] = {}
"""SeatView.active (19), packed booleans."""
_BALANCES_CAP: Final = 50_000


def _phase_number(phase: Phase) -> int:
    """SeatView.phase (8); by identity, as hashing an Enum member is a Python call."""
    return 2 if phase is Phase.PLAY else 1 if phase is Phase.BIDDING else 3


def _contract(declarer: int | None, contract: str | None, trump: Suit | None) -> bytes:
    key = (declarer, contract, trump)
    found = _CONTRACT.get(key)
    if found is None:
        found = b"" if declarer is None else b"\x60" + varint(declarer)
        if contract:
            found += _string(13, contract)
        if trump is not None:
            found += _string(14, trump.letter)
        _CONTRACT[key] = found
    return found


def _totals(tricks_won: tuple[int, ...], balances: tuple[int, ...], seats: tuple[int, ...],
            size: int) -> bytes:
    """SeatView.tricks_won (17), balances (18) and active (19): the view's last fields."""
    counts = _COUNTS.get(tricks_won)
    if counts is None:
        counts = _COUNTS[tricks_won] = _packed(17, b"".join(varint(n) for n in tricks_won))
    chips = _BALANCES.get(balances)
    if chips is None:
        if len(_BALANCES) > _BALANCES_CAP:
            _BALANCES.clear()
        chips = _BALANCES[balances] = _packed(
            18, b"".join(varint(_zigzag(n)) for n in balances))
    key = (seats, size)
    active = _ACTIVE.get(key)
    if active is None:
        active = _ACTIVE[key] = _packed(19, bytes(1 if seat in seats else 0
                                                  for seat in range(size)))
    return counts + chips + active


def _plays(plays: tuple[tuple[int, Card], ...]) -> bytes:
    """Trick.cards (2) of ``plays``."""
    return b"".join([_PLAYED[seat][card.index] for seat, card in plays])


def _trick(trick: TrickWon) -> bytes:
    """A completed trick as a SeatView.completed_tricks (16) entry."""
    plays = trick.plays
    body = b"".join((_LEADER[plays[0][0]], _plays(plays), b"\x18", varint(trick.winner)))
    return length_delimited(b"\x82\x01", body)


class RequestEncoder:
    """Encodes one table's decision requests; keeps the parts of its views that only grow.

    One encoder per table (its id is fixed). Not thread-safe; cheap to make. Each cached
    part is kept with the view value it was encoded from and reused only while the next
    view holds an equal value (the rules engine hands out the same tuple while a part is
    unchanged, so the test is mostly one identity check); a part that grew by one entry is
    extended rather than encoded again.
    """

    __slots__ = ("_bids", "_bids_bytes", "_current", "_current_key", "_deal", "_deal_key",
                 "_hands", "_request_table", "_totals", "_totals_key", "_trick", "_trick_plays",
                 "_tricks", "_tricks_bytes", "_view_table")

    def __init__(self, table: str) -> None:
        self._view_table = _string(1, table)
        self._request_table = _string(2, table)
        self._deal_key: tuple[int, str, int, int, int] | None = None
        self._deal = b""
        self._hands: dict[int, tuple[tuple[Card, ...], bytes]] = {}
        self._bids: tuple[tuple[int, Bid], ...] = ()
        self._bids_bytes = b""
        self._trick: tuple[tuple[int, Card], ...] = ()
        self._trick_plays = b""
        self._current_key: tuple[tuple[tuple[int, Card], ...], int | None] | None = None
        self._current = b""
        self._tricks: tuple[TrickWon, ...] = ()
        self._tricks_bytes = b""
        self._totals_key: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int] | None = None
        self._totals = b""

    def view(self, view: SeatView) -> bytes:
        """The SeatView message's bytes (as ``view_to_proto(view, table=...)`` serializes)."""
        return self.view_of(view.fields())

    def view_of(self, fields: ViewFields) -> bytes:
        """:meth:`view` of the view with these fields (:func:`referee.rules.view_fields`)."""
        (profile, size, seat, seats, number, deals, dealer, phase, to_act, hand, bids, declarer,
         contract, trump, trick, tricks, tricks_won, balances, _) = fields
        deal = (size, profile, number, deals, dealer)
        if deal != self._deal_key:
            self._deal_key = deal
            self._deal = b"".join((_uint(3, size), _string(4, profile), _uint(5, number),
                                   _uint(6, deals), _uint(7, dealer)))
        state = _STATE[_phase_number(phase), to_act]
        held = self._hands.get(seat)
        if held is None or held[0] != hand:
            held = self._hands[seat] = (hand, b"".join([_HAND[card] for card in hand]))
        if bids is not self._bids:
            self._bid_bytes(bids)
        settled = (b"" if declarer is None and contract is None and trump is None
                   else _contract(declarer, contract, trump))
        current = self._current_bytes(trick, to_act) if phase is Phase.PLAY else b""
        if tricks is not self._tricks:
            self._trick_bytes(tricks)
        totals = (tricks_won, balances, seats, size)
        if totals != self._totals_key:
            self._totals_key = totals
            self._totals = _totals(*totals)
        return b"".join((self._view_table, _VIEW_SEAT[seat], self._deal, state, held[1],
                         self._bids_bytes, settled, current, self._tricks_bytes, self._totals))

    def _bid_bytes(self, bids: tuple[tuple[int, Bid], ...]) -> None:
        """SeatView.bids (11), extended by the new bid when the auction moved on by one."""
        known = self._bids
        if bids != known:
            if bids and bids[:-1] == known:
                seat, bid = bids[-1]
                self._bids_bytes += _BIDS[seat][bid]
            else:
                self._bids_bytes = b"".join([_BIDS[seat][bid] for seat, bid in bids])
        self._bids = bids

    def _current_bytes(self, trick: tuple[tuple[int, Card], ...], to_act: int | None) -> bytes:
        """SeatView.current_trick (15); while a lead is awaited, its leader is the seat to act."""
        key = (trick, to_act)
        if key == self._current_key:
            return self._current
        known = self._trick
        if trick and trick[:-1] == known:
            seat, card = trick[-1]
            plays = self._trick_plays + _PLAYED[seat][card.index]
        else:
            plays = _plays(trick)
        leader = _LEADER[trick[0][0] if trick else to_act or 0]
        self._trick, self._trick_plays, self._current_key = trick, plays, key
        self._current = encoded = length_delimited(b"\x7a", leader + plays)
        return encoded

    def _trick_bytes(self, tricks: tuple[TrickWon, ...]) -> None:
        """SeatView.completed_tricks (16), extended by the new trick when one was won."""
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
        head = b"".join((b"\x08", varint(request_id), self._request_table,
                         _REQUEST_SEAT[fields[2]]))
        tail = length_delimited(b"\x2a", self.view_of(fields)) + b"".join(
            [_LEGAL[action] for action in fields[18]])
        return head, tail


_DEADLINES: dict[int, bytes] = {}
"""DecisionRequest.deadline_ms (4), by ms; cleared when it grows large."""
_BANKS: dict[int, bytes] = {}
"""DecisionRequest.time_bank_ms (7), by ms; cleared when it grows large."""


def _millis(cache: dict[int, bytes], field: int, ms: int) -> bytes:
    found = cache.get(ms)
    if found is None:
        if len(cache) > _BALANCES_CAP:
            cache.clear()
        found = cache[ms] = _uint(field, ms)
    return found


def deadline_field(deadline_ms: int) -> bytes:
    """DecisionRequest.deadline_ms (4)."""
    return _millis(_DEADLINES, 4, deadline_ms)


def bank_field(time_bank_ms: int) -> bytes:
    """DecisionRequest.time_bank_ms (7)."""
    return _millis(_BANKS, 7, time_bank_ms)


def encode_request(view: SeatView, *, table: str, request_id: int, deadline_ms: int,  # noqa: PLR0913 - the request's fields, keywords
                   time_bank_ms: int, encoder: RequestEncoder | None = None) -> bytes:
    """A DecisionRequest's bytes: what ``request_to_proto(...)`` serializes to."""
    head, tail = (encoder or RequestEncoder(table)).request(view, request_id=request_id)
    return head + deadline_field(deadline_ms) + tail + bank_field(time_bank_ms)


def batch_message(requests: list[bytes], events: list[bytes], notices: bytes = b"") -> bytes:
    """A RefereeMessage holding a Batch of serialized DecisionRequests and TableEvents.

    ``notices`` are Batch.closed (3) and Batch.faults (4) fields, already encoded.
    """
    parts = [length_delimited(b"\x0a", request) for request in requests]
    parts += [length_delimited(b"\x12", event) for event in events]
    parts.append(notices)
    return length_delimited(b"\x1a", b"".join(parts))
