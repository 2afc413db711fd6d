"""Peel's decisions in the pool variants (seed 001's Purchase, Écarté and Peep Nap).

Everything is read off the trick estimate Peel bids by (:func:`clients.bots.hand_value.best_trump`):

- **Exchange** (Purchase, Écarté): keep the best suit and the side Aces, give up the
  lowest of the rest, when the hand is worth less than ``exchange_below`` tricks. Where
  each card costs a fee (Écarté), give up at most ``paid_cards``; where one fee buys the
  whole exchange (Purchase), give up as many as the profile allows.
- **Peep** (Peep Nap): pay to see the widow when the hand is at most ``peep_margin``
  tricks short of a contract it may bid: the widow may be the card that lifts it.
- **Widow** (the declarer, after the auction): a widow it saw replaces the card whose loss
  costs the least, when that makes the hand worth more; a widow it did not see replaces
  the weakest card (the lowest side card that is not a master) blind, when ``blind_widow``.

A fee is paid only while the seat keeps enough chips to pay a failed Four to every
opponent afterwards (:func:`can_spend`): with finite chips an eliminated seat scores no
more.

The defaults (:data:`POLICY`) are measured, not guessed: ``bench/peel_pool.py`` plays one
Peel seat with a candidate policy against Peel seats that decline everything, seed by
seed against the same seat declining everything in the same session (paired), 3 to 5
seats; the defaults are the best of its grid. Chips a session gained, with a 95% interval
(``--seeds 1500`` for Purchase and Peep Nap, 800 for Écarté):

- Purchase, exchanging below 1.5 / 2.1 / 2.7 / 3.3 / 4.3 / always: +5.6 / +9.8 / +10.9 /
  +11.3 / +11.5 / +11.5 (each ±0.7): exchange everything but a Nap hand.
- Écarté, at most 1 / 2 / 3 cards (below 4.3): +5.1 / +9.8 / +11.8 (±1.0); 4 or 5 cards
  (below 3.3) gain no more than 3 (+11.7): a hand rarely has more than three cards to spare.
- Peep Nap, peeping within 0.5 / 1.0 / 1.5 / 2.5 tricks of a contract: +2.4 / +4.1 / +4.9 /
  +5.2 (±0.5) without the blind widow; the blind widow alone +0.6 (±0.25), and +0.6, +0.35
  on top of the narrower margins (at 1.5 and beyond the declarer has nearly always
  peeped). Peeping is cheap: a pool that nobody claims goes back to its payers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from clients.bots import hand_value
from referee.rules import DECLINE_EXCHANGE, DECLINE_WIDOW, Bid, Card, Exchange, TakeWidow

if TYPE_CHECKING:
    from collections.abc import Sequence

    from referee.rules import Profile, SeatView, Suit


@dataclass(frozen=True, slots=True)
class PoolPolicy:
    """Peel's thresholds for the pool decisions (tricks as :func:`best_trump` counts them)."""

    exchange_below: float = 4.3
    """Exchange when the hand is worth fewer tricks than this (Peel's Nap: 4.3)."""
    paid_cards: int = 3
    """With a fee per card (Écarté), give up at most this many cards."""
    peep_margin: float = 1.5
    """Peep when a legal contract wants at most this many tricks more than the hand is worth."""
    blind_widow: bool = True
    """The declarer takes a widow it did not see for its weakest card."""


POLICY: Final = PoolPolicy()
"""Peel's measured defaults (``bench/peel_pool.py``)."""

DECLINE_ALL: Final = PoolPolicy(exchange_below=-1.0, paid_cards=0, peep_margin=-1.0, blind_widow=False)
"""Never pay, never take the widow: Peel before the pool variants (the baseline it is measured against)."""

_RESERVE_CONTRACT: Final = "four"
"""Fees are paid only while the stack left would still pay this contract failed to every opponent."""


def can_spend(view: SeatView, rules: Profile, fee: int) -> bool:
    """Whether paying ``fee`` leaves ``view``'s seat enough chips to pay a failed Four to each opponent."""
    if rules.starting_chips is None:
        return True
    stack = rules.starting_chips + view.balances[view.seat]
    reserve_name = _RESERVE_CONTRACT if rules.has(_RESERVE_CONTRACT) else rules.contracts[0].name
    reserve = rules.contract(reserve_name).lose * (len(view.seats_in_play) - 1)
    return stack - fee >= reserve


def hand_worth(hand: Sequence[Card], *, opponents: int, pack_size: int) -> float:
    """The tricks ``hand`` should take as declarer with its best trump (Peel's estimate)."""
    return hand_value.best_trump(hand, opponents=opponents, pack_size=pack_size)[1]


def _weakest(hand: Sequence[Card], trump: Suit, known: Sequence[Card]) -> list[Card]:
    """The cards to give up first with ``trump`` in mind: side cards that are not masters, lowest first."""
    spare = [card for card in hand if card.suit is not trump and hand_value.higher_unseen(card, known) > 0]
    return sorted(spare, key=lambda card: (card.rank, card.suit))


def choose_exchange(view: SeatView, rules: Profile, policy: PoolPolicy = POLICY) -> Exchange:
    """The cards to give up for as many from the stock, or :data:`DECLINE_EXCHANGE`."""
    legal = [action for action in view.legal_actions if isinstance(action, Exchange)]
    most = max((len(action.cards) for action in legal), default=0)
    hand = view.hand
    opponents = len(view.seats_in_play) - 1
    trump, worth = hand_value.best_trump(hand, opponents=opponents, pack_size=rules.pack_size)
    misere = rules.has("misere") and hand_value.misere_hand(hand, pack=rules.pack)
    if not most or worth >= policy.exchange_below or misere:
        return DECLINE_EXCHANGE
    if rules.exchange_fee_per_card:
        most = min(most, policy.paid_cards)
    spare = _weakest(hand, trump, hand)[:most]
    while spare and not can_spend(view, rules, rules.exchange_cost(len(spare))):
        spare.pop()
    choice = Exchange(tuple(spare))
    return choice if choice in legal else DECLINE_EXCHANGE


def widow_worth(view: SeatView, rules: Profile, widow: Card) -> tuple[float, Card | None]:
    """The hand's worth with ``widow`` for its best card to give up (None: worth more as it is)."""
    opponents = len(view.seats_in_play) - 1
    hand = list(view.hand)
    best: tuple[float, Card | None] = (hand_worth(hand, opponents=opponents, pack_size=rules.pack_size), None)
    for card in hand:
        swapped = [widow if other == card else other for other in hand]
        worth = hand_worth(swapped, opponents=opponents, pack_size=rules.pack_size)
        if worth > best[0]:
            best = (worth, card)
    return best


def wants_peep(view: SeatView, rules: Profile, policy: PoolPolicy = POLICY) -> bool:
    """Whether to pay to see the widow: the hand is near a contract it may bid, and the fee is affordable."""
    if view.widow is not None or not can_spend(view, rules, rules.peep_fee):
        return False
    worth = hand_worth(view.hand, opponents=len(view.seats_in_play) - 1, pack_size=rules.pack_size)
    thresholds = hand_value.bid_thresholds(len(view.hand))
    wanted = [
        thresholds[action.name]
        for action in view.legal_actions
        if isinstance(action, Bid) and action.name in thresholds
    ]
    return any(worth < threshold <= worth + policy.peep_margin for threshold in wanted)


def choose_widow(view: SeatView, rules: Profile, policy: PoolPolicy = POLICY) -> TakeWidow:
    """As declarer: the card to give up for the widow, or :data:`DECLINE_WIDOW`."""
    hand = view.hand
    misere = view.contract is not None and rules.has(view.contract) and rules.contract(view.contract).misere
    if view.widow is not None:
        if misere:
            highest = max(hand, key=lambda card: (card.rank, card.suit))
            return TakeWidow(highest) if view.widow.rank < highest.rank else DECLINE_WIDOW
        _, card = widow_worth(view, rules, view.widow)
        return DECLINE_WIDOW if card is None else TakeWidow(card)
    if misere or not policy.blind_widow:
        return DECLINE_WIDOW
    trump, _ = hand_value.best_trump(hand, opponents=len(view.seats_in_play) - 1, pack_size=rules.pack_size)
    spare = _weakest(hand, trump, hand)
    return TakeWidow(spare[0]) if spare else DECLINE_WIDOW
