"""A bot that, for each decision, spends CPU or waits: to test the CPU decision clock.

python clocked_bot.py burn|sleep MS [SDK options]

``burn``: each decision spins until its thread has spent MS of CPU; ``sleep``: each
decision sleeps MS on the wall clock (spending next to no CPU). It answers its first
legal action.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from clients.sdk import Bot, parse_options, run

if TYPE_CHECKING:
    from referee.rules import Action, SeatView


class Clocked(Bot):
    """Its first legal action, after burning or sleeping."""

    how = "burn"
    seconds = 0.0

    def decide(self, view: SeatView) -> Action:
        """Spend the time as told, then answer."""
        if self.how == "sleep":
            time.sleep(self.seconds)
        else:
            until = time.thread_time() + self.seconds
            while time.thread_time() < until:
                pass
        return view.legal_actions[0]


def main() -> None:
    Clocked.how, Clocked.seconds = sys.argv[1], float(sys.argv[2]) / 1000
    options, _ = parse_options(sys.argv[3:], name="clocked", version="1")
    run(Clocked, name="clocked", version="1", options=options)


if __name__ == "__main__":
    main()
