"""A heuristic bot after W. H. Peel's advice on Nap (and seed 001's tips).

Bidding: for each suit it could lead (the first card sets trump), estimate the tricks it
would take with that suit as trump (top trumps in sequence are sure, long trumps and
side Aces nearly so, lower honours by the chance that nobody holds a higher card), and
bid the highest legal contract that estimate supports (:func:`bid_thresholds`: by the
hand size, five cards or seven); Misère on a very low hand for its pack. Play: the
declarer leads its chosen suit from the top and keeps leading trumps from the top while
any are out; a defender wins cheaply, never overtakes a fellow defender's winning card
and discards low; a misère declarer plays low and ducks.

Everything is a pure, deterministic function of the seat's view and its table's rules
profile (:func:`clients.bots.table_rules.table_rules`: the hand size and the pack, 52
cards or a short pack without its lowest ranks).
"""

from __future__ import annotations

import argparse
from functools import partial
from typing import TYPE_CHECKING, Final

from clients.bots.table_rules import table_rules
from clients.sdk import PASS, Bid, Bot, Card, Suit, parse_options, run
from referee.rules import CARDS, Phase, Rank, get_profile

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from referee.rules import Action, Profile, SeatView

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


# ---------------------------------------------------------------------------- cards


def _rank(card: Card) -> int:
    return int(card.rank)


def _low_key(card: Card) -> tuple[int, int]:
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
    return sum(1 for rank in range(_rank(card) + 1, 15) if rank not in seen)


# ---------------------------------------------------------------------------- bidding


def trump_estimate(hand: Sequence[Card], trump: Suit, *, opponents: int, pack_size: int = 52) -> float:
    """Tricks ``hand`` (a whole hand: five cards, or seven) should take as declarer with ``trump`` as trumps.

    The declarer leads first. A trump with no higher trump outstanding is sure (the top
    sequence); a lower one wins when nobody holds the higher ones; each trump beyond the
    second adds half a trick of length. A side Ace is nearly sure (it may be ruffed), a
    side King less so. ``pack_size`` says how many cards the opponents' hands come from.
    """
    p = holding_chance(opponents, hand_size=len(hand), pack_size=pack_size)
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
    lowest = min(_rank(card) for card in pack)
    scale = (int(Rank.ACE) - lowest) / (int(Rank.ACE) - int(Rank.TWO))
    steps = [_rank(card) - lowest for card in hand]
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


def choose_bid(view: SeatView, profile: Profile | None = None) -> Bid:
    """The highest legal contract the hand is expected to make, else pass.

    ``profile`` is the table's rules when the bot knows them (see :func:`table_rules`).
    """
    rules = table_rules(view, given=profile)
    legal = [action for action in view.legal_actions if isinstance(action, Bid)]
    opponents = len(view.seats_in_play) - 1
    _, estimate = best_trump(view.hand, opponents=opponents, pack_size=rules.pack_size)
    misere = misere_hand(view.hand, pack=rules.pack)
    thresholds = bid_thresholds(len(view.hand))
    choice = PASS
    for bid in legal:  # ascending up the ladder
        if bid.name == "misere":
            if misere:
                choice = bid
        elif estimate >= thresholds.get(bid.name, 99.0):
            choice = bid
    return choice


# ---------------------------------------------------------------------------- play


def choose_card(view: SeatView, profile: Profile | None = None) -> Card:
    """The card to play: by role (declarer or defender) and contract (misère or not).

    ``profile`` is the table's rules when the bot knows them (see :func:`table_rules`).
    """
    legal = [action for action in view.legal_actions if isinstance(action, Card)]
    if not legal:
        msg = "no legal card to play"
        raise ValueError(msg)
    misere = view.contract == "misere"
    declarer = view.declarer == view.seat
    if not view.trick:
        if misere:
            return _lead_misere(legal, declarer=declarer)
        return (
            _lead_declarer(view, legal, table_rules(view, given=profile))
            if declarer
            else _lead_defender(view, legal)
        )
    if misere:
        return _follow_misere(view, legal, declarer=declarer)
    return _follow(view, legal, declarer=declarer)


def _lead_declarer(view: SeatView, legal: list[Card], rules: Profile) -> Card:
    trump = view.trump
    if trump is None:  # the first lead sets trump: lead the chosen suit from the top
        suit, _ = best_trump(view.hand, opponents=len(view.seats_in_play) - 1, pack_size=rules.pack_size)
        return max((c for c in legal if c.suit is suit), key=_rank)
    trumps = [c for c in legal if c.suit is trump]
    known = set(view.hand) | view.played
    outstanding = sum(1 for card in rules.pack if card.suit is trump and card not in known)
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
    """Peel's heuristics; deterministic.

    ``profile`` is the rules of the tables it plays when they are not built in (house
    rules: see :func:`table_rules`).
    """

    def __init__(self, *, profile: Profile | None = None) -> None:
        self.profile = profile
        self._rules: Profile | None = None

    def decide(self, view: SeatView) -> Action:
        """Bid with :func:`choose_bid`, play with :func:`choose_card`."""
        rules = self._rules
        if rules is None or rules.name != view.profile:
            rules = self._rules = table_rules(view, given=self.profile or self.rules)
        if view.phase is Phase.BIDDING:
            return choose_bid(view, rules)
        return choose_card(view, rules)


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the referee with Peel bots."""
    parser = argparse.ArgumentParser(
        prog=f"python -m clients.bots.{NAME}", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--profile",
        default=None,
        help="rules profile or house-rules .toml, when the referee's is not built in",
    )
    options, args = parse_options(argv, name=NAME, version=VERSION, parser=parser)
    profile = get_profile(args.profile) if args.profile else None
    run(partial(PeelBot, profile=profile), name=NAME, version=VERSION, options=options)


if __name__ == "__main__":
    main()
