"""The referee's fast encoder: a decision request as protobuf wire bytes, built from cached parts.

:func:`referee.wire.codec.request_to_proto` builds a message field by field and gRPC then
serializes it; at tens of thousands of decisions a second that is most of the referee's
time. This module writes the same bytes directly. The protobuf wire format is a plain
concatenation of fields (tag, then a varint or a length and bytes), so a view is mostly
a join of pieces that never change (a card in a hand, a bid, a played card) or only grow
during a deal (the completed tricks, the bids). :class:`RequestEncoder` keeps one table's
growing parts and appends to them as the deal advances.

Every byte comes from the one :class:`~referee.rules.SeatView` given: the caches hold
public pieces (bids, completed tricks) keyed by the very objects of that view, and small
per-value tables; nothing of another seat's view can leak into a request. The output is
byte-for-byte what ``request_to_proto(...).SerializeToString()`` gives (fields in number
order, defaults left out), which tests/test_codec.py checks over many random sessions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from referee.rules import BID_NAMES, CARDS, Bid, Phase

if TYPE_CHECKING:
    from referee.rules import Card, SeatView, TrickWon
    from referee.rules.actions import Action

__all__ = ["RequestEncoder", "batch_message", "encode_request", "length_delimited", "varint"]


def varint(value: int) -> bytes:
    """``value`` (not negative) as a protobuf base-128 varint."""
    return _VARINTS[value] if value < _SMALL else _slow_varint(value)


def _slow_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL: Final = 1 << 14
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

_HAND: Final[dict[Card, bytes]] = {card: _string(10, card.text) for card in CARDS}
"""SeatView.hand (10) entries."""
_LEGAL: Final[dict[Action, bytes]] = {card: _string(6, card.text) for card in CARDS}
"""DecisionRequest.legal_actions (6) entries."""
_LEGAL.update({Bid(name): _string(6, name) for name in BID_NAMES})
_PHASES: Final = {Phase.BIDDING: 1, Phase.PLAY: 2, Phase.OVER: 3}
_PLAYED: dict[tuple[int, Card], bytes] = {}
"""Trick.cards (2) entries: a PlayedCard for (seat, card)."""
_BIDS: dict[tuple[int, Bid], bytes] = {}
"""SeatView.bids (11) entries: a SeatBid for (seat, bid)."""
_STATE: dict[tuple[Phase, int | None], bytes] = {}
"""SeatView.phase (8) and to_act (9)."""
_CONTRACT: dict[tuple[int | None, str | None, str | None], bytes] = {}
"""SeatView.declarer (12), contract (13) and trump (14)."""
_COUNTS: dict[tuple[int, ...], bytes] = {}
"""SeatView.tricks_won (17), packed."""
_BALANCES: dict[tuple[int, ...], bytes] = {}
"""SeatView.balances (18), packed zigzag; cleared when it grows large."""
_ACTIVE: dict[tuple[tuple[int, ...], int], bytes] = {}
"""SeatView.active (19), packed booleans."""
_BALANCES_CAP: Final = 50_000
_LEADER: Final = tuple(_uint(1, seat) for seat in range(64))
"""Trick.leader (1) and PlayedCard.seat (1), by seat."""
_REQUEST_SEAT: Final = tuple(_uint(3, seat) for seat in range(64))
"""DecisionRequest.seat (3), by seat."""
_MILLIS: dict[tuple[int, int], bytes] = {}
"""DecisionRequest.deadline_ms (4) and time_bank_ms (7), by (field, ms)."""


def _played(seat: int, card: Card) -> bytes:
    key = (seat, card)
    found = _PLAYED.get(key)
    if found is None:
        found = _PLAYED[key] = length_delimited(b"\x12", _LEADER[seat] + _string(2, card.text))
    return found


def _bid(seat: int, bid: Bid) -> bytes:
    key = (seat, bid)
    found = _BIDS.get(key)
    if found is None:
        found = _BIDS[key] = length_delimited(b"\x5a", _uint(1, seat) + _string(2, bid.name))
    return found


def _state(phase: Phase, to_act: int | None) -> bytes:
    key = (phase, to_act)
    found = _STATE.get(key)
    if found is None:
        found = _uint(8, _PHASES[phase])
        if to_act is not None:
            found += b"\x48" + varint(to_act)
        _STATE[key] = found
    return found


def _contract(declarer: int | None, contract: str | None, trump: str | None) -> bytes:
    key = (declarer, contract, trump)
    found = _CONTRACT.get(key)
    if found is None:
        found = b"" if declarer is None else b"\x60" + varint(declarer)
        if contract:
            found += _string(13, contract)
        if trump:
            found += _string(14, trump)
        _CONTRACT[key] = found
    return found


def _counts(tricks_won: tuple[int, ...]) -> bytes:
    found = _COUNTS.get(tricks_won)
    if found is None:
        found = _COUNTS[tricks_won] = _packed(17, b"".join(varint(n) for n in tricks_won))
    return found


def _balances(balances: tuple[int, ...]) -> bytes:
    found = _BALANCES.get(balances)
    if found is None:
        if len(_BALANCES) > _BALANCES_CAP:
            _BALANCES.clear()
        found = _BALANCES[balances] = _packed(
            18, b"".join(varint(_zigzag(n)) for n in balances))
    return found


def _active(seats: tuple[int, ...], size: int) -> bytes:
    key = (seats, size)
    found = _ACTIVE.get(key)
    if found is None:
        found = _ACTIVE[key] = _packed(
            19, bytes(1 if seat in seats else 0 for seat in range(size)))
    return found


def _trick(trick: TrickWon) -> bytes:
    """A completed trick as a SeatView.completed_tricks (16) entry."""
    plays = trick.plays
    body = b"".join([_LEADER[plays[0][0]], *[_played(s, c) for s, c in plays],
                     b"\x18", varint(trick.winner)])
    return length_delimited(b"\x82\x01", body)


class RequestEncoder:
    """Encodes one table's decision requests; keeps the parts of its views that only grow.

    One encoder per table (its id is fixed). Not thread-safe; cheap to make.
    """

    __slots__ = ("_bids", "_bids_bytes", "_bids_last", "_current_bytes", "_current_last",
                 "_current_n", "_request_table", "_starts",
                 "_tricks", "_tricks_bytes", "_tricks_last", "_view_table")

    def __init__(self, table: str) -> None:
        self._view_table = _string(1, table)
        self._request_table = _string(2, table)
        self._starts: dict[tuple[int, int, str, int, int, int], bytes] = {}
        self._bids = 0
        self._bids_last: object = None
        self._bids_bytes = b""
        self._tricks = 0
        self._tricks_last: object = None
        self._tricks_bytes = b""
        self._current_n = -1
        self._current_last: object = None
        self._current_bytes = b""

    def _current(self, trick: tuple[tuple[int, Card], ...], to_act: int | None) -> bytes:
        """SeatView.current_trick (15): cached while the trick's plays stay the same."""
        count = len(trick)
        last = trick[-1] if trick else to_act
        if count == self._current_n and last is self._current_last:
            return self._current_bytes
        if count:
            body = b"".join([_LEADER[trick[0][0]], *[_played(s, c) for s, c in trick]])
        else:
            body = _LEADER[to_act or 0]
        encoded = length_delimited(b"\x7a", body)
        self._current_n, self._current_last, self._current_bytes = count, last, encoded
        return encoded

    def view(self, view: SeatView) -> bytes:
        """The SeatView message's bytes (as ``view_to_proto(view, table=...)`` serializes)."""
        key = (view.seat, view.table_size, view.profile, view.deal_number,
               view.deals_in_session, view.dealer)
        start = self._starts.get(key)
        if start is None:
            seat, size, profile, number, deals, dealer = key
            start = self._starts[key] = b"".join((
                self._view_table, _uint(2, seat), _uint(3, size), _string(4, profile),
                _uint(5, number), _uint(6, deals), _uint(7, dealer)))
        parts = [start, _state(view.phase, view.to_act)]
        parts += [_HAND[card] for card in view.hand]
        parts.append(self._bid_bytes(view.bids))
        trump = view.trump
        parts.append(_contract(view.declarer, view.contract,
                               None if trump is None else trump.letter))
        if view.phase is Phase.PLAY:
            parts.append(self._current(view.trick, view.to_act))
        if view.tricks:
            parts.append(self._trick_bytes(view.tricks))
        parts.append(_counts(view.tricks_won))
        parts.append(_balances(view.balances))
        parts.append(_active(view.seats_in_play, view.table_size))
        return b"".join(parts)

    def _bid_bytes(self, bids: tuple[tuple[int, Bid], ...]) -> bytes:
        count = len(bids)
        if not count:
            return b""
        last = bids[-1]
        if count == self._bids and last is self._bids_last:
            return self._bids_bytes
        if count == self._bids + 1 and count > 1 and bids[-2] is self._bids_last:
            encoded = self._bids_bytes + _bid(*last)
        else:
            encoded = b"".join([_bid(seat, bid) for seat, bid in bids])
        self._bids, self._bids_last, self._bids_bytes = count, last, encoded
        return encoded

    def _trick_bytes(self, tricks: tuple[TrickWon, ...]) -> bytes:
        count = len(tricks)
        last = tricks[-1]
        if count == self._tricks and last is self._tricks_last:
            return self._tricks_bytes
        if count == self._tricks + 1 and count > 1 and tricks[-2] is self._tricks_last:
            encoded = self._tricks_bytes + _trick(last)
        else:
            encoded = b"".join([_trick(trick) for trick in tricks])
        self._tricks, self._tricks_last, self._tricks_bytes = count, last, encoded
        return encoded

    def request(self, view: SeatView, *, request_id: int) -> tuple[bytes, bytes]:
        """The request for the seat to act in ``view``, in two parts around its deadline.

        The DecisionRequest is ``head + deadline_field(ms) + tail`` (see
        :func:`deadline_field`): the deadline is filled in when the request is sent, since
        a re-sent request carries what is left of it. ``tail`` holds the view, the legal
        actions and nothing else; the time bank goes after it (:func:`bank_field`).
        """
        head = b"\x08" + varint(request_id) + self._request_table + _REQUEST_SEAT[view.seat]
        body = self.view(view)
        tail = length_delimited(b"\x2a", body) + b"".join(
            [_LEGAL[action] for action in view.legal_actions])
        return head, tail


def _millis(field: int, ms: int) -> bytes:
    key = (field, ms)
    found = _MILLIS.get(key)
    if found is None:
        if len(_MILLIS) > _BALANCES_CAP:
            _MILLIS.clear()
        found = _MILLIS[key] = _uint(field, ms)
    return found


def deadline_field(deadline_ms: int) -> bytes:
    """DecisionRequest.deadline_ms (4)."""
    return _millis(4, deadline_ms)


def bank_field(time_bank_ms: int) -> bytes:
    """DecisionRequest.time_bank_ms (7)."""
    return _millis(7, time_bank_ms)


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
