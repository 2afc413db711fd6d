"""The class a bot author subclasses: one decision from one seat's view.

A :class:`Bot` instance plays one seat at one table for one session. The SDK creates it
(by calling the factory given to :func:`clients.sdk.run`) when the table first appears,
sets :attr:`Bot.table` and :attr:`Bot.seat`, and drops it when the table closes, so an
instance may keep state about its deal and session without ever mixing up tables.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from referee.rules import PASS, Bid, Card, Phase

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from referee.rules import Action, SeatView


class Bot:
    """A seat's decision maker. Override :meth:`bid` and :meth:`play`, or :meth:`decide`.

    ``view.legal_actions`` always holds the legal actions as domain values (:class:`Bid`
    while bidding, :class:`Card` in play): answer one of them. An exception or an illegal
    answer does not stop the process: the SDK logs it to stderr, answers the lowest legal
    action instead and counts it.
    """

    table: str = ""
    """The referee's table id (set by the SDK before the first decision)."""
    seat: int = 0
    """This instance's seat at that table (set by the SDK before the first decision)."""

    def decide(self, view: SeatView) -> Action:
        """The action for ``view``: by default :meth:`bid` in the auction, else :meth:`play`."""
        if view.phase is Phase.BIDDING:
            return self.bid(view)
        return self.play(view)

    def bid(self, view: SeatView) -> Bid:
        """A bid (or :data:`PASS`) from ``view.legal_actions``; by default, pass."""
        del view
        return PASS

    def play(self, view: SeatView) -> Card:
        """A card from ``view.legal_actions``; by default the lowest legal card."""
        return lowest_card(view.legal_actions)

    def on_event(self, event: Any) -> None:  # noqa: ANN401 - the codec's event values
        """A public table event addressed to this seat (as decoded by the wire codec).

        Override it to follow the table between decisions; the SDK decodes events only
        for bots that override it. Events arrive before the requests of the same batch.
        """


def wants_events(factory: Callable[[], Bot]) -> bool:
    """Whether the bots ``factory`` makes override :meth:`Bot.on_event` (so the SDK asks for events).

    Sees through ``functools.partial``; a factory that is not a class is called once to
    look at the kind of bot it makes.
    """
    target: object = factory
    while isinstance(target, functools.partial):
        target = target.func
    kind = target if isinstance(target, type) else type(factory())
    return getattr(kind, "on_event", Bot.on_event) is not Bot.on_event


def lowest_action(legal: Sequence[Action]) -> Action:
    """The lowest legal action: pass if it is legal, else the lowest card (rank, then suit).

    This is what the SDK answers when a bot fails, matching the referee's own
    substitute for a faulting seat.
    """
    if PASS in legal:
        return PASS
    cards = [action for action in legal if isinstance(action, Card)]
    if cards:
        return lowest_card(cards)
    return legal[0]


def lowest_card(legal: Sequence[Action]) -> Card:
    """The legal card of lowest rank (ties broken by suit, clubs lowest)."""
    cards = [action for action in legal if isinstance(action, Card)]
    if not cards:
        msg = f"no card among the legal actions: {', '.join(map(str, legal))}"
        raise ValueError(msg)
    return min(cards, key=_rank_then_suit)


def _rank_then_suit(card: Card) -> tuple[int, int]:
    return (card.rank, card.suit)
