"""The SQLite store: round trips, exactly-once sessions, atomicity, file identity, failures.

Also what lives beside it: the lock that lets one process play a tournament, and the
log files' temporaries, which a cleanup removes only when their writer is gone.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from tournaments import logfiles
from tournaments import store as store_module
from tournaments.locks import TournamentBusyError, lock_path, tournament_lock
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
                store.record_session(make_result(tournament, 0, rotation), log_path=Path("a"))
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
                    store.record_session(make_result(tournament, block, rotation), log_path=Path("a"))
                    recorded.add((block, rotation))

        with pytest.raises(StoreError) as raised:
            record_all()
        assert str(raised.value) == f"{db}: database or disk is full (free some space)"
        assert 0 < len(recorded) < 120
        assert store.finished_keys(tournament) == recorded
        assert count(db, "seat_results") == 3 * len(recorded)
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
        """A session row gives its log path (absolute; stored relative to the db), board seed and bots."""
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
        assert row.log_path == log.absolute()
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


def test_commits_do_not_wait_for_a_disk_sync(tmp_path: Path) -> None:
    """The store runs WAL with synchronous=NORMAL: safe against a killed process, cheap per commit."""
    with Store.open(tmp_path / "nap.db") as store:
        mode = store._conn.execute("PRAGMA synchronous").fetchone()[0]  # noqa: SLF001
    assert mode == 1  # NORMAL


HOLD_THE_LOCK = """
import sys
from pathlib import Path
from tournaments.locks import tournament_lock

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


class TestTemporaries:
    """A log's temporary file is locked by its writer: a cleanup removes only a dead writer's."""

    def test_a_live_writers_temporary_is_left_alone(self, tmp_path: Path) -> None:
        folder = tmp_path / "t1"
        folder.mkdir()
        stale = folder / ".b0-r0.json.gz.dead.tmp"
        stale.write_bytes(b"half")
        live = folder / ".b0-r1.json.gz.live.tmp"
        live.write_bytes(b"being written")
        with live.open("rb") as writer:
            fcntl.flock(writer, fcntl.LOCK_EX)
            assert logfiles.remove_temporaries(tmp_path) == 1
        assert not stale.exists()
        assert live.exists()

    def test_a_cleanup_in_the_middle_of_a_write_does_not_break_it(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The other run's cleanup, run while the log is being written, leaves the log to finish."""
        real_fsync = os.fsync
        cleaned: list[int] = []

        def fsync_after_a_cleanup(fd: int) -> None:
            cleaned.append(logfiles.remove_temporaries(tmp_path, tournament=1))
            real_fsync(fd)

        monkeypatch.setattr(os, "fsync", fsync_after_a_cleanup)
        path = logfiles.write_log(tmp_path, tournament=1, block=0, rotation=0, payload={"x": 1})
        assert cleaned[0] == 0
        assert logfiles.read_log(path)["x"] == 1

    def test_a_cleanup_at_the_rename_does_not_break_it(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The lock is held until the temporary has its final name, so a cleanup then leaves it."""
        real_replace = Path.replace
        cleaned: list[int] = []

        def replace_after_a_cleanup(self: Path, target: Path) -> Path:
            cleaned.append(logfiles.remove_temporaries(tmp_path))
            return real_replace(self, target)

        monkeypatch.setattr(Path, "replace", replace_after_a_cleanup)
        path = logfiles.write_log(tmp_path, tournament=1, block=0, rotation=1, payload={"x": 3})
        assert cleaned == [0]
        assert logfiles.read_log(path)["x"] == 3

    def test_a_cleanup_between_creating_and_locking_the_temporary(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A temporary removed before its writer locked it is replaced; the write still succeeds."""
        real_mkstemp = tempfile.mkstemp
        cleaned: list[int] = []

        def mkstemp_then_a_cleanup(**kwargs: Any) -> tuple[int, str]:
            made = cast("tuple[int, str]", real_mkstemp(**kwargs))
            if not cleaned:
                cleaned.append(logfiles.remove_temporaries(tmp_path))
            return made

        monkeypatch.setattr(tempfile, "mkstemp", mkstemp_then_a_cleanup)
        path = logfiles.write_log(tmp_path, tournament=2, block=0, rotation=0, payload={"x": 2})
        assert cleaned == [1]
        assert logfiles.read_log(path)["x"] == 2
        assert [p.name for p in path.parent.iterdir()] == [path.name]

    def test_a_cleanup_looks_only_in_its_tournaments_folder(self, tmp_path: Path) -> None:
        for tournament in (1, 2):
            (tmp_path / f"t{tournament}").mkdir()
            (tmp_path / f"t{tournament}" / ".b0-r0.json.gz.x.tmp").write_bytes(b"half")
        assert logfiles.remove_temporaries(tmp_path, tournament=1) == 1
        assert (tmp_path / "t2" / ".b0-r0.json.gz.x.tmp").exists()
