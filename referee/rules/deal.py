"""One deal of Nap: the auction, the tricks (one per card in a hand) and the settlement.

In the pool variants (seed 001's Purchase, Écarté and Peep Nap) a deal may also have an
exchange round before the auction (:attr:`Phase.EXCHANGE`) and the declarer's widow
decision after it (:attr:`Phase.WIDOW`); the fees paid for exchanges and peeps are
reported as :class:`ChipsPaid` events and the session keeps the pool.

``Deal`` is mutable for speed (a search may play thousands of deals a second) and cheap to
copy: ``deal.copy()`` branches a search. There is one transition, :meth:`Deal.apply`,
which checks the action, changes the state and returns the events it caused. Chance
enters only as the deck order given to the constructor (an order of the profile's pack,
52 cards or a short pack), so a deal replays exactly from its record (deck, dealer, seats
in play, actions).

Seats are session seats (0..n-1 clockwise). Seats that are not in play (eliminated in a
finite-chip profile) get no cards and are skipped.

The deck is dealt from the top: the hands by the profile's ``deal_pattern``, then the
widow (one card, when the profile has one), then the undealt stock, from which exchanges
draw from the top.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from itertools import combinations
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Final, NoReturn, TypeVar, assert_never

from referee.rules.actions import (
    BID_NAMES,
    DECLINE_EXCHANGE,
    DECLINE_WIDOW,
    PASS,
    PEEP,
    Action,
    Bid,
    Exchange,
    Peep,
    Penalty,
    TakeWidow,
)
from referee.rules.cards import CARDS, Card, Suit, pack_of
from referee.rules.errors import RulesError
from referee.rules.events import (
    AllPassed,
    AuctionWon,
    BidMade,
    CardPlayed,
    CardsExchanged,
    ChipsPaid,
    DealSettled,
    Event,
    Penalized,
    TrickWon,
    TrumpChosen,
    WidowPeeked,
    WidowTaken,
)
from referee.rules.profiles import pack_shortfall

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from referee.rules.profiles import Contract, Profile

_BY_INDEX: Final = attrgetter("index")
_T = TypeVar("_T")


class Phase(Enum):
    """Where a deal stands.

    In order: the exchange round (only in profiles with ``exchange_max``), the auction,
    the declarer's widow decision (only in profiles with a widow, and only when someone
    declared), the play, and the end.
    """

    EXCHANGE = "exchange"
    BIDDING = "bidding"
    WIDOW = "widow"
    PLAY = "play"
    OVER = "over"

    def __str__(self) -> str:
        return self.value


_EXCHANGE: Final = Phase.EXCHANGE
_BIDDING: Final = Phase.BIDDING
_WIDOW: Final = Phase.WIDOW
_PLAY: Final = Phase.PLAY
_OVER: Final = Phase.OVER
_NOBODY: Final = -1
"""``Deal._to_act`` once the deal is over: a seat number, so that every read is an ``int``."""
_ZEROS: Final = tuple((0,) * size for size in range(53))
"""``(0,) * n`` for each table size: per-seat counts before anything happened."""
_EMPTIES: Final = tuple(((),) * size for size in range(53))
"""``((),) * n`` for each table size: per-seat cards before anything happened."""

# Events are values, so the ones that carry no history are made once and shared, each in
# a tuple of its own: all the events of most plays and bids.
_CARD_PLAYED: Final = tuple(tuple((CardPlayed(seat, card),) for card in CARDS) for seat in range(10))
_TRUMP_CHOSEN: Final = tuple((TrumpChosen(suit),) for suit in Suit)
_BID_MADE: Final = tuple({Bid(name): (BidMade(seat, Bid(name)),) for name in BID_NAMES} for seat in range(10))


class IllegalActionError(RulesError):
    """An action that the rules forbid here; the message says exactly why."""


_Taker = Callable[[tuple[Card, ...]], tuple[Card, ...]]
_Seating = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[_Taker, ...]]


class Ladder:
    """What a profile's deals have in common, worked out once and kept on the profile (``_ladder``).

    The pack, the legal bids after each highest bid, the events that end an auction, and
    how each seating deals the cards.
    """

    __slots__ = (
        "after",
        "auction_won",
        "by_bid",
        "contracts",
        "deal_pattern",
        "first_phase",
        "pack",
        "pack_cards",
        "seatings",
    )

    def __init__(self, profile: Profile) -> None:
        self.deal_pattern = tuple(profile.deal_pattern)
        self.seatings: dict[tuple[int, tuple[int, ...] | None, int], _Seating] = {}
        """:func:`_seating` for each dealer, seats in play and table size met so far."""
        self.first_phase = _EXCHANGE if profile.exchange_max else _BIDDING
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
        names = [c.name for c in self.contracts]
        self.auction_won = tuple(tuple(AuctionWon(seat, name) for name in names) for seat in range(10))
        """The event for each declarer seat and rank on the ladder (events are values: made once)."""


def _ladder(profile: Profile) -> Ladder:
    """The profile's ladder, made by its first deal and kept on the profile (its owner)."""
    ladder = profile._ladder  # noqa: SLF001 - the profile's cache slot for the engine
    if not isinstance(ladder, Ladder):  # None until the profile's first deal
        ladder = Ladder(profile)
        object.__setattr__(profile, "_ladder", ladder)
    return ladder


def _seating(ladder: Ladder, dealer: int, seats: Sequence[int] | None, table_size: int) -> _Seating:
    """Seats in play (sorted), their clockwise order from the dealer's left, each one's next seat, and more.

    The last: per table seat, a function from the deck to the cards it is dealt by the
    profile's deal pattern (none for a seat not in play).
    """
    key = (dealer, None if seats is None else tuple(seats), table_size)
    found = ladder.seatings.get(key)
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
        dealt: list[list[int]] = [[] for _ in range(table_size)]
        top = 0
        for count in ladder.deal_pattern:
            for seat in order:
                dealt[seat] += range(top, top + count)
                top += count
        found = ladder.seatings[key] = (in_play, order, tuple(nxt), tuple(map(_taker, dealt)))
    return found


def _taker(spots: list[int]) -> _Taker:
    """The function from a deck to its cards at ``spots``, in C when there are two or more."""
    if len(spots) > 1:
        return itemgetter(*spots)
    return lambda deck: tuple(deck[spot] for spot in spots)


def _refuse_table(profile: Profile, table_size: int) -> NoReturn:
    if table_size < 2:
        msg = f"table size {table_size}: a deal needs at least 2 seats"
        raise RulesError(msg)
    msg = f"{profile.name}: {pack_shortfall(profile, table_size)}"
    raise RulesError(msg)


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


_COPIED: Final = (
    "profile",
    "table_size",
    "dealer",
    "deck",
    "seats",
    "order",
    "widow",
    "_next",
    "_ladder",
    "_in_play",
    "_legal",
    "over",
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
    "_stock",
    "_stacks",
    "_fees",
    "_exchanged",
    "_drawn",
    "_discarded",
    "_peeked",
    "_widow_taken",
)
"""What :meth:`Deal.copy` shares with the original: values that are replaced, never changed."""


class Deal:
    """The state of one deal. Build it from a deck order, or with :meth:`from_hands`."""

    __slots__ = (
        "_actions",
        "_bids",
        "_contract",
        "_declarer",
        "_discarded",
        "_drawn",
        "_exchanged",
        "_fees",
        "_high",
        "_in_play",
        "_ladder",
        "_led",
        "_legal",
        "_next",
        "_payments",
        "_peeked",
        "_phase",
        "_speakers_left",
        "_stacks",
        "_stock",
        "_to_act",
        "_trick",
        "_tricks",
        "_trump",
        "_widow_taken",
        "_won",
        "dealer",
        "deck",
        "hands",
        "order",
        "over",
        "profile",
        "seats",
        "table_size",
        "widow",
    )

    def __init__(  # noqa: PLR0913 - the deal's facts, keywords
        self,
        profile: Profile,
        *,
        deck: Sequence[Card],
        dealer: int,
        table_size: int,
        seats: Sequence[int] | None = None,
        stacks: Sequence[int] | None = None,
    ) -> None:
        """Deal from ``deck`` (top card first) by the profile's ``deal_pattern`` from the dealer's left.

        ``deck`` is an order of the profile's pack (52 cards, or a short pack; with
        ``pack_sizes``, the pack of a table of ``table_size``: the deal plays
        ``profile.at_table(table_size)``, its :attr:`profile`). The pattern
        is 3 then 2 cards to each seat in play for five-card hands, 4 then 3 for seven.
        ``seats`` are the seats in play (all of ``range(table_size)`` by default); the
        dealer need not be one of them. The next card is the widow when the profile has
        one; the cards left over are the undealt stock, hidden, out of play unless
        exchanges draw them (from the top).

        ``stacks``: the chips each seat can pay (per table seat) in a profile with fees
        (exchanges, peeps); None, the default, for unlimited. The session gives its
        seats' stacks when the profile has finite chips.
        """
        if profile.pack_sizes:
            profile = profile.at_table(table_size)
        ladder = _ladder(profile)
        if table_size < 2 or table_size * profile.hand_size + profile.widow > len(ladder.pack):
            _refuse_table(profile, table_size)
        if len(deck) != len(ladder.pack) or ladder.pack_cards.difference(deck):  # all there, so each once
            _refuse_deck(profile, deck)
        self.profile = profile
        self.table_size = table_size
        self.dealer = dealer
        self.deck = deck = tuple(deck)
        self.seats, self.order, self._next, dealt = _seating(ladder, dealer, seats, table_size)
        self.hands = [sorted(take(deck), key=_BY_INDEX) for take in dealt]
        top = len(self.order) * profile.hand_size
        self.widow: Card | None = None
        """The widow card in a profile with one (face down: only views decide who sees it)."""
        if profile.widow:
            self.widow = deck[top]
            top += 1
        self._stock = top
        if stacks is not None and len(stacks) != table_size:
            msg = f"stacks: one per seat of the table ({table_size}), not {len(stacks)}"
            raise ValueError(msg)
        self._stacks = None if stacks is None else tuple(stacks)
        self._fees: tuple[int, ...] = _ZEROS[table_size]
        self._exchanged: tuple[int, ...] = self._fees
        self._drawn: tuple[tuple[Card, ...], ...] = _EMPTIES[table_size]
        self._discarded: tuple[tuple[Card, ...], ...] = self._drawn
        self._peeked: tuple[int, ...] = ()
        self._widow_taken: bool | None = None
        self._ladder = ladder
        self._phase = ladder.first_phase
        self.over = False
        """Whether the deal has ended (settled)."""
        self._legal: tuple[Action, ...] | None = None
        """``legal_actions()`` once asked for, until the next action."""
        self._to_act = self.order[0]  # _NOBODY once it is over (to_act says None)
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
    def from_hands(  # noqa: PLR0913 - the deal's facts and the guesses, keywords
        cls,
        profile: Profile,
        hands: Mapping[int, Iterable[Card]],
        *,
        dealer: int,
        table_size: int,
        widow: Card | None = None,
        stock: Iterable[Card] = (),
        stacks: Sequence[int] | None = None,
    ) -> Deal:
        """A deal in which each seat of ``hands`` holds exactly those cards (for search).

        A deck order that deals these hands is built, so the result has a record like
        any other deal. In a profile with a widow, ``widow`` is that card (by default the
        first card of the pack that nobody holds). The undealt stock starts with
        ``stock`` (top first), then the rest of the profile's pack in pack order. Every
        card given must be of that pack (the table's, with ``pack_sizes``). ``stacks`` as
        for the constructor.
        """
        profile = profile.at_table(table_size)
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
        pack = _ladder(profile).pack
        stock = list(stock)
        if profile.widow:
            held = {*deck, *stock}
            deck.append(widow if widow is not None else next(card for card in pack if card not in held))
        elif widow is not None:
            msg = f"there is no widow in the {profile.name} rules"
            raise ValueError(msg)
        deck.extend(stock)
        held = set(deck)
        deck.extend(card for card in pack if card not in held)
        return cls(profile, deck=deck, dealer=dealer, table_size=table_size, seats=seats, stacks=stacks)

    def copy(self) -> Deal:
        """An independent copy: applying actions to it leaves this deal unchanged."""
        twin = object.__new__(Deal)
        for name in _COPIED:
            object.__setattr__(twin, name, getattr(self, name))
        twin.hands = [hand.copy() for hand in self.hands]
        twin._actions = self._actions.copy()
        return twin

    # ----------------------------------------------------------------- reading

    @property
    def phase(self) -> Phase:
        """Exchange, bidding, widow, play, or over."""
        return self._phase

    @property
    def to_act(self) -> int | None:
        """The seat whose decision the deal waits for; None once it is over."""
        return None if self.over else self._to_act

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
    def stock(self) -> tuple[Card, ...]:
        """The undealt stock still face down, top first (exchanges draw from it)."""
        return self.deck[self._stock :]

    @property
    def stacks(self) -> tuple[int, ...] | None:
        """Chips each seat can still pay this deal (None: unlimited)."""
        return self._stacks

    @property
    def fees(self) -> tuple[int, ...]:
        """Chips each seat paid into the pool this deal (exchanges and peeps)."""
        return self._fees

    @property
    def exchanged(self) -> tuple[int, ...]:
        """Cards each seat exchanged this deal (0: declined, or not yet)."""
        return self._exchanged

    @property
    def drawn(self) -> tuple[tuple[Card, ...], ...]:
        """Per seat, the cards it drew from the stock this deal (pack order). Hidden: for views only."""
        return self._drawn

    @property
    def discarded(self) -> tuple[tuple[Card, ...], ...]:
        """Per seat, the cards it gave up this deal: its exchange (pack order), then for the widow.

        Face down, out of play: a view shows a seat its own only.
        """
        return self._discarded

    @property
    def peeked(self) -> tuple[int, ...]:
        """The seats that paid to look at the widow this deal, in order."""
        return self._peeked

    @property
    def widow_taken(self) -> bool | None:
        """Whether the declarer took the widow; None until it decided (or without a widow)."""
        return self._widow_taken

    @property
    def actions(self) -> tuple[Action, ...]:
        """Every action applied so far: with deck, dealer and seats, the deal's whole record."""
        return tuple(self._actions)

    @property
    def action_count(self) -> int:
        """How many actions have been applied: ``len(actions)`` without copying them."""
        return len(self._actions)

    def legal_actions(self) -> tuple[Action, ...]:
        """What the seat to act may do, sorted.

        Bidding: pass and the bids up the ladder, then :data:`PEEP` when the seat may still
        peep and can pay. Play: cards by suit and rank. Exchange: declining first, then
        every set of cards it may give up, fewest first, each set and the sets of one size
        in pack order. Widow: declining first, then giving up each card of the hand.

        Asked again before the next action, it gives the same tuple without working it out.
        """
        legal = self._legal
        if legal is None:
            if self._phase is _PLAY:
                hand = self.hands[self._to_act]
                led = self._led
                follow = []
                if led is not None:
                    for card in hand:  # a comprehension costs twice this (a function and a cell per call)
                        if card.suit is led:
                            follow.append(card)  # noqa: PERF401
                legal = tuple(follow or hand)
            else:
                legal = self._choices()
            self._legal = legal
        return legal

    def _choices(self) -> tuple[Action, ...]:
        """The legal actions outside the play."""
        if self.over:
            return ()
        seat = self._to_act
        phase = self._phase
        if phase is _BIDDING:
            bids = self._ladder.after[self._high + 1]
            if self.widow is not None and self._may_peep(seat):
                return (*bids, PEEP)
            return bids
        return self._exchanges(seat) if phase is _EXCHANGE else self._widow_choices(seat)

    def _may_peep(self, seat: int) -> bool:
        return self._peep_refusal(seat) is None

    def _exchanges(self, seat: int) -> tuple[Action, ...]:
        """Declining, then each set of cards ``seat`` may give up (sizes :meth:`_exchange_refusal` allows)."""
        hand = self.hands[seat]
        legal: list[Action] = []
        for size in range(len(hand) + 1):
            if self._exchange_refusal(seat, size) is None:
                legal.extend(map(Exchange, combinations(hand, size)) if size else (DECLINE_EXCHANGE,))
        return tuple(legal)

    # The pool variants' fees: one rule each, read both by legal_actions() (what is offered)
    # and by check() (what is accepted, and why not), so the two cannot disagree.

    def _exchange_refusal(self, seat: int, count: int) -> str | None:
        """Why ``seat`` may not give up ``count`` cards now (None: it may).

        Declining (``count`` 0) is never refused: it needs no stock and costs nothing.
        """
        most = self.profile.exchange_max
        if count > most:
            return f"a purchase exchanges at most {most} card{'s' if most != 1 else ''}"
        left = len(self.deck) - self._stock
        if count > left:
            return f"the stock holds only {left} card{'s' if left != 1 else ''}"
        return self._payment_refusal(seat, self.profile.exchange_cost(count))

    def _peep_refusal(self, seat: int) -> str | None:
        """Why ``seat`` may not peep at the widow now (None: it may)."""
        if self.widow is None:
            return f"there is no widow to peep at in the {self.profile.name} rules"
        if seat in self._peeked:
            return "already peeped this deal"
        return self._payment_refusal(seat, self.profile.peep_fee)

    def _payment_refusal(self, seat: int, amount: int) -> str | None:
        """Why ``seat`` cannot pay ``amount`` chips into the pool (None: it can).

        A seat pays only what its stack holds; nothing costs nothing, whatever the stack
        (even one below zero, as a deal built from guessed stacks may give).
        """
        stacks = self._stacks
        if not amount or stacks is None or amount <= stacks[seat]:
            return None
        return f"cannot pay {amount} chip{'s' if amount != 1 else ''}: {max(stacks[seat], 0)} left"

    def _widow_choices(self, seat: int) -> tuple[Action, ...]:
        return (DECLINE_WIDOW, *(TakeWidow(card) for card in self.hands[seat]))

    def check(self, action: Action, *, seat: int | None = None) -> None:
        """Raise :class:`IllegalActionError` saying why ``action`` (by ``seat``) is not legal now."""
        if isinstance(action, Penalty):
            self._check_penalty(action)
            return
        phase = self._phase
        if phase is _OVER:
            msg = "the deal is over"
            raise IllegalActionError(msg)
        to_act = self._to_act
        if seat is not None and seat != to_act:
            if isinstance(action, TakeWidow) and self.widow is not None:
                msg = "the widow is the declarer's to take"
                raise IllegalActionError(msg)
            msg = f"not your turn: seat {to_act} to act"
            raise IllegalActionError(msg)
        if phase is _BIDDING:
            self._check_bid(action)
        elif phase is _PLAY:
            self._check_card(action)
        elif phase is _EXCHANGE:
            self._check_exchange(action)
        else:
            self._check_widow(action)

    def _check_exchange(self, action: Action) -> None:
        if not isinstance(action, Exchange):
            msg = f"the exchange is on: give up cards or decline (exchange:none), not {action}"
            raise IllegalActionError(msg)
        cards = action.cards
        seat = self._to_act
        hand = self.hands[seat]
        for index, card in enumerate(cards):
            if card in cards[:index]:
                msg = f"a card given up twice: {card}"
                raise IllegalActionError(msg)
            if card not in hand:
                msg = f"card not in hand: {card}"
                raise IllegalActionError(msg)
        refusal = self._exchange_refusal(seat, len(cards))
        if refusal is not None:
            raise IllegalActionError(refusal)

    def _check_widow(self, action: Action) -> None:
        if not isinstance(action, TakeWidow):
            msg = f"the declarer takes the widow or declines (widow:none), not {action}"
            raise IllegalActionError(msg)
        if action.card is not None and action.card not in self.hands[self._to_act]:
            msg = f"card not in hand: {action.card}"
            raise IllegalActionError(msg)

    def _check_peep(self) -> None:
        refusal = self._peep_refusal(self._to_act)
        if refusal is not None:
            raise IllegalActionError(refusal)

    def _check_bid(self, action: Action) -> None:
        if action is PEEP:
            self._check_peep()
            return
        if not isinstance(action, Bid):
            peep = ", or peep" if self.widow is not None else ""
            msg = f"the auction is on: bid or pass{peep}, not {action}"
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
        hand = self.hands[self._to_act]
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
        """Check ``action`` for the seat to act (or a referee's penalty), apply it, return the events.

        One of the legal actions last asked for needs no other check. It is found by
        identity: telling two cards apart with ``==`` goes through their Python ordering
        methods, many times slower; an equal action that is not identical is checked.
        """
        legal = self._legal
        self._legal = None
        for offered in legal or ():
            if offered is action:
                break
        else:
            self.check(action)
        # A checked action's exact class names its transition (the phase allows one class,
        # or bids and the peep in the auction, or the referee's penalty in the play). The
        # classes are final, so type() narrows both ways; it costs less than match/case,
        # at one test per action of every deal.
        if type(action) is Card:
            return self._play(action)
        if type(action) is Bid:
            return self._bid(action)
        if type(action) is Exchange:
            return self._exchange(action)
        if type(action) is TakeWidow:
            return self._take_widow(action)
        if type(action) is Peep:
            return self._peep()
        if type(action) is Penalty:
            return self._penalize(action.seat)
        assert_never(action)

    def _declared(self) -> tuple[int, Contract]:
        """The declarer and its contract: the play (and so a penalty or the last trick) has both."""
        declarer = self._declarer
        contract = self._contract
        if declarer is None or contract is None:
            msg = "no declared contract: the auction is not over, or all passed"
            raise AssertionError(msg)
        return declarer, contract

    def _widow_card(self) -> Card:
        """The widow, which the widow phase (only in a profile with one) may give the declarer."""
        widow = self.widow
        if widow is None:
            msg = f"there is no widow in the {self.profile.name} rules"
            raise AssertionError(msg)
        return widow

    def _pay(self, seat: int, amount: int) -> ChipsPaid:
        fees = list(self._fees)
        fees[seat] += amount
        self._fees = tuple(fees)
        stacks = self._stacks
        if stacks is not None:
            left = list(stacks)
            left[seat] -= amount
            self._stacks = tuple(left)
        return ChipsPaid(seat, amount)

    def _exchange(self, exchange: Exchange) -> tuple[Event, ...]:
        seat = self._to_act
        self._actions.append(exchange)
        given = exchange.cards
        count = len(given)
        events: tuple[Event, ...] = (CardsExchanged(seat, count),)
        if count:
            hand = self.hands[seat]
            for card in given:
                hand.remove(card)
            top = self._stock
            drawn = self.deck[top : top + count]
            self._stock = top + count
            hand += drawn
            hand.sort(key=_BY_INDEX)
            self._exchanged = _with(self._exchanged, seat, count)
            self._drawn = _with(self._drawn, seat, tuple(sorted(drawn, key=_BY_INDEX)))
            self._discarded = _with(self._discarded, seat, given)
            cost = self.profile.exchange_cost(count)
            if cost:
                events += (self._pay(seat, cost),)
        self._speakers_left -= 1
        if self._speakers_left:
            self._to_act = self._next[seat]
        else:
            self._phase = _BIDDING
            self._to_act = self.order[0]
            self._speakers_left = self._in_play
        return events

    def _peep(self) -> tuple[Event, ...]:
        seat = self._to_act
        self._actions.append(PEEP)
        self._peeked += (seat,)
        fee = self.profile.peep_fee
        if fee:
            return (WidowPeeked(seat), self._pay(seat, fee))
        return (WidowPeeked(seat),)

    def _take_widow(self, decision: TakeWidow) -> tuple[Event, ...]:
        seat = self._to_act
        self._actions.append(decision)
        card = decision.card
        if card is not None:
            hand = self.hands[seat]
            hand.remove(card)
            hand.append(self._widow_card())
            hand.sort(key=_BY_INDEX)
            self._discarded = _with(self._discarded, seat, (*self._discarded[seat], card))
        self._widow_taken = card is not None
        self._phase = _PLAY
        return (WidowTaken(seat, card is not None),)

    def _bid(self, bid: Bid) -> tuple[Event, ...]:
        seat = self._to_act
        self._actions.append(bid)
        self._bids += ((seat, bid),)
        if bid is not PASS:
            self._high, self._contract = self._ladder.by_bid[bid]
            self._declarer = seat
        made = _BID_MADE[seat][bid]
        self._speakers_left -= 1
        if self._speakers_left:
            self._to_act = self._next[seat]
            return made
        if self._declarer is None:
            return (*made, AllPassed(), self._settle_zero())
        self._phase = _PLAY if self.widow is None else _WIDOW
        self._to_act = self._declarer
        return (*made, self._ladder.auction_won[self._declarer][self._high])

    def _play(self, card: Card) -> tuple[Event, ...]:
        seat = self._to_act
        hand = self.hands[seat]
        position = 0
        while hand[position] is not card:  # by identity, as in apply (list.remove uses ==)
            position += 1
        del hand[position]
        self._actions.append(card)
        self._trick = trick = (*self._trick, (seat, card))
        played = _CARD_PLAYED[seat][card.index]
        if self._led is None:
            self._led = card.suit
            contract = self._contract  # set once the auction is over, as it is in the play
            if not self._tricks and contract is not None and not contract.misere:
                self._trump = card.suit
                self._to_act = self._next[seat]
                return played + _TRUMP_CHOSEN[card.suit]
        elif len(trick) == self._in_play:
            return played + self._finish_trick()
        self._to_act = self._next[seat]
        return played

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
        declarer, contract = self._declared()
        taken = self._won[declarer]
        made = contract.made(taken)
        return (won, self._settle(declarer, contract, made=made, tricks=taken))

    def _penalize(self, seat: int) -> tuple[Event, ...]:
        self._actions.append(Penalty(seat))
        declarer, contract = self._declared()
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
        self.over = True
        self._to_act = _NOBODY
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
        self.over = True
        self._to_act = _NOBODY
        self._payments = payments
        return DealSettled(declarer, contract.name, tricks, made, payments)

    def __repr__(self) -> str:
        return (
            f"<Deal {self.profile.name} dealer={self.dealer} seats={self.seats} "
            f"{self._phase} to_act={self._to_act} actions={len(self._actions)}>"
        )


def _with(values: tuple[_T, ...], seat: int, value: _T) -> tuple[_T, ...]:
    """``values`` with the entry of ``seat`` replaced."""
    return (*values[:seat], value, *values[seat + 1 :])
