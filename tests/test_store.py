"""The SQLite store: round trips, exactly-once sessions, atomicity, file identity, failures.

Also: the logs packed into the database (a moved or copied file reads them all), the
standings' running totals (always equal to the ones recomputed from every session),
paging through sessions, the upgrade of a version 2 file (its log files read in) and of a
version 3 file (the rotation check's totals computed), the mark of a tournament played
without isolation, and the lock that lets one process play a tournament.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import pathlib
import random
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from typing import TYPE_CHECKING, Literal

import pytest

from referee.match.faults import Fault, FaultKind
from tests.old_schemas import V5_FAULT_VALUES, create_old_database
from tournaments.errors import MissingLogError, StoreError, TournamentBusyError
from tournaments.play.locks import lock_path, tournament_lock
from tournaments.results import Declaration, SeatResult, SessionResult
from tournaments.stats.standings import compute_standings, standings_of
from tournaments.stats.tally import Tally, tally_of
from tournaments.store import database as store_module
from tournaments.store.database import BotRow, SessionRow, Store
from tournaments.store.logs import decode_log, encode_log, write_encoded_log
from tournaments.store.schema import APPLICATION_ID, SCHEMA_VERSION, UNCONTAINED_BEFORE, UNISOLATED_BEFORE

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

BOTS = ("alpha", "beta", "gamma")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "nap.db"


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    with Store.open(db) as opened:
        yield opened


def make_tournament(store: Store, *, blocks: int = 2) -> int:
    return store.create_tournament(
        name="cup",
        config={"profile": "heather", "table_size": 3},
        seed=7,
        blocks=[(i, 1000 + i, BOTS) for i in range(blocks)],
    )


def make_result(tournament: int, block: int = 0, rotation: int = 0) -> SessionResult:
    bots = BOTS[rotation:] + BOTS[:rotation]
    late = Fault(
        kind=FaultKind.LATE,
        bot=bots[2],
        table="5f0e3c1a9b2d4e67",
        seat=2,
        deal=3,
        decision=5,
        elapsed_ms=812.5,
        detail="answered after 800 ms",
    )
    illegal = Fault(
        kind=FaultKind.ILLEGAL,
        bot=bots[2],
        table=None,
        seat=2,
        deal=4,
        decision=None,
        elapsed_ms=3.25,
        detail="played 2H on spades",
    )
    return SessionResult(
        tournament=tournament,
        block=block,
        rotation=rotation,
        board_seed=1000 + block,
        seats=(
            SeatResult(
                0,
                bots[0],
                12,
                0.5,
                (Declaration("nap", made=True), Declaration("three", made=False)),
            ),
            SeatResult(1, bots[1], 12, 0.5, (Declaration("misere", made=True),)),
            SeatResult(2, bots[2], -24, 0.0, (), faults=2),
        ),
        faults=(late, illegal),
    )


def log_of(result: SessionResult, **extra: object) -> bytes:
    """A real log of ``result``, as a worker encodes it for the store."""
    payload = {
        "board_seed": result.board_seed,
        "profile": "heather",
        "bots": [{"seat": seat.seat, "bot": seat.bot} for seat in result.seats],
        "result": {"chips": [seat.chips for seat in result.seats]},
        **extra,
    }
    return encode_log(payload, tournament=result.tournament, block=result.block, rotation=result.rotation)


def record(store: Store, result: SessionResult) -> int:
    """Record ``result`` with its log; the session id."""
    return store.record_session(result, log=log_of(result))


DATA_TABLES = ("sessions", "session_logs", "seat_results", "declarations", "faults")
"""The tables a session's own rows go to."""
TOTALS_TABLES = ("block_seats", "bot_totals", "pair_totals", "contract_totals", "tournament_totals")
"""The tables of the standings' running totals."""


def count(db: Path, table: str) -> int:
    with closing(sqlite3.connect(db)) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # noqa: S608 - table names are constants here


def damage_page_of(db: Path, table: str) -> bytes:
    """Break the b-tree header of ``table``'s root page, as a bad sector would; the new bytes."""
    with closing(sqlite3.connect(db)) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    data = bytearray(db.read_bytes())
    data[(root - 1) * page_size] = 0xFF  # no such page type
    db.write_bytes(bytes(data))
    return bytes(data)


class TestFile:
    def test_new_file_is_marked_ours_and_in_wal_mode(self, db: Path) -> None:
        """Creating a store stamps application_id and user_version and turns WAL on."""
        Store.open(db).close()
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    def test_reopening_keeps_the_data(self, db: Path) -> None:
        """A second open of the same file sees what the first one wrote."""
        with Store.open(db) as first:
            tournament = make_tournament(first)
        with Store.open(db) as second:
            assert second.tournament(tournament).name == "cup"

    def test_garbage_file_is_not_a_sqlite_database(self, db: Path) -> None:
        """A file that is not SQLite at all is refused, left as it is, with what to do."""
        garbage = b"this is not a database, just some text" * 100
        db.write_bytes(garbage)
        with pytest.raises(StoreError) as raised:
            Store.open(db)
        assert str(raised.value) == (
            f"{db} is not a SQLite database: choose a Nap Arena database, or a new file, with --db"
        )
        assert db.read_bytes() == garbage

    def test_damaged_database_is_refused_before_anything_is_written(self, db: Path) -> None:
        """A damaged page is found when the file is opened for writing; the file is left as it is."""
        with Store.open(db) as store:
            tournament = make_tournament(store)
            for rotation in range(3):
                record(store, make_result(tournament, 0, rotation))
        damaged = damage_page_of(db, "seat_results")
        with pytest.raises(StoreError) as raised:
            Store.open(db)
        message = str(raised.value)
        assert message.startswith(f"{db} is damaged (")
        assert message.endswith("): restore it from a backup, or choose another file with --db")
        assert "\n" not in message
        assert db.read_bytes() == damaged
        with Store.open(db, check=False) as reader:  # a reader may skip the check, and reads what it can
            assert reader.tournament(tournament).name == "cup"
        assert db.read_bytes() == damaged

    def test_full_disk_is_one_line_and_keeps_every_committed_session(self, db: Path, store: Store) -> None:
        """SQLITE_FULL (here: the page limit reached) fails one session, which leaves no trace."""
        tournament = make_tournament(store, blocks=40)
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]  # noqa: SLF001
        store._conn.execute(f"PRAGMA max_page_count = {pages}")  # noqa: SLF001
        recorded: set[tuple[int, int]] = set()

        def record_all() -> None:
            for block in range(40):
                for rotation in range(3):
                    record(store, make_result(tournament, block, rotation))
                    recorded.add((block, rotation))

        with pytest.raises(StoreError) as raised:
            record_all()
        assert str(raised.value) == f"{db}: database or disk is full (free some space)"
        assert 0 < len(recorded) < 120
        assert store.finished_keys(tournament) == recorded
        assert count(db, "seat_results") == 3 * len(recorded)
        assert count(db, "session_logs") == len(recorded)
        assert store.tally([tournament]) == tally_of(store.session_results(tournament))
        store.set_status(tournament, "interrupted")  # an update in place still fits
        assert store.tournament(tournament).status == "interrupted"

    def test_other_sqlite_database_is_not_ours(self, db: Path) -> None:
        """A SQLite file of another application (tables, no id of ours) is left untouched."""
        with sqlite3.connect(db) as conn:
            conn.execute("CREATE TABLE customers (id INTEGER)")
        with pytest.raises(StoreError, match=r"nap\.db is not a Nap Arena database$"):
            Store.open(db)
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal"

    def test_newer_schema_is_refused(self, db: Path) -> None:
        """A database written by a newer schema version is not opened."""
        Store.open(db).close()
        with sqlite3.connect(db) as conn:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        with pytest.raises(StoreError, match="newer Nap Arena"):
            Store.open(db)

    def test_locked_database_on_open(self, db: Path) -> None:
        """Opening a database another connection holds exclusively fails fast and clearly."""
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("CREATE TABLE t (x)")
        holder.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(StoreError, match=r"nap\.db is locked by another process$"):
                Store.open(db, busy_timeout_ms=50)
        finally:
            holder.execute("ROLLBACK")
            holder.close()

    def test_locked_database_on_write(self, db: Path, store: Store) -> None:
        """A write that cannot get the lock within the busy timeout is a clear StoreError."""
        tournament = make_tournament(store)
        store.close()
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            with Store.open(db, busy_timeout_ms=50) as waiting:
                with pytest.raises(StoreError, match="locked by another process"):
                    record(waiting, make_result(tournament))
                assert waiting.finished_keys(tournament) == set()
        finally:
            holder.execute("ROLLBACK")
            holder.close()

    def test_a_database_in_a_folder_that_cannot_be_written_is_read_as_it_is(
        self, db: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A reader opens it (SQLite cannot make its WAL files there); a writer is refused as before.

        SQLite's refusal in a read-only folder (a read-only mount, checked by hand; or a folder
        without write permission, which root ignores) is played here, with the folder's answer.
        """
        with Store.open(db) as store:
            tournament = make_tournament(store)
            record(store, make_result(tournament, 0, 0))
        refused = StoreError(f"{db}: unable to open database file")

        def unopenable(*_: object, **__: object) -> Store:
            raise refused

        monkeypatch.setattr(Store, "_open", classmethod(unopenable))
        monkeypatch.setattr(os, "access", lambda path, mode: not (mode & os.W_OK and path == db.parent))
        with pytest.raises(StoreError) as raised:
            Store.open(db)
        assert raised.value is refused
        before = db.read_bytes()
        with Store.open(db, check=False, reading=True) as reader:
            assert reader.tournament(tournament).name == "cup"
            assert reader.finished_keys(tournament) == {(0, 0)}
        assert db.read_bytes() == before
        assert sorted(path.name for path in db.parent.iterdir()) == [db.name], "nothing made beside it"

    def test_an_old_database_in_a_folder_that_cannot_be_written_says_to_upgrade_it(
        self, db: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        with closing(sqlite3.connect(db)) as conn:
            create_old_database(conn, 5)
            conn.commit()

        def unopenable(*_: object, **__: object) -> Store:
            msg = f"{db}: unable to open database file"
            raise StoreError(msg)

        monkeypatch.setattr(Store, "_open", classmethod(unopenable))
        monkeypatch.setattr(os, "access", lambda *_: False)
        with pytest.raises(StoreError) as raised:
            Store.open(db, reading=True)
        assert str(raised.value) == (
            f"{db} is in a folder that cannot be written, and its schema 5 must be upgraded to "
            f"{SCHEMA_VERSION} first: open it once where it can be written"
        )

    def test_unopenable_path(self, tmp_path: Path) -> None:
        """A path in a missing folder is a StoreError naming the path."""
        with pytest.raises(StoreError, match=r"^cannot open .*nap\.db: unable to open"):
            Store.open(tmp_path / "missing" / "nap.db")


class TestBots:
    def register(self, store: Store, content_hash: str, version: str = "1") -> BotRow:
        return store.register_bot(
            name="greedy",
            version=version,
            command=["python", "-m", "greedy"],
            language="python",
            folder="bots/greedy",
            content_hash=content_hash,
        )

    def test_same_hash_is_idempotent(self, store: Store) -> None:
        """Registering the same content twice returns the same row and adds none."""
        first = self.register(store, "aaa")
        again = self.register(store, "aaa", version="ignored")
        assert again == first
        assert store.bots() == [first]
        assert first.command == ("python", "-m", "greedy")

    def test_changed_hash_is_a_new_version(self, store: Store) -> None:
        """New content is a new row, and lookup by name gives the latest version."""
        first = self.register(store, "aaa", version="1")
        second = self.register(store, "bbb", version="2")
        assert second.id != first.id
        assert [b.version for b in store.bots()] == ["1", "2"]
        assert store.bot("greedy") == second
        assert store.bot(str(first.id)) == first

    def test_unknown_bot(self, store: Store) -> None:
        """Looking up a bot that was never registered names it in the error."""
        with pytest.raises(StoreError, match=r"^unknown bot: nobody$"):
            store.bot("nobody")


class TestTournaments:
    def test_tournament_round_trip_and_status(self, store: Store) -> None:
        """A tournament keeps its config, seed and blocks; status changes stamp the time."""
        tournament = make_tournament(store)
        row = store.tournament(tournament)
        assert (row.status, row.seed, row.finished_at) == ("running", 7, None)
        assert row.config == {"profile": "heather", "table_size": 3}
        assert [(b.index, b.board_seed, b.bots) for b in store.blocks(tournament)] == [
            (0, 1000, BOTS),
            (1, 1001, BOTS),
        ]
        store.set_status(tournament, "finished")
        row = store.tournament(tournament)
        assert row.status == "finished"
        assert row.finished_at is not None
        assert store.tournaments() == [row]

    def test_unknown_tournament(self, store: Store) -> None:
        """Unknown tournament ids are errors that name the id."""
        with pytest.raises(StoreError, match=r"^unknown tournament: 7$"):
            store.tournament(7)
        with pytest.raises(StoreError, match=r"^unknown tournament: 7$"):
            store.set_status(7, "interrupted")
        with pytest.raises(StoreError, match=r"^unknown tournament: 7$"):
            store.mark_unisolated(7, "bwrap not available")

    def test_the_first_reason_for_playing_unisolated_stays(self, db: Path, store: Store) -> None:
        """A tournament starts isolated (None); the first run that was not says why, for good."""
        tournament = make_tournament(store)
        other = make_tournament(store)
        assert store.tournament(tournament).unisolated is None
        store.mark_unisolated(tournament, "bwrap not available")
        store.mark_unisolated(tournament, "a remote bot")
        assert store.tournament(tournament).unisolated == "bwrap not available"
        assert store.tournament(other).unisolated is None
        with Store.open(db) as again:
            assert [row.unisolated for row in again.tournaments()] == ["bwrap not available", None]


class TestSessions:
    def test_results_round_trip_exactly(self, store: Store) -> None:
        """What is recorded comes back as equal SessionResult values, in key order."""
        tournament = make_tournament(store)
        results = [make_result(tournament, 1, 0), make_result(tournament, 0, 2)]
        for result in results:
            record(store, result)
        assert store.session_results(tournament) == [results[1], results[0]]
        assert store.finished_keys(tournament) == {(1, 0), (0, 2)}

    def test_session_row(self, store: Store) -> None:
        """A session row gives its key, board seed and bots; its log is read by id."""
        tournament = make_tournament(store)
        result = make_result(tournament, 0, 1)
        session_id = record(store, result)
        row = store.session(session_id)
        assert row == SessionRow(
            session_id, tournament, 0, 1, 1000, row.finished_at, ("beta", "gamma", "alpha")
        )
        assert store.log(session_id) == log_of(result)
        with pytest.raises(StoreError, match=r"^unknown session: 12$"):
            store.session(12)

    def test_same_session_twice_is_refused(self, db: Path, store: Store) -> None:
        """Recording a (tournament, block, rotation) again raises and leaves one row, and its first log."""
        tournament = make_tournament(store)
        session_id = record(store, make_result(tournament))
        with pytest.raises(
            StoreError, match=r"^session already recorded: tournament 1, block 0, rotation 0$"
        ):
            store.record_session(make_result(tournament), log=log_of(make_result(tournament), again=True))
        assert count(db, "sessions") == 1
        assert count(db, "seat_results") == 3
        assert count(db, "faults") == 2
        assert count(db, "session_logs") == 1
        assert store.session_results(tournament) == [make_result(tournament)]
        assert store.log(session_id) == log_of(make_result(tournament))

    @pytest.mark.parametrize("failing", ["_insert_faults", "_add_change"])
    def test_failure_midway_writes_nothing(
        self, db: Path, store: Store, monkeypatch: pytest.MonkeyPatch, failing: str
    ) -> None:
        """An error after the session, its log and seats (or its totals) are written rolls it all back."""
        tournament = make_tournament(store)
        real = getattr(store_module, failing)

        def explode(*args: object) -> None:
            real(*args)  # the rows are written, then the disk catches fire
            message = "disk on fire"
            raise RuntimeError(message)

        monkeypatch.setattr(store_module, failing, explode)
        with pytest.raises(RuntimeError, match="disk on fire"):
            record(store, make_result(tournament))
        for table in (*DATA_TABLES, *TOTALS_TABLES):
            assert count(db, table) == 0, table
        assert store.tally([tournament]) == Tally()
        monkeypatch.undo()
        session_id = record(store, make_result(tournament))
        assert count(db, "sessions") == 1
        assert store.log(session_id) == log_of(make_result(tournament))
        assert store.tally([tournament]) == tally_of([make_result(tournament)])

    def test_session_of_unknown_block_or_wrong_seed(self, store: Store) -> None:
        """A session must belong to a known block and carry that block's board seed."""
        tournament = make_tournament(store)
        with pytest.raises(StoreError, match="unknown block 5 of tournament"):
            record(store, make_result(tournament, block=5))
        wrong = make_result(tournament)
        wrong = SessionResult(wrong.tournament, wrong.block, wrong.rotation, 999, wrong.seats, wrong.faults)
        with pytest.raises(StoreError, match="board seed 999"):
            record(store, wrong)
        assert store.finished_keys(tournament) == set()


class TestFindSessions:
    @pytest.fixture
    def ids(self, store: Store) -> dict[tuple[int, int, int], int]:
        first = make_tournament(store)
        second = make_tournament(store)
        found = {}
        for tournament, block, rotation in [(first, 0, 0), (first, 0, 1), (second, 1, 2)]:
            result = make_result(tournament, block, rotation)
            if (tournament, rotation) == (first, 1):
                result = SessionResult(
                    result.tournament,
                    result.block,
                    result.rotation,
                    result.board_seed,
                    result.seats,
                    faults=(),
                )
            found[tournament, block, rotation] = record(store, result)
        return found

    def test_filters(self, store: Store, ids: dict[tuple[int, int, int], int]) -> None:
        """Each filter narrows the list; filters combine; rows come in key order."""

        def found(**filters: object) -> list[int]:
            return [row.id for row in store.find_sessions(**filters)]  # type: ignore[arg-type]

        a, b, c = ids[1, 0, 0], ids[1, 0, 1], ids[2, 1, 2]
        assert found() == [a, b, c]
        assert found(tournament=1) == [a, b]
        assert found(fault_kind="illegal") == [a, c]
        assert found(fault_kind="crash") == []
        assert found(bot="alpha") == [a, b, c]
        assert found(bot="nobody") == []
        # alpha sits at seat 0 (rotation 0), seat 2 (rotation 1), seat 1 (rotation 2).
        assert found(bot="alpha", result="win") == [a, c]
        assert found(bot="alpha", result="loss") == [b]
        assert found(tournament=1, bot="gamma", result="loss", fault_kind="late") == [a]

    def test_fault_filter_with_a_bot_keeps_that_bots_faults(
        self, store: Store, ids: dict[tuple[int, int, int], int]
    ) -> None:
        """--bot X --fault late lists the sessions where X was late, not those where X sat by a late bot."""

        def found(**filters: object) -> list[int]:
            return [row.id for row in store.find_sessions(**filters)]  # type: ignore[arg-type]

        a, c = ids[1, 0, 0], ids[2, 1, 2]
        # The faults are seat 2's: gamma's in session a, beta's in c; alpha sits in both.
        assert found(fault_kind="late") == [a, c]
        assert found(bot="alpha", fault_kind="late") == []
        assert found(bot="gamma", fault_kind="late") == [a]
        assert found(bot="beta", fault_kind="illegal") == [c]

    def test_result_filter_needs_a_bot(self, store: Store) -> None:
        """Win/loss only means something for a named bot."""
        with pytest.raises(StoreError, match="needs a bot"):
            store.find_sessions(result="win")


CONTRACTS = ("three", "four", "nap", "misere", "wellington")
FAULT_KINDS = (FaultKind.LATE, FaultKind.ILLEGAL, FaultKind.DISCONNECT, FaultKind.MALFORMED)
NAMES = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")


def random_result(
    rng: random.Random, tournament: int, block: int, rotation: int, bots: Sequence[str], *, pool: bool
) -> SessionResult:
    """A plausible session of ``bots`` (seats rotated): chips summing to 0, win shares split on ties."""
    seated = tuple(bots[rotation:]) + tuple(bots[:rotation])
    if rng.random() < 0.1:  # every seat even: a win share of 1/n each
        chips = [0] * len(seated)
    else:
        chips = [rng.choice((-6, -3, 0, 3, 6)) for _ in seated[1:]]
        chips.append(-sum(chips))
    winners = chips.count(max(chips))
    seats = []
    faults = []
    for seat, (bot, balance) in enumerate(zip(seated, chips, strict=True)):
        declarations = []
        for _ in range(rng.randint(0, 2)):
            widow = rng.choice((None, True, False)) if pool else None
            declarations.append(
                Declaration(
                    rng.choice(CONTRACTS),
                    made=rng.random() < 0.6,
                    pool_chips=rng.choice((0, 0, 3, 7)) if pool else 0,
                    widow_taken=widow,
                    peeked=None if widow is None else rng.random() < 0.5,
                    exchanged=rng.randint(0, 3) if pool else 0,
                )
            )
        made_faults = rng.choice((0, 0, 0, 0, 0, 1, 2))
        for _ in range(made_faults):
            kind, deal, decision = rng.choice(FAULT_KINDS), rng.randint(0, 7), rng.randint(-1, 9)
            faults.append(
                Fault(
                    kind=kind,
                    bot=bot,
                    table=None,
                    seat=seat,
                    deal=deal,
                    decision=None if decision < 0 else decision,
                    elapsed_ms=1.5,
                    detail="x",
                )
            )
        seats.append(
            SeatResult(
                seat,
                bot,
                balance,
                1 / winners if balance == max(chips) else 0.0,
                tuple(declarations),
                made_faults,
            )
        )
    return SessionResult(tournament, block, rotation, tournament * 1000 + block, tuple(seats), tuple(faults))


@dataclasses.dataclass
class Played:
    """Tournaments recorded into a store, and what was recorded."""

    tournaments: list[int]
    results: dict[int, SessionResult]
    """By session id."""
    order: list[int]
    """The session ids in the order they were recorded."""

    def of(self, tournament: int) -> list[SessionResult]:
        return [result for result in self.results.values() if result.tournament == tournament]


def plan(rng: random.Random, *, blocks: int, sizes: Sequence[int]) -> list[tuple[str, ...]]:
    """Each block's bots: a table size from ``sizes``, bots drawn from NAMES."""
    return [tuple(rng.sample(NAMES, rng.choice(sizes))) for _ in range(blocks)]


def play(store: Store, *, seed: int = 5, check: bool = False) -> Played:
    """Three tournaments of mixed table sizes, some blocks incomplete, recorded in shuffled order.

    ``check``: after each session, the store's totals equal the ones recomputed so far.
    """
    rng = random.Random(seed)
    setups = [
        ("threes", 6, (3,), False),
        ("mixed pool", 8, (2, 3, 4, 5, 6, 7), True),
        ("fours", 4, (4,), False),
    ]
    pending: list[SessionResult] = []
    tournaments = []
    for number, (name, blocks, sizes, pool) in enumerate(setups, start=1):
        seating = plan(rng, blocks=blocks, sizes=sizes)
        tournament = store.create_tournament(
            name=name,
            config={"pool": pool},
            seed=number,
            blocks=[(block, number * 1000 + block, bots) for block, bots in enumerate(seating)],
        )
        assert tournament == number
        tournaments.append(tournament)
        for block, bots in enumerate(seating):
            rotations = list(range(len(bots)))
            if block % 3 == 1:  # an incomplete block: a tournament stopped mid-block
                rotations = sorted(rng.sample(rotations, rng.randint(1, len(bots) - 1)))
            pending += [random_result(rng, tournament, block, r, bots, pool=pool) for r in rotations]
    rng.shuffle(pending)
    results: dict[int, SessionResult] = {}
    order = []
    for result in pending:
        session_id = record(store, result)
        results[session_id] = result
        order.append(session_id)
        if check:
            done = [r for r in results.values() if r.tournament == result.tournament]
            assert store.tally([result.tournament]) == tally_of(done), len(results)
    return Played(tournaments, results, order)


class TestLogs:
    def test_every_log_reads_back_byte_for_byte(self, db: Path, store: Store) -> None:
        """Each session's log is kept exactly as given, in the database and nowhere else."""
        played = play(store)
        for session_id, result in played.results.items():
            data = store.log(session_id)
            assert data == log_of(result)
            document = decode_log(data, name=f"session {session_id}")
            assert (document["tournament"], document["block"], document["rotation"]) == (
                result.tournament,
                result.block,
                result.rotation,
            )
        assert count(db, "session_logs") == len(played.results)
        assert sorted(p.name for p in db.parent.iterdir()) == ["nap.db", "nap.db-shm", "nap.db-wal"]

    @pytest.mark.slow
    def test_a_large_log_round_trips(self, store: Store) -> None:
        """A log of about a megabyte (compressed) is one blob like any other."""
        tournament = make_tournament(store)
        result = make_result(tournament)
        noise = random.Random(1).randbytes(1_000_000).hex()
        data = log_of(result, record={"noise": noise})
        session_id = store.record_session(result, log=data)
        assert store.log(session_id) == data
        assert decode_log(store.log(session_id), name="big")["record"] == {"noise": noise}

    def test_log_of_an_unknown_session(self, store: Store) -> None:
        """Asking for the log of a session never recorded names the id."""
        record(store, make_result(make_tournament(store)))
        with pytest.raises(StoreError, match=r"^unknown session: 99$") as raised:
            store.log(99)
        assert not isinstance(raised.value, MissingLogError)

    @pytest.mark.slow
    def test_a_moved_and_a_copied_database_read_every_log(self, tmp_path: Path) -> None:
        """The file alone carries the logs: copied while open (with its WAL) or moved after, it reads them."""
        first = tmp_path / "first" / "nap.db"
        first.parent.mkdir()
        copy = tmp_path / "copies" / "copy.db"
        copy.parent.mkdir()
        with Store.open(first) as store:
            played = play(store)
            wal = first.with_name("nap.db-wal")
            assert wal.stat().st_size > 0  # the last commits are only in the WAL yet
            shutil.copyfile(first, copy)
            shutil.copyfile(wal, copy.with_name("copy.db-wal"))
        moved = tmp_path / "elsewhere" / "deeper" / "moved.db"
        moved.parent.mkdir(parents=True)
        first.rename(moved)
        shutil.rmtree(first.parent)
        for path in (copy, moved):
            with Store.open(path) as store:
                for session_id, result in played.results.items():
                    assert store.log(session_id) == log_of(result), (path, session_id)
                for tournament in played.tournaments:
                    assert store.session_results(tournament) == sorted(
                        played.of(tournament), key=lambda r: (r.block, r.rotation)
                    )


class TestTotals:
    """The running totals kept as each session is recorded equal the ones recomputed from every session."""

    @pytest.mark.slow
    def test_totals_equal_the_recomputed_ones_after_every_session(self, store: Store) -> None:
        play(store, check=True)

    @pytest.mark.slow
    def test_standings_from_the_totals_are_the_recomputed_standings(self, store: Store) -> None:
        played = play(store)
        # The data has what the totals must get right.
        results = list(played.results.values())
        assert any(r.seats[0].win_share not in {0.0, 1.0} for r in results)  # ties for the win
        assert any(len(r.seats) == 7 for r in results)
        assert any(r.faults for r in results)
        assert any(d.widow_taken for r in results for s in r.seats for d in s.declarations)
        assert any(d.pool_chips for r in results for s in r.seats for d in s.declarations)
        for tournament in played.tournaments:
            stored = store.session_results(tournament)
            assert sorted(stored, key=repr) == sorted(played.of(tournament), key=repr)
            assert store.tally([tournament]) == tally_of(stored)
            assert store.tally([tournament]) == tally_of(played.of(tournament))  # in recording order
            for has_pool in (False, True):
                assert standings_of(store.tally([tournament]), has_pool=has_pool) == compute_standings(
                    stored, has_pool=has_pool
                )
            tally = store.tally([tournament])
            assert tally.sessions == len(stored)
            assert tally.faults == sum(len(r.faults) for r in stored)
            assert tally.blocks == len({r.block for r in stored})
            assert any(totals.rotation_edge for totals in tally.bots.values())  # complete blocks
            assert any(totals.rotation_blocks < totals.blocks for totals in tally.bots.values())  # and not

    @pytest.mark.slow
    def test_tournaments_together(self, store: Store) -> None:
        """The totals of several tournaments add up like their sessions; unknown ids add nothing."""
        played = play(store)
        both = played.tournaments[:2]
        together = [r for t in both for r in store.session_results(t)]
        assert store.tally(both) == tally_of(together)
        assert store.tally([*reversed(both), both[0], 77]) == tally_of(together)
        assert standings_of(store.tally(both)) == compute_standings(together)
        every = [r for t in played.tournaments for r in store.session_results(t)]
        assert store.tally(played.tournaments) == tally_of(every)
        assert standings_of(store.tally(played.tournaments)) == compute_standings(every)
        assert store.tally([]) == Tally()
        assert store.tally([77]) == Tally()

    @pytest.mark.slow
    def test_totals_survive_reopening(self, db: Path) -> None:
        """The totals are in the file: another process reads them and goes on adding to them."""
        with Store.open(db) as store:
            played = play(store)
        tournament = played.tournaments[0]
        with Store.open(db) as store:
            blocks = store.blocks(tournament)
            missing = [
                (block.index, rotation, block.bots)
                for block in blocks
                for rotation in range(len(block.bots))
                if (block.index, rotation) not in store.finished_keys(tournament)
            ]
            assert missing  # some blocks were left incomplete
            rng = random.Random(9)
            for block, rotation, bots in missing:
                record(store, random_result(rng, tournament, block, rotation, bots, pool=False))
            assert store.tally([tournament]) == tally_of(store.session_results(tournament))
            assert standings_of(store.tally([tournament])) == compute_standings(
                store.session_results(tournament)
            )

    def test_planned(self, store: Store) -> None:
        """A tournament's blocks and the sessions they schedule, played or not."""
        played = play(store)
        for tournament in played.tournaments:
            blocks = store.blocks(tournament)
            assert store.planned(tournament) == (len(blocks), sum(len(b.bots) for b in blocks))
        assert store.planned(77) == (0, 0)


FILTERS: list[dict[str, object]] = [
    {},
    {"tournament": 2},
    {"bot": "alpha"},
    {"bot": "theta", "tournament": 2},
    {"fault_kind": "late"},
    {"fault_kind": "disconnect", "tournament": 1},
    {"bot": "beta", "fault_kind": "illegal"},
    {"bot": "gamma", "result": "win"},
    {"bot": "gamma", "result": "loss"},
    {"bot": "delta", "result": "win", "tournament": 2},
]


class TestPaging:
    @pytest.fixture
    def played(self, store: Store) -> Played:
        return play(store)

    @pytest.mark.slow
    @pytest.mark.usefixtures("played")
    @pytest.mark.parametrize("filters", FILTERS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()))
    def test_pages_partition_the_list(self, store: Store, filters: dict[str, object]) -> None:
        """Pages of any size, read one after another, give the whole list once, in order."""
        full = store.find_sessions(**filters)  # type: ignore[arg-type]
        assert len(full) >= 3  # each filter keeps something worth paging
        assert [(r.tournament, r.block, r.rotation) for r in full] == sorted(
            (r.tournament, r.block, r.rotation) for r in full
        )
        for size in (1, 2, 7, len(full), len(full) + 5):
            pages: list[list[SessionRow]] = []
            offset = 0
            while page := store.find_sessions(**filters, limit=size, offset=offset):  # type: ignore[arg-type]
                assert len(page) <= size
                assert len(pages) <= len(full), "the pages never end"
                pages.append(page)
                offset += size
            assert [row for page in pages for row in page] == full, size
            assert len(pages) == -(-len(full) // size)
        assert store.find_sessions(**filters, offset=2) == full[2:]  # type: ignore[arg-type]
        assert store.find_sessions(**filters, limit=0) == []  # type: ignore[arg-type]
        assert store.session_ids(**filters) == [row.id for row in full]  # type: ignore[arg-type]
        assert store.sessions_by_id([row.id for row in full]) == full

    def test_filters_mean_what_they_say(self, store: Store, played: Played) -> None:
        """Each filter keeps exactly the sessions the recorded results say it should."""

        def expected(
            tournament: int | None = None,
            bot: str | None = None,
            fault_kind: str | None = None,
            result: Literal["win", "loss"] | None = None,
        ) -> list[int]:
            kept = []
            for session_id, r in played.results.items():
                shares = {s.bot: s.win_share for s in r.seats}
                if tournament is not None and r.tournament != tournament:
                    continue
                if bot is not None and bot not in shares:
                    continue
                if fault_kind is not None and not any(
                    f.kind == fault_kind and bot in {None, f.bot} for f in r.faults
                ):
                    continue
                if result is not None and (shares[bot or ""] > 0) != (result == "win"):
                    continue
                kept.append(session_id)
            return sorted(
                kept,
                key=lambda i: (
                    played.results[i].tournament,
                    played.results[i].block,
                    played.results[i].rotation,
                ),
            )

        for filters in FILTERS:
            assert store.session_ids(**filters) == expected(**filters), filters  # type: ignore[arg-type]

    def test_the_order_is_the_play_order_not_the_recording_order(self, store: Store, played: Played) -> None:
        """Sessions recorded out of order are listed by tournament, block and rotation."""
        ids = store.session_ids()
        assert ids != sorted(ids)
        assert [played.results[i] for i in ids] == sorted(
            played.results.values(), key=lambda r: (r.tournament, r.block, r.rotation)
        )
        assert [row.id for row in store.find_sessions()] == ids

    def test_sessions_by_id_keeps_the_order_given(self, store: Store, played: Played) -> None:
        ids = played.order[:10]
        rows = store.sessions_by_id([*reversed(ids), 999])
        assert [row.id for row in rows] == list(reversed(ids))
        assert rows == [store.session(i) for i in reversed(ids)]
        assert store.sessions_by_id([]) == []

    def test_results_of(self, store: Store, played: Played) -> None:
        """The results of chosen sessions, by id; many at once (past one query's parameters)."""
        ids = played.order[::3]
        assert store.results_of([*ids, 999]) == {i: played.results[i] for i in ids}
        assert store.results_of([]) == {}

    @pytest.mark.slow
    def test_many_ids_at_once(self, store: Store) -> None:
        """More ids than one query binds (chunked) still come back whole and in order."""
        tournament = store.create_tournament(
            name="big", config={}, seed=1, blocks=[(b, 1000 + b, BOTS) for b in range(200)]
        )
        for block in range(200):
            for rotation in range(3):
                record(store, make_result(tournament, block, rotation))
        ids = store.session_ids(tournament=tournament)
        assert len(ids) == 600
        assert [row.id for row in store.sessions_by_id(ids)] == ids
        assert all(len(row.bots) == 3 for row in store.find_sessions(tournament=tournament))
        assert len(store.results_of(ids)) == 600

    def test_sessions_to_list(self, store: Store, played: Played) -> None:
        """At most ``limit`` sessions: the faulty ones first, then the first recorded, in block order."""
        for tournament in played.tournaments:
            ids = [i for i in played.order if played.results[i].tournament == tournament]
            faulty = sorted(i for i in ids if played.results[i].faults)
            assert faulty
            for limit in (1, len(faulty), len(faulty) + 3, len(ids) + 10):
                rows = store.sessions_to_list(tournament, limit=limit)
                chosen = list(dict.fromkeys([*faulty, *sorted(ids)]))[:limit]
                assert sorted(row.id for row in rows) == sorted(chosen)
                assert [(row.block, row.rotation) for row in rows] == sorted(
                    (row.block, row.rotation) for row in rows
                )


def write_version_2(
    db: Path,
    played: Played,
    blocks: dict[int, list[tuple[int, int, tuple[str, ...]]]],
    log_paths: dict[int, str],
) -> None:
    """A database as schema version 2 left it: ``played``'s sessions, their logs named by ``log_paths``."""
    with closing(sqlite3.connect(db)) as conn:
        create_old_database(conn, 2)
        for tournament in played.tournaments:
            conn.execute(
                "INSERT INTO tournaments (id, name, config, seed, status, created_at)"
                " VALUES (?, 'old', '{}', 7, 'interrupted', '2026-01-01T00:00:00.000+00:00')",
                (tournament,),
            )
            conn.executemany(
                "INSERT INTO blocks (tournament_id, idx, board_seed, bots) VALUES (?, ?, ?, ?)",
                [(tournament, idx, seed, json.dumps(list(bots))) for idx, seed, bots in blocks[tournament]],
            )
        for session_id in played.order:
            r = played.results[session_id]
            conn.execute(
                "INSERT INTO sessions (id, tournament_id, block_idx, rotation, log_path, finished_at)"
                " VALUES (?, ?, ?, ?, ?, '2026-01-01T00:00:00.000+00:00')",
                (session_id, r.tournament, r.block, r.rotation, log_paths[session_id]),
            )
            conn.executemany(
                "INSERT INTO seat_results (session_id, seat, bot, chips, win_share, faults)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [(session_id, s.seat, s.bot, s.chips, s.win_share, s.faults) for s in r.seats],
            )
            conn.executemany(
                "INSERT INTO declarations"
                " (session_id, seat, contract, made, pool_chips, widow_taken, peeked, exchanged)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        session_id,
                        s.seat,
                        d.contract,
                        d.made,
                        d.pool_chips,
                        d.widow_taken,
                        d.peeked,
                        d.exchanged,
                    )
                    for s in r.seats
                    for d in s.declarations
                ],
            )
            conn.executemany(  # as version 2 wrote them: -1 for none
                "INSERT INTO faults (session_id, kind, bot, seat, deal, decision, elapsed_ms, detail)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        session_id,
                        f.kind,
                        f.bot,
                        f.seat,
                        f.deal,
                        -1 if f.decision is None else f.decision,
                        f.elapsed_ms,
                        f.detail,
                    )
                    for f in r.faults
                ],
            )
        conn.commit()


class TestUpgradeFromVersion2:
    """A version 2 file (log files beside it) is upgraded when opened: logs read in, totals computed."""

    @pytest.fixture
    def old(self, tmp_path: Path) -> tuple[Path, Played, dict[int, Path]]:
        """A version 2 database in ``arena/``; its sessions' log files where the old code put them.

        Most logs are under ``arena/logs`` (stored relative to the database's folder), one
        is stored absolute, one relative but outside the folder, and one file is gone.
        """
        arena = tmp_path / "arena"
        arena.mkdir()
        with Store.open(tmp_path / "scratch.db") as scratch:  # a source of realistic sessions
            played = play(scratch)
            blocks = {
                t: [(b.index, b.board_seed, b.bots) for b in scratch.blocks(t)] for t in played.tournaments
            }
        files: dict[int, Path] = {}
        log_paths: dict[int, str] = {}
        for number, session_id in enumerate(played.order):
            r = played.results[session_id]
            key = {"tournament": r.tournament, "block": r.block, "rotation": r.rotation}
            if number == 0:
                path = write_encoded_log(tmp_path / "elsewhere", **key, data=log_of(r))
                log_paths[session_id] = str(path)  # an absolute path, as before log paths were relative
            elif number == 1:
                path = write_encoded_log(tmp_path / "shared", **key, data=log_of(r))
                log_paths[session_id] = os.path.relpath(path, arena)  # ../shared/...
            else:
                path = write_encoded_log(arena / "logs", **key, data=log_of(r))
                log_paths[session_id] = os.path.relpath(path, arena)
            files[session_id] = path
        missing = played.order[2]
        files[missing].unlink()
        db = arena / "nap.db"
        write_version_2(db, played, blocks, log_paths)
        return db, played, files

    @pytest.mark.slow
    def test_upgrade_reads_every_log_and_computes_the_totals(
        self, tmp_path: Path, old: tuple[Path, Played, dict[int, Path]], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Every log file still there is read in byte for byte, the gone one says so; the totals are right."""
        db, played, files = old
        monkeypatch.chdir(tmp_path / "elsewhere")  # relative paths are from the database's folder, not here
        missing = played.order[2]
        with Store.open(db) as store:
            for session_id, result in played.results.items():
                if session_id == missing:
                    with pytest.raises(MissingLogError) as raised:  # a StoreError that nap log tells apart
                        store.log(session_id)
                    assert str(raised.value) == (
                        f"session {missing} has no log in {db}: its log file was already gone"
                        " when the database was upgraded to packed logs"
                    )
                else:
                    assert store.log(session_id) == log_of(result) == files[session_id].read_bytes()
            with pytest.raises(StoreError, match=r"^unknown session: 999$") as unknown:
                store.log(999)
            assert not isinstance(unknown.value, MissingLogError)
            for tournament in played.tournaments:
                stored = store.session_results(tournament)
                assert sorted(stored, key=repr) == sorted(played.of(tournament), key=repr)
                assert store.tally([tournament]) == tally_of(stored)
                assert standings_of(store.tally([tournament])) == compute_standings(stored)
            assert store.tally(played.tournaments) == tally_of(played.results.values())
            assert [row.unisolated for row in store.tournaments()] == [UNISOLATED_BEFORE] * 3
        with closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
            assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
            columns = [row[1] for row in conn.execute("PRAGMA table_info(sessions)")]
            assert columns == ["id", "tournament_id", "block_idx", "rotation", "finished_at"]
            indexes = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
            assert "faults_bot_kind" in indexes
        assert all(
            path.exists() for session_id, path in files.items() if session_id != missing
        )  # left in place

    @pytest.mark.slow
    def test_an_upgraded_file_goes_on_like_a_new_one(self, old: tuple[Path, Played, dict[int, Path]]) -> None:
        """After the upgrade, sessions of the incomplete blocks add to the computed totals correctly."""
        db, played, _ = old
        Store.open(db).close()
        Store.open(db.with_name("new.db")).close()
        assert shape(db) == shape(db.with_name("new.db"))
        with Store.open(db) as store:  # upgraded once: opening again changes nothing
            assert count(db, "session_logs") == len(played.results) - 1
            rng = random.Random(4)
            added = 0
            for tournament in played.tournaments:
                done = store.finished_keys(tournament)
                for block in store.blocks(tournament):
                    for rotation in range(len(block.bots)):
                        if (block.index, rotation) not in done:
                            result = random_result(
                                rng, tournament, block.index, rotation, block.bots, pool=True
                            )
                            record(store, result)
                            added += 1
                stored = store.session_results(tournament)
                assert store.tally([tournament]) == tally_of(stored)
                assert standings_of(store.tally([tournament])) == compute_standings(stored)
            assert added
            assert count(db, "session_logs") == len(played.results) - 1 + added

    @pytest.mark.slow
    def test_a_failed_upgrade_leaves_the_file_at_version_2(
        self, old: tuple[Path, Played, dict[int, Path]], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An error while computing the totals rolls the whole upgrade back; the next open does it all."""
        db, played, _ = old
        before = db.read_bytes()

        def explode(*_args: object) -> None:
            message = "disk on fire"
            raise RuntimeError(message)

        monkeypatch.setattr(store_module, "_record_totals", explode)
        with pytest.raises(RuntimeError, match="disk on fire"):
            Store.open(db)
        with closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
            assert "log_path" in [row[1] for row in conn.execute("PRAGMA table_info(sessions)")]
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            assert "session_logs" not in tables
        monkeypatch.undo()
        with Store.open(db) as store:
            assert store.tally(played.tournaments) == tally_of(played.results.values())
        assert db.read_bytes() != before


def shape(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's columns (name, type, not null, default, key) and every index, by name."""
    with closing(sqlite3.connect(db)) as conn:
        names = conn.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchall()
        return {
            name: (
                [tuple(row[1:]) for row in conn.execute(f"PRAGMA table_info({name})")]
                if kind == "table"
                else [tuple(row) for row in conn.execute(f"PRAGMA index_info({name})")]
            )
            for kind, name in sorted(names)
        }


def write_old_version(db: Path, source: Path, version: int) -> None:
    """A database as schema ``version`` (3 or later) left it, from ``source`` (of today's schema, closed).

    Version 3 on kept every row that today's does: each of its tables gets ``source``'s rows
    in the columns it had (version 3 and 4 lack only totals, which the upgrade computes), a
    fault's as it wrote them (:data:`~tests.old_schemas.V5_FAULT_VALUES`).
    """
    with closing(sqlite3.connect(db)) as conn:
        create_old_database(conn, version)
        conn.execute("ATTACH DATABASE ? AS source", (str(source),))
        tables = [row[0] for row in conn.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'")]
        for table in tables:
            names = [row[1] for row in conn.execute(f"PRAGMA main.table_info({table})")]
            quoted = [f'"{name}"' for name in names]  # a fault's "table" is a keyword
            values = [
                V5_FAULT_VALUES.get(name, column) if table == "faults" and version <= 5 else column
                for name, column in zip(names, quoted, strict=True)
            ]
            conn.execute(
                f"INSERT INTO main.{table} ({', '.join(quoted)})"  # noqa: S608 - names from sqlite_master
                f" SELECT {', '.join(values)} FROM source.{table}"
            )
        conn.commit()
        conn.execute("DETACH DATABASE source")


class TestUpgradeFromVersion3:
    """A version 3 file gets the rotation check's totals, from its sessions, and the isolation mark."""

    @pytest.fixture
    def old(self, tmp_path: Path) -> tuple[Path, Played]:
        with Store.open(tmp_path / "scratch.db") as scratch:
            played = play(scratch)
        db = tmp_path / "nap.db"
        write_old_version(db, tmp_path / "scratch.db", 3)
        return db, played

    @pytest.mark.slow
    def test_the_totals_are_a_fresh_fold_and_every_tournament_played_unisolated(
        self, old: tuple[Path, Played]
    ) -> None:
        db, played = old
        with closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
            assert conn.execute("SELECT count(*) FROM bot_totals").fetchone()[0] > 0  # version 3's totals
            assert "rotation_edge" not in [row[1] for row in conn.execute("PRAGMA table_info(bot_totals)")]
        with Store.open(db) as store:
            for tournament in played.tournaments:
                stored = store.session_results(tournament)
                assert sorted(stored, key=repr) == sorted(played.of(tournament), key=repr)
                tally = store.tally([tournament])
                assert tally == tally_of(stored)
                assert standings_of(tally) == compute_standings(stored)
                assert any(totals.rotation_edge for totals in tally.bots.values())
                assert store.log(store.session_ids(tournament=tournament)[0])  # the logs came along
            assert store.tally(played.tournaments) == tally_of(played.results.values())
            assert [row.unisolated for row in store.tournaments()] == [UNISOLATED_BEFORE] * 3
            store.mark_unisolated(1, "bwrap not available")
            assert store.tournament(1).unisolated == UNISOLATED_BEFORE
        with closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7

    def test_an_upgraded_file_has_a_new_ones_shape_and_goes_on_like_one(
        self, tmp_path: Path, old: tuple[Path, Played]
    ) -> None:
        db, played = old
        Store.open(tmp_path / "new.db").close()
        Store.open(db).close()
        assert shape(db) == shape(tmp_path / "new.db")
        with Store.open(db) as store:
            rng = random.Random(6)
            added = 0
            for tournament in played.tournaments:
                done = store.finished_keys(tournament)
                for block in store.blocks(tournament):
                    for rotation in range(len(block.bots)):
                        if (block.index, rotation) not in done:
                            record(
                                store,
                                random_result(rng, tournament, block.index, rotation, block.bots, pool=False),
                            )
                            added += 1
                assert store.tally([tournament]) == tally_of(store.session_results(tournament))
            assert added


class TestUpgradeFromVersion5:
    """A version 5 file's faults take today's shape: their table NULL, each -1 NULL, read back as None."""

    def test_the_faults_read_back_as_they_were_recorded(self, tmp_path: Path) -> None:
        with Store.open(tmp_path / "scratch.db") as scratch:
            played = play(scratch)
        db = tmp_path / "nap.db"
        write_old_version(db, tmp_path / "scratch.db", 5)
        faults = sum(len(result.faults) for result in played.results.values())
        with closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == 5
            assert conn.execute("SELECT count(*) FROM faults WHERE decision = -1").fetchone()[0] > 0
        with Store.open(db) as store:
            for tournament in played.tournaments:
                stored = store.session_results(tournament)
                assert sorted(stored, key=repr) == sorted(played.of(tournament), key=repr)
            assert sorted(store.session_ids(fault_kind="disconnect")) == sorted(
                session_id
                for session_id, result in played.results.items()
                if any(fault.kind is FaultKind.DISCONNECT for fault in result.faults)
            )
        Store.open(tmp_path / "new.db").close()
        assert shape(db) == shape(tmp_path / "new.db")
        with closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
            assert conn.execute("SELECT count(*) FROM faults").fetchone()[0] == faults
            assert (
                conn.execute("SELECT count(*) FROM faults WHERE -1 IN (seat, deal, decision)").fetchone()[0]
                == 0
            )
            assert conn.execute('SELECT count(*) FROM faults WHERE "table" IS NULL').fetchone()[0] == faults


class TestUpgradeFromVersion6:
    """A version 6 file gets the CPU columns (0 in its sessions) and the containment mark."""

    def test_its_sessions_read_back_with_no_cpu_and_its_tournaments_uncontained(self, tmp_path: Path) -> None:
        with Store.open(tmp_path / "scratch.db") as scratch:
            played = play(scratch)
        db = tmp_path / "nap.db"
        write_old_version(db, tmp_path / "scratch.db", 6)
        with closing(sqlite3.connect(db)) as conn:
            assert "cpu_us" not in [row[1] for row in conn.execute("PRAGMA table_info(seat_results)")]
        with Store.open(db) as store:
            for tournament in played.tournaments:
                stored = store.session_results(tournament)
                assert sorted(stored, key=repr) == sorted(played.of(tournament), key=repr)
                assert store.tally([tournament]) == tally_of(stored)
            assert [row.uncontained for row in store.tournaments()] == [UNCONTAINED_BEFORE] * 3
            store.mark_uncontained(1, "no cgroup here")
            assert store.tournament(1).uncontained == UNCONTAINED_BEFORE
        Store.open(tmp_path / "new.db").close()
        assert shape(db) == shape(tmp_path / "new.db")


class TestCpu:
    """The CPU each seat's decisions were charged is kept with its result and summed per bot."""

    def test_a_seats_cpu_reads_back_and_adds_up_in_its_bots_totals(self, tmp_path: Path) -> None:
        with Store.open(tmp_path / "nap.db") as store:
            tournament = store.create_tournament(
                name="cpu", config={}, seed=1, blocks=[(0, 7, ("a", "b", "c"))]
            )
            for rotation in range(3):
                seats = tuple(
                    SeatResult(
                        seat, bot, 1 - seat, 0.0, asked=10, cpu_us=1_500 * (seat + 1) + rotation, clocked=10
                    )
                    for seat, bot in enumerate(("a", "b", "c")[rotation:] + ("a", "b", "c")[:rotation])
                )
                result = SessionResult(tournament, 0, rotation, 7, seats)
                store.record_session(result, log=log_of(result))
                stored = store.session_results(tournament)[-1]
                assert stored == result
                assert [(s.cpu_us, s.clocked) for s in stored.seats] == [(s.cpu_us, s.clocked) for s in seats]
            totals = store.tally([tournament]).bots
            assert {bot: (t.cpu_us, t.clocked) for bot, t in totals.items()} == {
                "a": (1_500 + 3_000 + 4_500 + 0 + 1 + 2, 30),
                "b": (3_000 + 4_500 + 1_500 + 3, 30),
                "c": (4_500 + 1_500 + 3_000 + 3, 30),
            }
            assert store.tournament(tournament).uncontained is None
            store.mark_uncontained(tournament, "no cgroup here")
            store.mark_uncontained(tournament, "another reason")
            assert store.tournament(tournament).uncontained == "no cgroup here"


def one_session_version_2(db: Path, result: SessionResult, log_path: str) -> None:
    """A version 2 database at ``db`` holding ``result`` alone, its log file named ``log_path``."""
    played = Played([result.tournament], {1: result}, [1])
    blocks = {result.tournament: [(result.block, result.board_seed, result.bots)]}
    write_version_2(db, played, blocks, {1: log_path})


def eight_tied(tournament: int) -> SessionResult:
    """A session of eight seats that all end even: a win share of 1/8 each."""
    bots = NAMES[:8]
    return SessionResult(
        tournament, 0, 0, 1000, tuple(SeatResult(seat, bot, 0, 1 / 8) for seat, bot in enumerate(bots))
    )


class TestUpgradeEdges:
    """Logs read where version 2 read them, an unreadable one stops the upgrade, tables of eight count."""

    def test_a_relative_path_through_a_symlinked_folder_is_read_as_version_2_read_it(
        self, tmp_path: Path
    ) -> None:
        real = tmp_path / "disk" / "arena"
        real.mkdir(parents=True)
        home = tmp_path / "home"
        home.mkdir()
        (home / "arena").symlink_to(real)  # ~/arena -> /disk/arena, logs in ~/logs
        db = home / "arena" / "nap.db"
        result = make_result(1)
        log = write_encoded_log(home / "logs", tournament=1, block=0, rotation=0, data=log_of(result))
        stored = os.path.relpath(log, db.parent)  # how version 2 stored it: ../logs/t1/b0-r0.json.gz
        assert os.path.normpath(db.parent / stored) == str(log)  # and where version 2 read it
        one_session_version_2(db, result, stored)
        with Store.open(db) as store:
            assert store.log(1) == log_of(result)

    def test_an_unreadable_log_file_stops_the_upgrade(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        db = tmp_path / "nap.db"
        result = make_result(1)
        log = write_encoded_log(tmp_path / "logs", tournament=1, block=0, rotation=0, data=log_of(result))
        one_session_version_2(db, result, "logs/t1/b0-r0.json.gz")
        real_read_bytes = pathlib.Path.read_bytes

        def read_bytes(path: Path) -> bytes:
            if path.name == log.name:
                raise PermissionError(13, "Permission denied", str(path))
            return real_read_bytes(path)

        monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)
        with pytest.raises(StoreError, match="Permission denied"):
            Store.open(db).close()
        with closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == 2

    def test_a_table_of_eight_that_a_house_profile_allows_is_recorded(self, store: Store) -> None:
        """Eight seats (past the built-in profiles' seven): the session, its log and its totals are kept."""
        tournament = store.create_tournament(name="big", config={}, seed=1, blocks=[(0, 1000, NAMES[:8])])
        result = eight_tied(tournament)
        session_id = record(store, result)
        assert store.session_results(tournament) == [result]
        assert store.log(session_id) == log_of(result)
        assert store.finished_keys(tournament) == {(0, 0)}
        tally = store.tally([tournament])
        assert tally == tally_of([result])
        assert tally.sessions == 1
        standings = standings_of(tally)
        assert standings == compute_standings([result])
        assert sorted(line.bot for line in standings.bots) == sorted(NAMES[:8])
        assert {line.win_share.mean for line in standings.bots} == {1 / 8}
        assert {line.expected_win_share for line in standings.bots} == {1 / 8}

    def test_an_upgrade_that_cannot_total_a_session_is_a_store_error(self, tmp_path: Path) -> None:
        db = tmp_path / "nap.db"
        result = eight_tied(1)
        seats = result.seats
        result = dataclasses.replace(
            result, seats=(seats[0], dataclasses.replace(seats[1], bot=seats[0].bot), *seats[2:])
        )
        write_encoded_log(tmp_path / "logs", tournament=1, block=0, rotation=0, data=log_of(result))
        one_session_version_2(db, result, "logs/t1/b0-r0.json.gz")
        with pytest.raises(
            StoreError, match=f"cannot be upgraded to schema {SCHEMA_VERSION}: cannot compute the standings"
        ):
            Store.open(db).close()
        with closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == 2


def snapshot(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table, as another connection reads them."""
    with closing(sqlite3.connect(db)) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {
            table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)  # noqa: S608 - names from sqlite_master
            for table in sorted(tables)
        }


class TestRollback:
    """A session the store refuses changes nothing: not its rows, not its log, not the totals."""

    def test_refused_sessions_change_nothing(self, db: Path, store: Store) -> None:
        played = play(store)
        before = snapshot(db)
        assert set(before) >= {*DATA_TABLES, *TOTALS_TABLES}
        tally = store.tally(played.tournaments)
        first = played.order[0]
        again = played.results[first]
        unknown_block = dataclasses.replace(again, block=50)
        wrong_seed = dataclasses.replace(again, board_seed=5)
        seats = again.seats
        twice = dataclasses.replace(
            again,
            rotation=99,
            seats=(seats[0], dataclasses.replace(seats[1], bot=seats[0].bot), *seats[2:]),
        )
        for refused, message in [
            (again, "session already recorded"),
            (unknown_block, "unknown block 50"),
            (wrong_seed, "board seed 5 of"),
            (twice, "a bot sits in two seats"),  # refused after its rows are written
        ]:
            with pytest.raises(StoreError, match=message):
                store.record_session(refused, log=log_of(refused, refused=True))
            assert snapshot(db) == before, message
            assert store.tally(played.tournaments) == tally
            assert store.log(first) == log_of(again)


def test_commits_do_not_wait_for_a_disk_sync(tmp_path: Path) -> None:
    """The store runs WAL with synchronous=NORMAL: safe against a killed process, cheap per commit."""
    with Store.open(tmp_path / "nap.db") as store:
        mode = store._conn.execute("PRAGMA synchronous").fetchone()[0]  # noqa: SLF001
    assert mode == 1  # NORMAL


HOLD_THE_LOCK = """
import sys
from pathlib import Path
from tournaments.play.locks import tournament_lock

with tournament_lock(Path(sys.argv[1]), int(sys.argv[2])):
    print("locked", flush=True)
    sys.stdin.read()
"""


def hold_lock(db: Path, tournament: int) -> subprocess.Popen[str]:
    """A process that holds the tournament's lock until its stdin closes or it is killed."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(db), str(tournament)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline() == "locked\n"
    return holder


class TestTournamentLock:
    def test_one_holder_at_a_time_per_tournament(self, db: Path) -> None:
        """A second lock of the same tournament is refused at once, naming the holder; others are free."""
        with tournament_lock(db, 3) as path:
            assert path == lock_path(db, 3)
            assert path.parent == db.resolve().parent
            with pytest.raises(TournamentBusyError) as raised, tournament_lock(db, 3):
                pass
            assert str(raised.value) == (
                f"tournament 3 is being played by another process (pid {os.getpid()}): "
                "wait for it to finish, or stop that process before resuming"
            )
            with tournament_lock(db, 4):
                pass
        assert not path.exists()
        with tournament_lock(db, 3):
            pass

    @pytest.mark.slow
    def test_a_killed_holder_leaves_no_lock_behind(self, db: Path) -> None:
        """kill -9 of the holder: its lock file stays, but the kernel has released the lock."""
        with hold_lock(db, 1) as holder:
            try:
                with (
                    pytest.raises(TournamentBusyError, match=rf"\(pid {holder.pid}\)"),
                    tournament_lock(db, 1),
                ):
                    pass
            finally:
                holder.kill()  # the with block closes its pipes and waits for it
        assert lock_path(db, 1).exists()
        with tournament_lock(db, 1):
            pass
        assert not lock_path(db, 1).exists()

    def test_a_lock_file_removed_under_our_feet_is_made_again(
        self, db: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The last holder removes its file between our open and our lock: we lock a new file."""
        real_flock = fcntl.flock
        removed: list[Path] = []

        def flock_after_the_holder_left(fd: int, operation: int) -> None:
            if not removed:
                removed.append(lock_path(db, 5))
                lock_path(db, 5).unlink()
            real_flock(fd, operation)

        monkeypatch.setattr(fcntl, "flock", flock_after_the_holder_left)
        with tournament_lock(db, 5) as path:
            assert removed == [path]
            assert path.exists()
            monkeypatch.undo()
            with pytest.raises(TournamentBusyError), tournament_lock(db, 5):
                pass
