"""A seat's view: the only way hidden information leaves the engine.

A view holds the seat's own hand and what is public (bids, cards played, tricks, trump,
balances), never another seat's unplayed cards nor the undealt stock. Everything the
referee sends a bot is built from one. A bot that wants to search builds a full deal
from its view and a guess of the hidden hands with :func:`deal_from_view`.

In the pool variants a view adds what is public (the pool, how many cards each seat
exchanged, who peeped, whether the declarer took the widow) and what only this seat may
see: the cards it drew and gave up, and the widow once it paid to peep or took it.

:class:`SeatView` is the one declaration of a view's fields: their names, order, types and
meaning. :func:`view_fields` is the one place that decides what a seat sees (a session
calls it once per decision): :func:`seat_view` wraps its fields in a :class:`SeatView`, and
the referee, which encodes a view per decision and never keeps it, encodes the same fields
as they are, as a :class:`ViewFields`: a named tuple made from the dataclass's fields at
import, because it costs about a twentieth of the frozen dataclass to build (the
dataclass's slots are what lets a bot's :class:`~referee.wire.fastdecode.LazySeatView`
decode its fields on first read). How each field travels is read from its type
(:mod:`referee.wire.seatview`).
:func:`seat_events` is what a seat is told about each event; it reads a hand the way a view does.
"""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar

from referee.rules.events import DealSettled, DealStarted, Penalized

if TYPE_CHECKING:
    from collections.abc import Sequence

    from referee.rules.actions import Action, Bid
    from referee.rules.cards import Card, Suit
    from referee.rules.deal import Deal, Phase
    from referee.rules.events import Event, TrickWon


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything ``seat`` may know at one moment of a session.

    ``balances`` are net chips per seat for the session so far (before this deal's
    settlement while it is being played, after the fees paid so far). ``legal_actions``
    is empty unless ``seat`` is the one to act.

    The pool variants: ``pool`` is the chips in the pool; ``exchanged`` the cards each
    seat exchanged this deal (0: declined or not yet); ``peeked`` the seats that paid to
    look at the widow, in order; ``widow`` the widow card if this seat may see it (it
    peeped, or it is the declarer and took it), else None; ``drawn`` the cards this seat
    drew from the stock and ``discarded`` those it gave up (its exchange in pack order,
    then the card it gave for the widow), both this deal; ``widow_taken`` whether the
    declarer took the widow (None until it decided, or without a widow). Profiles
    without exchanges or a widow have 0, zeros, (), None, (), () and None.

    A new field is declared here, after the last one (a view built by position stays
    right), with its value last in :func:`view_fields`; it travels to bots as the nap.v1
    SeatView field of its name, in the form its type says (:mod:`referee.wire.seatview`),
    and nothing else names it.
    """

    profile: str
    table_size: int
    seat: int
    seats_in_play: tuple[int, ...]
    deal_number: int
    deals_in_session: int
    dealer: int
    phase: Phase
    to_act: int | None
    hand: tuple[Card, ...]
    bids: tuple[tuple[int, Bid], ...]
    declarer: int | None
    contract: str | None
    trump: Suit | None
    trick: tuple[tuple[int, Card], ...]
    tricks: tuple[TrickWon, ...]
    tricks_won: tuple[int, ...]
    balances: tuple[int, ...]
    pool: int
    exchanged: tuple[int, ...]
    peeked: tuple[int, ...]
    widow: Card | None
    drawn: tuple[Card, ...]
    discarded: tuple[Card, ...]
    widow_taken: bool | None
    legal_actions: tuple[Action, ...]

    def fields(self) -> ViewFields:
        """The view's field values in order: ``SeatView(*view.fields()) == view``."""
        return _new_fields(ViewFields, _field_values(self))

    @property
    def played(self) -> frozenset[Card]:
        """Every card played so far in this deal (finished tricks and the current one)."""
        cards = {card for trick in self.tricks for _, card in trick.plays}
        cards.update(card for _, card in self.trick)
        return frozenset(cards)

    @property
    def visible_cards(self) -> frozenset[Card]:
        """Every card this view reveals: the seat's hand, the cards played, its discards and the widow seen.

        The cards another seat may hold are the profile's pack less these, with one
        exception: a widow this seat peeped at and another declarer took is in that
        declarer's hand (``widow_taken``).
        """
        seen = self.played | frozenset(self.hand)
        if self.discarded:
            seen |= frozenset(self.discarded)
        if self.widow is not None:
            seen |= {self.widow}
        return seen


_FIELD_NAMES = tuple(field.name for field in dataclasses.fields(SeatView))

if TYPE_CHECKING:

    class ViewFields(tuple[Any, ...]):
        """:class:`ViewFields` as the type checker sees it: each field reads as Any.

        A tuple's types cannot be derived from a dataclass's; a field's own type is
        :class:`SeatView`'s.
        """

        __slots__ = ()
        _fields: ClassVar[tuple[str, ...]]

        def __getattr__(self, name: str) -> Any:  # noqa: ANN401 - a SeatView field, of its own type
            ...

else:
    ViewFields = namedtuple("ViewFields", _FIELD_NAMES)  # noqa: PYI024 - made from SeatView's fields
    ViewFields.__doc__ = """A :class:`SeatView`'s field values in its order, each also read by its name.

    What the referee encodes for each decision: the same values as the :class:`SeatView`,
    for a fraction of the cost of building the frozen dataclass (``SeatView(*fields)`` is
    the view; ``view.fields()`` gives them back). Made from the dataclass's fields, so the
    two never differ.
    """

_new_fields = tuple.__new__
"""Builds a :class:`ViewFields` without the named tuple's Python-level ``__new__``."""
_field_values = attrgetter(*_FIELD_NAMES)
"""A view's field values in its fields' order."""


def seat_view(  # noqa: PLR0913 - the deal and what only a session knows, keywords
    deal: Deal,
    seat: int,
    *,
    deal_number: int = 0,
    deals_in_session: int = 1,
    balances: tuple[int, ...] | None = None,
    pool: int = 0,
) -> SeatView:
    """What ``seat`` sees of ``deal`` (and, given by the session, of the balances and the pool)."""
    return SeatView(
        *view_fields(
            deal,
            seat,
            deal_number=deal_number,
            deals_in_session=deals_in_session,
            balances=balances,
            pool=pool,
        )
    )


def view_fields(  # noqa: PLR0913 - the view and what only a session knows, keywords
    deal: Deal,
    seat: int,
    *,
    deal_number: int = 0,
    deals_in_session: int = 1,
    balances: tuple[int, ...] | None = None,
    pool: int = 0,
    legal_actions: tuple[Action, ...] | None = None,
) -> ViewFields:
    """The fields of :func:`seat_view`'s view, without the dataclass around them: the one reading of a view.

    Of the cards not yet played, only ``seat``'s own hand is read, with its own drawn
    and discarded cards, and the widow when ``seat`` may see it. ``balances`` default to
    zeros. ``legal_actions`` are the deal's, when the caller has them already (the view
    holds them only if ``seat`` is the one to act). The values go in :class:`SeatView`'s
    order, by position rather than by keyword: this runs once per decision.
    """
    size = deal.table_size
    if not 0 <= seat < size:
        msg = f"no seat {seat} at a table of {size}"
        raise ValueError(msg)
    contract = deal.contract
    to_act = deal.to_act
    peeked = deal.peeked
    taken = deal.widow_taken
    return _new_fields(
        ViewFields,
        (
            deal.profile.name,
            size,
            seat,
            deal.seats,
            deal_number,
            deals_in_session,
            deal.dealer,
            deal.phase,
            to_act,
            _hand(deal, seat),
            deal.bids,
            deal.declarer if contract is not None else None,
            contract.name if contract is not None else None,
            deal.trump,
            deal.trick,
            deal.tricks,
            deal.tricks_won,
            balances if balances is not None else (0,) * size,
            pool,
            deal.exchanged,
            peeked,
            deal.widow if seat in peeked or (taken and seat == deal.declarer) else None,
            deal.drawn[seat],
            deal.discarded[seat],
            taken,
            (deal.legal_actions() if legal_actions is None else legal_actions) if to_act == seat else (),
        ),
    )


def _hand(deal: Deal, seat: int) -> tuple[Card, ...]:
    """The one read of a seat's unplayed cards: only ever by or for that seat."""
    return tuple(deal.hands[seat])


@dataclass(frozen=True, slots=True)
class SeatEvent:
    """An event as one seat is told it: the engine's (public) event and what that seat may add.

    ``deal`` is the number of the deal the event belongs to. ``hand`` is the seat's own
    cards on a :class:`DealStarted` (empty for a seat not dealt in, and on every other
    event); ``balances`` are the session balances after a :class:`DealSettled`;
    ``faulting_seat`` is, on a settlement that a penalty forced, the penalized seat.
    """

    deal: int
    event: Event
    hand: tuple[Card, ...] = ()
    balances: tuple[int, ...] = ()
    faulting_seat: int | None = None


def seat_events(
    seat: int,
    events: Sequence[Event],
    *,
    deal: int,
    deals: Sequence[Deal],
    balances: tuple[int, ...],
) -> tuple[SeatEvent, ...]:
    """What ``seat`` is told of one transition's ``events`` (of deal number ``deal``).

    Told right after the transition: ``deals`` are the session's deals and ``balances``
    its balances at that moment (after the whole transition: a pool claimed or returned
    in it included). The only private part, a new deal's hand, is the seat's own, read as
    its view reads it; the pool variants' events (exchanges as counts, peeps, the widow
    taken or not, chips paid, the pool claimed or returned) are public as they are.
    """
    told: list[SeatEvent] = []
    faulting: int | None = None
    for event in events:  # by exact class (the events are final): cheaper than match/case
        if type(event) is DealStarted:
            deal = event.deal
            told.append(SeatEvent(deal, event, hand=_hand(deals[deal], seat)))
        elif type(event) is DealSettled:
            told.append(SeatEvent(deal, event, balances=balances, faulting_seat=faulting))
        else:
            if type(event) is Penalized:
                faulting = event.seat
            told.append(SeatEvent(deal, event))
    return tuple(told)
