"""A bot that, at its first decision, takes all it can of one resource: memory, threads or files.

python hog_bot.py memory|threads|files

It then plays at random (the SDK answers for it where its decision raised).
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from clients.bots.random_bot import RandomBot
from clients.sdk import parse_options, run

if TYPE_CHECKING:
    from referee.rules import Action, SeatView

_held: list[object] = []


def _take(resource: str) -> None:
    if resource == "memory":
        while True:
            _held.append(bytearray(64 << 20))
    elif resource == "threads":
        while True:
            thread = threading.Thread(target=time.sleep, args=(3600,), daemon=True)
            thread.start()
            _held.append(thread)
    else:
        while True:
            _held.append(Path(__file__).open("rb"))  # noqa: SIM115 - held open on purpose


class HogBot(RandomBot):
    """Random play, after taking all of one resource at its first decision."""

    resource = "memory"

    def decide(self, view: SeatView) -> Action:
        """The first time: take the resource until it runs out (the SDK catches what that raises)."""
        if not _held:
            _held.append(None)
            _take(self.resource)
        return super().decide(view)


def main() -> None:
    options, _ = parse_options(sys.argv[2:], name="hog", version="1")
    HogBot.resource = sys.argv[1]
    run(HogBot, name="hog", version="1", options=options)


if __name__ == "__main__":
    main()
