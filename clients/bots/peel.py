"""A heuristic bot after W. H. Peel's advice on Nap (and seed 001's tips).

Bidding: for each suit it could lead (the first card sets trump), estimate the tricks it
would take with that suit as trump (top trumps in sequence are sure, long trumps and
side Aces nearly so, lower honours by the chance that nobody holds a higher card), and
bid the highest legal contract that estimate supports; Misère on a very low hand with
no Ace or King. Play: the declarer leads its chosen suit from the top and keeps leading
trumps from the top while any are out; a defender wins cheaply, never overtakes a
fellow defender's winning card and discards low; a misère declarer plays low and ducks.

Everything is a pure, deterministic function of the seat's view.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Final

from clients.sdk import PASS, Bid, Bot, Card, Suit, parse_options, run
from referee.rules import Phase, Rank

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from referee.rules import Action, SeatView

NAME = "peel"
VERSION = "1.0"

BID_THRESHOLDS: Final = {
    "two": 1.5,
    "three": 2.1,
    "four": 3.3,
    "nap": 4.3,
    "wellington": 4.7,
    "blucher": 4.8,
}
"""Estimated tricks needed to bid each trick-taking contract (seed 001: count only sure
tricks; a Nap wants five near-certain winners)."""
_HAND_SIZE: Final = 5
_UNSEEN: Final = 52 - _HAND_SIZE


# ---------------------------------------------------------------------------- cards


def _rank(card: Card) -> int:
    return int(card.rank)


def _low_key(card: Card) -> tuple[int, int]:
    return (card.rank, card.suit)


def holding_chance(opponents: int) -> float:
    """The chance that one given unseen card was dealt to some opponent (5 cards each)."""
    return min(1.0, _HAND_SIZE * opponents / _UNSEEN)


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
    return sum(1 for rank in range(_rank(card) + 1, 15) if rank not in seen)


# ---------------------------------------------------------------------------- bidding


def trump_estimate(hand: Sequence[Card], trump: Suit, *, opponents: int) -> float:
    """Tricks ``hand`` should take as declarer with ``trump`` as trumps (leading first).

    A trump with no higher trump outstanding is sure (the top sequence); a lower one wins
    when nobody holds the higher ones; each trump beyond the second adds half a trick of
    length. A side Ace is nearly sure (it may be ruffed), a side King less so.
    """
    p = holding_chance(opponents)
    trumps = sorted((c for c in hand if c.suit is trump), key=_rank, reverse=True)
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


def best_trump(hand: Sequence[Card], *, opponents: int) -> tuple[Suit, float]:
    """The suit to make trump (and lead first) and the tricks it is worth.

    Ties go to the longer suit, then the higher one.
    """
    best: tuple[float, int, int, Suit] | None = None
    for suit in {card.suit for card in hand}:
        length = sum(1 for card in hand if card.suit is suit)
        key = (trump_estimate(hand, suit, opponents=opponents), length, int(suit), suit)
        if best is None or key[:3] > best[:3]:
            best = key
    if best is None:
        msg = "an empty hand has no trump suit"
        raise ValueError(msg)
    return best[3], best[0]


def misere_hand(hand: Sequence[Card]) -> bool:
    """A hand for Misère: very low, no Ace, King, Queen or Jack, nothing above a 9."""
    ranks = [_rank(card) for card in hand]
    return max(ranks) <= 9 and sum(ranks) <= 28


def choose_bid(view: SeatView) -> Bid:
    """The highest legal contract the hand is expected to make, else pass."""
    legal = [action for action in view.legal_actions if isinstance(action, Bid)]
    opponents = len(view.seats_in_play) - 1
    _, estimate = best_trump(view.hand, opponents=opponents)
    misere = misere_hand(view.hand)
    choice = PASS
    for bid in legal:  # ascending up the ladder
        if bid.name == "misere":
            if misere:
                choice = bid
        elif estimate >= BID_THRESHOLDS.get(bid.name, 99.0):
            choice = bid
    return choice


# ---------------------------------------------------------------------------- play


def choose_card(view: SeatView) -> Card:
    """The card to play: by role (declarer or defender) and contract (misère or not)."""
    legal = [action for action in view.legal_actions if isinstance(action, Card)]
    if not legal:
        msg = "no legal card to play"
        raise ValueError(msg)
    misere = view.contract == "misere"
    declarer = view.declarer == view.seat
    if not view.trick:
        if misere:
            return _lead_misere(legal, declarer=declarer)
        return _lead_declarer(view, legal) if declarer else _lead_defender(view, legal)
    if misere:
        return _follow_misere(view, legal, declarer=declarer)
    return _follow(view, legal, declarer=declarer)


def _lead_declarer(view: SeatView, legal: list[Card]) -> Card:
    trump = view.trump
    if trump is None:  # the first lead sets trump: lead the chosen suit from the top
        suit, _ = best_trump(view.hand, opponents=len(view.seats_in_play) - 1)
        return max((c for c in legal if c.suit is suit), key=_rank)
    trumps = [c for c in legal if c.suit is trump]
    known = set(view.hand) | view.played
    outstanding = sum(1 for rank in Rank if Card(rank, trump) not in known)
    if trumps and outstanding:
        return max(trumps, key=_rank)  # draw trumps from the top
    masters = [c for c in legal if c.suit is not trump and higher_unseen(c, known) == 0]
    if masters:
        return max(masters, key=_low_key)
    if trumps:
        return max(trumps, key=_rank)
    return min(legal, key=_low_key)


def _lead_defender(view: SeatView, legal: list[Card]) -> Card:
    trump = view.trump
    known = set(view.hand) | view.played
    masters = [c for c in legal if c.suit is not trump and higher_unseen(c, known) == 0]
    if masters:
        return max(masters, key=_low_key)
    side = [c for c in legal if c.suit is not trump]
    return min(side or legal, key=_low_key)


def _follow(view: SeatView, legal: list[Card], *, declarer: bool) -> Card:
    trump = view.trump
    winner, best = trick_winner(view.trick, trump)
    winning = [c for c in legal if beats(c, best, trump)]
    losing = [c for c in legal if not beats(c, best, trump)]
    if declarer:
        if not winning:
            return _discard(losing or legal, trump)
        last = len(view.trick) == len(view.seats_in_play) - 1
        return min(winning, key=_rank) if last else max(winning, key=_rank)
    if winner != view.declarer:  # a fellow defender holds the trick: never overtake
        return _discard(losing, trump) if losing else min(legal, key=_rank)
    if winning:
        return min(winning, key=_rank)  # win cheaply
    return _discard(legal, trump)


def _discard(cards: list[Card], trump: Suit | None) -> Card:
    """The lowest card, keeping trumps when there is a choice."""
    side = [c for c in cards if c.suit is not trump]
    return min(side or cards, key=_low_key)


def _lead_misere(legal: list[Card], *, declarer: bool) -> Card:
    del declarer  # both sides lead low: the declarer to stay under, defenders to force it
    return min(legal, key=_low_key)


def _follow_misere(view: SeatView, legal: list[Card], *, declarer: bool) -> Card:
    winner, best = trick_winner(view.trick, None)
    under = [c for c in legal if not beats(c, best, None)]
    if declarer:
        if under:
            return max(under, key=_low_key)  # duck with the highest card that still loses
        last = len(view.trick) == len(view.seats_in_play) - 1
        return max(legal, key=_low_key) if last else min(legal, key=_low_key)
    played = {seat for seat, _ in view.trick}
    if winner == view.declarer:  # let the declarer keep the trick
        return max(under, key=_low_key) if under else min(legal, key=_low_key)
    if view.declarer in played:  # the declarer got under: shed a high card
        return max(legal, key=_low_key)
    return min(legal, key=_low_key)  # keep the trick low for the declarer to come


# ---------------------------------------------------------------------------- the bot


class PeelBot(Bot):
    """Peel's heuristics; stateless and deterministic."""

    def decide(self, view: SeatView) -> Action:
        """Bid with :func:`choose_bid`, play with :func:`choose_card`."""
        if view.phase is Phase.BIDDING:
            return choose_bid(view)
        return choose_card(view)


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the referee with Peel bots."""
    parser = argparse.ArgumentParser(
        prog=f"python -m clients.bots.{NAME}", description=__doc__.splitlines()[0]
    )
    options, _ = parse_options(argv, name=NAME, version=VERSION, parser=parser)
    run(PeelBot, name=NAME, version=VERSION, options=options)


if __name__ == "__main__":
    main()
