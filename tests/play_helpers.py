"""What a seat may see at each moment of a recorded session, rebuilt from the record (nap play's tests)."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from referee.rules import Card, fresh_session

if TYPE_CHECKING:
    from referee.rules import Session, SessionRecord

Moment = tuple[int, int]
"""(deal, cards played so far in it): where a deal stands, as the page's ``data-deal``/``data-played`` say."""


def visible_by_moment(record: SessionRecord, seat: int) -> dict[Moment, frozenset[str]]:
    """Per moment of the record, every card ``seat``'s views reveal at it (their union over the moment).

    The record is replayed through the engine; after each action, the seat's view of that
    deal (:func:`~referee.rules.seat_view`) names what it may see: its own hand, drawn and
    given-up cards, the widow once it may see it, and the cards played so far. A card that
    the page shows at ``(deal, played)`` and that is not in this set is a leak. Read from
    the deal's own state, not through :func:`~referee.rules.seat_view`, so that a leak in
    the view itself is caught too.
    """
    session = fresh_session(record)
    seen: dict[Moment, set[str]] = defaultdict(set)
    for number, deal_record in enumerate(record.deals):
        played = 0
        seen[number, 0].update(_visible(session, number, seat))
        for action in deal_record.actions:
            session.apply(action)
            if isinstance(action, Card):
                played += 1
            seen[number, played].update(_visible(session, number, seat))
    return {moment: frozenset(cards) for moment, cards in seen.items()}


def _visible(session: Session, number: int, seat: int) -> set[str]:
    deal = session.deals[number]
    if seat not in deal.seats:
        return set()
    cards: set[Card] = {*deal.hands[seat], *deal.drawn[seat], *deal.discarded[seat]}
    cards.update(card for trick in deal.tricks for _, card in trick.plays)
    cards.update(card for _, card in deal.trick)
    if deal.widow is not None and (seat in deal.peeked or (deal.widow_taken and deal.declarer == seat)):
        cards.add(deal.widow)
    return {card.text for card in cards}


def cards_drawn(record: SessionRecord, seat: int) -> int:
    """How many cards ``seat`` drew from the stock by its exchanges, over the recorded session."""
    session = fresh_session(record)
    for deal_record in record.deals:
        for action in deal_record.actions:
            session.apply(action)
    return sum(len(deal.drawn[seat]) for deal in session.deals if seat in deal.seats)
