"""The bot's fast decoder: decision requests to :class:`~referee.rules.SeatView`, incrementally.

:func:`referee.wire.codec.view_from_proto` decodes every field of every view from
scratch; a bot answering thousands of decisions a second spends most of its time there,
reading the same completed tricks and bids again at each decision of a deal. A
:class:`ViewDecoder` remembers, per (table, seat), the tricks and bids it decoded last
and decodes only what was added since (the referee's views of one deal only grow), and
reads cards, bids and actions through dictionaries of interned values.

The result is equal to ``view_from_proto(request)`` (tests/test_codec.py checks it over
random sessions); text that is no card, bid or suit raises ValueError the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from referee.rules import (
    BID_NAMES,
    CARDS,
    Bid,
    Card,
    Phase,
    SeatView,
    Suit,
    TrickWon,
    parse_action,
    parse_card,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from referee.rules.actions import Action
    from referee.wire._gen.nap.v1 import nap_pb2

__all__ = ["ViewDecoder", "actions_of"]

_CARD: Final[dict[str, Card]] = {card.text: card for card in CARDS}
_BID: Final[dict[str, Bid]] = {name: Bid(name) for name in BID_NAMES}
_ACTION: Final[dict[str, Action]] = {**_CARD, **_BID}
_SUIT: Final = {suit.letter: suit for suit in Suit}
_PHASE: Final = {1: Phase.BIDDING, 2: Phase.PLAY, 3: Phase.OVER}
_SEATS: dict[tuple[bool, ...], tuple[int, ...]] = {}


def _card(text: str) -> Card:
    found = _CARD.get(text)
    return found if found is not None else parse_card(text)


def _bid(text: str) -> Bid:
    found = _BID.get(text)
    return found if found is not None else Bid(text)


def actions_of(texts: Iterable[str]) -> tuple[Action, ...]:
    """Decode action strings (canonical spellings by lookup); ValueError if one is none."""
    table = _ACTION
    try:
        return tuple([table[text] for text in texts])
    except KeyError:
        return tuple(parse_action(text) for text in texts)


def _plays(cards: Iterable[nap_pb2.PlayedCard]) -> tuple[tuple[int, Card], ...]:
    table = _CARD
    try:
        return tuple([(played.seat, table[played.card]) for played in cards])
    except KeyError:
        return tuple((played.seat, _card(played.card)) for played in cards)


def _seats_in_play(active: Iterable[bool]) -> tuple[int, ...]:
    key = tuple(active)
    found = _SEATS.get(key)
    if found is None:
        found = _SEATS[key] = tuple(seat for seat, on in enumerate(key) if on)
    return found


class _Seen:
    """What was decoded last for one (table, seat): its deal, bids and tricks."""

    __slots__ = ("bids", "deal", "tricks")

    def __init__(self) -> None:
        self.deal = -1
        self.bids: tuple[tuple[int, Bid], ...] = ()
        self.tricks: tuple[TrickWon, ...] = ()


class ViewDecoder:
    """Decodes requests into views, reusing each (table, seat)'s earlier bids and tricks.

    Call :meth:`forget` when a table closes so that its entries go.
    """

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int], _Seen] = {}

    def forget(self, table: str) -> None:
        """Drop what is remembered of ``table``."""
        for key in [key for key in self._seen if key[0] == table]:
            del self._seen[key]

    def request(self, msg: nap_pb2.DecisionRequest) -> SeatView:
        """The request's view, with its legal actions."""
        return self.view(msg.view, legal=actions_of(msg.legal_actions), table=msg.table)

    def view(self, wire: nap_pb2.SeatView, *, legal: tuple[Action, ...] = (),
             table: str | None = None) -> SeatView:
        """Decode ``wire`` (``table``: the table id to remember it under; the view's own if None)."""
        seat = wire.seat
        key = (wire.table if table is None else table, seat)
        seen = self._seen.get(key)
        if seen is None:
            seen = self._seen[key] = _Seen()
        deal_number = wire.deal_number
        if seen.deal != deal_number:
            seen.deal = deal_number
            seen.bids = ()
            seen.tricks = ()
        phase = _PHASE.get(wire.phase)
        if phase is None:
            text = f"view has no phase ({wire.phase})"
            raise ValueError(text)
        wire_bids = wire.bids
        bids = seen.bids
        if len(wire_bids) != len(bids):
            if len(wire_bids) < len(bids):
                bids = ()
            bids += tuple([(bid.seat, _bid(bid.bid)) for bid in wire_bids[len(bids):]])
            seen.bids = bids
        wire_tricks = wire.completed_tricks
        tricks = seen.tricks
        if len(wire_tricks) != len(tricks):
            if len(wire_tricks) < len(tricks):
                tricks = ()
            tricks += tuple([TrickWon(number, trick.winner, _plays(trick.cards))
                             for number, trick in enumerate(wire_tricks[len(tricks):],
                                                            start=len(tricks))])
            seen.tricks = tricks
        current = wire.current_trick.cards
        trump = wire.trump
        table_card = _CARD
        try:
            hand = tuple([table_card[text] for text in wire.hand])
        except KeyError:
            hand = tuple(_card(text) for text in wire.hand)
        return SeatView(
            profile=wire.profile,
            table_size=wire.number_of_seats,
            seat=seat,
            seats_in_play=_seats_in_play(wire.active),
            deal_number=deal_number,
            deals_in_session=wire.deals_in_session,
            dealer=wire.dealer,
            phase=phase,
            to_act=wire.to_act if wire.HasField("to_act") else None,
            hand=hand,
            bids=bids,
            declarer=wire.declarer if wire.HasField("declarer") else None,
            contract=wire.contract or None,
            trump=_SUIT[trump] if trump else None,
            trick=_plays(current) if current else (),
            tricks=tricks,
            tricks_won=tuple(wire.tricks_won),
            balances=tuple(wire.balances),
            legal_actions=legal,
        )
