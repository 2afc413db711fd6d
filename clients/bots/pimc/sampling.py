"""Deal the cards a seat cannot see, consistently with everything it knows.

A seat knows its own hand, every card played, the voids that failures to follow suit
revealed, and how many cards each other seat still holds. Every other card of the
table's pack (52 cards, or a short pack without its lowest ranks) is unseen: it is in
some other seat's hand or in the undealt stock (with five players of five cards, 27 of
the 52 are never dealt), and the stock is dealt like a seat with no constraint. Chance comes only
from the ``random.Random`` passed in.

The pool variants change which cards are unseen (:attr:`SeatView.visible_cards`) and
little else. Cards another seat drew in its exchange came from the stock, which is
unseen, so its hand is dealt from the unseen cards like any other. What is unseen and out
of play (the cards the others gave up, the rest of the stock, a widow this seat never
saw) is what the sample leaves undealt. The seat's own discards are seen and out of play,
so never dealt. A widow the seat peeped at is out of play too, unless the declarer took
it: then it is in the declarer's hand until played (:attr:`Knowledge.known`), and each
sample puts it there.

Samples can be weighted by how plausible each seat's bid or pass was with the hand the
sample gives it (:func:`bid_weight`); the weights are soft, never zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from clients.bots.hand_value import best_trump, bid_thresholds
from referee.rules import PASS, Card, Suit

if TYPE_CHECKING:
    import random
    from collections.abc import Mapping, Sequence

    from referee.rules import SeatView

_REJECTION_TRIES: Final = 24
_GREEDY_TRIES: Final = 200


class InconsistentViewError(ValueError):
    """No deal of the unseen cards agrees with the view (a view the engine never makes)."""


@dataclass(frozen=True, slots=True)
class Knowledge:
    """What one seat knows about the cards it cannot see.

    ``unseen`` are the cards neither in its hand nor played nor otherwise seen;
    ``holding`` how many unseen cards each other seat in play still holds; ``voids`` the
    suits each of them has shown it lacks. The rest of ``unseen`` (``stock`` cards) is the
    undealt stock and the cards out of play. ``known`` are cards this seat saw that
    another seat holds (a widow it peeped at, taken by the declarer): not unseen, not
    counted in ``holding``, added to that seat's hand in every sample.
    """

    seat: int
    unseen: tuple[Card, ...]
    holding: tuple[tuple[int, int], ...]
    voids: Mapping[int, frozenset[Suit]]
    known: Mapping[int, tuple[Card, ...]] = field(default_factory=dict)

    @property
    def stock(self) -> int:
        """How many unseen cards are in the undealt stock."""
        return len(self.unseen) - sum(count for _, count in self.holding)

    @classmethod
    def of(cls, view: SeatView, *, pack: Sequence[Card]) -> Knowledge:
        """What ``view`` tells its seat about the unseen cards of ``pack`` (its table's ``profile.pack``)."""
        plays = [play for trick in view.tricks for play in trick.plays]
        plays.extend(view.trick)
        played_by: dict[int, int] = {}
        for seat, _ in plays:
            played_by[seat] = played_by.get(seat, 0) + 1
        hand_size = len(view.hand) + played_by.get(view.seat, 0)
        voids: dict[int, set[Suit]] = {}
        tricks = [trick.plays for trick in view.tricks]
        if view.trick:
            tricks.append(view.trick)
        for trick in tricks:
            led = trick[0][1].suit
            for seat, card in trick[1:]:
                if card.suit is not led:
                    voids.setdefault(seat, set()).add(led)
        visible = view.visible_cards
        known: dict[int, tuple[Card, ...]] = {}
        widow = view.widow
        declarer = view.declarer
        if (
            widow is not None
            and declarer is not None
            and view.widow_taken
            and declarer != view.seat
            and widow not in view.played
        ):
            known[declarer] = (widow,)
        return cls(
            seat=view.seat,
            unseen=tuple(card for card in pack if card not in visible),
            holding=tuple(
                (seat, hand_size - played_by.get(seat, 0) - len(known.get(seat, ())))
                for seat in view.seats_in_play
                if seat != view.seat
            ),
            voids={seat: frozenset(suits) for seat, suits in voids.items()},
            known=known,
        )

    def _with_known(self, hands: dict[int, list[Card]]) -> dict[int, list[Card]]:
        for seat, cards in self.known.items():
            hands[seat] = [*hands[seat], *cards]
        return hands

    def sample(self, rng: random.Random) -> dict[int, list[Card]]:
        """One deal of the unseen cards: each other seat gets as many as it holds, none of a void suit.

        A seat's ``known`` cards are added to its hand.

        Uniform over the consistent deals when a few shuffles find one (always, unless
        voids bind hard); otherwise the most constrained seats are dealt first.
        """
        pool = list(self.unseen)
        voids = self.voids
        for _ in range(_REJECTION_TRIES if voids else 1):
            rng.shuffle(pool)
            hands: dict[int, list[Card]] = {}
            top = 0
            for seat, count in self.holding:
                hands[seat] = pool[top : top + count]
                top += count
            if all(card.suit not in voids.get(seat, ()) for seat, hand in hands.items() for card in hand):
                return self._with_known(hands) if self.known else hands
        hands = self._sample_greedy(rng)
        return self._with_known(hands) if self.known else hands

    def _sample_greedy(self, rng: random.Random) -> dict[int, list[Card]]:
        holding = sorted(
            self.holding,
            key=lambda entry: sum(1 for card in self.unseen if card.suit not in self.voids.get(entry[0], ())),
        )
        for _ in range(_GREEDY_TRIES):
            left = set(self.unseen)
            hands: dict[int, list[Card]] = {}
            for seat, count in holding:
                void = self.voids.get(seat, frozenset())
                allowed = sorted((card for card in left if card.suit not in void), key=_index)
                if len(allowed) < count:
                    break
                hands[seat] = rng.sample(allowed, count)
                left.difference_update(hands[seat])
            else:
                return hands
        msg = f"no deal of the {len(self.unseen)} unseen cards fits the voids {dict(self.voids)}"
        raise InconsistentViewError(msg)


def _index(card: Card) -> int:
    return card.index


def initial_hand(view: SeatView, seat: int, held: Sequence[Card]) -> list[Card]:
    """The hand ``seat`` was dealt if it still holds ``held``: those and the cards it played."""
    cards = list(held)
    for trick in view.tricks:
        cards.extend(card for who, card in trick.plays if who == seat)
    cards.extend(card for who, card in view.trick if who == seat)
    return cards


def bid_weight(view: SeatView, hands: Mapping[int, Sequence[Card]], *, pack_size: int) -> float:
    """How plausible the auction is if the other seats hold ``hands`` (1.0: fully; never 0).

    A seat that passed while it could bid is less likely to have been dealt a hand that
    Peel's estimate rates worth a Four; a seat that bid a trick contract is less likely
    to hold a hand rated more than a trick and a half below it. Misère bids are not judged.
    Peel's thresholds are those of the hand size (five cards, or seven); ``pack_size`` is
    the table's pack.
    """
    weight = 1.0
    opponents = len(view.seats_in_play) - 1
    thresholds = None
    for seat, bid in view.bids:
        held = hands.get(seat)
        if held is None:
            continue
        hand = initial_hand(view, seat, held)
        if thresholds is None:
            thresholds = bid_thresholds(len(hand))
        threshold = thresholds.get(bid.name)
        if bid is not PASS and threshold is None:
            continue
        _, estimate = best_trump(hand, opponents=opponents, pack_size=pack_size)
        if bid is PASS:
            if estimate >= thresholds["four"]:
                weight *= 0.5
        elif threshold is not None and estimate < threshold - 1.5:
            weight *= 0.5
    return weight
