"""A hostile bot: it keeps busy workers spinning while it plays, to slow its opponents down.

python spinner_bot.py threads|children N [SDK options]

``threads``: N threads hashing in a loop (hashing a large buffer lets go of Python's lock,
so they take every core they can); ``children``: N processes in a busy loop. Each
decision answers what the referee would play in its place (the lowest legal action), so a
game goes the same whether or not its decisions are charged as late, and its opponents'
results can be compared with a run in which nothing spins (``none``).
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from typing import TYPE_CHECKING

from clients.sdk import Bot, parse_options, run
from referee.rules import fallback_action

if TYPE_CHECKING:
    from referee.rules import Action, SeatView

_BUFFER = bytes(1 << 20)


def _hash_forever() -> None:
    while True:
        hashlib.sha256(_BUFFER).digest()


def _spin_forever() -> None:
    while True:
        pass


def spin(mode: str, count: int) -> None:
    """Start ``count`` busy workers of ``mode`` (``none``: none)."""
    for _ in range(count if mode != "none" else 0):
        if mode == "threads":
            threading.Thread(target=_hash_forever, daemon=True).start()
        elif os.fork() == 0:
            _spin_forever()


class Fallback(Bot):
    """Answers the lowest legal action, as the referee would for it."""

    def decide(self, view: SeatView) -> Action:
        """The referee's own substitute."""
        return fallback_action(view.legal_actions)


def main() -> None:
    mode, count = sys.argv[1], int(sys.argv[2])
    options, _ = parse_options(sys.argv[3:], name="spinner", version="1")
    spin(mode, count)
    run(Fallback, name="spinner", version="1", options=options)


if __name__ == "__main__":
    main()
