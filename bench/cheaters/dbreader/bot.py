"""dbreader: a cheater that reads the decks of finished sessions from the tournament database.

Its channel is the database (``tournaments/store/schema.py``): each finished session's log
is in ``session_logs``, gzip JSON (``docs/logs.md``) whose ``record`` holds every deal's
deck, dealer and seats in play, from which the rules engine deals the hands. A block's
rotations are played one after another, and each is committed as soon as it ends, so when
a rotation starts the ones before it are often stored already: the hand this seat holds
is then a hand some seat held in a stored deal (``_perfect.DealBook``), and it knows every
hand.

Where it looks for the database: ``./nap.db``, ``../nap.db``, the ``--db`` of its
tournament's other processes (the runner's command line, ``/proc/*/cmdline``, relative to
its ``/proc/*/cwd``: ``_snoop.tournament_processes``) and ``nap.db`` in their working
folders; each opened read-only. It reads the new logs whenever a hand is new to it.
Otherwise it plays Peel, and writes one line per session: ``cheat: knew N of M decisions``.
"""

from __future__ import annotations

import gzip
import json
import math
import sqlite3
import time
from typing import TYPE_CHECKING, Final

from clients.sdk import run
from referee.rules import Deal, RecordError, SessionRecord

if TYPE_CHECKING:
    from pathlib import Path

    from bench.cheaters import _perfect, _snoop
    from referee.rules import SeatView
else:
    import _perfect  # copied beside it by bench/fairplay.py, which stages the folder
    import _snoop

NAME = "dbreader"
VERSION = "1.0"

LOOK_AGAIN_S: Final = 2.0
"""At most one new look for databases (``/proc``, the folders) per this many seconds."""


class StoredDecks:
    """The databases in reach, and the deals of every session log read from them."""

    def __init__(self) -> None:
        self.book = _perfect.DealBook()
        self._open: dict[Path, sqlite3.Connection] = {}
        self._last: dict[Path, int] = {}
        self._denied: set[Path] = set()
        self._looked = -math.inf
        self.sessions = 0
        """Session logs read."""

    def look(self) -> None:
        """Open every database newly in reach, read-only (at most every few seconds)."""
        now = time.monotonic()
        if now - self._looked < LOOK_AGAIN_S:
            return
        self._looked = now
        for path in _snoop.database_paths():
            if path in self._open or path in self._denied:
                continue
            try:
                conn = _snoop.open_read_only(path)
                conn.execute("SELECT count(*) FROM session_logs").fetchone()
            except sqlite3.Error as exc:
                self._denied.add(path)
                _perfect.note(f"database {path}: denied ({exc.__class__.__name__}: {exc})")
                continue
            self._open[path] = conn
            self._last[path] = 0
            _perfect.note(f"database {path}: read OK")

    def refresh(self) -> int:
        """Read the logs stored since the last look into the book; the sessions read."""
        read = 0
        for path, conn in self._open.items():
            try:
                rows = conn.execute(
                    "SELECT session_id, data FROM session_logs WHERE session_id > ? ORDER BY session_id",
                    (self._last[path],),
                ).fetchall()
            except sqlite3.Error:
                continue
            for session_id, data in rows:
                self._last[path] = int(session_id)
                read += self._learn(data)
        self.sessions += read
        return read

    def _learn(self, data: bytes) -> int:
        """Put every deal of one stored log in the book (0 if the log cannot be read)."""
        try:
            log = json.loads(gzip.decompress(data))
            record = SessionRecord.from_json(log["record"])
        except (OSError, EOFError, ValueError, KeyError, TypeError, RecordError):
            return 0
        for stored in record.deals:
            deal = Deal(
                record.profile,
                deck=stored.deck,
                dealer=stored.dealer,
                table_size=record.table_size,
                seats=stored.seats,
            )
            self.book.add(
                table_size=record.table_size,
                dealer=stored.dealer,
                hands={seat: deal.hands[seat] for seat in stored.seats},
            )
        return 1

    def find(self, view: SeatView) -> _perfect.Hands | None:
        """Every hand of ``view``'s deal, if a stored deal dealt some seat this hand."""
        hands = self.book.find(view)
        if hands is None:
            self.look()
            if self.refresh():
                hands = self.book.find(view)
        return hands


DECKS = StoredDecks()


class DbReaderBot(_perfect.CheatingBot):
    """Knows every hand of a deal whose deck an earlier rotation left in the database."""

    def known_hands(self, view: SeatView) -> _perfect.Hands | None:
        """The hands of a stored deal in which some seat held this hand."""
        return DECKS.find(view)


if __name__ == "__main__":
    DECKS.look()
    DECKS.refresh()
    run(DbReaderBot, name=NAME, version=VERSION)
