"""seed: a cheater that guesses the tournament seed and deals every board itself.

Its channel is the public dealing scheme (``tournaments/plan/scheduler.py``, ``referee/rules``):
block ``i`` of a tournament dealt from seed ``S`` plays the board seed
``derive_seed(S, "board", i)``, each session of it dealt as ``referee.rules.Session``
deals (first dealer drawn from the board seed, deal ``n``'s deck ``deal_deck(seed, n)``,
the deal moving one seat left each time). So whoever knows ``S`` knows every hand of every
board, from the first rotation on.

The seeds it tries: 1 (the default), the ``seed`` of every tournament in a database it can
read (``./nap.db``, ``../nap.db``, the ``--db`` of its tournament's other processes'
command lines, opened read-only), and the ``--seed`` of those command lines (``/proc``). It
recognises its board by its hand (``_perfect.DealBook``), helped by the table id when it
names the block (``t<N>-b<i>-r<r>`` today; it does not rely on that). Otherwise it plays
Peel, and writes one line per session: ``cheat: knew N of M decisions``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
import time
from typing import TYPE_CHECKING, Final

from clients.sdk import run
from referee.rules import Deal, deal_deck, first_dealer

if TYPE_CHECKING:
    from pathlib import Path

    from bench.cheaters import _perfect, _snoop
    from referee.rules import Profile, SeatView
else:
    import _perfect  # copied beside it by bench/fairplay.py, which stages the folder
    import _snoop

NAME = "seed"
VERSION = "1.0"

DEFAULT_SEED: Final = 1
"""``nap tournament run``'s default ``--seed``."""

MAX_BLOCKS: Final = 8192
"""No more boards than this per seed and table size, unless a database plans more."""
DEAL_BUDGET_S: Final = 0.03
"""Time one decision may spend dealing boards not dealt yet (about 60 boards), so that a
hand it cannot place (a wrong seed) never makes a decision late."""
LOOK_AGAIN_S: Final = 2.0
"""At most one new look for seeds (databases, command lines) per this many seconds."""

TABLE_ID: Final = re.compile(r"t(\d+)-b(\d+)-r(\d+)")
"""Today's table ids name the tournament, the block and the rotation."""

_SEED_BITS = 63


def derive_seed(seed: int, *labels: object) -> int:
    """``tournaments.plan.scheduler.derive_seed``, copied: a seed in ``[0, 2**63)`` from a seed and labels."""
    text = "\x1f".join([repr(seed), *(repr(label) for label in labels)])
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - _SEED_BITS)


class Seeds:
    """The tournament seeds this bot can guess or read, and the boards they deal."""

    def __init__(self) -> None:
        self.book = _perfect.DealBook()
        self.seeds: dict[int, str] = {DEFAULT_SEED: "the default"}
        """Each seed tried, with where it came from."""
        self.of_tournament: dict[int, set[int]] = {}
        """Tournament id to its seeds (one per database that has that id), from the databases read."""
        self.blocks: dict[int, int] = {}
        """Seed to the number of blocks its tournament plans, from the databases read."""
        self._dealt: set[tuple[int, str, int, int]] = set()
        self._upto: dict[tuple[int, str, int], int] = {}
        self._read: set[str] = set()
        self._looked = -math.inf

    def look(self) -> None:
        """Gather seeds from the databases and command lines in reach (at most every few seconds)."""
        now = time.monotonic()
        if now - self._looked < LOOK_AGAIN_S:
            return
        self._looked = now
        for path in _snoop.database_paths():
            self._read_database(path)
        for process in _snoop.tournament_processes():
            for value in _snoop.option_values(process.argv, "--seed"):
                try:
                    self._add(int(value), f"the command line of pid {process.pid}")
                except ValueError:
                    continue

    def _add(self, seed: int, where: str) -> None:
        if seed not in self.seeds:
            self.seeds[seed] = where
            _perfect.note(f"seed {seed} from {where}")

    def _read_database(self, path: Path) -> None:
        try:
            conn = _snoop.open_read_only(path)
            try:
                rows = conn.execute("SELECT id, seed, config FROM tournaments").fetchall()
            finally:
                conn.close()
        except sqlite3.Error as exc:
            if str(path) not in self._read:
                self._read.add(str(path))
                _perfect.note(f"database {path}: denied ({exc.__class__.__name__}: {exc})")
            return
        if f"ok {path}" not in self._read:
            self._read.add(f"ok {path}")
            _perfect.note(f"database {path}: read OK ({len(rows)} tournaments)")
        for tournament, seed, config in rows:
            self.of_tournament.setdefault(int(tournament), set()).add(int(seed))
            self._add(int(seed), f"{path}, tournament {tournament}")
            try:
                plan = json.loads(config)
                self.blocks[int(seed)] = math.ceil(int(plan["sessions"]) / int(plan["table_size"]))
            except (ValueError, KeyError, TypeError, ZeroDivisionError):
                continue

    def deal_board(self, seed: int, profile: Profile, table_size: int, block: int) -> None:
        """Put block ``block``'s board of the tournament dealt from ``seed`` in the book."""
        key = (seed, profile.name, table_size, block)
        if key in self._dealt:
            return
        self._dealt.add(key)
        board = derive_seed(seed, "board", block)
        dealer = first_dealer(board, table_size, pack=profile.pack)
        for number in range(profile.deals_per_session):
            deck = deal_deck(board, number, pack=profile.pack)
            deal = Deal(profile, deck=deck, dealer=dealer, table_size=table_size)
            self.book.add(
                table_size=table_size,
                dealer=dealer,
                hands={seat: hand for seat, hand in enumerate(deal.hands) if hand},
            )
            dealer = (dealer + 1) % table_size

    def deal_boards(self, profile: Profile, table_size: int) -> None:
        """Deal more boards for at most :data:`DEAL_BUDGET_S`: to each seed's plan, else :data:`MAX_BLOCKS`.

        The seeds a database gave go first, then the guesses.
        """
        stop = time.monotonic() + DEAL_BUDGET_S
        for seed in sorted(self.seeds, key=lambda seed: seed not in self.blocks):
            key = (seed, profile.name, table_size)
            done = self._upto.get(key, 0)
            upto = self.blocks.get(seed, MAX_BLOCKS)
            while done < upto and time.monotonic() < stop:
                self.deal_board(seed, profile, table_size, done)
                done += 1
            self._upto[key] = done

    def find(self, view: SeatView, profile: Profile, table: str) -> _perfect.Hands | None:
        """Every hand of ``view``'s deal, if one of the boards dealt from a known seed is this one."""
        match = TABLE_ID.fullmatch(table)
        if match is not None:
            tournament, block = int(match[1]), int(match[2])
            for seed in self.of_tournament.get(tournament) or list(self.seeds):
                self.deal_board(seed, profile, view.table_size, block)
        hands = self.book.find(view)
        if hands is None:
            self.look()
            self.deal_boards(profile, view.table_size)
            hands = self.book.find(view)
        return hands


SEEDS = Seeds()


class SeedBot(_perfect.CheatingBot):
    """Knows every hand of a board dealt from a seed it guessed or read."""

    def known_hands(self, view: SeatView) -> _perfect.Hands | None:
        """The hands of the board dealt from a known seed in which this seat holds this hand."""
        return SEEDS.find(view, self.table_profile(view), self.table)


if __name__ == "__main__":
    SEEDS.look()
    _perfect.note("seeds tried: " + ", ".join(f"{seed} ({where})" for seed, where in SEEDS.seeds.items()))
    run(SeedBot, name=NAME, version=VERSION)
