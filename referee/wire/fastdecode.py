"""The bot's fast decoder: decision requests to :class:`~referee.rules.SeatView`, lazily and incrementally.

:func:`referee.wire.codec.view_from_proto` decodes every field of every view from
scratch; a bot answering thousands of decisions a second would spend most of its time
there, reading the same completed tricks and bids again at each decision of a deal, and
many bots read little of the view. So :meth:`ViewDecoder.request` gives a
:class:`LazySeatView`: its legal actions are decoded at once, the rest only when the bot
first reads a field. A :class:`ViewDecoder` remembers, per (table, seat),
the tricks and bids it decoded last and decodes only what was added since (the referee's
views of one deal only grow), and reads cards, bids and actions through dictionaries of
interned values.

The result is equal to ``view_from_proto(request)`` (tests/test_codec.py checks it over
random sessions); text that is no card, bid or suit raises ValueError the same way (for
a lazy view, at the first read of a field).
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from typing import TYPE_CHECKING, Final, TypeVar

from referee.rules import (
    BID_NAMES,
    CARDS,
    DECLINE_EXCHANGE,
    DECLINE_WIDOW,
    PEEP,
    Bid,
    Card,
    Phase,
    SeatView,
    Suit,
    TakeWidow,
    TrickWon,
    parse_action,
    parse_card,
)
from referee.wire.memo import Memo
from referee.wire.seatview import LATER_FORMS, PHASE_FROM_WIRE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from referee.rules.actions import Action
    from referee.wire._gen.nap.v1 import nap_pb2

__all__ = ["LazySeatView", "ViewDecoder", "actions_of"]

_CARD: Final[dict[str, Card]] = {card.text: card for card in CARDS}
_BID: Final[dict[str, Bid]] = {name: Bid(name) for name in BID_NAMES}
_ACTION: Final[dict[str, Action]] = {**_CARD, **_BID}
_ACTION.update({str(action): action for action in (PEEP, DECLINE_EXCHANGE, DECLINE_WIDOW)})
_ACTION.update({str(TakeWidow(card)): TakeWidow(card) for card in CARDS})
_SUIT: Final = {suit.letter: suit for suit in Suit}
_SEATS: Final[Memo[tuple[bool, ...], tuple[int, ...]]] = Memo(
    lambda active: tuple(seat for seat, on in enumerate(active) if on), limit=4_096
)
"""The seats in play of SeatView.active."""
_ZEROS: Final[Memo[int, tuple[int, ...]]] = Memo(lambda size: (0,) * size, limit=4_096)
"""``size`` zeros, one tuple per size (SeatView.exchanged while no seat has exchanged)."""
_T = TypeVar("_T")


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
    return _SEATS[tuple(active)]


class _Seen:
    """What was decoded last for one (table, seat): its deal, bids and tricks."""

    __slots__ = ("bids", "deal", "tricks")

    def __init__(self) -> None:
        self.deal = -1
        self.bids: tuple[tuple[int, Bid], ...] = ()
        self.tricks: tuple[TrickWon, ...] = ()


def _phase(number: int) -> Phase:
    phase = PHASE_FROM_WIRE.get(number)
    if phase is None:
        text = f"view has no phase ({number})"
        raise ValueError(text)
    return phase


def _decode(
    wire: nap_pb2.SeatView, seen: _Seen, *, phase: Phase, legal: tuple[Action, ...], build: Callable[..., _T]
) -> _T:
    """Call ``build`` with every SeatView field decoded from ``wire``, reusing ``seen``'s bids and tricks.

    ``seen`` must be the state of the view's own (table, seat): within one deal, its
    views only grow, so what ``seen`` holds is a prefix of ``wire``'s bids and tricks
    unless it belongs to another deal (then it is reset) or to a later point of this deal
    (then it is decoded afresh). The fields up to ``legal_actions`` are read here by hand;
    any declared after it, through their forms (:data:`referee.wire.seatview.LATER_FORMS`).
    """
    if LATER_FORMS:
        build = functools.partial(build, **{form.name: form.get(wire) for form in LATER_FORMS})
    deal_number = wire.deal_number
    if seen.deal != deal_number:
        seen.deal = deal_number
        seen.bids = ()
        seen.tricks = ()
    wire_bids = wire.bids
    bids = seen.bids
    if len(wire_bids) != len(bids):
        if len(wire_bids) < len(bids):
            bids = ()
        bids += tuple([(bid.seat, _bid(bid.bid)) for bid in wire_bids[len(bids) :]])
        seen.bids = bids
    wire_tricks = wire.completed_tricks
    tricks = seen.tricks
    if len(wire_tricks) != len(tricks):
        if len(wire_tricks) < len(tricks):
            tricks = ()
        tricks += tuple(
            [
                TrickWon(number, trick.winner, _plays(trick.cards))
                for number, trick in enumerate(wire_tricks[len(tricks) :], start=len(tricks))
            ]
        )
        seen.tricks = tricks
    current = wire.current_trick.cards
    trump = wire.trump
    table_card = _CARD
    try:
        hand = tuple([table_card[text] for text in wire.hand])
    except KeyError:
        hand = tuple(_card(text) for text in wire.hand)
    return build(
        profile=wire.profile,
        table_size=wire.number_of_seats,
        seat=wire.seat,
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
        pool=wire.pool,
        exchanged=tuple(wire.exchanged) or _ZEROS[wire.number_of_seats],
        peeked=tuple(wire.peeked),
        widow=_card(wire.widow) if wire.widow else None,
        drawn=tuple(_card(text) for text in wire.drawn) if wire.drawn else (),
        discarded=tuple(_card(text) for text in wire.discarded) if wire.discarded else (),
        widow_taken=wire.widow_taken if wire.HasField("widow_taken") else None,
        legal_actions=legal,
    )


_FIELDS: Final = tuple(field.name for field in dataclasses.fields(SeatView))
_DEFERRED: Final = frozenset(_FIELDS) - {"legal_actions"}
_VALUES: Final = operator.attrgetter(*_FIELDS)


class LazySeatView(SeatView):
    """A :class:`~referee.rules.SeatView` that decodes its request's view on the first read of a field.

    ``legal_actions`` is decoded up front (the SDK needs it to check the answer). Reading
    ``phase`` decodes that one field (the default :meth:`Bot.decide
    <clients.sdk.Bot.decide>` reads it); the first read of any other field decodes them
    all at once into the dataclass's own slots, so later reads cost what a plain
    SeatView's do. A random bot, which reads only ``legal_actions``, never pays for the
    hand, the bids or the tricks. Until then the view holds its DecisionRequest (and so
    the batch it came in); text that is no card, bid, suit or phase raises ValueError at
    that first read.

    It equals (and hashes like) the SeatView with the same fields, whatever the class;
    ``dataclasses.replace``, ``repr``, copies and pickles see the decoded fields.
    """

    __slots__ = ("_request", "_seen")
    _request: nap_pb2.DecisionRequest | None
    """The request whose view is not decoded yet; None once it is."""
    _seen: _Seen
    """The decoder's state for the request's (table, seat), captured when it was made."""

    def __getattr__(self, name: str) -> object:
        """Python calls this for an attribute not found: decode it if it is a field not decoded yet."""
        if name in _DEFERRED:
            request = self._request
            if request is not None:
                wire = request.view
                if name == "phase":
                    phase = _phase(wire.phase)
                    _set(self, "phase", phase)
                    return phase
                # the decoder's state is of the request's seat: of no use for a view of another
                seen = self._seen if wire.seat == request.seat else _Seen()
                _decode(
                    wire,
                    seen,
                    phase=_phase(wire.phase),
                    legal=self.legal_actions,
                    build=functools.partial(SeatView.__init__, self),
                )
                _set(self, "_request", None)  # every field is set now: the message may go
                return getattr(self, name)
        msg = f"{type(self).__name__!r} object has no attribute {name!r}"
        raise AttributeError(msg)

    def __eq__(self, other: object) -> bool:
        """Field by field, as SeatView compares, but with any SeatView (lazy or not)."""
        if isinstance(other, SeatView):
            return bool(_VALUES(self) == _VALUES(other))
        return NotImplemented

    __hash__ = SeatView.__hash__


_new_lazy: Final = object.__new__
_set: Final = object.__setattr__
_set_legal: Final = vars(SeatView)["legal_actions"].__set__
"""The slots' own setters: a view is made by setting three slots, at C speed."""
_set_request: Final = vars(LazySeatView)["_request"].__set__
_set_seen: Final = vars(LazySeatView)["_seen"].__set__
_action: Final = _ACTION.__getitem__


class ViewDecoder:
    """Decodes requests into views, reusing each (table, seat)'s earlier bids and tricks.

    Call :meth:`forget` when a table closes so that its entries go (views already made
    keep what they need).
    """

    def __init__(self) -> None:
        self._seen: dict[str, dict[int, _Seen]] = {}
        """Per table, per seat."""

    def forget(self, table: str) -> None:
        """Drop what is remembered of ``table``."""
        self._seen.pop(table, None)

    def _state(self, table: str, seat: int) -> _Seen:
        seats = self._seen.get(table)
        if seats is None:
            seats = self._seen[table] = {}
        seen = seats.get(seat)
        if seen is None:
            seen = seats[seat] = _Seen()
        return seen

    def request(self, msg: nap_pb2.DecisionRequest) -> SeatView:
        """The request's view, with its legal actions: a :class:`LazySeatView`.

        Raises ValueError now for a legal action that is none, later (at the first read
        of another field) for any other undecodable text.
        """
        table = msg.table
        seat = msg.seat
        seats = self._seen.get(table)
        seen = None if seats is None else seats.get(seat)
        if seen is None:
            seen = self._state(table, seat)
        try:
            legal = tuple(map(_action, msg.legal_actions))
        except KeyError:
            legal = actions_of(msg.legal_actions)
        view = _new_lazy(LazySeatView)
        _set_legal(view, legal)
        _set_request(view, msg)
        _set_seen(view, seen)
        return view

    def view(
        self, wire: nap_pb2.SeatView, *, legal: tuple[Action, ...] = (), table: str | None = None
    ) -> SeatView:
        """Decode all of ``wire`` now (``table``: the table id to remember it under; its own if None)."""
        seen = self._state(wire.table if table is None else table, wire.seat)
        return _decode(wire, seen, phase=_phase(wire.phase), legal=legal, build=SeatView)
