"""Exact double-dummy solver for the rest of a Nap deal, all hands open.

The payoff of a deal is a step: the contract is made or it is not, overtricks earn
nothing. So the search is boolean, a null window at the contract: "can the declarer take
at least ``need`` more tricks" with the declarer maximizing its tricks and the
defenders minimizing them (in a misère the sides swap: the declarer minimizes and the
question is whether the defenders can force one trick on it). Alpha-beta on a boolean
is just "any child" at the maximizer's nodes and "every child" at the minimizer's.

Speed comes from three things:

- a compact state: each hand is a 52-bit mask (bit ``card.index``), positions are the
  seats in play in clockwise order, cards are ints;
- equivalent-rank pruning: two cards of one hand in one suit with no other card *still
  in play* between them (the cards in any hand, and those already played to the current
  trick) win and lose exactly the same tricks, so only one of each run is tried;
- a transposition table at trick boundaries, keyed by (leader, hands) and holding
  bounds on the declarer's tricks from there; it is relative (it does not depend on the
  tricks won so far), so one table serves every window and every query of a solver.

The number of tricks is read from the hands, not fixed at five, so small profiles can
be checked against brute force from the very first lead (when the lead chooses trump).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from referee.rules.cards import CARDS, Card
from referee.rules.deal import deal_order

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from clients.bots.pimc.budget import Deadline
    from referee.rules import Deal, Profile, SeatView, Suit

SUIT_MASKS: Final = tuple(((1 << 13) - 1) << (13 * suit) for suit in range(4))
"""The 13 bits of each suit (clubs, diamonds, hearts, spades)."""
SUIT_OF: Final = tuple(index // 13 for index in range(52))
NO_TRUMP: Final = -1

_CHECK_EVERY: Final = 256
"""Trick boundaries between two looks at a solver's deadline (about 10 ms of search at
seven seats of seven cards, under 3 ms with five cards)."""


def mask_of(cards: Iterable[Card]) -> int:
    """The bitmask of ``cards`` (bit ``card.index``)."""
    mask = 0
    for card in cards:
        mask |= 1 << card.index
    return mask


def cards_of(mask: int) -> list[Card]:
    """The cards of a bitmask, in pack order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(CARDS[low.bit_length() - 1])
        mask ^= low
    return out


def trick_leader_wins(cards: Sequence[int], trump: int) -> int:
    """Index in ``cards`` (played in order, leader first) of the card winning the trick so far."""
    best = 0
    best_card = cards[0]
    for i in range(1, len(cards)):
        card = cards[i]
        if SUIT_OF[card] == SUIT_OF[best_card]:
            if card > best_card:
                best, best_card = i, card
        elif SUIT_OF[card] == trump:
            best, best_card = i, card
    return best


@dataclass(frozen=True, slots=True)
class Position:
    """A deal in play with all hands open, in the solver's terms.

    Positions ``0..n-1`` are the seats in play in clockwise order (``seats[p]`` is the
    session seat of position ``p``). ``hands`` are bitmasks of the unplayed cards;
    ``trick`` the card indices already played to the current trick, starting with
    ``leader``'s. ``trump`` is a suit or ``NO_TRUMP``; ``trump_pending`` means the
    declarer's next card is the first of the deal and will choose trump. ``target`` is
    the contract's tricks (0 for a misère) and ``won`` the declarer's tricks so far.
    """

    seats: tuple[int, ...]
    hands: tuple[int, ...]
    declarer: int
    leader: int
    trick: tuple[int, ...]
    trump: int
    trump_pending: bool
    misere: bool
    target: int
    won: int

    @property
    def to_act(self) -> int:
        """The position to play next."""
        return (self.leader + len(self.trick)) % len(self.seats)

    @property
    def tricks_left(self) -> int:
        """Tricks still to finish, the current one included."""
        return self.hands[self.leader].bit_count() + (1 if self.trick else 0)

    @classmethod
    def from_deal(cls, deal: Deal) -> Position:
        """The position of a deal in play (after the auction, before the end)."""
        contract = deal.contract
        declarer = deal.declarer
        to_act = deal.to_act
        if contract is None or declarer is None or to_act is None or deal.over:
            msg = "a position needs a deal in play (a declarer, a contract, a seat to act)"
            raise ValueError(msg)
        plays = [(seat, card.index) for seat, card in deal.trick]
        return cls._build(
            order=deal.order,
            hands={seat: mask_of(deal.hands[seat]) for seat in deal.order},
            declarer=declarer,
            to_act=to_act,
            plays=plays,
            trump=deal.trump,
            first_card=not deal.tricks and not plays,
            misere=contract.misere,
            target=contract.tricks,
            won=deal.tricks_won[declarer],
        )

    @classmethod
    def from_view(cls, view: SeatView, profile: Profile, others: Mapping[int, Iterable[Card]]) -> Position:
        """The position seen by ``view`` if the other seats in play held ``others`` (a guess)."""
        if view.contract is None or view.declarer is None or view.to_act is None:
            msg = "a position needs a deal in play (a declarer, a contract, a seat to act)"
            raise ValueError(msg)
        contract = profile.contract(view.contract)
        hands = {seat: mask_of(cards) for seat, cards in others.items()}
        hands[view.seat] = mask_of(view.hand)
        plays = [(seat, card.index) for seat, card in view.trick]
        return cls._build(
            order=deal_order(view.dealer, view.seats_in_play, view.table_size),
            hands=hands,
            declarer=view.declarer,
            to_act=view.to_act,
            plays=plays,
            trump=view.trump,
            first_card=not view.tricks and not plays,
            misere=contract.misere,
            target=contract.tricks,
            won=view.tricks_won[view.declarer],
        )

    @classmethod
    def opening(
        cls,
        order: Sequence[int],
        hands: Mapping[int, int],
        *,
        declarer: int,
        target: int,
        misere: bool,
    ) -> Position:
        """The position before the declarer's first lead (for bidding: which lead is best)."""
        return cls._build(
            order=order,
            hands=hands,
            declarer=declarer,
            to_act=declarer,
            plays=[],
            trump=None,
            first_card=True,
            misere=misere,
            target=target,
            won=0,
        )

    @classmethod
    def _build(  # noqa: PLR0913 - one place that turns seats into positions
        cls,
        *,
        order: Sequence[int],
        hands: Mapping[int, int],
        declarer: int,
        to_act: int,
        plays: Sequence[tuple[int, int]],
        trump: Suit | None,
        first_card: bool,
        misere: bool,
        target: int,
        won: int,
    ) -> Position:
        position_of = {seat: p for p, seat in enumerate(order)}
        leader_seat = plays[0][0] if plays else to_act
        trump_suit = NO_TRUMP if trump is None else int(trump)
        return cls(
            seats=tuple(order),
            hands=tuple(hands[seat] for seat in order),
            declarer=position_of[declarer],
            leader=position_of[leader_seat],
            trick=tuple(card for _, card in plays),
            trump=trump_suit,
            trump_pending=first_card and not misere,
            misere=misere,
            target=target,
            won=won,
        )


class SearchAbortedError(RuntimeError):
    """A query went past the solver's node limit; the solver stays usable (and keeps what it learnt)."""


class Solver:
    """Solves one position; queries share one transposition table.

    ``node_limit`` bounds the trick boundaries visited over the solver's life, and
    ``deadline`` the time (looked at every ``_CHECK_EVERY`` boundaries): a query that
    would pass either raises :class:`SearchAbortedError`, so a bot keeps its time budget.
    Not thread-safe; queries leave the position as it was.
    """

    __slots__ = (
        "_best",
        "_check_at",
        "_count",
        "_deadline",
        "_declarer",
        "_hands",
        "_led",
        "_misere",
        "_n",
        "_node_limit",
        "_outcomes",
        "_table",
        "_tables",
        "_to_act",
        "_trump",
        "nodes",
        "position",
    )

    def __init__(
        self, position: Position, *, node_limit: int | None = None, deadline: Deadline | None = None
    ) -> None:
        self.position = position
        self._node_limit = node_limit if node_limit is not None else 1 << 62
        self._deadline = deadline
        self._check_at = self._node_limit if deadline is None else min(self._node_limit, _CHECK_EVERY)
        self._n = len(position.seats)
        self._declarer = position.declarer
        self._misere = position.misere
        self._hands = list(position.hands)
        self._trump = position.trump
        self._tables: dict[int, dict[tuple[int, ...], list[int]]] = {}
        self._table = self._tables.setdefault(self._trump, {})
        trick = position.trick
        self._count = len(trick)
        self._to_act = position.to_act
        if trick:
            best = trick_leader_wins(trick, self._trump)
            self._best = ((position.leader + best) % self._n, trick[best])
            self._led = SUIT_OF[trick[0]]
        else:
            self._best = (position.leader, -1)
            self._led = NO_TRUMP
        self._outcomes: dict[tuple[int, int], bool] = {}
        self.nodes = 0
        """Trick boundaries searched (a measure of work)."""

    # ------------------------------------------------------------------ queries

    def legal(self) -> list[int]:
        """The legal card indices of the position to act, in pack order."""
        hand = self._hands[self._to_act]
        legal = hand & SUIT_MASKS[self._led] if self._led >= 0 else 0
        return _bits(legal or hand)

    def reaches(self, need: int) -> bool:
        """Whether the declarer takes at least ``need`` more tricks with best play by both sides.

        "Best" is the contract's: in a misère the declarer tries to take as few as possible.
        """
        return self._root(need, None)

    def can_make(self) -> bool:
        """Whether the contract is made with best play from here."""
        return self._made(self._root(self._need(), None))

    def makes_after(self, card: int) -> bool:
        """Whether the contract is made with best play after ``card`` (a legal card index)."""
        return self._made(self._root(self._need(), card))

    def tricks(self) -> int:
        """The declarer's total tricks in the deal with best play by both sides."""
        return self.position.won + self._value(None)

    def tricks_after(self, card: int) -> int:
        """:meth:`tricks` once the position to act has played ``card``."""
        return self.position.won + self._value(card)

    # ------------------------------------------------------------------ roots

    def _need(self) -> int:
        return 1 if self._misere else self.position.target - self.position.won

    def _made(self, reached: bool) -> bool:  # noqa: FBT001 - a search result
        if self._misere:
            return not reached and self.position.won == 0
        return reached

    def _value(self, card: int | None) -> int:
        """The declarer's further tricks: null windows stepping out from the contract's."""
        left = self.position.tricks_left
        guess = min(max(self._need(), 1), left)
        if self._root(guess, card):
            value = guess
            while value < left and self._root(value + 1, card):
                value += 1
            return value
        value = guess - 1
        while value > 0 and not self._root(value, card):
            value -= 1
        return value

    def _root(self, need: int, card: int | None) -> bool:
        if need <= 0:
            return True
        if need > self.position.tricks_left:
            return False
        if card is None:
            maximizer = (self._to_act == self._declarer) != self._misere
            for move in self._root_moves():
                if self._root(need, move) == maximizer:
                    return maximizer
            return not maximizer
        if card not in self.legal():
            msg = f"{CARDS[card]} is not a legal card for the seat to act"
            raise ValueError(msg)
        key = (self._root_representative(card), need)
        found = self._outcomes.get(key)
        if found is None:
            try:
                found = self._after(card, need)
            except SearchAbortedError:
                self._hands = list(self.position.hands)  # the search left mid-trick
                raise
            self._outcomes[key] = found
        return found

    def _root_moves(self) -> list[int]:
        live = 0
        for hand in self._hands:
            live |= hand
        for card in self.position.trick:
            live |= 1 << card
        hand = self._hands[self._to_act]
        legal = hand & SUIT_MASKS[self._led] if self._led >= 0 else 0
        return _representatives(legal or hand, hand, live)

    def _root_representative(self, card: int) -> int:
        """The top of ``card``'s run of equivalent cards in the hand to act."""
        hand = self._hands[self._to_act]
        live = hand
        for other in self._hands:
            live |= other
        for played in self.position.trick:
            live |= 1 << played
        while True:
            higher = live & SUIT_MASKS[SUIT_OF[card]] & ~((2 << card) - 1)
            step = higher & -higher
            if not step & hand:
                return card
            card = step.bit_length() - 1

    def _after(self, card: int, need: int) -> bool:
        """Play ``card`` at the root and search on (the root may choose trump)."""
        position = self.position
        hands = self._hands
        pos = self._to_act
        bit = 1 << card
        live = 0
        for hand in hands:
            live |= hand
        for played in position.trick:
            live |= 1 << played
        saved_trump, saved_table = self._trump, self._table
        count = self._count
        best_pos, best_card = self._best
        led = self._led
        if count == 0:
            if position.trump_pending:
                self._trump = SUIT_OF[card]
                self._table = self._tables.setdefault(self._trump, {})
            best_pos, best_card, led = pos, card, SUIT_OF[card]
        elif (SUIT_OF[card] == SUIT_OF[best_card] and card > best_card) or (
            SUIT_OF[card] == self._trump and SUIT_OF[best_card] != self._trump
        ):
            best_pos, best_card = pos, card
        hands[pos] ^= bit
        try:
            rem = position.tricks_left
            if count + 1 == self._n:
                won = 1 if best_pos == self._declarer else 0
                return self._trick(best_pos, need - won, rem - 1)
            nxt = pos + 1 if pos + 1 < self._n else 0
            return self._play(nxt, count + 1, best_pos, best_card, led, live, need, rem)
        finally:
            hands[pos] ^= bit
            self._trump, self._table = saved_trump, saved_table

    # ------------------------------------------------------------------ the search

    def _trick(self, leader: int, need: int, rem: int) -> bool:  # noqa: C901, PLR0911, PLR0912 - hot path: one exit per sure answer
        """At a trick boundary: can the declarer take ``need`` of the ``rem`` tricks left."""
        if need <= 0:
            return True
        if need > rem:
            return False
        hands = self._hands
        self.nodes += 1
        if self.nodes > self._check_at:
            self._checkpoint()
        if rem == 1:
            return self._last_trick(leader)
        key = (leader, *hands)
        bounds = self._table.get(key)
        if bounds is not None:
            if bounds[0] >= need:
                return True
            if bounds[1] < need:
                return False
        live = 0
        for hand in hands:
            live |= hand
        trump = self._trump
        if self._misere and leader != self._declarer:
            quick = self._misere_quick(leader, live, need)
            if quick is not None:
                return quick
        elif trump >= 0 and live & SUIT_MASKS[trump]:
            quick = self._trump_quick(live & SUIT_MASKS[trump], need, rem)
            if quick is not None:
                return quick
        result = self._play(leader, 0, leader, -1, NO_TRUMP, live, need, rem)
        if bounds is None:
            bounds = self._table[key] = [0, rem]
        if result:
            bounds[0] = max(bounds[0], need)
        else:
            bounds[1] = min(bounds[1], need - 1)
        return result

    def _checkpoint(self) -> None:
        """Past the node limit or the deadline: abort; else look again ``_CHECK_EVERY`` boundaries on."""
        deadline = self._deadline
        if self.nodes > self._node_limit or (deadline is not None and deadline.passed()):
            raise SearchAbortedError(self.nodes)
        self._check_at = min(self._node_limit, self.nodes + _CHECK_EVERY)

    def _trump_quick(self, trumps: int, need: int, rem: int) -> bool | None:
        """Sure answers from master trumps, else None.

        The top run of live trumps held by one hand wins one trick per card, whatever is led.
        """
        hands = self._hands
        top = 1 << (trumps.bit_length() - 1)
        holder = 0
        while not hands[holder] & top:
            holder += 1
        run = 0
        held = hands[holder]
        while top & held:
            run += 1
            trumps ^= top
            if not trumps:
                break
            top = 1 << (trumps.bit_length() - 1)
        if holder == self._declarer:
            return True if run >= need else None
        return False if rem - run < need else None

    def _misere_quick(self, leader: int, live: int, need: int) -> bool | None:
        """Sure answers in a misère when a defender leads (no trumps), else None.

        The declarer never leads again unless it wins a trick. It is safe for good when,
        in every suit it holds, each card the defenders hold is higher than all of its
        own. It must win this trick when the leader holds a suit in which the declarer's
        lowest card beats every other card still out.
        """
        declared = self._hands[self._declarer]
        others = live & ~declared
        leading = self._hands[leader]
        safe = True
        for mask in SUIT_MASKS:
            mine = declared & mask
            if not mine:
                continue
            theirs = others & mask
            if theirs and (theirs & -theirs) < mine:
                safe = False
                if need == 1 and leading & mask and (mine & -mine) > theirs:
                    return True
        return False if safe else None

    def _last_trick(self, leader: int) -> bool:
        """Whether the declarer wins the last trick (every hand holds one card)."""
        hands = self._hands
        n = self._n
        trump = self._trump
        best_card = hands[leader].bit_length() - 1
        best_pos = leader
        pos = leader
        for _ in range(n - 1):
            pos = pos + 1 if pos + 1 < n else 0
            card = hands[pos].bit_length() - 1
            if (SUIT_OF[card] == SUIT_OF[best_card] and card > best_card) or (
                SUIT_OF[card] == trump and SUIT_OF[best_card] != trump
            ):
                best_pos, best_card = pos, card
        return best_pos == self._declarer

    def _play(  # noqa: PLR0913, PLR0917, PLR0912 - the hot path: the trick in progress kept in locals
        self,
        pos: int,
        count: int,
        best_pos: int,
        best_card: int,
        led: int,
        live: int,
        need: int,
        rem: int,
    ) -> bool:
        """Position ``pos`` plays the ``count``-th card of the trick: the result for the maximizer."""
        hands = self._hands
        hand = hands[pos]
        declarer = self._declarer
        maximizer = (pos == declarer) != self._misere
        trump = self._trump
        if count:
            legal = hand & SUIT_MASKS[led] or hand
            moves = _representatives(legal, hand, live)
            if len(moves) > 1:
                if self._misere:
                    moves = _order_misere(
                        moves, best_card, declarer=pos == declarer, declarer_winning=best_pos == declarer
                    )
                else:
                    moves = _order_follow(
                        moves, best_card, trump, same_side=(best_pos == declarer) == (pos == declarer)
                    )
        else:
            moves = _representatives(hand, hand, live)
            if not self._misere:
                moves.reverse()
        last = count + 1 == self._n
        nxt = pos + 1 if pos + 1 < self._n else 0
        for card in moves:
            hands[pos] = hand ^ (1 << card)
            suit = SUIT_OF[card]
            if not count:
                bp, bc, ld = pos, card, suit
            else:
                ld = led
                best_suit = SUIT_OF[best_card]
                if (suit == best_suit and card > best_card) or (suit == trump and best_suit != trump):
                    bp, bc = pos, card
                else:
                    bp, bc = best_pos, best_card
            if last:
                result = self._trick(bp, need - 1 if bp == declarer else need, rem - 1)
            else:
                result = self._play(nxt, count + 1, bp, bc, ld, live, need, rem)
            if result == maximizer:
                hands[pos] = hand
                return result
        hands[pos] = hand
        return not maximizer


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _representatives(legal: int, hand: int, live: int) -> list[int]:
    """One card of each run of equivalent legal cards, ascending.

    A card is kept when the next higher card of its suit still in play (``live``: the
    hands and the current trick) is not in ``hand``; otherwise that higher card stands for
    it. The kept card is the top of its run.
    """
    out = []
    while legal:
        low = legal & -legal
        legal ^= low
        card = low.bit_length() - 1
        higher = live & SUIT_MASKS[SUIT_OF[card]] & ~((low << 1) - 1)
        if higher and (higher & -higher) & hand:
            continue
        out.append(card)
    return out


def _order_follow(moves: list[int], best_card: int, trump: int, *, same_side: bool) -> list[int]:
    """Move ordering for a follower: cheap winners first against the other side, else low cards."""
    if same_side:
        return moves
    best_suit = SUIT_OF[best_card]
    winners = []
    losers = []
    for card in moves:
        suit = SUIT_OF[card]
        if (suit == best_suit and card > best_card) or (suit == trump and best_suit != trump):
            winners.append(card)
        else:
            losers.append(card)
    return winners + losers


def _order_misere(moves: list[int], best_card: int, *, declarer: bool, declarer_winning: bool) -> list[int]:
    """Move ordering in a misère.

    The declarer ducks with its highest card that loses; the defenders keep the declarer winning.
    """
    if not declarer and not declarer_winning:
        return moves
    best_suit = SUIT_OF[best_card]
    under = [card for card in moves if SUIT_OF[card] != best_suit or card < best_card]
    over = [card for card in moves if SUIT_OF[card] == best_suit and card > best_card]
    if declarer:
        under.reverse()
    return under + over
