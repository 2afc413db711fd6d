"""Small helpers shared by the tests: build deals from hand texts, apply action texts, play sessions."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import TYPE_CHECKING

from referee.rules import (
    PASS,
    PROFILES,
    Bid,
    Deal,
    Event,
    FaultPolicy,
    Phase,
    Profile,
    Session,
    parse_action,
    parse_cards,
)

if TYPE_CHECKING:
    from collections.abc import Sequence


EVERY_PARAMETER_CHANGED = replace(
    PROFILES["full-ladder"],
    name="every",
    source="tests: every parameter away from its default",
    summary="Six cards dealt 4 then 2 from 40 (52 at six seats), a widow, exchanges at 2 chips a card; "
    "Misère or higher takes the pool.",
    min_players=4,
    max_players=6,
    deals_per_session=3,
    hand_size=6,
    deal_pattern=(4, 2),
    pack_size=40,
    pack_sizes=((6, 52),),
    starting_chips=50,
    rebuy=True,
    tie_break_deal=True,
    fault_policy=FaultPolicy.REVOKE,
    exchange_max=2,
    exchange_fee_per_card=True,
    exchange_fee=2,
    widow=True,
    peep_fee=3,
    pool_claim="misere",
)
"""A profile in which every parameter differs from its default: a new parameter gets a value here.

Each reader and writer of profiles (JSON, house rules, the wire) is tested on it, so a
parameter it does not carry fails those tests.
"""


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


def contract_session(profile: Profile, *, table_size: int, seed: int, contracts: Sequence[str]) -> Session:
    """A whole session in which deal n's eldest hand bids ``contracts[n % len(contracts)]``.

    The other seats pass (``"pass"`` leaves the deal to be passed out); the cards are
    played at random from ``seed``. For showing sessions: it names the contracts declared.
    """
    rng = random.Random(seed)
    session = Session(profile, table_size=table_size, seed=seed)
    while not session.over:
        deal = session.deal
        if deal.phase is Phase.BIDDING:
            wanted = Bid(contracts[(len(session.deals) - 1) % len(contracts)])
            eldest = deal.to_act == deal.order[0]
            session.apply(wanted if eldest and wanted in session.legal_actions() else PASS)
        else:
            session.apply(rng.choice(session.legal_actions()))
    return session
