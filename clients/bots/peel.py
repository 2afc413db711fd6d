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
from typing import TYPE_CHECKING

from clients.bots import peel_pool
from clients.bots.hand_value import (
    beats,
    best_trump,
    bid_thresholds,
    higher_unseen,
    low_key,
    misere_hand,
    rank_of,
    trick_winner,
)
from clients.bots.table_rules import table_rules
from clients.sdk import PASS, Bid, Bot, Card, Suit, parse_options, run
from referee.rules import PEEP, Phase, get_profile

if TYPE_CHECKING:
    from collections.abc import Sequence

    from referee.rules import Action, Profile, SeatView

NAME = "peel"
VERSION = "1.0"


def choose_bid(view: SeatView, profile: Profile | None = None) -> Bid:
    """The highest legal contract the hand is expected to make, else pass.

    ``profile`` is the table's rules when the bot knows them (see :func:`table_rules`).
    """
    rules = table_rules(view, given=profile)
    legal = [action for action in view.legal_actions if isinstance(action, Bid)]
    opponents = len(view.seats_in_play) - 1
    _, estimate = best_trump(view.hand, opponents=opponents, pack_size=rules.pack_size)
    if view.widow is not None and view.widow_taken is None:  # peeped: the declarer may take it
        estimate = max(estimate, peel_pool.widow_worth(view, rules, view.widow)[0])
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


def _known(view: SeatView) -> set[Card]:
    """The cards ``view``'s seat knows are in no other hand: its own, those played, those out of play.

    Out of play in the pool variants: its own discards, and a widow it saw that the
    declarer left (a widow taken is in the declarer's hand).
    """
    known = set(view.hand) | view.played
    known.update(view.discarded)
    if view.widow is not None and view.widow_taken is False:
        known.add(view.widow)
    return known


def _lead_declarer(view: SeatView, legal: list[Card], rules: Profile) -> Card:
    trump = view.trump
    if trump is None:  # the first lead sets trump: lead the chosen suit from the top
        suit, _ = best_trump(view.hand, opponents=len(view.seats_in_play) - 1, pack_size=rules.pack_size)
        return max((c for c in legal if c.suit is suit), key=rank_of)
    trumps = [c for c in legal if c.suit is trump]
    known = _known(view)
    outstanding = sum(1 for card in rules.pack if card.suit is trump and card not in known)
    if trumps and outstanding:
        return max(trumps, key=rank_of)  # draw trumps from the top
    masters = [c for c in legal if c.suit is not trump and higher_unseen(c, known) == 0]
    if masters:
        return max(masters, key=low_key)
    if trumps:
        return max(trumps, key=rank_of)
    return min(legal, key=low_key)


def _lead_defender(view: SeatView, legal: list[Card]) -> Card:
    trump = view.trump
    known = _known(view)
    masters = [c for c in legal if c.suit is not trump and higher_unseen(c, known) == 0]
    if masters:
        return max(masters, key=low_key)
    side = [c for c in legal if c.suit is not trump]
    return min(side or legal, key=low_key)


def _follow(view: SeatView, legal: list[Card], *, declarer: bool) -> Card:
    trump = view.trump
    winner, best = trick_winner(view.trick, trump)
    winning = [c for c in legal if beats(c, best, trump)]
    losing = [c for c in legal if not beats(c, best, trump)]
    if declarer:
        if not winning:
            return _discard(losing or legal, trump)
        last = len(view.trick) == len(view.seats_in_play) - 1
        return min(winning, key=rank_of) if last else max(winning, key=rank_of)
    if winner != view.declarer:  # a fellow defender holds the trick: never overtake
        return _discard(losing, trump) if losing else min(legal, key=rank_of)
    if winning:
        return min(winning, key=rank_of)  # win cheaply
    return _discard(legal, trump)


def _discard(cards: list[Card], trump: Suit | None) -> Card:
    """The lowest card, keeping trumps when there is a choice."""
    side = [c for c in cards if c.suit is not trump]
    return min(side or cards, key=low_key)


def _lead_misere(legal: list[Card], *, declarer: bool) -> Card:
    del declarer  # both sides lead low: the declarer to stay under, defenders to force it
    return min(legal, key=low_key)


def _follow_misere(view: SeatView, legal: list[Card], *, declarer: bool) -> Card:
    winner, best = trick_winner(view.trick, None)
    under = [c for c in legal if not beats(c, best, None)]
    if declarer:
        if under:
            return max(under, key=low_key)  # duck with the highest card that still loses
        last = len(view.trick) == len(view.seats_in_play) - 1
        return max(legal, key=low_key) if last else min(legal, key=low_key)
    played = {seat for seat, _ in view.trick}
    if winner == view.declarer:  # let the declarer keep the trick
        return max(under, key=low_key) if under else min(legal, key=low_key)
    if view.declarer in played:  # the declarer got under: shed a high card
        return max(legal, key=low_key)
    return min(legal, key=low_key)  # keep the trick low for the declarer to come


# ---------------------------------------------------------------------------- the bot


class PeelBot(Bot):
    """Peel's heuristics; deterministic.

    ``profile`` is the rules of the tables it plays when they are not built in (house
    rules: see :func:`table_rules`). ``policy``: its thresholds for the pool variants'
    exchange, peep and widow (:data:`peel_pool.POLICY` by default, measured).
    """

    def __init__(self, *, profile: Profile | None = None, policy: peel_pool.PoolPolicy | None = None) -> None:
        self.profile = profile
        self.policy = policy if policy is not None else peel_pool.POLICY
        self._rules: Profile | None = None

    def decide(self, view: SeatView) -> Action:
        """Bid with :func:`choose_bid`, play with :func:`choose_card`; the pool's by :mod:`peel_pool`."""
        rules = self._rules
        if rules is None or rules.name != view.profile:
            rules = self._rules = table_rules(view, given=self.profile or self.rules)
        phase = view.phase
        if phase is Phase.BIDDING:
            if PEEP in view.legal_actions and peel_pool.wants_peep(view, rules, self.policy):
                return PEEP
            return choose_bid(view, rules)
        if phase is Phase.PLAY:
            return choose_card(view, rules)
        if phase is Phase.EXCHANGE:
            return peel_pool.choose_exchange(view, rules, self.policy)
        return peel_pool.choose_widow(view, rules, self.policy)


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
