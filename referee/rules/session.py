"""A session: the deals of one sitting under one profile, with balances and winners.

The session deals each deal from its seed (or from given decks when it replays a record),
rotates the deal to the left, keeps the balances, applies seed 001's finite chips
(elimination, or a rebuy of as many starting stakes as bring the seat back with chips)
and tie-break deal where the profile asks for them, and names the winners: the highest
balance, ties sharing the win.

In the pool variants it also keeps the pool: the fees paid for exchanges and peeps come
off the payer's balance at once and go into the pool (so ``sum(balances) + pool == 0`` at
every moment); the next declarer to make the profile's ``pool_claim`` contract or a
higher one takes it all; what is left at the session's end goes back to those who paid
it in, each their own, so a finished session's balances sum to zero.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from referee.rules.actions import Exchange, Peep
from referee.rules.cards import CARDS, Card, shuffled_deck
from referee.rules.deal import Deal
from referee.rules.errors import RulesError
from referee.rules.events import (
    ChipsPaid,
    DealSettled,
    DealStarted,
    Event,
    PoolClaimed,
    PoolReturned,
    SeatEliminated,
    SeatRebought,
    SessionOver,
)
from referee.rules.view import SeatEvent, SeatView, ViewFields, seat_events, view_fields

if TYPE_CHECKING:
    from collections.abc import Sequence

    from referee.rules.actions import Action
    from referee.rules.profiles import Profile

MIN_SEATS_IN_PLAY = 3
"""A session with finite chips ends early when fewer seats than this remain in play."""


def first_dealer(seed: int | str, table_size: int, *, pack: Sequence[Card] = CARDS) -> int:
    """Draw for first dealer: one card to each seat from seat 0; the lowest card deals.

    The cards are drawn from ``pack``, the profile's (a short pack has no low ranks). Ace
    is low for the draw (seed 001); equal ranks are broken by suit, clubs lowest.
    """
    draw = random.Random(f"{seed}/draw").sample(pack, table_size)
    return min(range(table_size), key=lambda seat: (draw[seat].rank.draw_value, draw[seat].suit))


def deal_deck(seed: int | str, number: int, *, pack: tuple[Card, ...] = CARDS) -> tuple[Card, ...]:
    """The deck order of deal ``number`` (from 0) of the session dealt from ``seed``, of ``pack``."""
    return shuffled_deck(f"{seed}/deal/{number}", pack)


class Session:
    """The state of a session; like :class:`Deal`, mutable and driven by :meth:`apply`."""

    def __init__(
        self,
        profile: Profile,
        *,
        table_size: int,
        seed: int,
        dealer: int | None = None,
        decks: Sequence[Sequence[Card]] | None = None,
    ) -> None:
        """Sit ``table_size`` seats and deal the first deal.

        ``seed`` fixes the first dealer (unless ``dealer`` is given) and every deck; with
        ``decks``, deal i uses ``decks[i]`` instead (replaying a record).
        """
        if not profile.min_players <= table_size <= profile.max_players:
            msg = (
                f"{profile.name} is for {profile.min_players} to {profile.max_players} "
                f"players, not {table_size}"
            )
            raise RulesError(msg)
        self.profile = profile = profile.at_table(table_size)
        """The rules this table plays: the profile given, with this table's pack (``pack_sizes``)."""
        self.table_size = table_size
        self.seed = seed
        self.first_dealer = first_dealer(seed, table_size, pack=profile.pack) if dealer is None else dealer
        self._decks = decks
        self.balances: tuple[int, ...] = (0,) * table_size
        """Net chips per seat (a new tuple after each change): the deals settled so far, less
        the fees paid into the pool, plus the pools taken or returned."""
        self.pool = 0
        """Chips in the pool: fees paid and not yet claimed or returned."""
        self.pool_paid: tuple[int, ...] = (0,) * table_size
        """What each seat put into the pool since it was last emptied (it adds up to :attr:`pool`)."""
        self.rebuys = [0] * table_size
        self.in_play = list(range(table_size))
        self.deals: list[Deal] = []
        self.winners: tuple[int, ...] = ()
        """The seats that won, once the session has ended (ties share the win)."""
        self.over = False
        """Whether the session has ended."""
        self._tie_break = False
        self.opening = self._next_deal(self.first_dealer, tuple(self.in_play))
        """The events of the first deal's start (the later ones come from :meth:`apply`)."""

    @property
    def deal(self) -> Deal:
        """The current (or, once the session is over, the last) deal."""
        return self.deals[-1]

    @property
    def to_act(self) -> int | None:
        """The seat to act, or None when the session is over."""
        return None if self.winners else self.deals[-1].to_act

    @property
    def deals_in_session(self) -> int:
        """How many deals the session plays (one more once a tie-break deal is added)."""
        return self.profile.deals_per_session + self._tie_break

    def legal_actions(self) -> tuple[Action, ...]:
        """The legal actions of the seat to act."""
        return () if self.winners else self.deals[-1].legal_actions()

    def check(self, action: Action, *, seat: int | None = None) -> None:
        """Raise IllegalActionError if ``action`` by ``seat`` is not legal now."""
        self.deals[-1].check(action, seat=seat)

    def view(self, seat: int) -> SeatView:
        """What ``seat`` sees now."""
        return SeatView(*self.view_fields(seat))

    def view_fields(self, seat: int, *, legal_actions: tuple[Action, ...] | None = None) -> ViewFields:
        """The fields of :meth:`view`, in order, without building the :class:`SeatView`.

        ``legal_actions``: the seat's legal actions when the caller has them already.
        """
        deals = self.deals
        return view_fields(
            deals[-1],
            seat,
            deal_number=len(deals) - 1,
            deals_in_session=self.profile.deals_per_session + self._tie_break,
            balances=self.balances,
            pool=self.pool,
            legal_actions=legal_actions,
        )

    def tell(self, seat: int, events: Sequence[Event], *, deal: int) -> tuple[SeatEvent, ...]:
        """What ``seat`` is told of ``events``, the events of the last transition (or :attr:`opening`).

        ``deal`` is the number of the deal the transition was applied to (0 for the opening).
        """
        return seat_events(seat, events, deal=deal, deals=self.deals, balances=self.balances)

    def apply(self, action: Action) -> tuple[Event, ...]:
        """Apply the action to the current deal; when the deal ends, move the session on."""
        deal = self.deals[-1]
        events = deal.apply(action)
        kind = action.__class__
        if kind is Exchange or kind is Peep:
            self._collect(events)
        if not deal.over:
            return events
        match events[-1]:  # a deal ends with its settlement
            case DealSettled() as settled:
                return events + self._after_deal(settled)
            case last:
                msg = f"a deal over ends with its settlement, not {last}"
                raise AssertionError(msg)

    def stack(self, seat: int) -> int | None:
        """Chips ``seat`` can pay now: starting chips, plus rebuys, plus its balance (None: unlimited)."""
        start = self.profile.starting_chips
        if start is None:
            return None
        return start * (1 + self.rebuys[seat]) + self.balances[seat]

    def _collect(self, events: Sequence[Event]) -> None:
        """Move the fees paid (ChipsPaid) from the payers' balances into the pool."""
        for event in events:
            if isinstance(event, ChipsPaid):
                self.balances = _add(self.balances, event.seat, -event.amount)
                self.pool_paid = _add(self.pool_paid, event.seat, event.amount)
                self.pool += event.amount

    def _after_deal(self, settled: DealSettled) -> tuple[Event, ...]:
        balances = self.balances = tuple(
            balance + amount for balance, amount in zip(self.balances, settled.payments, strict=True)
        )
        events: list[Event] = []
        declarer = settled.declarer
        if self.pool and declarer is not None and self._takes_pool(settled):
            events.append(PoolClaimed(declarer, self.pool))
            balances = self.balances = _add(balances, declarer, self.pool)
            self.pool = 0
            self.pool_paid = (0,) * self.table_size
        start = self.profile.starting_chips
        if start is not None and not self._tie_break:
            for seat in list(self.in_play):
                stack = start * (1 + self.rebuys[seat]) + balances[seat]
                if stack > 0:
                    continue
                if self.profile.rebuy:
                    # as many new stakes as bring the seat back into the game with chips
                    stakes = -stack // start + 1
                    self.rebuys[seat] += stakes
                    events += [SeatRebought(seat, start)] * stakes
                else:
                    self.in_play.remove(seat)
                    events.append(SeatEliminated(seat))
        played = len(self.deals)
        if self._tie_break:
            return (*events, *self._end(self.deal.seats))
        if played < self.profile.deals_per_session and len(self.in_play) >= MIN_SEATS_IN_PLAY:
            return (*events, *self._next_deal(self._left_of(self.deal.dealer), tuple(self.in_play)))
        # who leads if the session ended now, the pool gone back to its payers
        standing = [balance + paid for balance, paid in zip(balances, self.pool_paid, strict=True)]
        best = max(standing[seat] for seat in self.in_play)
        leaders = tuple(seat for seat in self.in_play if standing[seat] == best)
        if self.profile.tie_break_deal and len(leaders) > 1:
            self._tie_break = True
            return (*events, *self._next_deal(self._left_of(self.deal.dealer), leaders))
        return (*events, *self._end(tuple(self.in_play)))

    def _takes_pool(self, settled: DealSettled) -> bool:
        """Whether the deal's declarer made a contract that takes the pool (``pool_claim`` or higher).

        A settlement that a defender's penalty forced counts as made, as it does for the stakes.
        """
        return bool(settled.made) and self.profile.claims_pool(settled.contract or "")

    def _left_of(self, dealer: int) -> int:
        seat = (dealer + 1) % self.table_size
        while seat not in self.in_play:
            seat = (seat + 1) % self.table_size
        return seat

    def _next_deal(self, dealer: int, seats: tuple[int, ...]) -> tuple[Event, ...]:
        number = len(self.deals)
        if self._decks is not None:
            if number >= len(self._decks):
                msg = f"the record has no deck for deal {number}"
                raise ValueError(msg)
            deck: Sequence[Card] = self._decks[number]
        else:
            deck = deal_deck(self.seed, number, pack=self.profile.pack)
        stacks = None
        if self.profile.has_pool and self.profile.starting_chips is not None:
            stacks = tuple(self.stack(seat) or 0 for seat in range(self.table_size))
        self.deals.append(
            Deal(
                self.profile,
                deck=deck,
                dealer=dealer,
                table_size=self.table_size,
                seats=seats,
                stacks=stacks,
            )
        )
        return (DealStarted(number, dealer, seats),)

    def _end(self, contenders: tuple[int, ...]) -> tuple[Event, ...]:
        events: tuple[Event, ...] = ()
        if self.pool:
            refunds = self.pool_paid
            events = (PoolReturned(refunds),)
            self.balances = tuple(b + r for b, r in zip(self.balances, refunds, strict=True))
            self.pool = 0
            self.pool_paid = (0,) * self.table_size
        best = max(self.balances[seat] for seat in contenders)
        self.winners = tuple(seat for seat in contenders if self.balances[seat] == best)
        self.over = True
        return (*events, SessionOver(self.balances, self.winners))

    def __repr__(self) -> str:
        return (
            f"<Session {self.profile.name} seats={self.table_size} seed={self.seed} "
            f"deal={len(self.deals) - 1} balances={self.balances}>"
        )


def _add(values: tuple[int, ...], seat: int, amount: int) -> tuple[int, ...]:
    """``values`` with ``amount`` added to the entry of ``seat``."""
    return (*values[:seat], values[seat] + amount, *values[seat + 1 :])
