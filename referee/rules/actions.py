"""What a seat can do: bid (or pass) during the auction, play a card afterwards.

The pool variants (seed 001's Purchase, Écarté and Peep Nap) add three decisions: an
:class:`Exchange` of cards with the undealt stock before the auction, a :data:`PEEP` at
the widow at a seat's turn in the auction, and the declarer's :class:`TakeWidow` after it.

A penalty is one more kind of action: it is never offered to a bot, but the referee
applies it under the revoke fault policy, and it is recorded like any other action so
that the deal replays exactly.

Every action has a text (``str()``) that :func:`parse_action` reads back: records and the
wire carry actions as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from operator import attrgetter
from typing import TYPE_CHECKING, Final, final

from referee.rules.cards import Card, parse_card
from referee.rules.errors import RulesError

if TYPE_CHECKING:
    from collections.abc import Sequence

_BY_INDEX: Final = attrgetter("index")

BID_NAMES: Final = (
    "pass",
    "two",
    "three",
    "misere",
    "four",
    "nap",
    "six",
    "seven",
    "wellington",
    "blucher",
)
"""Every bid any profile may use, as written in records and on the wire.

Six and Seven are seven-card Nap's; no profile has them together with Wellington or
Blücher, so their order here says nothing about a ladder (each profile lists its own).
"""


@final
class Bid:
    """A call in the auction: ``Bid("pass")`` or a contract's name (``Bid("nap")``). Interned."""

    __slots__ = ("name",)
    name: str

    def __new__(cls, name: str) -> Bid:
        """Return the interned bid called ``name``."""
        try:
            return _BIDS[name]
        except KeyError:
            msg = f"not a bid: {name!r} (bids are {', '.join(BID_NAMES)})"
            raise RulesError(msg) from None

    @property
    def is_pass(self) -> bool:
        """True for the pass."""
        return self is PASS

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Bid({self.name!r})"

    def __reduce__(self) -> tuple[type[Bid], tuple[str]]:
        return (Bid, (self.name,))

    def __setattr__(self, name: str, value: object) -> None:
        msg = "bids are immutable"
        raise AttributeError(msg)


def _make_bid(name: str) -> Bid:
    bid = object.__new__(Bid)
    object.__setattr__(bid, "name", name)
    return bid


_BIDS: Final = {name: _make_bid(name) for name in BID_NAMES}
PASS: Final = _BIDS["pass"]


@final
@dataclass(frozen=True, slots=True)
class Exchange:
    """Give up ``cards`` (face down) and draw as many from the stock; no cards declines.

    The cards are kept in pack order whatever order they are given in, so that equal
    exchanges are equal values. Text: ``"exchange:2C,9H"``, declining ``"exchange:none"``.
    """

    cards: tuple[Card, ...]

    def __post_init__(self) -> None:
        cards = self.cards
        if cards.__class__ is not tuple or any(a.index > b.index for a, b in pairwise(cards)):
            object.__setattr__(self, "cards", tuple(sorted(cards, key=_BY_INDEX)))

    def __str__(self) -> str:
        return "exchange:" + (",".join(card.text for card in self.cards) or "none")


@final
class Peep:
    """Pay to look at the widow, at one's turn in the auction and before bidding: :data:`PEEP`.

    A singleton: ``Peep() is PEEP``. Text: ``"peep"``.
    """

    __slots__ = ()

    def __new__(cls) -> Peep:
        """Return the one peep."""
        return PEEP

    def __str__(self) -> str:
        return "peep"

    def __repr__(self) -> str:
        return "Peep()"

    def __reduce__(self) -> tuple[type[Peep], tuple[()]]:
        return (Peep, ())


PEEP: Final[Peep] = object.__new__(Peep)
"""The one :class:`Peep`."""


@final
@dataclass(frozen=True, slots=True)
class TakeWidow:
    """The declarer's widow decision: give up ``card`` (face down) for the widow, or None to decline.

    Text: ``"widow:2C"``, declining ``"widow:none"``.
    """

    card: Card | None

    def __str__(self) -> str:
        return f"widow:{'none' if self.card is None else self.card.text}"


@final
@dataclass(frozen=True, slots=True)
class Penalty:
    """The referee stops the deal because ``seat`` faulted (seed 001's revoke settlement)."""

    seat: int

    def __str__(self) -> str:
        return f"penalty:{self.seat}"


DECLINE_EXCHANGE: Final = Exchange(())
"""Declining the exchange: ``"exchange:none"``."""
DECLINE_WIDOW: Final = TakeWidow(None)
"""Declining the widow: ``"widow:none"``."""

Action = Bid | Card | Exchange | Peep | TakeWidow | Penalty
"""Anything that moves a deal on."""


def parse_action(text: str) -> Action:
    """Read an action as written in records and on the wire.

    ``"nap"``, ``"QH"``, ``"exchange:2C,9H"``, ``"exchange:none"``, ``"peep"``,
    ``"widow:2C"``, ``"widow:none"``, ``"penalty:2"``.
    """
    key = text.strip()
    lowered = key.lower()
    if lowered in _BIDS:
        return _BIDS[lowered]
    kind, colon, rest = lowered.partition(":")
    try:
        if not colon:
            if lowered == "peep":
                return PEEP
            return parse_card(key)
        if kind == "exchange":
            return DECLINE_EXCHANGE if rest == "none" else Exchange(_cards_of(key.partition(":")[2]))
        if kind == "widow":
            return DECLINE_WIDOW if rest == "none" else TakeWidow(parse_card(key.partition(":")[2]))
        if kind == "penalty" and rest.isdigit():
            return Penalty(int(rest))
    except ValueError:
        pass
    msg = (
        f"not an action: {text!r} (a bid such as 'pass' or 'nap', a card such as 'QH', "
        "'exchange:2C,9H' or 'exchange:none', 'peep', 'widow:2C' or 'widow:none')"
    )
    raise RulesError(msg)


def _cards_of(text: str) -> tuple[Card, ...]:
    parts = text.split(",")
    if not all(part.strip() for part in parts):
        msg = f"not a list of cards: {text!r}"
        raise RulesError(msg)
    return tuple(parse_card(part) for part in parts)


def lowest_card(legal: Sequence[Action]) -> Card:
    """The legal card of lowest rank, ties broken by suit (clubs lowest); ValueError if none."""
    cards = [action for action in legal if action.__class__ is Card]
    if not cards:
        msg = f"no card among the legal actions: {', '.join(map(str, legal))}"
        raise ValueError(msg)
    return min(cards, key=_rank_then_suit)


def fallback_action(legal: Sequence[Action]) -> Action:
    """What a seat plays when its bot did not decide: decline or pass if it may, else its lowest legal card.

    Declining is always legal where it is offered: the exchange (``exchange:none``), the
    auction (pass; never a peep) and the widow (``widow:none``). The one fallback rule:
    the referee plays it for a faulting seat under the substitute policy (and for a
    disqualified bot), and the SDK answers it when a bot raises or returns an action
    that is not legal.
    """
    if PASS in legal:
        return PASS
    if DECLINE_EXCHANGE in legal:
        return DECLINE_EXCHANGE
    if DECLINE_WIDOW in legal:
        return DECLINE_WIDOW
    return lowest_card(legal)


def _rank_then_suit(card: Card) -> tuple[int, int]:
    return (card.rank, card.suit)
