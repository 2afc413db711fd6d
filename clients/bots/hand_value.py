"""How much a hand is worth, as Peel counts it: the trick estimate behind every Peel decision.

For each suit a hand could lead (the first card sets trump), :func:`trump_estimate` counts
the tricks it would take with that suit as trump: top trumps in sequence are sure, long
trumps and side Aces nearly so, lower honours by the chance that nobody holds a higher
card (:func:`holding_chance`). :func:`bid_thresholds` says how many estimated tricks each
contract wants (five cards or seven); :func:`misere_hand` spots a hand low enough for
Misère in its pack. Pure functions of cards, shared by Peel's auction and play
(:mod:`clients.bots.peel`), its pool decisions (:mod:`clients.bots.peel_pool`) and PIMC's
bidding (:mod:`clients.bots.pimc`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from referee.rules import CARDS, Rank

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from referee.rules import Card, Suit

BID_THRESHOLDS: Final = {
    "two": 1.5,
    "three": 2.1,
    "four": 3.3,
    "nap": 4.3,
    "wellington": 4.7,
    "blucher": 4.8,
}
"""Estimated tricks needed to bid each trick-taking contract with five cards (seed 001:
count only sure tricks; a Nap wants five near-certain winners)."""

SEVEN_CARD_THRESHOLDS: Final = {
    "three": 1.9,
    "four": 3.4,
    "nap": 3.9,
    "six": 5.4,
    "seven": 6.4,
}
"""The same with seven cards (Nap is five tricks of seven, Six and Seven above it); see
:func:`bid_thresholds`."""

_MISERE_TOP: Final = 7
"""A misère hand's highest card is at most this many ranks above the pack's lowest (a 9 of 52 cards)."""
_MISERE_STEPS_PER_CARD: Final = (28 - 2 * 5) / 5
"""A misère hand's cards are on average at most this many ranks above the pack's lowest
(five cards of 52 adding up to 28)."""


def rank_of(card: Card) -> int:
    """The card's rank as a number (2 to 14, Ace high)."""
    return int(card.rank)


def low_key(card: Card) -> tuple[int, int]:
    """Sort key for the lowest card first (rank, then suit)."""
    return (card.rank, card.suit)


def holding_chance(opponents: int, *, hand_size: int = 5, pack_size: int = 52) -> float:
    """The chance that one given unseen card was dealt to some opponent (``hand_size`` cards each).

    The unseen cards are the pack's less the seat's own hand; the rest of them is the
    undealt stock.
    """
    return min(1.0, hand_size * opponents / (pack_size - hand_size))


def beats(card: Card, best: Card, trump: Suit | None) -> bool:
    """Whether ``card`` played now would take the trick from ``best`` (the card winning it)."""
    if card.suit is best.suit:
        return card.rank > best.rank
    return card.suit is trump


def trick_winner(trick: Sequence[tuple[int, Card]], trump: Suit | None) -> tuple[int, Card]:
    """The (seat, card) winning the trick so far (the trick is not empty)."""
    seat, best = trick[0]
    for other, card in trick[1:]:
        if beats(card, best, trump):
            seat, best = other, card
    return seat, best


def higher_unseen(card: Card, known: Iterable[Card]) -> int:
    """How many cards of ``card``'s suit above it are neither in ``known`` nor played."""
    seen = {c.rank for c in known if c.suit is card.suit}
    return sum(1 for rank in range(rank_of(card) + 1, 15) if rank not in seen)


# ---------------------------------------------------------------------------- bidding


def trump_estimate(hand: Sequence[Card], trump: Suit, *, opponents: int, pack_size: int = 52) -> float:
    """Tricks ``hand`` (a whole hand: five cards, or seven) should take as declarer with ``trump`` as trumps.

    The declarer leads first. A trump with no higher trump outstanding is sure (the top
    sequence); a lower one wins when nobody holds the higher ones; each trump beyond the
    second adds half a trick of length. A side Ace is nearly sure (it may be ruffed), a
    side King less so. ``pack_size`` says how many cards the opponents' hands come from.
    """
    p = holding_chance(opponents, hand_size=len(hand), pack_size=pack_size)
    trumps = sorted((c for c in hand if c.suit is trump), key=rank_of, reverse=True)
    total = 0.0
    for card in trumps:
        higher = higher_unseen(card, hand)
        total += 1.0 if higher == 0 else (1 - p) ** higher
    if len(trumps) >= 3:
        total = min(float(len(trumps)), total + 0.5 * (len(trumps) - 2))
    ruff_risk = 0.06 * opponents
    for card in hand:
        if card.suit is trump:
            continue
        higher = higher_unseen(card, hand)
        if higher == 0:
            total += 0.95 - ruff_risk
        elif higher == 1:
            total += (1 - p) * (0.8 - ruff_risk)
    return total


def best_trump(hand: Sequence[Card], *, opponents: int, pack_size: int = 52) -> tuple[Suit, float]:
    """The suit to make trump (and lead first) and the tricks it is worth.

    Ties go to the longer suit, then the higher one.
    """
    best: tuple[float, int, int, Suit] | None = None
    for suit in {card.suit for card in hand}:
        length = sum(1 for card in hand if card.suit is suit)
        estimate = trump_estimate(hand, suit, opponents=opponents, pack_size=pack_size)
        key = (estimate, length, int(suit), suit)
        if best is None or key[:3] > best[:3]:
            best = key
    if best is None:
        msg = "an empty hand has no trump suit"
        raise ValueError(msg)
    return best[3], best[0]


def misere_hand(hand: Sequence[Card], *, pack: Sequence[Card] = CARDS) -> bool:
    """A hand for Misère: very low for its pack.

    With the 52 cards: nothing above a 9, and five cards adding up to 28 at most (seven
    to 39). A short pack has fewer ranks below each card: the same limits are counted in
    ranks above the pack's lowest and scaled to the ranks it has (32 cards, Ace down to
    7: nothing above a Jack, five cards about 9 or lower on average).
    """
    lowest = min(rank_of(card) for card in pack)
    scale = (int(Rank.ACE) - lowest) / (int(Rank.ACE) - int(Rank.TWO))
    steps = [rank_of(card) - lowest for card in hand]
    return max(steps) <= _MISERE_TOP * scale and sum(steps) <= _MISERE_STEPS_PER_CARD * len(hand) * scale


def bid_thresholds(hand_size: int) -> Mapping[str, float]:
    """The estimated tricks each contract wants, for hands of ``hand_size`` cards.

    :data:`BID_THRESHOLDS` with five cards, :data:`SEVEN_CARD_THRESHOLDS` with seven.
    Measured with Peel playing every seat, 3 to 5 seats: with seven cards a hand takes
    more tricks than the estimate counts (an estimate of 2 makes a Three two times in
    three, 3.5 a Four seven times in eight), and Nap, Six and Seven pay twice what they
    cost when they fail; each threshold is where its contract starts to be worth more
    chips than the one below (Six from 5.4, made five times in six; Seven from 6.4).
    """
    return SEVEN_CARD_THRESHOLDS if hand_size >= 7 else BID_THRESHOLDS
