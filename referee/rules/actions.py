"""What a seat can do: bid (or pass) during the auction, play a card afterwards.

A penalty is the third kind of action: it is never offered to a bot, but the referee
applies it under the revoke fault policy, and it is recorded like any other action so
that the deal replays exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from referee.rules.cards import Card, parse_card

if TYPE_CHECKING:
    from collections.abc import Sequence

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


class Bid:
    """A call in the auction: ``Bid("pass")`` or a contract's name (``Bid("nap")``). Interned."""

    __slots__ = ("name",)
    name: str

    def __new__(cls, name: str) -> Bid:  # noqa: PYI034 - instances are interned; not for subclassing
        """Return the interned bid called ``name``."""
        try:
            return _BIDS[name]
        except KeyError:
            msg = f"not a bid: {name!r} (bids are {', '.join(BID_NAMES)})"
            raise ValueError(msg) from None

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


@dataclass(frozen=True, slots=True)
class Penalty:
    """The referee stops the deal because ``seat`` faulted (seed 001's revoke settlement)."""

    seat: int

    def __str__(self) -> str:
        return f"penalty:{self.seat}"


Action = Bid | Card | Penalty
"""Anything that moves a deal on."""


def parse_action(text: str) -> Action:
    """Read an action as written in records and on the wire: ``"nap"``, ``"QH"``, ``"penalty:2"``."""
    key = text.strip()
    lowered = key.lower()
    if lowered in _BIDS:
        return _BIDS[lowered]
    if lowered.startswith("penalty:") and lowered[8:].isdigit():
        return Penalty(int(lowered[8:]))
    try:
        return parse_card(key)
    except ValueError:
        msg = f"not an action: {text!r} (a bid such as 'pass' or 'nap', or a card such as 'QH')"
        raise ValueError(msg) from None


def lowest_card(legal: Sequence[Action]) -> Card:
    """The legal card of lowest rank, ties broken by suit (clubs lowest); ValueError if none."""
    cards = [action for action in legal if action.__class__ is Card]
    if not cards:
        msg = f"no card among the legal actions: {', '.join(map(str, legal))}"
        raise ValueError(msg)
    return min(cards, key=_rank_then_suit)


def fallback_action(legal: Sequence[Action]) -> Action:
    """What a seat plays when its bot did not decide: pass if it may, else its lowest legal card.

    The one fallback rule: the referee plays it for a faulting seat under the substitute
    policy (and for a disqualified bot), and the SDK answers it when a bot raises or
    returns an action that is not legal.
    """
    if PASS in legal:
        return PASS
    return lowest_card(legal)


def _rank_then_suit(card: Card) -> tuple[int, int]:
    return (card.rank, card.suit)
