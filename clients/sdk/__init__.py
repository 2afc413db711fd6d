"""The Python bot SDK: subclass :class:`Bot`, call :func:`run`.

::

    from clients.sdk import Bot, Card, SeatView, run

    class Lowest(Bot):
        def play(self, view: SeatView) -> Card:
            return min(view.legal_actions, key=lambda card: card.rank)

    if __name__ == "__main__":
        run(Lowest, name="lowest", version="1.0")

The SDK holds the stream to the referee (Hello, batches, reconnects, Goodbye on SIGTERM),
keeps one bot per (table, seat) and decodes every request into a :class:`SeatView` whose
``legal_actions`` are domain values. See ``docs/writing-a-bot-python.md``.
"""

from clients.sdk.bot import Bot, decide_or_fallback
from clients.sdk.connection import ExitCode, Options
from clients.sdk.dispatch import Dispatcher
from clients.sdk.runner import add_options, parse_options, run, serve
from referee.rules import PASS, Action, Bid, Card, Phase, SeatView, Suit, fallback_action, lowest_card

__all__ = [
    "PASS",
    "Action",
    "Bid",
    "Bot",
    "Card",
    "Dispatcher",
    "ExitCode",
    "Options",
    "Phase",
    "SeatView",
    "Suit",
    "add_options",
    "decide_or_fallback",
    "fallback_action",
    "lowest_card",
    "parse_options",
    "run",
    "serve",
]
