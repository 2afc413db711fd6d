"""A bot that says, as its process ends, how many decisions it made: its last line, in its log.

It plays at random on the Python SDK, which leaves cleanly on SIGTERM (a Goodbye, then
exit status 0); its ``atexit`` handler then prints ``leaving: N decisions``. A bot told to
stop at the end of a run, sandboxed or not, leaves that line.
"""

from __future__ import annotations

import atexit
import sys
from typing import TYPE_CHECKING

from clients.bots.random_bot import RandomBot
from clients.sdk import parse_options, run

if TYPE_CHECKING:
    from referee.rules import Action, SeatView

_decisions = 0


class LeavingBot(RandomBot):
    """Random play, counted."""

    def decide(self, view: SeatView) -> Action:
        global _decisions  # noqa: PLW0603 - the process's count is the point
        _decisions += 1
        return super().decide(view)


def _leaving() -> None:
    sys.stdout.write(f"leaving: {_decisions} decisions\n")
    sys.stdout.flush()


def main() -> None:
    atexit.register(_leaving)
    options, _ = parse_options(sys.argv[1:], name="leaving", version="1")
    run(LeavingBot, name="leaving", version="1", options=options)


if __name__ == "__main__":
    main()
