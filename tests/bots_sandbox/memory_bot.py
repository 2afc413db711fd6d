"""A bot that remembers every hand it has seen played, to tell whether it is ever dealt one again.

Every dealt card is shown by the end of a deal (all five tricks are played), so at the
end of each deal it knows every seat's hand; it keeps them in this process and, to share
them with other processes of the same bot, in files under ``/tmp/nap-memory-bot/``. When
it is dealt a hand it remembers, it has seen this board before (another rotation of the
same block) and prints ``memory: board seen again``; at each session's end it prints
``memory: N hands known, M boards seen again``. It plays at random.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from clients.bots.random_bot import RandomBot
from clients.sdk import parse_options, run
from referee.rules import Phase, SessionOver, TrickWon

if TYPE_CHECKING:
    from referee.rules import Action, SeatView

SHARED = Path("/tmp/nap-memory-bot")  # noqa: S108 - a channel between processes, if they share /tmp
_known: set[frozenset[str]] = set()
_seen_again = 0


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _remembered() -> set[frozenset[str]]:
    """The hands this process knows, with those other processes wrote where it can read them."""
    hands = set(_known)
    if SHARED.is_dir():
        for path in SHARED.glob("*.txt"):
            hands.update(frozenset(line.split()) for line in path.read_text().splitlines() if line.strip())
    return hands


def _remember(hands: list[frozenset[str]]) -> None:
    _known.update(hands)
    try:
        SHARED.mkdir(exist_ok=True)
        with (SHARED / f"{os.getpid()}.txt").open("a") as file:
            file.writelines(" ".join(sorted(hand)) + "\n" for hand in hands)
    except OSError:
        pass


class MemoryBot(RandomBot):
    """Random play; remembers hands, and counts the boards it is dealt again."""

    def __init__(self) -> None:
        super().__init__()
        self._dealt: set[int] = set()
        self._played: dict[int, list[str]] = {}

    def decide(self, view: SeatView) -> Action:
        """Check the hand once per deal (at its first decision, in the auction), then play at random."""
        global _seen_again  # noqa: PLW0603 - the process's memory is the point
        if view.deal_number not in self._dealt and view.phase is Phase.BIDDING:
            self._dealt.add(view.deal_number)
            if frozenset(str(card) for card in view.hand) in _remembered():
                _seen_again += 1
                _say("memory: board seen again")
        return super().decide(view)

    def on_event(self, event: object) -> None:
        """Collect every card played; at the deal's fifth trick, remember every seat's hand."""
        if isinstance(event, TrickWon):
            for seat, card in event.plays:
                self._played.setdefault(seat, []).append(str(card))
            if event.number == 4:
                _remember([frozenset(cards) for cards in self._played.values() if len(cards) == 5])
                self._played = {}
        elif isinstance(event, SessionOver):
            _say(f"memory: {len(_known)} hands known, {_seen_again} boards seen again")


def main() -> None:
    options, _ = parse_options(sys.argv[1:], name="memory", version="1")
    run(MemoryBot, name="memory", version="1", options=options)


if __name__ == "__main__":
    main()
