"""The class a bot author subclasses: one decision from one seat's view.

A :class:`Bot` instance plays one seat at one table for one session. The SDK creates it
(by calling the factory given to :func:`clients.sdk.run`) when the table first appears,
sets :attr:`Bot.table` and :attr:`Bot.seat`, and drops it when the table closes, so an
instance may keep state about its deal and session without ever mixing up tables.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from referee.rules import (
    DECLINE_EXCHANGE,
    DECLINE_WIDOW,
    PASS,
    PEEP,
    Bid,
    Card,
    Exchange,
    Phase,
    TakeWidow,
    fallback_action,
    lowest_card,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from referee.rules import Action, Profile, SeatView


class Bot:
    """A seat's decision maker. Override :meth:`bid` and :meth:`play`, or :meth:`decide`.

    The pool variants (``purchase``, ``ecarte``, ``peep``) ask three more decisions,
    each declined by default so a bot that overrides only :meth:`bid` and :meth:`play`
    plays them too: :meth:`exchange` before the auction, :meth:`peep` at the seat's turn
    in the auction, :meth:`take_widow` for the declarer after it.

    ``view.legal_actions`` always holds the legal actions as domain values (:class:`Bid`
    while bidding, :class:`Card` in play, :class:`Exchange`, :data:`PEEP` and
    :class:`TakeWidow` in the pool variants): answer one of them. An exception or an illegal
    answer does not stop the process: the SDK logs it to stderr, answers the lowest legal
    action instead and counts it.
    """

    table: str = ""
    """The referee's table id (set by the SDK before the first decision)."""
    seat: int = 0
    """This instance's seat at that table (set by the SDK before the first decision)."""
    rules: Profile | None = None
    """The rules profile the referee announced (its Welcome), house rules included: hand
    size, pack, ladder and payments; None when none was announced. A table plays the
    profile its views name (``view.profile``), nearly always this one, with its table's
    pack: ``rules.at_table(view.table_size)`` (house rules may size the pack by the table)."""

    def decide(self, view: SeatView) -> Action:
        """The action for ``view``, by phase: exchange, peep then bid, take the widow, play."""
        phase = view.phase
        if phase is Phase.BIDDING:
            if PEEP in view.legal_actions and self.peep(view):
                return PEEP
            return self.bid(view)
        if phase is Phase.EXCHANGE:
            return self.exchange(view)
        if phase is Phase.WIDOW:
            return self.take_widow(view)
        return self.play(view)

    def exchange(self, view: SeatView) -> Exchange:
        """Cards to give up for as many from the stock (one of ``view.legal_actions``); by default decline."""
        del view
        return DECLINE_EXCHANGE

    def peep(self, view: SeatView) -> bool:
        """Whether to pay the peep fee to see the widow before bidding (asked while it may); by default no."""
        del view
        return False

    def take_widow(self, view: SeatView) -> TakeWidow:
        """As declarer, a card to give up for the widow (``TakeWidow(card)``); by default decline."""
        del view
        return DECLINE_WIDOW

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


def decide_or_fallback(bot: Bot, view: SeatView) -> tuple[Action, str | None]:
    """``bot``'s action for ``view``, or :func:`~referee.rules.fallback_action` and why.

    What the SDK answers: a bot that raises (an ``Exception``) or returns an action that
    is not among ``view.legal_actions`` does not fault at the referee; the fallback is
    played instead and the reason is returned (None when the bot's own action is played).
    """
    legal = view.legal_actions
    try:
        action = bot.decide(view)
    except Exception as exc:  # noqa: BLE001 - a bot's bug must not stop the process
        return fallback_action(legal), f"bot raised {exc!r}"
    if action in legal:
        return action, None
    return fallback_action(legal), f"bot answered {action!r}, not one of the legal actions"
