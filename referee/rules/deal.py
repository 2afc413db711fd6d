"""One deal of Nap: the auction, the tricks (one per card in a hand) and the settlement.

``Deal`` is mutable for speed (a search may play thousands of deals a second) and cheap to
copy: ``deal.copy()`` branches a search. There is one transition, :meth:`Deal.apply`,
which checks the action, changes the state and returns the events it caused. Chance
enters only as the deck order given to the constructor (an order of the profile's pack,
52 cards or a short pack), so a deal replays exactly from its record (deck, dealer, seats
in play, actions).

Seats are session seats (0..n-1 clockwise). Seats that are not in play (eliminated in a
finite-chip profile) get no cards and are skipped.
"""

from __future__ import annotations

from enum import Enum
from operator import attrgetter
from typing import TYPE_CHECKING, Final, NoReturn

from referee.rules.actions import BID_NAMES, PASS, Action, Bid, Penalty
from referee.rules.cards import CARDS, Card, Suit, pack_of
from referee.rules.events import (
    AllPassed,
    AuctionWon,
    BidMade,
    CardPlayed,
    DealSettled,
    Event,
    Penalized,
    TrickWon,
    TrumpChosen,
)
from referee.rules.profiles import pack_shortfall

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from referee.rules.profiles import Contract, Profile

_BY_INDEX: Final = attrgetter("index")


class Phase(Enum):
    """Where a deal stands."""

    BIDDING = "bidding"
    PLAY = "play"
    OVER = "over"

    def __str__(self) -> str:
        return self.value


_BIDDING: Final = Phase.BIDDING
_PLAY: Final = Phase.PLAY
_OVER: Final = Phase.OVER

# Events are values, so the ones that carry no history are made once and shared.
_CARD_PLAYED: Final = tuple(tuple(CardPlayed(seat, card) for card in CARDS) for seat in range(10))
_TRUMP_CHOSEN: Final = tuple(TrumpChosen(suit) for suit in Suit)
_BID_MADE: Final = tuple({Bid(name): BidMade(seat, Bid(name)) for name in BID_NAMES} for seat in range(10))


class IllegalActionError(ValueError):
    """An action that the rules forbid here; the message says exactly why."""


class _Ladder:
    """A profile's auction and pack precomputed: the legal bids for each current highest bid."""

    __slots__ = ("after", "by_bid", "contracts", "pack", "pack_cards")

    def __init__(self, profile: Profile) -> None:
        self.pack = pack_of(profile.pack_size)
        self.pack_cards = frozenset(self.pack)
        self.contracts = profile.contracts
        self.by_bid = {Bid(c.name): (i, c) for i, c in enumerate(profile.contracts)}
        after: list[tuple[Bid, ...]] = []
        for high in range(-1, len(profile.contracts)):
            high_name = profile.contracts[high].name if high >= 0 else None
            allowed = [
                Bid(c.name) for c in profile.contracts[high + 1 :] if c.over is None or c.over == high_name
            ]
            after.append((PASS, *allowed))
        self.after = tuple(after)


_LADDERS: dict[int, tuple[Profile, _Ladder]] = {}


def _ladder(profile: Profile) -> _Ladder:
    # Keyed by identity: hashing a profile (every contract's fields) costs more than a deal.
    found = _LADDERS.get(id(profile))
    if found is None or found[0] is not profile:
        found = _LADDERS[id(profile)] = (profile, _Ladder(profile))
    return found[1]


_SEATINGS: dict[
    tuple[int, tuple[int, ...] | None, int],
    tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]],
] = {}


def _seating(
    dealer: int,
    seats: Sequence[int] | None,
    table_size: int,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Seats in play (sorted), their clockwise order from the dealer's left, and each one's next seat."""
    key = (dealer, None if seats is None else tuple(seats), table_size)
    found = _SEATINGS.get(key)
    if found is None:
        in_play = tuple(sorted(range(table_size) if seats is None else set(seats)))
        if not in_play or not set(in_play) <= set(range(table_size)):
            msg = f"seats in play must be seats of the table (0..{table_size - 1})"
            raise ValueError(msg)
        if not 0 <= dealer < table_size:
            msg = f"dealer must be a seat of the table (0..{table_size - 1})"
            raise ValueError(msg)
        order = deal_order(dealer, in_play, table_size)
        nxt = list(range(table_size))
        for i, seat in enumerate(order):
            nxt[seat] = order[(i + 1) % len(order)]
        found = _SEATINGS[key] = (in_play, order, tuple(nxt))
    return found[0], found[1], found[2]


def _refuse_table(profile: Profile, table_size: int) -> NoReturn:
    if table_size < 2:
        msg = f"table size {table_size}: a deal needs at least 2 seats"
        raise ValueError(msg)
    msg = f"{profile.name}: {pack_shortfall(profile, table_size)}"
    raise ValueError(msg)


def _refuse_deck(profile: Profile, deck: Sequence[Card]) -> NoReturn:
    pack = _ladder(profile).pack_cards
    foreign = [card for card in deck if card not in pack]
    if foreign:
        lowest = min(card.rank for card in pack)
        msg = f"{foreign[0]} is not in the {len(pack)}-card pack of {profile.name} (Ace down to {lowest})"
        raise ValueError(msg)
    msg = f"a deck must hold each of the {len(pack)} cards of the {profile.name} pack once"
    raise ValueError(msg)


def deal_order(dealer: int, seats: Sequence[int], table_size: int) -> tuple[int, ...]:
    """Seats in play, clockwise from the dealer's left (eldest hand first, dealer last)."""
    in_play = set(seats)
    return tuple(
        seat for step in range(1, table_size + 1) if (seat := (dealer + step) % table_size) in in_play
    )


class Deal:
    """The state of one deal. Build it from a deck order, or with :meth:`from_hands`."""

    __slots__ = (
        "_actions",
        "_bids",
        "_contract",
        "_declarer",
        "_high",
        "_in_play",
        "_ladder",
        "_led",
        "_next",
        "_payments",
        "_phase",
        "_speakers_left",
        "_to_act",
        "_trick",
        "_tricks",
        "_trump",
        "_won",
        "dealer",
        "deck",
        "hands",
        "order",
        "profile",
        "seats",
        "table_size",
    )

    def __init__(
        self,
        profile: Profile,
        *,
        deck: Sequence[Card],
        dealer: int,
        table_size: int,
        seats: Sequence[int] | None = None,
    ) -> None:
        """Deal from ``deck`` (top card first) by the profile's ``deal_pattern`` from the dealer's left.

        ``deck`` is an order of the profile's pack (52 cards, or a short pack). The pattern
        is 3 then 2 cards to each seat in play for five-card hands, 4 then 3 for seven.
        ``seats`` are the seats in play (all of ``range(table_size)`` by default); the
        dealer need not be one of them. The cards left over stay hidden, out of play.
        """
        ladder = _ladder(profile)
        if table_size < 2 or table_size * profile.hand_size > len(ladder.pack):
            _refuse_table(profile, table_size)
        if len(deck) != len(ladder.pack) or set(deck) != ladder.pack_cards:
            _refuse_deck(profile, deck)
        self.profile = profile
        self.table_size = table_size
        self.dealer = dealer
        self.deck = deck = tuple(deck)
        self.seats, self.order, self._next = _seating(dealer, seats, table_size)
        hands: list[list[Card]] = [[] for _ in range(table_size)]
        top = 0
        for count in profile.deal_pattern:
            for seat in self.order:
                hands[seat] += deck[top : top + count]
                top += count
        for hand in hands:
            hand.sort(key=_BY_INDEX)
        self.hands = hands
        self._ladder = ladder
        self._phase = _BIDDING
        self._to_act: int | None = self.order[0]
        self._speakers_left = self._in_play = len(self.order)
        # What only grows during a deal is kept in tuples, replaced on each change: a view
        # (one per decision) and a copy share them instead of copying them.
        self._bids: tuple[tuple[int, Bid], ...] = ()
        self._high = -1
        self._declarer: int | None = None
        self._contract: Contract | None = None
        self._trump: Suit | None = None
        self._led: Suit | None = None
        self._trick: tuple[tuple[int, Card], ...] = ()
        self._tricks: tuple[TrickWon, ...] = ()
        self._won: tuple[int, ...] = (0,) * table_size
        self._payments: tuple[int, ...] | None = None
        self._actions: list[Action] = []

    # ----------------------------------------------------------------- building

    @classmethod
    def from_hands(
        cls,
        profile: Profile,
        hands: Mapping[int, Iterable[Card]],
        *,
        dealer: int,
        table_size: int,
    ) -> Deal:
        """A deal in which each seat of ``hands`` holds exactly those cards (for search).

        A deck order that deals these hands is built, so the result has a record like
        any other deal; the cards of the profile's pack that nobody holds go to the
        undealt stock in pack order. Every card given must be of that pack.
        """
        seats = sorted(hands)
        order = deal_order(dealer, seats, table_size)
        given = {seat: list(cards) for seat, cards in hands.items()}
        if any(len(h) != profile.hand_size for h in given.values()):
            msg = f"every hand must hold {profile.hand_size} cards"
            raise ValueError(msg)
        deck: list[Card] = []
        for count in profile.deal_pattern:
            for seat in order:
                deck.extend(given[seat][:count])
                del given[seat][:count]
        held = set(deck)
        deck.extend(card for card in _ladder(profile).pack if card not in held)
        return cls(profile, deck=deck, dealer=dealer, table_size=table_size, seats=seats)

    def copy(self) -> Deal:
        """An independent copy: applying actions to it leaves this deal unchanged."""
        twin = object.__new__(Deal)
        for name in (
            "profile",
            "table_size",
            "dealer",
            "deck",
            "seats",
            "order",
            "_next",
            "_ladder",
            "_in_play",
            "_phase",
            "_to_act",
            "_speakers_left",
            "_high",
            "_declarer",
            "_contract",
            "_trump",
            "_led",
            "_payments",
            "_bids",
            "_trick",
            "_tricks",
            "_won",
        ):
            object.__setattr__(twin, name, getattr(self, name))
        twin.hands = [hand.copy() for hand in self.hands]
        twin._actions = self._actions.copy()
        return twin

    # ----------------------------------------------------------------- reading

    @property
    def phase(self) -> Phase:
        """Bidding, play, or over."""
        return self._phase

    @property
    def over(self) -> bool:
        """Whether the deal has ended (settled)."""
        return self._phase is _OVER

    @property
    def to_act(self) -> int | None:
        """The seat whose decision the deal waits for; None once it is over."""
        return self._to_act

    @property
    def bids(self) -> tuple[tuple[int, Bid], ...]:
        """(seat, bid) in the order spoken."""
        return self._bids

    @property
    def declarer(self) -> int | None:
        """The seat that won the auction, once it is over (None if all passed)."""
        return self._declarer

    @property
    def contract(self) -> Contract | None:
        """The contract the declarer must make, once the auction is over."""
        return self._contract

    @property
    def trump(self) -> Suit | None:
        """The trump suit, set by the declarer's first card (None before it and in misère)."""
        return self._trump

    @property
    def trick(self) -> tuple[tuple[int, Card], ...]:
        """The trick being played: (seat, card) in order."""
        return self._trick

    @property
    def tricks(self) -> tuple[TrickWon, ...]:
        """The finished tricks, in order."""
        return self._tricks

    @property
    def tricks_won(self) -> tuple[int, ...]:
        """Tricks taken so far, per seat."""
        return self._won

    @property
    def payments(self) -> tuple[int, ...] | None:
        """Chips per seat once the deal is settled (zero-sum), else None."""
        return self._payments

    @property
    def actions(self) -> tuple[Action, ...]:
        """Every action applied so far: with deck, dealer and seats, the deal's whole record."""
        return tuple(self._actions)

    @property
    def action_count(self) -> int:
        """How many actions have been applied: ``len(actions)`` without copying them."""
        return len(self._actions)

    def legal_actions(self) -> tuple[Action, ...]:
        """What the seat to act may do, sorted (pass and bids up the ladder; cards by suit and rank)."""
        seat = self._to_act
        if seat is None:
            return ()
        if self._phase is _BIDDING:
            return self._ladder.after[self._high + 1]
        hand = self.hands[seat]
        led = self._led
        if led is not None:
            follow = [card for card in hand if card.suit is led]
            if follow:
                return tuple(follow)
        return tuple(hand)

    def check(self, action: Action, *, seat: int | None = None) -> None:
        """Raise :class:`IllegalActionError` saying why ``action`` (by ``seat``) is not legal now."""
        if isinstance(action, Penalty):
            self._check_penalty(action)
            return
        if self._phase is _OVER:
            msg = "the deal is over"
            raise IllegalActionError(msg)
        to_act = self._to_act
        if seat is not None and seat != to_act:
            msg = f"not your turn: seat {to_act} to act"
            raise IllegalActionError(msg)
        if self._phase is _BIDDING:
            self._check_bid(action)
        else:
            self._check_card(action)

    def _check_bid(self, action: Action) -> None:
        if not isinstance(action, Bid):
            msg = f"the auction is on: bid or pass, not {action}"
            raise IllegalActionError(msg)
        if action is PASS:
            return
        entry = self._ladder.by_bid.get(action)
        if entry is None:
            msg = f"{action} is not a contract of the {self.profile.name} rules"
            raise IllegalActionError(msg)
        rank, contract = entry
        high = self._ladder.contracts[self._high] if self._high >= 0 else None
        if contract.over is not None and (high is None or high.name != contract.over):
            over = self.profile.contract(contract.over).label
            msg = f"{contract.label} only over {over}"
            raise IllegalActionError(msg)
        if high is not None and rank <= self._high:
            msg = f"a bid must beat {high.label}"
            raise IllegalActionError(msg)

    def _check_card(self, action: Action) -> None:
        if not isinstance(action, Card):
            msg = f"the play is on: play a card, not {action}"
            raise IllegalActionError(msg)
        hand = self.hands[self._to_act]  # type: ignore[index]
        if action not in hand:
            msg = f"card not in hand: {action}"
            raise IllegalActionError(msg)
        led = self._led
        if led is not None and action.suit is not led and any(c.suit is led for c in hand):
            msg = f"must follow suit: {led.noun}"
            raise IllegalActionError(msg)

    def _check_penalty(self, penalty: Penalty) -> None:
        if self._phase is not _PLAY:
            msg = "a penalty settles a declared contract: only during the play"
            raise IllegalActionError(msg)
        if penalty.seat not in self.order:
            msg = f"seat {penalty.seat} is not in this deal"
            raise IllegalActionError(msg)

    # ----------------------------------------------------------------- the transition

    def apply(self, action: Action) -> tuple[Event, ...]:
        """Check ``action`` for the seat to act (or a referee's penalty), apply it, return the events."""
        phase = self._phase
        if phase is _PLAY and action.__class__ is Card:
            return self._play(action)
        if phase is _BIDDING and action in self._ladder.after[self._high + 1]:
            return self._bid(action)
        self.check(action)
        if isinstance(action, Penalty):
            return self._penalize(action.seat)
        return self._bid(action)  # type: ignore[arg-type]

    def _bid(self, bid: Bid) -> tuple[Event, ...]:
        seat: int = self._to_act  # type: ignore[assignment]
        self._actions.append(bid)
        self._bids += ((seat, bid),)
        if bid is not PASS:
            self._high, self._contract = self._ladder.by_bid[bid]
            self._declarer = seat
        made = _BID_MADE[seat][bid]
        self._speakers_left -= 1
        if self._speakers_left:
            self._to_act = self._next[seat]
            return (made,)
        if self._declarer is None:
            return (made, AllPassed(), self._settle_zero())
        self._phase = _PLAY
        self._to_act = self._declarer
        return (made, AuctionWon(self._declarer, self._contract.name))  # type: ignore[union-attr]

    def _play(self, card: Card) -> tuple[Event, ...]:
        seat: int = self._to_act  # type: ignore[assignment]
        hand = self.hands[seat]
        led = self._led
        if led is not None and card.suit is not led and any(c.suit is led for c in hand):
            self._check_card(card)
        try:
            hand.remove(card)
        except ValueError:
            self._check_card(card)
            raise
        self._actions.append(card)
        self._trick = trick = (*self._trick, (seat, card))
        played = _CARD_PLAYED[seat][card.index]
        if led is None:
            self._led = card.suit
            if not self._tricks and not self._contract.misere:  # type: ignore[union-attr]
                self._trump = card.suit
                self._to_act = self._next[seat]
                return (played, _TRUMP_CHOSEN[card.suit])
        elif len(trick) == self._in_play:
            return (played, *self._finish_trick())
        self._to_act = self._next[seat]
        return (played,)

    def _finish_trick(self) -> tuple[Event, ...]:
        trick = self._trick
        trump = self._trump
        winner, best = trick[0]
        for seat, card in trick:
            if card.suit is best.suit:
                if card.rank > best.rank:
                    winner, best = seat, card
            elif card.suit is trump:
                winner, best = seat, card
        number = len(self._tricks)
        won = TrickWon(number, winner, trick)
        self._tricks += (won,)
        won_by = list(self._won)
        won_by[winner] += 1
        self._won = tuple(won_by)
        self._trick = ()
        self._led = None
        if number + 1 < self.profile.hand_size:
            self._to_act = winner
            return (won,)
        contract: Contract = self._contract  # type: ignore[assignment]
        declarer: int = self._declarer  # type: ignore[assignment]
        taken = self._won[declarer]
        made = contract.made(taken)
        return (won, self._settle(declarer, contract, made=made, tricks=taken))

    def _penalize(self, seat: int) -> tuple[Event, ...]:
        self._actions.append(Penalty(seat))
        declarer: int = self._declarer  # type: ignore[assignment]
        contract: Contract = self._contract  # type: ignore[assignment]
        taken = self._won[declarer]
        if seat == declarer:
            return (Penalized(seat), self._settle(declarer, contract, made=False, tricks=taken))
        payments = [0] * self.table_size
        owed = contract.win * (len(self.order) - 1)
        payments[seat] = -owed
        payments[declarer] = owed
        return (
            Penalized(seat),
            self._close(declarer, contract, made=True, tricks=taken, payments=tuple(payments)),
        )

    def _settle(self, declarer: int, contract: Contract, *, made: bool, tricks: int) -> DealSettled:
        stake = contract.win if made else -contract.lose
        payments = [0] * self.table_size
        for seat in self.order:
            payments[seat] = -stake
        payments[declarer] = stake * (len(self.order) - 1)
        return self._close(declarer, contract, made=made, tricks=tricks, payments=tuple(payments))

    def _settle_zero(self) -> DealSettled:
        self._phase = _OVER
        self._to_act = None
        self._payments = (0,) * self.table_size
        return DealSettled(None, None, 0, None, self._payments)

    def _close(
        self,
        declarer: int,
        contract: Contract,
        *,
        made: bool,
        tricks: int,
        payments: tuple[int, ...],
    ) -> DealSettled:
        self._phase = _OVER
        self._to_act = None
        self._payments = payments
        return DealSettled(declarer, contract.name, tricks, made, payments)

    def __repr__(self) -> str:
        return (
            f"<Deal {self.profile.name} dealer={self.dealer} seats={self.seats} "
            f"{self._phase} to_act={self._to_act} actions={len(self._actions)}>"
        )
