"""The Python bot SDK: subclass :class:`Bot`, call :func:`run`.

::

    from clients.sdk import Bot, Card, SeatView, run

    class Lowest(Bot):
        def play(self, view: SeatView) -> Card:
            return min(view.legal_actions, key=lambda card: card.rank)

    if __name__ == "__main__":
        run(Lowest, name="lowest", version="1.0")

The pool variants (``purchase``, ``ecarte``, ``peep``) ask three more decisions, which
:class:`Bot` declines by default (so its Hello lists them all): override
:meth:`Bot.exchange` (an :class:`Exchange`), :meth:`Bot.peep` and :meth:`Bot.take_widow`
(a :class:`TakeWidow`) to play them.

The SDK holds the stream to the referee (Hello, batches, reconnects, Goodbye on SIGTERM),
keeps one bot per (table, seat) and decodes every request into a :class:`SeatView` whose
``legal_actions`` are domain values. See ``docs/writing-a-bot-python.md``. Importing it
loads no grpc (only :func:`run` and :func:`serve` do, when they start), so a bot's own
search, and in-process play, run without it.
"""

from clients.sdk.bot import Bot, decide_or_fallback
from clients.sdk.dispatch import Dispatcher
from clients.sdk.options import ExitCode, Options
from clients.sdk.runner import add_options, parse_options, run, serve
from referee.rules import (
    DECLINE_EXCHANGE,
    DECLINE_WIDOW,
    PASS,
    PEEP,
    Action,
    Bid,
    Card,
    Exchange,
    Phase,
    SeatView,
    Suit,
    TakeWidow,
    fallback_action,
    lowest_card,
)

__all__ = [
    "DECLINE_EXCHANGE",
    "DECLINE_WIDOW",
    "PASS",
    "PEEP",
    "Action",
    "Bid",
    "Bot",
    "Card",
    "Dispatcher",
    "Exchange",
    "ExitCode",
    "Options",
    "Phase",
    "SeatView",
    "Suit",
    "TakeWidow",
    "add_options",
    "decide_or_fallback",
    "fallback_action",
    "lowest_card",
    "parse_options",
    "run",
    "serve",
]
