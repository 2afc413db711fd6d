"""Small helpers shared by the rules tests: build deals from hand texts, apply action texts."""

from __future__ import annotations

from referee.rules import Deal, Event, Profile, parse_action, parse_cards


def deal_of(profile: Profile, hands: dict[int, str], *, dealer: int) -> Deal:
    """A deal in which each seat holds the cards written in ``hands``."""
    return Deal.from_hands(
        profile,
        {seat: parse_cards(text) for seat, text in hands.items()},
        dealer=dealer,
        table_size=len(hands),
    )


def play(deal: Deal, actions: str) -> list[Event]:
    """Apply space-separated actions ("pass four AS 10S 3C ...") and return all events."""
    events: list[Event] = []
    for text in actions.split():
        events.extend(deal.apply(parse_action(text)))
    return events
