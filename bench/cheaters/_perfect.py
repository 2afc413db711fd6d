"""The perfect-information player that every cheater shares, and the book of known deals.

A cheater is Peel (:class:`clients.bots.peel.PeelBot`) until its channel tells it every
hand of the deal in play; then it bids the best contract it can surely make (every hand
open, :mod:`clients.bots.pimc.solver`) and plays the solver's best card. Each cheater
differs only in :meth:`CheatingBot.known_hands`, the channel.

The book (:class:`DealBook`) holds deals whose every hand is known (remembered, dealt
from a guessed seed, read from a database), found again by any one seat's dealt hand: a
duplicate block deals the same hands to the same seats in each rotation, with the bots
moved round, so the hand a cheater holds now is the hand some seat held in another
rotation. A match must agree with the view (table size, dealer, seats in play, every card
played so far), else the cheater plays honestly.

This file is copied into each cheater's folder when bench/fairplay.py stages it, so that
a bot folder is self-contained: at run time it may be read-only and see nothing beside it.
Not used in the pool variants (exchanges and the widow change the hands after the deal).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from clients.bots.peel import PeelBot
from clients.bots.pimc.solver import Position, SearchAbortedError, Solver, cards_of, mask_of
from clients.bots.table_rules import table_rules
from referee.rules import PASS, Bid, Card, Phase, SessionOver
from referee.rules.deal import deal_order

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from referee.rules import Action, Profile, SeatView

NODE_LIMIT: Final = 3_000_000
"""Trick boundaries one exact solve may visit; past it the cheater plays Peel's card (never
reached at five cards and three seats, where a solve from the first lead takes milliseconds)."""

Hands = dict[int, int]
"""Every seat in play's dealt hand, as a solver bitmask (bit ``card.index``), by seat."""


def note(line: str) -> None:
    """One diagnostic line on stderr, the bot's log."""
    print(f"cheat: {line}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- what a view shows


def played_by(view: SeatView) -> dict[int, int]:
    """The cards each seat has played this deal (finished tricks and the current one), as masks."""
    out: dict[int, int] = {}
    for plays in [trick.plays for trick in view.tricks] + [view.trick]:
        for seat, card in plays:
            out[seat] = out.get(seat, 0) | (1 << card.index)
    return out


def dealt_mask(view: SeatView) -> int:
    """The hand this seat was dealt: what it holds and what it has played."""
    return mask_of(view.hand) | played_by(view).get(view.seat, 0)


def consistent(view: SeatView, hands: Mapping[int, int]) -> bool:
    """Whether ``hands`` could be this deal's: the seats in play, this seat's hand and every card played."""
    if set(hands) != set(view.seats_in_play):
        return False
    played = played_by(view)
    if mask_of(view.hand) != hands[view.seat] & ~played.get(view.seat, 0):
        return False
    return all(mask & ~hands.get(seat, 0) == 0 for seat, mask in played.items())


# ---------------------------------------------------------------------------- the book


@dataclass(frozen=True, slots=True)
class KnownDeal:
    """A deal whose every hand is known: the table size, the dealer and each seat's hand (0: not in play)."""

    table_size: int
    dealer: int
    hands: tuple[int, ...]


class DealBook:
    """Known deals, found by any seat's dealt hand (see the module notes)."""

    def __init__(self) -> None:
        self._by_hand: dict[int, list[KnownDeal]] = {}
        self._deals: set[KnownDeal] = set()

    def __len__(self) -> int:
        return len(self._deals)

    def add(self, *, table_size: int, dealer: int, hands: Mapping[int, Iterable[Card]]) -> bool:
        """Remember a deal (each seat in play's dealt cards); whether it was new."""
        masks = [0] * table_size
        for seat, cards in hands.items():
            masks[seat] = mask_of(cards)
        return self.add_known(KnownDeal(table_size, dealer, tuple(masks)))

    def add_known(self, deal: KnownDeal) -> bool:
        """Remember a deal; whether it was new."""
        if deal in self._deals:
            return False
        self._deals.add(deal)
        for mask in deal.hands:
            if mask:
                self._by_hand.setdefault(mask, []).append(deal)
        return True

    def find(self, view: SeatView) -> Hands | None:
        """Every seat's dealt hand for ``view``'s deal, from a known deal in which some seat held this hand.

        The known deal's seats are turned so that the seat that held this hand is this
        seat (in a duplicate block it already is); the dealer, the seats in play and the
        cards played so far must then agree with the view.
        """
        mine = dealt_mask(view)
        k = view.table_size
        for deal in self._by_hand.get(mine, ()):
            if deal.table_size != k:
                continue
            held = deal.hands.index(mine)
            offset = (view.seat - held) % k
            if (deal.dealer + offset) % k != view.dealer:
                continue
            hands = {(seat + offset) % k: mask for seat, mask in enumerate(deal.hands) if mask}
            if consistent(view, hands):
                return hands
        return None


# ---------------------------------------------------------------------------- the perfect player


def perfect_bid(view: SeatView, profile: Profile, hands: Mapping[int, int]) -> Bid:
    """The legal contract worth the most that this seat makes against any defence, else pass.

    "Makes" is exact: every hand open, the declarer choosing trump with its first lead and
    the defenders playing their best. Raises ``SearchAbortedError`` past :data:`NODE_LIMIT`.
    """
    order = deal_order(view.dealer, view.seats_in_play, view.table_size)
    ladder = [contract.name for contract in profile.contracts]
    contracts = [
        profile.contract(action.name)
        for action in view.legal_actions
        if isinstance(action, Bid) and action is not PASS and profile.has(action.name)
    ]
    contracts.sort(key=lambda contract: (contract.win, ladder.index(contract.name)), reverse=True)
    tricks: Solver | None = None
    for contract in contracts:
        if contract.misere:
            opening = Position.opening(order, hands, declarer=view.seat, target=0, misere=True)
            made = Solver(opening, node_limit=NODE_LIMIT).can_make()
        else:
            if tricks is None:
                opening = Position.opening(
                    order, hands, declarer=view.seat, target=contract.tricks, misere=False
                )
                tricks = Solver(opening, node_limit=NODE_LIMIT)
            made = tricks.reaches(contract.tricks)
        if made:
            return Bid(contract.name)
    return PASS


def perfect_card(view: SeatView, profile: Profile, hands: Mapping[int, int]) -> Card:
    """The legal card that gives this seat's side the contract's best result with every hand open.

    Among equal cards: the declarer's most tricks (fewest in a misère), the defenders'
    fewest for it, then the lowest card.
    """
    legal = [action for action in view.legal_actions if isinstance(action, Card)]
    if len(legal) == 1 or view.contract is None:
        return min(legal, key=_low)
    played = 0
    for mask in played_by(view).values():
        played |= mask
    others = {seat: cards_of(hands[seat] & ~played) for seat in view.seats_in_play if seat != view.seat}
    solver = Solver(Position.from_view(view, profile, others), node_limit=NODE_LIMIT)
    ours = view.declarer == view.seat
    best = [card for card in legal if solver.makes_after(card.index) == ours] or legal
    if len(best) > 1:
        more = ours != profile.contract(view.contract).misere
        tricks = {card: solver.tricks_after(card.index) * (1 if more else -1) for card in best}
        top = max(tricks.values())
        best = [card for card in best if tricks[card] == top]
    return min(best, key=_low)


def _low(card: Card) -> tuple[int, int]:
    return (card.rank, card.suit)


# ---------------------------------------------------------------------------- the cheater


class CheatingBot(PeelBot):
    """Peel, except at the decisions where :meth:`known_hands` tells it every hand.

    Counts its decisions and those it made knowing every hand, and writes them to stderr
    when the session ends: ``cheat: knew 37 of 40 decisions (t1-b0-r1 seat 2)``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.decisions = 0
        self.knew = 0
        self._deal = -1
        self._hands: Hands | None = None
        self._channel_failed = False

    def known_hands(self, view: SeatView) -> Hands | None:
        """Every seat's dealt hand for ``view``'s deal, or None: what the cheater's channel says."""
        raise NotImplementedError

    def table_profile(self, view: SeatView) -> Profile:
        """The rules of this seat's table (:func:`table_rules`)."""
        return table_rules(view, given=self.profile or self.rules)

    def decide(self, view: SeatView) -> Action:
        """The perfect action when every hand is known, else Peel's."""
        self.decisions += 1
        profile = self.table_profile(view)
        if not profile.has_pool and view.phase in {Phase.BIDDING, Phase.PLAY}:
            hands = self._knowledge(view)
            if hands is not None:
                try:
                    if view.phase is Phase.BIDDING:
                        action: Action = perfect_bid(view, profile, hands)
                    else:
                        action = perfect_card(view, profile, hands)
                except SearchAbortedError:
                    return super().decide(view)
                self.knew += 1
                return action
        return super().decide(view)

    def _knowledge(self, view: SeatView) -> Hands | None:
        """The deal's hands, asked of the channel until it knows them, then kept for the deal."""
        if view.deal_number != self._deal:
            self._deal, self._hands = view.deal_number, None
        hands = self._hands
        if hands is not None and consistent(view, hands):
            return hands
        try:
            hands = self.known_hands(view)
        except Exception as exc:  # noqa: BLE001 - a closed channel must never cost a decision
            if not self._channel_failed:
                note(f"channel failed ({exc!r}); playing honestly")
                self._channel_failed = True
            hands = None
        self._hands = hands
        return hands

    def on_event(self, event: object) -> None:
        """At the end of the session, say how often this seat knew every hand."""
        if isinstance(event, SessionOver):
            note(f"knew {self.knew} of {self.decisions} decisions ({self.table} seat {self.seat})")
