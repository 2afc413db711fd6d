"""The SQLite store: round trips, exactly-once sessions, atomicity, file identity."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tournaments import store as store_module
from tournaments.results import Declaration, FaultRecord, SeatResult, SessionResult
from tournaments.store import BotRow, Store, StoreError
from tournaments.store_schema import APPLICATION_ID, SCHEMA_VERSION

if TYPE_CHECKING:
    from collections.abc import Iterator

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
    fault = FaultRecord("late", bots[2], 2, 3, 5, 812.5, "answered after 800 ms")
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
        faults=(fault, FaultRecord("illegal", bots[2], 2, 4, -1, 3.25, "played 2H on spades")),
    )


def count(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # noqa: S608 - table names are constants here


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
        """A file that is not SQLite at all is refused with a message saying so."""
        db.write_bytes(b"this is not a database, just some text" * 100)
        with pytest.raises(StoreError, match=r"nap\.db is not a SQLite database$"):
            Store.open(db)

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
                    waiting.record_session(make_result(tournament), log_path=Path("x"))
                assert waiting.finished_keys(tournament) == set()
        finally:
            holder.execute("ROLLBACK")
            holder.close()

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


class TestSessions:
    def test_results_round_trip_exactly(self, store: Store) -> None:
        """What is recorded comes back as equal SessionResult values, in key order."""
        tournament = make_tournament(store)
        results = [make_result(tournament, 1, 0), make_result(tournament, 0, 2)]
        for result in results:
            store.record_session(result, log_path=Path("logs/x.json.gz"))
        assert store.session_results(tournament) == [results[1], results[0]]
        assert store.finished_keys(tournament) == {(1, 0), (0, 2)}

    def test_session_row(self, store: Store) -> None:
        """A session row gives its log path, board seed and the bots by seat."""
        tournament = make_tournament(store)
        log = Path("logs/t1/b0-r1.json.gz")
        session_id = store.record_session(make_result(tournament, 0, 1), log_path=log)
        row = store.session(session_id)
        assert (row.tournament, row.block, row.rotation, row.board_seed) == (
            tournament,
            0,
            1,
            1000,
        )
        assert row.log_path == log
        assert row.bots == ("beta", "gamma", "alpha")
        with pytest.raises(StoreError, match=r"^unknown session: 12$"):
            store.session(12)

    def test_same_session_twice_is_refused(self, db: Path, store: Store) -> None:
        """Recording a (tournament, block, rotation) again raises and leaves one row."""
        tournament = make_tournament(store)
        store.record_session(make_result(tournament), log_path=Path("a"))
        with pytest.raises(StoreError, match="session already recorded"):
            store.record_session(make_result(tournament), log_path=Path("b"))
        assert count(db, "sessions") == 1
        assert count(db, "seat_results") == 3
        assert count(db, "faults") == 2
        assert store.session_results(tournament) == [make_result(tournament)]

    def test_failure_midway_writes_nothing(
        self, db: Path, store: Store, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An error after the session and seats are inserted rolls the whole session back."""
        tournament = make_tournament(store)

        def explode(*_args: object) -> None:
            message = "disk on fire"
            raise RuntimeError(message)

        monkeypatch.setattr(store_module, "_insert_faults", explode)
        with pytest.raises(RuntimeError, match="disk on fire"):
            store.record_session(make_result(tournament), log_path=Path("a"))
        for table in ("sessions", "seat_results", "declarations", "faults"):
            assert count(db, table) == 0, table
        monkeypatch.undo()
        store.record_session(make_result(tournament), log_path=Path("a"))
        assert count(db, "sessions") == 1

    def test_session_of_unknown_block_or_wrong_seed(self, store: Store) -> None:
        """A session must belong to a known block and carry that block's board seed."""
        tournament = make_tournament(store)
        with pytest.raises(StoreError, match="unknown block 5 of tournament"):
            store.record_session(make_result(tournament, block=5), log_path=Path("a"))
        wrong = make_result(tournament)
        wrong = SessionResult(wrong.tournament, wrong.block, wrong.rotation, 999, wrong.seats, wrong.faults)
        with pytest.raises(StoreError, match="board seed 999"):
            store.record_session(wrong, log_path=Path("a"))
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
            found[tournament, block, rotation] = store.record_session(
                result, log_path=Path(f"t{tournament}/b{block}-r{rotation}.json.gz")
            )
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
        assert found(tournament=1, bot="alpha", result="win", fault_kind="late") == [a]

    def test_result_filter_needs_a_bot(self, store: Store) -> None:
        """Win/loss only means something for a named bot."""
        with pytest.raises(StoreError, match="needs a bot"):
            store.find_sessions(result="win")


def test_commits_do_not_wait_for_a_disk_sync(tmp_path: Path) -> None:
    """The store runs WAL with synchronous=NORMAL: safe against a killed process, cheap per commit."""
    with Store.open(tmp_path / "nap.db") as store:
        mode = store._conn.execute("PRAGMA synchronous").fetchone()[0]  # noqa: SLF001
    assert mode == 1  # NORMAL
