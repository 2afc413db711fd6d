"""Events: what each transition made happen, all of it public.

Every event here may be shown to every seat: the engine never puts a hidden card in an
event (hands leave the engine only through a seat's view). So an exchange says how many
cards a seat exchanged, never which; a peep says who looked, never what it saw.

Each is a final frozen value: readers dispatch on ``type(event)``, which mypy narrows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from referee.rules.actions import Bid
    from referee.rules.cards import Card, Suit


@final
@dataclass(frozen=True, slots=True)
class DealStarted:
    """A new deal was dealt: its number in the session (from 0), dealer and the seats in play."""

    deal: int
    dealer: int
    seats: tuple[int, ...]


@final
@dataclass(frozen=True, slots=True)
class CardsExchanged:
    """Before the auction, ``seat`` gave up ``count`` cards face down and drew as many (0: declined)."""

    seat: int
    count: int


@final
@dataclass(frozen=True, slots=True)
class WidowPeeked:
    """``seat`` paid to look at the widow (what it saw is in its view only)."""

    seat: int


@final
@dataclass(frozen=True, slots=True)
class WidowTaken:
    """The declarer ``seat`` took the widow for a card of its hand (``taken``) or declined it."""

    seat: int
    taken: bool


@final
@dataclass(frozen=True, slots=True)
class ChipsPaid:
    """``seat`` paid ``amount`` chips into the pool (for an exchange or a peep), off its balance."""

    seat: int
    amount: int


@final
@dataclass(frozen=True, slots=True)
class PoolClaimed:
    """``seat`` made a contract high enough to take the pool: ``amount`` chips, onto its balance.

    It follows the :class:`DealSettled` of that deal, whose payments hold only the
    contract's settlement.
    """

    seat: int
    amount: int


@final
@dataclass(frozen=True, slots=True)
class PoolReturned:
    """The session ended with chips in the pool: each seat gets back what it paid in (``refunds``).

    It comes just before :class:`SessionOver`, whose balances include the refunds.
    """

    refunds: tuple[int, ...]


@final
@dataclass(frozen=True, slots=True)
class BidMade:
    """``seat`` called ``bid`` (possibly a pass)."""

    seat: int
    bid: Bid


@final
@dataclass(frozen=True, slots=True)
class AuctionWon:
    """The auction ended with ``declarer`` holding ``contract`` (a contract name)."""

    declarer: int
    contract: str


@final
@dataclass(frozen=True, slots=True)
class AllPassed:
    """Everyone passed: the deal scores zero."""


@final
@dataclass(frozen=True, slots=True)
class CardPlayed:
    """``seat`` played ``card`` to the current trick."""

    seat: int
    card: Card


@final
@dataclass(frozen=True, slots=True)
class TrumpChosen:
    """The declarer's first card made ``suit`` trump (never sent for a misère)."""

    suit: Suit


@final
@dataclass(frozen=True, slots=True)
class TrickWon:
    """Trick ``number`` (from 0) went to ``winner``; ``plays`` are (seat, card) in order.

    This is also how a deal keeps its finished tricks (``Deal.tricks``).
    """

    number: int
    winner: int
    plays: tuple[tuple[int, Card], ...]

    @property
    def leader(self) -> int:
        """The seat that led the trick."""
        return self.plays[0][0]


@final
@dataclass(frozen=True, slots=True)
class Penalized:
    """The referee stopped the deal because ``seat`` faulted; it settles as seed 001's revoke."""

    seat: int


@final
@dataclass(frozen=True, slots=True)
class DealSettled:
    """The deal is over. ``payments`` are chips per seat (zero-sum, 0 for seats not in play).

    ``made`` is None when nobody declared. ``tricks`` is what the declarer took.
    """

    declarer: int | None
    contract: str | None
    tricks: int
    made: bool | None
    payments: tuple[int, ...]


@final
@dataclass(frozen=True, slots=True)
class SeatEliminated:
    """``seat`` ran out of chips and sits out the rest of the session."""

    seat: int


@final
@dataclass(frozen=True, slots=True)
class SeatRebought:
    """``seat`` ran out of chips and staked the profile's starting chips again.

    One event per stake: a seat that one stake would leave at zero or below stakes again,
    so it is back in the game with chips (several events after one deal).
    """

    seat: int
    chips: int


@final
@dataclass(frozen=True, slots=True)
class SessionOver:
    """The session ended: final net balances per seat and the winning seat(s) (ties share)."""

    balances: tuple[int, ...]
    winners: tuple[int, ...]


Event = (
    DealStarted
    | CardsExchanged
    | WidowPeeked
    | ChipsPaid
    | BidMade
    | AuctionWon
    | AllPassed
    | WidowTaken
    | CardPlayed
    | TrumpChosen
    | TrickWon
    | Penalized
    | DealSettled
    | PoolClaimed
    | SeatEliminated
    | SeatRebought
    | PoolReturned
    | SessionOver
)
"""Anything a transition reports."""
