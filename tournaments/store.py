"""Tournaments, bots and finished sessions in one SQLite file.

The file is marked as ours with ``PRAGMA application_id`` and carries its schema version
in ``PRAGMA user_version`` (the SQL is in :mod:`tournaments.store_schema`); a file of an
older version is brought up to this one when opened, its rows kept. It runs in WAL
mode (``synchronous = NORMAL``: durable across a killed process, a commit costs no disk
sync), so ``nap log list`` can read while a tournament writes. A session is committed with
its seat results, declarations and faults in one ``BEGIN IMMEDIATE`` transaction, and
``UNIQUE (tournament_id, block_idx, rotation)`` guarantees that no session is counted
twice, even across a resume. A session's log path is stored relative to the database's
folder, so a folder that holds both (``nap.db`` and ``nap-out/``) can be moved, copied or
archived and still reads its logs; an absolute path stored by an older version is read as
it is.

Every failure the caller can act on (not our file, newer schema, damaged, locked, full,
unknown id, duplicate session) is a :class:`StoreError` whose ``str()`` is one line. An
existing file opened for writing is checked first (``PRAGMA quick_check``), so a damaged
database is refused before anything is written into it.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import defaultdict
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self, get_args

from tournaments import store_schema as sql
from tournaments.results import Declaration, FaultRecord, SeatResult, SessionResult

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence
    from types import TracebackType

TournamentStatus = Literal["running", "finished", "interrupted"]


class StoreError(Exception):
    """A storage failure the caller can report as is: ``str()`` is one clear line."""


@dataclass(frozen=True, slots=True)
class BotRow:
    """One registered version of a bot: a new row whenever its content hash changes."""

    id: int
    name: str
    version: str
    command: tuple[str, ...]
    language: str | None
    folder: str | None
    content_hash: str
    registered_at: str


@dataclass(frozen=True, slots=True)
class TournamentRow:
    """A tournament; timestamps are ISO 8601 in UTC, ``finished_at`` is None while running."""

    id: int
    name: str
    config: Mapping[str, object]
    seed: int
    status: TournamentStatus
    created_at: str
    finished_at: str | None


@dataclass(frozen=True, slots=True)
class BlockRow:
    """One board set of a tournament; ``bots`` is the seat order of rotation 0."""

    tournament: int
    index: int
    board_seed: int
    bots: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One recorded session, as ``nap log list`` shows it; ``bots`` by seat number."""

    id: int
    tournament: int
    block: int
    rotation: int
    board_seed: int
    log_path: Path
    finished_at: str
    bots: tuple[str, ...]


Row = tuple[Any, ...]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _damaged(name: str, problem: str) -> StoreError:
    return StoreError(
        f"{name} is damaged ({problem}): restore it from a backup, or choose another file with --db"
    )


def _translate(exc: sqlite3.Error, name: str) -> StoreError:
    """Turn an sqlite3 error into a one-line StoreError that says what went wrong."""
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "locked" in message or "busy" in message:
        return StoreError(f"{name} is locked by another process")
    if "not a database" in message:
        return StoreError(
            f"{name} is not a SQLite database: choose a Nap Arena database, or a new file, with --db"
        )
    if "malformed" in message:
        return _damaged(name, message)
    if "full" in message:  # SQLITE_FULL: the disk, or the database's page limit
        return StoreError(f"{name}: {message} (free some space)")
    return StoreError(f"{name}: {message}")


def _check_intact(conn: sqlite3.Connection, name: str) -> None:
    """Raise StoreError when ``PRAGMA quick_check`` finds the file damaged (it only reads).

    quick_check verifies every page's b-tree structure (not the indexes' contents), in
    time linear in the file's size: about 0.1 s for 50,000 sessions (27 MB).
    """
    rows = conn.execute("PRAGMA quick_check(1)").fetchall()
    report = [line for (text,) in rows for line in str(text).splitlines()]
    problems = [line for line in report if line != "ok" and not line.startswith("*** in database")]
    if problems:
        raise _damaged(name, problems[0])


def _needs_schema(conn: sqlite3.Connection, name: str) -> bool:
    """Say whether the file is new (schema to create); raise if it is not ours or newer."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if app_id == 0 and objects == 0:
        return True
    if app_id != sql.APPLICATION_ID:
        msg = f"{name} is not a Nap Arena database"
        raise StoreError(msg)
    if version > sql.SCHEMA_VERSION:
        msg = (
            f"{name} was written by a newer Nap Arena (schema {version};"
            f" this version reads up to {sql.SCHEMA_VERSION})"
        )
        raise StoreError(msg)
    return False


def _create_schema(conn: sqlite3.Connection, name: str) -> None:
    """Create the schema under the write lock, unless another process won the race."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _needs_schema(conn, name):
            for statement in sql.SCHEMA:
                conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {sql.APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {sql.SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring an older file up to :data:`~tournaments.store_schema.SCHEMA_VERSION`, under the write lock.

    Each step adds what its version added (:data:`~tournaments.store_schema.MIGRATIONS`),
    so every row written before reads back with the new columns' defaults. Another
    process may have migrated the file meanwhile: the version is read again under the lock.
    """
    if conn.execute("PRAGMA user_version").fetchone()[0] >= sql.SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        for step in range(version + 1, sql.SCHEMA_VERSION + 1):
            for statement in sql.MIGRATIONS[step]:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {step}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _bot_row(row: Row) -> BotRow:
    bot_id, name, version, command, language, folder, content_hash, registered_at = row
    return BotRow(
        bot_id,
        name,
        version,
        tuple(json.loads(command)),
        language,
        folder,
        content_hash,
        registered_at,
    )


def _tournament_row(row: Row) -> TournamentRow:
    tournament_id, name, config, seed, status, created_at, finished_at = row
    return TournamentRow(tournament_id, name, json.loads(config), seed, status, created_at, finished_at)


def _insert_seats(conn: sqlite3.Connection, session_id: int, result: SessionResult) -> None:
    conn.executemany(
        "INSERT INTO seat_results (session_id, seat, bot, chips, win_share, faults)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [(session_id, s.seat, s.bot, s.chips, s.win_share, s.faults) for s in result.seats],
    )
    conn.executemany(
        "INSERT INTO declarations"
        " (session_id, seat, contract, made, pool_chips, widow_taken, peeked, exchanged)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (session_id, s.seat, d.contract, d.made, d.pool_chips, d.widow_taken, d.peeked, d.exchanged)
            for s in result.seats
            for d in s.declarations
        ],
    )


def _insert_faults(conn: sqlite3.Connection, session_id: int, result: SessionResult) -> None:
    conn.executemany(
        "INSERT INTO faults (session_id, kind, bot, seat, deal, decision, elapsed_ms, detail)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (session_id, f.kind, f.bot, f.seat, f.deal, f.decision, f.elapsed_ms, f.detail)
            for f in result.faults
        ],
    )


class Store:
    """An open Nap Arena database; get one from :meth:`open` and close it (or use ``with``).

    One store is one connection: use it from one thread (the runner's event loop).
    """

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self._name = str(path)
        self.path = path
        """The database file, as given to :meth:`open`."""
        self._folder = path.absolute().parent
        """Where stored log paths are relative to."""

    def _relative(self, log_path: Path) -> str:
        """``log_path`` as stored: relative to the database's folder."""
        return os.path.relpath(log_path.absolute(), self._folder)

    def _absolute(self, stored: str) -> Path:
        """A stored log path read back, absolute (one stored absolute by an older version is kept)."""
        return Path(os.path.normpath(self._folder / stored))

    @classmethod
    def open(cls, path: Path, *, busy_timeout_ms: int = 5000, check: bool = True) -> Store:
        """Open the database at ``path``, creating the file and schema if it is new.

        ``busy_timeout_ms`` is how long any statement waits for another process's lock
        before failing with "<path> is locked by another process". ``check`` runs
        ``PRAGMA quick_check`` on an existing file before anything is written to it and
        refuses a damaged one; a caller that only reads may skip it.
        """
        name = str(path)
        try:
            conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, isolation_level=None)
        except sqlite3.Error as exc:
            msg = f"cannot open {name}: {exc}"
            raise StoreError(msg) from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            conn.execute("PRAGMA foreign_keys = ON")
            if _needs_schema(conn, name):
                _create_schema(conn, name)
            else:
                if check:
                    _check_intact(conn, name)
                _migrate(conn)
            conn.execute("PRAGMA journal_mode = WAL")
            # In WAL mode, NORMAL syncs at checkpoints rather than at every commit: a killed
            # process loses nothing committed; only a power cut can drop the last commits,
            # and a resume replays those sessions (their logs are rewritten, never doubled).
            conn.execute("PRAGMA synchronous = NORMAL")
        except StoreError:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            raise _translate(exc, name) from exc
        return cls(conn, path)

    def close(self) -> None:
        """Close the connection; the store is unusable afterwards."""
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _query(self, query: str, params: Sequence[object] | Mapping[str, object] = ()) -> list[Row]:
        try:
            return list(self._conn.execute(query, params).fetchall())
        except sqlite3.Error as exc:
            raise _translate(exc, self._name) from exc

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """Run the body as one write transaction, taking the write lock up front."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _translate(exc, self._name) from exc
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException as exc:
            if self._conn.in_transaction:
                with suppress(sqlite3.Error):  # the first error says more than a failed rollback
                    self._conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise _translate(exc, self._name) from exc
            raise

    # Bots

    def register_bot(  # noqa: PLR0913 - one keyword per column of a bot row
        self,
        *,
        name: str,
        version: str,
        command: Sequence[str],
        language: str | None,
        folder: str | None,
        content_hash: str,
    ) -> BotRow:
        """Register a bot version; the same (name, content_hash) returns the existing row."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO bots (name, version, command, language, folder, content_hash,"
                " registered_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (name, content_hash) DO NOTHING",
                (name, version, json.dumps(list(command)), language, folder, content_hash, _now()),
            )
            row = conn.execute(
                f"{sql.BOT_COLUMNS} WHERE name = ? AND content_hash = ?", (name, content_hash)
            ).fetchone()
        return _bot_row(row)

    def bots(self) -> list[BotRow]:
        """List every registered bot version, oldest first."""
        return [_bot_row(row) for row in self._query(f"{sql.BOT_COLUMNS} ORDER BY id")]

    def bot(self, name_or_id: str) -> BotRow:
        """Find the latest version of the bot with this name, else the bot with this id."""
        rows = self._query(f"{sql.BOT_COLUMNS} WHERE name = ? ORDER BY id DESC LIMIT 1", (name_or_id,))
        if not rows and name_or_id.isdigit():
            rows = self._query(f"{sql.BOT_COLUMNS} WHERE id = ?", (int(name_or_id),))
        if not rows:
            msg = f"unknown bot: {name_or_id}"
            raise StoreError(msg)
        return _bot_row(rows[0])

    # Tournaments and blocks

    def create_tournament(
        self,
        *,
        name: str,
        config: Mapping[str, object],
        seed: int,
        blocks: Sequence[tuple[int, int, tuple[str, ...]]],
    ) -> int:
        """Create a running tournament with its blocks as (index, board_seed, bots)."""
        try:
            config_json = json.dumps(dict(config), sort_keys=True)
        except (TypeError, ValueError) as exc:
            msg = f"tournament config is not JSON: {exc}"
            raise StoreError(msg) from exc
        with self._transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO tournaments (name, config, seed, status, created_at)"
                " VALUES (?, ?, ?, 'running', ?)",
                (name, config_json, seed, _now()),
            )
            tournament_id = int(cursor.lastrowid or 0)
            conn.executemany(
                "INSERT INTO blocks (tournament_id, idx, board_seed, bots) VALUES (?, ?, ?, ?)",
                [(tournament_id, idx, seed_, json.dumps(list(bots))) for idx, seed_, bots in blocks],
            )
        return tournament_id

    def tournament(self, tournament_id: int) -> TournamentRow:
        """Find the tournament with this id."""
        rows = self._query(f"{sql.TOURNAMENT_COLUMNS} WHERE id = ?", (tournament_id,))
        if not rows:
            msg = f"unknown tournament: {tournament_id}"
            raise StoreError(msg)
        return _tournament_row(rows[0])

    def tournaments(self) -> list[TournamentRow]:
        """List every tournament, oldest first."""
        return [_tournament_row(r) for r in self._query(f"{sql.TOURNAMENT_COLUMNS} ORDER BY id")]

    def set_status(self, tournament_id: int, status: TournamentStatus) -> None:
        """Set the status; ``finished_at`` is stamped now, or cleared for ``running``."""
        if status not in get_args(TournamentStatus):
            msg = f"unknown tournament status: {status}"
            raise StoreError(msg)
        with self._transaction() as conn:
            cursor = conn.execute(
                "UPDATE tournaments SET status = ?, finished_at = ? WHERE id = ?",
                (status, None if status == "running" else _now(), tournament_id),
            )
            if cursor.rowcount == 0:
                msg = f"unknown tournament: {tournament_id}"
                raise StoreError(msg)

    def blocks(self, tournament_id: int) -> list[BlockRow]:
        """List the tournament's blocks by index."""
        self.tournament(tournament_id)
        rows = self._query(
            "SELECT tournament_id, idx, board_seed, bots FROM blocks WHERE tournament_id = ? ORDER BY idx",
            (tournament_id,),
        )
        return [BlockRow(t, i, s, tuple(json.loads(b))) for t, i, s, b in rows]

    # Sessions

    def finished_keys(self, tournament_id: int) -> set[tuple[int, int]]:
        """Give (block, rotation) of every session of the tournament already recorded."""
        rows = self._query(
            "SELECT block_idx, rotation FROM sessions WHERE tournament_id = ?", (tournament_id,)
        )
        return {(block, rotation) for block, rotation in rows}

    def record_session(self, result: SessionResult, *, log_path: Path) -> int:
        """Commit one finished session with all its details in one transaction.

        Returns the session id. Raises StoreError, writing nothing, when the session is
        already recorded, its block is unknown, or its board seed is not the block's.
        """
        key = f"tournament {result.tournament}, block {result.block}, rotation {result.rotation}"
        with self._transaction() as conn:
            block = conn.execute(
                "SELECT board_seed FROM blocks WHERE tournament_id = ? AND idx = ?",
                (result.tournament, result.block),
            ).fetchone()
            if block is None:
                msg = f"unknown block {result.block} of tournament {result.tournament}"
                raise StoreError(msg)
            if block[0] != result.board_seed:
                msg = f"board seed {result.board_seed} of {key} is not the block's {block[0]}"
                raise StoreError(msg)
            try:
                cursor = conn.execute(
                    "INSERT INTO sessions (tournament_id, block_idx, rotation, log_path,"
                    " finished_at) VALUES (?, ?, ?, ?, ?)",
                    (result.tournament, result.block, result.rotation, self._relative(log_path), _now()),
                )
            except sqlite3.IntegrityError as exc:
                msg = f"session already recorded: {key}"
                raise StoreError(msg) from exc
            session_id = int(cursor.lastrowid or 0)
            _insert_seats(conn, session_id, result)
            _insert_faults(conn, session_id, result)
        return session_id

    def session(self, session_id: int) -> SessionRow:
        """Find the recorded session with this id."""
        rows = self._session_rows(session_id=session_id)
        if not rows:
            msg = f"unknown session: {session_id}"
            raise StoreError(msg)
        return rows[0]

    def find_sessions(
        self,
        *,
        tournament: int | None = None,
        bot: str | None = None,
        fault_kind: str | None = None,
        result: Literal["win", "loss"] | None = None,
    ) -> list[SessionRow]:
        """List the sessions matching every filter given, by tournament, block, rotation.

        ``result`` needs ``bot``: ``"win"`` keeps the sessions in which that bot had a win
        share above zero, ``"loss"`` those in which it sat and did not. With ``bot``,
        ``fault_kind`` keeps the sessions in which that bot made a fault of that kind.
        """
        if result is not None and bot is None:
            msg = "the result filter needs a bot"
            raise StoreError(msg)
        return self._session_rows(tournament=tournament, bot=bot, fault_kind=fault_kind, result=result)

    def _session_rows(self, **filters: object) -> list[SessionRow]:
        params = dict.fromkeys(("session_id", "tournament", "bot", "fault_kind", "result"))
        params.update(filters)
        rows = self._query(sql.FIND_SESSIONS, params)
        seat_bots: dict[int, list[str]] = defaultdict(list)
        chunk = 500  # stay far below SQLite's limit on bound parameters
        for start in range(0, len(rows), chunk):
            ids = [row[0] for row in rows[start : start + chunk]]
            for session_id, bot in self._query(
                "SELECT session_id, bot FROM seat_results WHERE session_id IN"  # noqa: S608 - only placeholders are formatted in
                f" ({', '.join('?' * len(ids))}) ORDER BY session_id, seat",
                ids,
            ):
                seat_bots[session_id].append(bot)
        return [
            SessionRow(i, t, b, r, seed, self._absolute(log), at, tuple(seat_bots[i]))
            for i, t, b, r, seed, log, at in rows
        ]

    def session_results(self, tournament_id: int) -> list[SessionResult]:
        """Rebuild every recorded session of the tournament, by block and rotation."""
        self.tournament(tournament_id)
        params = (tournament_id,)
        declarations: dict[tuple[int, int], list[Declaration]] = defaultdict(list)
        for session_id, seat, contract, made, pool_chips, widow, peeked, exchanged in self._query(
            sql.DECLARATIONS_OF_TOURNAMENT, params
        ):
            declarations[session_id, seat].append(
                Declaration(
                    contract,
                    bool(made),
                    pool_chips=pool_chips,
                    widow_taken=None if widow is None else bool(widow),
                    peeked=None if peeked is None else bool(peeked),
                    exchanged=exchanged,
                )
            )
        faults: dict[int, list[FaultRecord]] = defaultdict(list)
        for session_id, *fault in self._query(sql.FAULTS_OF_TOURNAMENT, params):
            faults[session_id].append(FaultRecord(*fault))
        seats: dict[int, list[SeatResult]] = defaultdict(list)
        for session_id, seat, bot, chips, share, count in self._query(sql.SEATS_OF_TOURNAMENT, params):
            seats[session_id].append(
                SeatResult(seat, bot, chips, share, tuple(declarations[session_id, seat]), count)
            )
        return [
            SessionResult(
                tournament_id,
                block,
                rotation,
                board_seed,
                tuple(seats[session_id]),
                tuple(faults[session_id]),
            )
            for session_id, block, rotation, board_seed in self._query(sql.SESSIONS_OF_TOURNAMENT, params)
        ]
