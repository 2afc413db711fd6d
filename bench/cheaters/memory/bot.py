"""memory: a cheater that remembers every deal played at its tables, and finds it again.

Its channel is its own memory. It follows the table events (which it opts in to by
overriding ``on_event``): every card played, so at the end of a deal (all five tricks are
always played) it knows which seat held which cards. When a later deal deals it a hand
that some seat held in a remembered deal, it is the same board in another rotation of
the block, and it knows every hand (``_perfect.DealBook``). A deal that every seat
passed shows no card, so it learns nothing from it.

As a second channel it appends each deal it learns to ``/tmp/nap-cheat-memory/deals.jsonl``
and to ``memory.jsonl`` in its own folder, and reads both back when a hand is new to it,
so that several processes of this bot (one per worker, or one per rotation) pool what
they saw. A file it cannot write or read is said once in its log and left alone.
Otherwise it plays Peel, and writes one line per session: ``cheat: knew N of M decisions``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from clients.sdk import run
from referee.rules import CardPlayed, DealSettled, DealStarted, Penalized, parse_cards

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from bench.cheaters import _perfect
    from referee.rules import Card, SeatView
else:
    import _perfect  # copied beside it by bench/fairplay.py, which stages the folder

NAME = "memory"
VERSION = "1.0"

FILES = (
    Path("/tmp/nap-cheat-memory/deals.jsonl"),  # noqa: S108 - a place every process of this bot can find
    Path(__file__).resolve().parent / "memory.jsonl",
)
"""Where processes of this bot share the deals they learnt: a shared place, and its own folder."""


class SharedMemory:
    """The deals this process knows, and the files through which it shares them."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.book = _perfect.DealBook()
        self._paths = tuple(paths)
        self._read_to = dict.fromkeys(self._paths, 0)
        self._writable = set(self._paths)
        self._said: set[str] = set()

    def _say(self, line: str) -> None:
        if line not in self._said:
            self._said.add(line)
            _perfect.note(line)

    def learn(self, *, table_size: int, dealer: int, hands: Mapping[int, Sequence[Card]]) -> None:
        """Remember a deal; a new one is also appended to every file still writable."""
        if not self.book.add(table_size=table_size, dealer=dealer, hands=hands):
            return
        record = {
            "table_size": table_size,
            "dealer": dealer,
            "hands": {str(seat): " ".join(card.text for card in cards) for seat, cards in hands.items()},
        }
        line = json.dumps(record, separators=(",", ":")) + "\n"
        for path in sorted(self._writable):
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("a", encoding="utf-8") as file:
                    file.write(line)
            except OSError as exc:
                self._writable.discard(path)
                self._say(f"memory file {path}: not writable ({exc.__class__.__name__}: {exc})")
            else:
                self._say(f"memory file {path}: writing")

    def refresh(self) -> int:
        """Read what the files gained since the last look (other processes' deals); the deals added."""
        added = 0
        for path in self._paths:
            try:
                if path.stat().st_size <= self._read_to[path]:
                    continue
                with path.open("rb") as file:
                    file.seek(self._read_to[path])
                    data = file.read()
            except FileNotFoundError:
                continue
            except OSError as exc:
                self._say(f"memory file {path}: not readable ({exc.__class__.__name__}: {exc})")
                continue
            end = data.rfind(b"\n") + 1
            self._read_to[path] += end
            for line in data[:end].splitlines():
                added += self._read(line)
        return added

    def _read(self, line: bytes) -> int:
        try:
            record = json.loads(line)
            hands = {int(seat): parse_cards(text) for seat, text in record["hands"].items()}
            new = self.book.add(
                table_size=int(record["table_size"]), dealer=int(record["dealer"]), hands=hands
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return 0
        return int(new)


MEMORY = SharedMemory(FILES)


class MemoryBot(_perfect.CheatingBot):
    """Remembers each deal of its table from the events; knows a deal when its hand was seen before."""

    def __init__(self) -> None:
        super().__init__()
        self._dealer: int | None = None
        self._seats: tuple[int, ...] = ()
        self._plays: dict[int, list[Card]] = {}
        self._stopped = False
        self._table_size: int | None = None
        self._hand_size: int | None = None

    def known_hands(self, view: SeatView) -> _perfect.Hands | None:
        """The hands of a remembered deal in which some seat held this hand (this process's or the files')."""
        self._table_size = view.table_size
        self._hand_size = _perfect.dealt_mask(view).bit_count()
        hands = MEMORY.book.find(view)
        if hands is None and MEMORY.refresh():
            hands = MEMORY.book.find(view)
        return hands

    def on_event(self, event: object) -> None:
        """Follow the deal card by card; once it is settled, remember every seat's hand."""
        if isinstance(event, DealStarted):
            self._dealer, self._seats, self._plays, self._stopped = event.dealer, event.seats, {}, False
        elif isinstance(event, CardPlayed):
            self._plays.setdefault(event.seat, []).append(event.card)
        elif isinstance(event, Penalized):
            self._stopped = True  # the deal stopped before every card was played
        elif isinstance(event, DealSettled):
            self._remember()
        super().on_event(event)

    def _remember(self) -> None:
        if self._dealer is None or self._table_size is None or self._stopped or not self._seats:
            return
        counts = {len(self._plays.get(seat, ())) for seat in self._seats}
        if len(counts) != 1 or counts != {self._hand_size}:
            return  # not every card was seen
        MEMORY.learn(
            table_size=self._table_size,
            dealer=self._dealer,
            hands={seat: self._plays[seat] for seat in self._seats},
        )


if __name__ == "__main__":
    MEMORY.refresh()
    run(MemoryBot, name=NAME, version=VERSION)
