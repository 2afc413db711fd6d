"""Tournaments, bots and finished sessions in one SQLite file.

The file is marked as ours with ``PRAGMA application_id`` and carries its schema version
in ``PRAGMA user_version`` (the SQL is in :mod:`tournaments.store.schema`); a file of an
older version is brought up to this one when opened, its rows kept. It runs in WAL
mode (``synchronous = NORMAL``: durable across a killed process, a commit costs no disk
sync), so ``nap log list`` can read while a tournament writes. A session is committed with
its seat results, declarations and faults in one ``BEGIN IMMEDIATE`` transaction, and
``UNIQUE (tournament_id, block_idx, rotation)`` guarantees that no session is counted
twice, even across a resume. The session's log (the gzip JSON of
:mod:`tournaments.store.logs`) is a blob in the same transaction, so a session is stored with
its log or not at all, a tournament of a million sessions is one file rather than a
million, and the file can be moved, copied or archived alone and still verifies (``nap log
export`` writes logs out as files). The same transaction adds the session to the
standings' running totals (:mod:`tournaments.stats.tally`), so :meth:`Store.tally` reads the
standings' sums in a few rows whatever the number of sessions.

Every failure the caller can act on (not our file, newer schema, damaged, locked, full,
unknown id, duplicate session) is a :class:`StoreError` whose ``str()`` is one line. An
existing file opened for writing is checked first (``PRAGMA quick_check``), so a damaged
database is refused before anything is written into it.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections import defaultdict
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self, get_args

from referee.match.faults import FAULT_FIELDS, Fault, FaultKind
from tournaments.errors import MissingLogError, StoreError
from tournaments.results import Declaration, SeatResult, SessionResult
from tournaments.stats.load_check import LateFaults
from tournaments.stats.tally import (
    BOT_FIELDS,
    BlockSeat,
    BotTotals,
    ContractTotals,
    PairTotals,
    SessionChange,
    Tally,
    scale_for,
    session_change,
)
from tournaments.store import schema as sql

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence
    from types import TracebackType

TournamentStatus = Literal["running", "finished", "interrupted"]


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
    """A tournament; timestamps are ISO 8601 in UTC, ``finished_at`` is None while running.

    ``unisolated`` is None while every run of the tournament ran its bots isolated, else
    the reason the first run that did not gave (:meth:`Store.mark_unisolated`);
    ``uncontained`` likewise for the containment of each local bot's process tree and its
    CPU clock (:meth:`Store.mark_uncontained`).
    """

    id: int
    name: str
    config: Mapping[str, object]
    seed: int
    status: TournamentStatus
    created_at: str
    finished_at: str | None
    unisolated: str | None = None
    uncontained: str | None = None


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


def _open_as_it_is(path: Path) -> sqlite3.Connection:
    """A connection that reads the database at ``path`` as it is, in a folder that cannot be written.

    SQLite opens a database in WAL mode only where it can make the files beside it; with
    ``immutable`` it reads the file alone, which nobody can change in such a folder. The
    schema must be this version's already: an older file is upgraded where it can be written.
    """
    name = str(path)
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro&immutable=1", uri=True)
        _needs_schema(conn, name)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as exc:
        raise _translate(exc, name) from exc
    if version < sql.SCHEMA_VERSION:
        conn.close()
        msg = (
            f"{name} is in a folder that cannot be written, and its schema {version} must be upgraded "
            f"to {sql.SCHEMA_VERSION} first: open it once where it can be written"
        )
        raise StoreError(msg)
    return conn


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


@contextmanager
def _write_locked(conn: sqlite3.Connection) -> Iterator[None]:
    """Run the body as one transaction that takes the write lock first; roll it back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with suppress(sqlite3.Error):  # the first error says more than a failed rollback
                conn.execute("ROLLBACK")
        raise


def _create_schema(conn: sqlite3.Connection, name: str) -> None:
    """Create the schema under the write lock, unless another process won the race."""
    with _write_locked(conn):
        if _needs_schema(conn, name):
            for statement in (*sql.SCHEMA, *sql.PACKED, sql.BOT_CONTENTS):
                conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {sql.APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {sql.SCHEMA_VERSION}")


def _migrate(conn: sqlite3.Connection, folder: Path) -> None:
    """Bring an older file up to :data:`~tournaments.store.schema.SCHEMA_VERSION`, under the write lock.

    Each step adds what its version added (:data:`~tournaments.store.schema.MIGRATIONS`),
    so every row written before reads back with the new columns' defaults; version 3 also
    reads the log files into the database (:func:`_pack_logs`, ``folder`` being the
    database's). A file from before :data:`~tournaments.store.schema.TOTALS_VERSION` then
    has the standings' totals computed from its sessions, once, after the last step, so
    they equal a fresh fold of the same sessions. Another process may have migrated the
    file meanwhile: the version is read again under the lock.
    """
    if conn.execute("PRAGMA user_version").fetchone()[0] >= sql.SCHEMA_VERSION:
        return
    with _write_locked(conn):
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        for step in range(version + 1, sql.SCHEMA_VERSION + 1):
            for statement in sql.MIGRATIONS[step]:
                conn.execute(statement)
            if step == 3:
                _pack_logs(conn, folder)
            conn.execute(f"PRAGMA user_version = {step}")
        if version < sql.TOTALS_VERSION:
            _record_totals(conn)


def _pack_logs(conn: sqlite3.Connection, folder: Path) -> None:
    """Read each session's log file (path relative to ``folder``, or absolute) into ``session_logs``.

    The path is read as version 2 read it (``normpath``, so a ``..`` after a symbolic link
    goes back up the link). A file that is gone is left out (``nap log show`` then says the
    log was missing when the database was upgraded); one that cannot be read stops the
    upgrade (StoreError), its file untouched. The files are left where they are.
    """
    rows = conn.execute("SELECT id, log_path FROM sessions ORDER BY id").fetchall()
    for session_id, stored in rows:
        path = Path(os.path.normpath(folder / stored))
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            msg = f"cannot read {path} to pack it into the database: {exc.strerror or exc}"
            raise StoreError(msg) from exc
        conn.execute("INSERT INTO session_logs (session_id, data) VALUES (?, ?)", (session_id, data))
    conn.execute("ALTER TABLE sessions DROP COLUMN log_path")


TOTALS_TABLES = ("block_seats", "bot_totals", "pair_totals", "contract_totals", "tournament_totals")
"""The tables of the standings' running totals (:mod:`tournaments.stats.tally`)."""


def _record_totals(conn: sqlite3.Connection) -> None:
    """Compute every tournament's totals afresh from its stored sessions (:func:`_migrate`)."""
    for table in TOTALS_TABLES:
        conn.execute(f"DELETE FROM {table}")  # noqa: S608 - our own table names
    for (tournament,) in conn.execute("SELECT id FROM tournaments ORDER BY id").fetchall():
        results = _results(conn, "s.tournament_id = ?", (tournament,))
        scale = _scale(conn, tournament)
        blocks: dict[int, dict[str, BlockSeat]] = {}
        for result in results.values():
            try:
                change = session_change(result, blocks.get(result.block, {}), scale=scale)
            except ValueError as exc:
                msg = f"cannot compute the standings' totals: {exc}"
                raise StoreError(msg) from exc
            blocks[result.block] = change.block
            _add_change(conn, result, change)


def _add_change(conn: sqlite3.Connection, result: SessionResult, change: SessionChange) -> None:
    """Add one session's change to the stored totals (see :mod:`tournaments.stats.tally`)."""
    tournament = result.tournament
    conn.executemany(
        "INSERT OR REPLACE INTO block_seats"
        " (tournament_id, block_idx, bot, sessions, chips, wins, first_chips, hand_chips)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                tournament,
                result.block,
                bot,
                seat.sessions,
                seat.chips,
                seat.wins,
                seat.first_chips,
                seat.hand_chips,
            )
            for bot, seat in change.block.items()
        ],
    )
    columns = ", ".join(BOT_FIELDS)
    conn.executemany(
        f"INSERT INTO bot_totals (tournament_id, bot, {columns})"  # noqa: S608 - our own column names
        f" VALUES (?, ?, {', '.join('?' * len(BOT_FIELDS))})"
        " ON CONFLICT DO UPDATE SET "
        + ", ".join(f"{name} = {name} + excluded.{name}" for name in BOT_FIELDS),
        [
            (tournament, bot, *(getattr(totals, name) for name in BOT_FIELDS))
            for bot, totals in change.bots.items()
        ],
    )
    conn.executemany(
        "INSERT INTO pair_totals (tournament_id, bot, opponent, blocks, diff, diff_sq, meetings)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET blocks = blocks + excluded.blocks,"
        " diff = diff + excluded.diff, diff_sq = diff_sq + excluded.diff_sq,"
        " meetings = meetings + excluded.meetings",
        [
            (tournament, a, b, pair.blocks, pair.diff, pair.diff_sq, pair.meetings)
            for (a, b), pair in change.pairs.items()
        ],
    )
    conn.executemany(
        "INSERT INTO contract_totals (tournament_id, bot, contract, made, attempted) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT DO UPDATE SET made = made + excluded.made, attempted = attempted + excluded.attempted",
        [
            (tournament, bot, contract, record.made, record.attempted)
            for (bot, contract), record in change.contracts.items()
        ],
    )
    conn.execute(
        "INSERT INTO tournament_totals (tournament_id, sessions, blocks, faults) VALUES (?, 1, ?, ?)"
        " ON CONFLICT DO UPDATE SET sessions = sessions + 1, blocks = blocks + excluded.blocks,"
        " faults = faults + excluded.faults",
        (tournament, int(change.new_block), change.faults),
    )


def _scale(conn: sqlite3.Connection, tournament: int) -> int:
    """The units of the tournament's totals: :func:`~tournaments.stats.tally.scale_for` its largest table."""
    [(seats,)] = conn.execute(
        "SELECT max(json_array_length(bots)) FROM blocks WHERE tournament_id = ?", (tournament,)
    ).fetchall()
    return scale_for(seats or 1)


def _register(  # noqa: PLR0913, PLR0917 - one argument per column
    conn: sqlite3.Connection,
    name: str,
    version: str,
    command: Sequence[str],
    language: str | None,
    folder: str | None,
    content_hash: str,
) -> BotRow:
    """Insert a bots row unless (name, content_hash) is there; the row either way."""
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


def _block_seats(conn: sqlite3.Connection, tournament: int, block: int) -> dict[str, BlockSeat]:
    rows = conn.execute(
        "SELECT bot, sessions, chips, wins, first_chips, hand_chips FROM block_seats"
        " WHERE tournament_id = ? AND block_idx = ?",
        (tournament, block),
    ).fetchall()
    return {bot: BlockSeat(*seat) for bot, *seat in rows}


def _results(conn: sqlite3.Connection, where: str, params: Sequence[object]) -> dict[int, SessionResult]:
    """The sessions matching ``where`` (a condition on ``sessions s``) rebuilt, by id, in play order."""
    declarations: dict[tuple[int, int], list[Declaration]] = defaultdict(list)
    for session_id, seat, contract, made, pool_chips, widow, peeked, exchanged in conn.execute(
        sql.DECLARATIONS_OF_SESSIONS.format(where=where), params
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
    faults: dict[int, list[Fault]] = defaultdict(list)
    for session_id, *fault in conn.execute(sql.FAULTS_OF_SESSIONS.format(where=where), params):
        try:
            faults[session_id].append(Fault.from_row(fault))
        except ValueError as exc:
            msg = f"session {session_id} has a fault this version cannot read: {exc}"
            raise StoreError(msg) from exc
    seats: dict[int, list[SeatResult]] = defaultdict(list)
    for session_id, seat, bot, chips, share, count, asked, substituted, cpu_us, clocked in conn.execute(
        sql.SEATS_OF_SESSIONS.format(where=where), params
    ):
        seat_result = SeatResult(
            seat,
            bot,
            chips,
            share,
            tuple(declarations[session_id, seat]),
            count,
            asked,
            substituted,
            cpu_us=cpu_us,
            clocked=clocked,
        )
        seats[session_id].append(seat_result)
    return {
        session_id: SessionResult(
            tournament, block, rotation, board_seed, tuple(seats[session_id]), tuple(faults[session_id])
        )
        for session_id, tournament, block, rotation, board_seed in conn.execute(
            sql.SESSIONS_WHERE.format(where=where), params
        )
    }


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
    tournament_id, name, config, seed, status, created_at, finished_at, unisolated, uncontained = row
    return TournamentRow(
        tournament_id,
        name,
        json.loads(config),
        seed,
        status,
        created_at,
        finished_at,
        unisolated,
        uncontained,
    )


def _insert_seats(conn: sqlite3.Connection, session_id: int, result: SessionResult) -> None:
    conn.executemany(
        "INSERT INTO seat_results"
        " (session_id, seat, bot, chips, win_share, faults, asked, substituted, cpu_us, clocked)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                session_id,
                s.seat,
                s.bot,
                s.chips,
                s.win_share,
                s.faults,
                s.asked,
                s.substituted,
                s.cpu_us,
                s.clocked,
            )
            for s in result.seats
        ],
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


_INSERT_FAULT = (
    f"INSERT INTO faults (session_id, {sql.FAULT_COLUMNS})"  # noqa: S608 - our own columns
    f" VALUES (?, {', '.join('?' * len(FAULT_FIELDS))})"
)


def _insert_faults(conn: sqlite3.Connection, session_id: int, result: SessionResult) -> None:
    conn.executemany(_INSERT_FAULT, [(session_id, *fault.to_row()) for fault in result.faults])


class Store:
    """An open Nap Arena database; get one from :meth:`open` and close it (or use ``with``).

    One store is one connection: use it from one thread (the runner's event loop).
    """

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self._name = str(path)
        self.path = path
        """The database file, as given to :meth:`open`."""
        self._scales: dict[int, int] = {}
        """Each tournament's units (its blocks never change), read once."""

    def _scale(self, tournament: int) -> int:
        """The units of the tournament's totals (:func:`_scale`)."""
        if tournament in self._scales:
            return self._scales[tournament]
        try:
            scale = _scale(self._conn, tournament)
        except sqlite3.Error as exc:
            raise _translate(exc, self._name) from exc
        if scale > 1:  # a tournament with blocks (made once, with the tournament)
            self._scales[tournament] = scale
        return scale

    @classmethod
    def open(
        cls, path: Path, *, busy_timeout_ms: int = 5000, check: bool = True, reading: bool = False
    ) -> Store:
        """Open the database at ``path``, creating the file and schema if it is new.

        ``busy_timeout_ms`` is how long any statement waits for another process's lock
        before failing with "<path> is locked by another process". ``check`` runs
        ``PRAGMA quick_check`` on an existing file before anything is written to it and
        refuses a damaged one; a caller that only reads may skip it. A caller that only
        reads (``reading``) also opens a database whose folder cannot be written (a
        read-only copy, an archive): read as it is (:func:`_open_as_it_is`).
        """
        try:
            return cls._open(path, busy_timeout_ms=busy_timeout_ms, check=check)
        except StoreError:
            if not reading or not path.is_file() or os.access(path.absolute().parent, os.W_OK):
                raise
        return cls(_open_as_it_is(path), path)

    @classmethod
    def _open(cls, path: Path, *, busy_timeout_ms: int, check: bool) -> Store:
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
                try:
                    _migrate(conn, path.absolute().parent)
                except StoreError as exc:
                    msg = f"{name} cannot be upgraded to schema {sql.SCHEMA_VERSION}: {exc}"
                    raise StoreError(msg) from exc
            conn.execute("PRAGMA journal_mode = WAL")
            # In WAL mode, NORMAL syncs at checkpoints rather than at every commit: a killed
            # process loses nothing committed; only a power cut can drop the last commits,
            # and a resume replays those sessions (with their logs, never doubled).
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
        """Run the body as one write transaction, taking the write lock up front (errors in one line)."""
        try:
            with _write_locked(self._conn):
                yield self._conn
        except sqlite3.Error as exc:
            raise _translate(exc, self._name) from exc

    # Bots

    def register_bot(  # noqa: PLR0913 - one keyword per column of a bot row, and its content
        self,
        *,
        name: str,
        version: str,
        command: Sequence[str],
        language: str | None,
        folder: str | None,
        content_hash: str,
        pack: bytes | None = None,
    ) -> BotRow:
        """Register a bot version; the same (name, content_hash) returns the existing row.

        With its content ``pack`` (:func:`tournaments.plan.versions.pack`) it is a submitted
        version (``nap bot submit``); the same content is stored once, whichever bots share it.
        """
        with self._transaction() as conn:
            if pack is not None:
                conn.execute(
                    "INSERT INTO bot_contents (content_hash, pack) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    (content_hash, pack),
                )
            return _register(conn, name, version, command, language, folder, content_hash)

    def submitted(self, name: str, which: str | None = None) -> BotRow | None:
        """A submitted version of bot ``name``: the latest, or the latest whose version or hash is ``which``.

        ``which`` matches a version exactly, or the start of a content hash (six lowercase
        hex digits or more). None when no submitted version matches.
        """
        query, params = sql.SUBMITTED, [name]
        if which is not None:
            by_hash = re.fullmatch(r"[0-9a-f]{6,64}", which) is not None
            query += " AND (version = ? OR content_hash LIKE ?)"
            params += [which, f"{which}%" if by_hash else ""]
        rows = self._query(f"{query} ORDER BY id DESC LIMIT 1", params)
        return _bot_row(rows[0]) if rows else None

    def bot_pack(self, content_hash: str) -> bytes:
        """The stored content of a submitted version; StoreError when there is none."""
        rows = self._query("SELECT pack FROM bot_contents WHERE content_hash = ?", (content_hash,))
        if not rows:
            msg = f"no submitted content with hash {content_hash[:12]}"
            raise StoreError(msg)
        return bytes(rows[0][0])

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

    def mark_unisolated(self, tournament: int, reason: str) -> None:
        """Record that a run of ``tournament`` played its bots without isolation, and why.

        Only the first reason is kept: from that run on, the tournament's results were open
        to a bot that remembers boards, whatever later runs did. Raises StoreError for an
        unknown tournament.
        """
        self._first_reason(tournament, "unisolated", reason)

    def mark_uncontained(self, tournament: int, reason: str) -> None:
        """Record that a run of ``tournament`` did not contain its local bots or clock them in their CPU.

        ``reason`` says what it lacked; only the first is kept, as :meth:`mark_unisolated`
        keeps its. Raises StoreError for an unknown tournament.
        """
        self._first_reason(tournament, "uncontained", reason)

    def _first_reason(
        self, tournament: int, column: Literal["unisolated", "uncontained"], reason: str
    ) -> None:
        """Keep ``reason`` in ``column`` of ``tournament`` unless one is there; StoreError if unknown."""
        with self._transaction() as conn:
            if conn.execute("SELECT 1 FROM tournaments WHERE id = ?", (tournament,)).fetchone() is None:
                msg = f"unknown tournament: {tournament}"
                raise StoreError(msg)
            conn.execute(
                f"UPDATE tournaments SET {column} = ? WHERE id = ? AND {column} IS NULL",  # noqa: S608 - a column of ours
                (reason, tournament),
            )

    def blocks(self, tournament_id: int) -> list[BlockRow]:
        """List the tournament's blocks by index."""
        self.tournament(tournament_id)
        rows = self._query(
            "SELECT tournament_id, idx, board_seed, bots FROM blocks WHERE tournament_id = ? ORDER BY idx",
            (tournament_id,),
        )
        return [BlockRow(t, i, s, tuple(json.loads(b))) for t, i, s, b in rows]

    def planned(self, tournament_id: int) -> tuple[int, int]:
        """The tournament's blocks and the sessions they schedule (a match may stop before).

        A block schedules a session per rotation, one per seat; a person's (``nap play``,
        the config's ``person``) schedules one.
        """
        [(blocks, sessions)] = self._query(
            "SELECT count(b.idx), CASE WHEN json_extract(t.config, '$.person') IS NULL"
            " THEN coalesce(sum(json_array_length(b.bots)), 0) ELSE count(b.idx) END"
            " FROM tournaments t LEFT JOIN blocks b ON b.tournament_id = t.id WHERE t.id = ?",
            (tournament_id,),
        )
        return int(blocks), int(sessions)

    # Sessions

    def finished_keys(self, tournament_id: int) -> set[tuple[int, int]]:
        """Give (block, rotation) of every session of the tournament already recorded."""
        rows = self._query(
            "SELECT block_idx, rotation FROM sessions WHERE tournament_id = ?", (tournament_id,)
        )
        return {(block, rotation) for block, rotation in rows}

    def record_session(self, result: SessionResult, *, log: bytes) -> int:
        """Commit one finished session with all its details, its log and its totals in one transaction.

        ``log`` is the session's log as :func:`tournaments.store.logs.encode_log` made it.
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
                    "INSERT INTO sessions (tournament_id, block_idx, rotation, finished_at)"
                    " VALUES (?, ?, ?, ?)",
                    (result.tournament, result.block, result.rotation, _now()),
                )
            except sqlite3.IntegrityError as exc:
                msg = f"session already recorded: {key}"
                raise StoreError(msg) from exc
            session_id = int(cursor.lastrowid or 0)
            conn.execute("INSERT INTO session_logs (session_id, data) VALUES (?, ?)", (session_id, log))
            _insert_seats(conn, session_id, result)
            _insert_faults(conn, session_id, result)
            try:
                before = _block_seats(conn, result.tournament, result.block)
                change = session_change(result, before, scale=self._scale(result.tournament))
            except ValueError as exc:
                raise StoreError(str(exc)) from exc
            _add_change(conn, result, change)
        return session_id

    def find_sessions(  # noqa: PLR0913 - one keyword per filter, and the page
        self,
        *,
        tournament: int | None = None,
        bot: str | None = None,
        fault_kind: str | None = None,
        result: Literal["win", "loss"] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[SessionRow]:
        """List the sessions matching every filter given, by tournament, block, rotation.

        ``result`` needs ``bot``: ``"win"`` keeps the sessions in which that bot had a win
        share above zero, ``"loss"`` those in which it sat and did not. With ``bot``,
        ``fault_kind`` keeps the sessions in which that bot made a fault of that kind.
        ``limit`` and ``offset`` give one page (``limit`` None: every row from ``offset``);
        a first page is read in a time that does not grow with the number of sessions
        (``bench/store.py`` measures it).
        """
        conditions, params = _filters(tournament=tournament, bot=bot, fault_kind=fault_kind, result=result)
        page = "" if limit is None and not offset else " LIMIT ? OFFSET ?"
        if page:
            params += [-1 if limit is None else limit, offset]
        query = (
            f"{sql.SESSION_COLUMNS} WHERE {conditions}"
            f" ORDER BY s.tournament_id, s.block_idx, s.rotation{page}"
        )
        return self._session_rows(self._query(query, params))

    def session_ids(
        self,
        *,
        tournament: int | None = None,
        bot: str | None = None,
        fault_kind: str | None = None,
        result: Literal["win", "loss"] | None = None,
    ) -> list[int]:
        """The ids of the sessions :meth:`find_sessions` lists with the same filters, in its order."""
        conditions, params = _filters(tournament=tournament, bot=bot, fault_kind=fault_kind, result=result)
        query = (
            f"SELECT s.id FROM sessions s WHERE {conditions}"  # noqa: S608 - our conditions, placeholders
            " ORDER BY s.tournament_id, s.block_idx, s.rotation"
        )
        return [session_id for (session_id,) in self._query(query, params)]

    def sessions_by_id(self, session_ids: Sequence[int]) -> list[SessionRow]:
        """The rows of these sessions, in the order given (unknown ids are left out)."""
        rows: dict[int, Row] = {}
        for ids in _chunks(list(session_ids)):
            for row in self._query(
                f"{sql.SESSION_COLUMNS} WHERE s.id IN ({', '.join('?' * len(ids))})",
                ids,
            ):
                rows[row[0]] = row
        return self._session_rows([rows[i] for i in session_ids if i in rows])

    def sessions_to_list(self, tournament_id: int, *, limit: int) -> list[SessionRow]:
        """At most ``limit`` sessions of the tournament: every faulty one first, then the first played.

        In block and rotation order; for pages that cannot list a million sessions.
        """
        faulty = self._query(
            "SELECT DISTINCT f.session_id FROM faults f JOIN sessions s ON s.id = f.session_id"
            " WHERE s.tournament_id = ? ORDER BY f.session_id LIMIT ?",
            (tournament_id, limit),
        )
        first = self._query(
            "SELECT id FROM sessions WHERE tournament_id = ? ORDER BY id LIMIT ?", (tournament_id, limit)
        )
        chosen = list(dict.fromkeys(row[0] for row in (*faulty, *first)))[:limit]
        return sorted(self.sessions_by_id(chosen), key=lambda row: (row.block, row.rotation))

    def session(self, session_id: int) -> SessionRow:
        """Find the recorded session with this id."""
        rows = self._session_rows(self._query(f"{sql.SESSION_COLUMNS} WHERE s.id = ?", (session_id,)))
        if not rows:
            msg = f"unknown session: {session_id}"
            raise StoreError(msg)
        return rows[0]

    def _session_rows(self, rows: Sequence[Row]) -> list[SessionRow]:
        seat_bots: dict[int, list[str]] = defaultdict(list)
        for ids in _chunks([row[0] for row in rows]):
            for session_id, bot in self._query(
                "SELECT session_id, bot FROM seat_results WHERE session_id IN"  # noqa: S608 - only placeholders are formatted in
                f" ({', '.join('?' * len(ids))}) ORDER BY session_id, seat",
                ids,
            ):
                seat_bots[session_id].append(bot)
        return [SessionRow(i, t, b, r, seed, at, tuple(seat_bots[i])) for i, t, b, r, seed, at in rows]

    def log(self, session_id: int) -> bytes:
        """The log of a recorded session, as :func:`tournaments.store.logs.encode_log` made it."""
        rows = self._query("SELECT data FROM session_logs WHERE session_id = ?", (session_id,))
        if not rows:
            self.session(session_id)  # an unknown session says so
            msg = (
                f"session {session_id} has no log in {self._name}: its log file was already gone "
                "when the database was upgraded to packed logs"
            )
            raise MissingLogError(msg)
        return bytes(rows[0][0])

    def session_results(self, tournament_id: int) -> list[SessionResult]:
        """Rebuild every recorded session of the tournament, by block and rotation.

        This reads every session: for the standings, :meth:`tally` reads their sums instead.
        """
        self.tournament(tournament_id)
        return list(self._read_results("s.tournament_id = ?", (tournament_id,)).values())

    def results_of(self, session_ids: Iterable[int]) -> dict[int, SessionResult]:
        """The recorded results of these sessions, by id (unknown ids are left out)."""
        found: dict[int, SessionResult] = {}
        for ids in _chunks(list(session_ids)):
            found |= self._read_results(f"s.id IN ({', '.join('?' * len(ids))})", ids)
        return found

    def _read_results(self, where: str, params: Sequence[object]) -> dict[int, SessionResult]:
        try:
            return _results(self._conn, where, params)
        except sqlite3.Error as exc:
            raise _translate(exc, self._name) from exc

    def tally(self, tournament_ids: Iterable[int]) -> Tally:
        """The standings' sums of these tournaments' sessions, kept as each was recorded.

        Reads a few rows per bot and pair, whatever the number of sessions; equal to
        :func:`tournaments.stats.tally.tally_of` over the same sessions (several tournaments at
        the least scale of theirs, :meth:`~tournaments.stats.tally.Tally.merged`).
        """
        total = Tally()
        for tournament in sorted(set(tournament_ids)):
            total = total.merged(self._tally(tournament))
        return total

    def _tally(self, tournament: int) -> Tally:
        params = (tournament,)
        tally = Tally(scale=self._scale(tournament))
        for sessions, blocks, faults in self._query(
            "SELECT sessions, blocks, faults FROM tournament_totals WHERE tournament_id = ?", params
        ):
            tally.sessions, tally.blocks, tally.faults = sessions, blocks, faults
        for bot, *values in self._query(
            f"SELECT bot, {', '.join(BOT_FIELDS)} FROM bot_totals WHERE tournament_id = ?",  # noqa: S608 - our columns
            params,
        ):
            tally.bots[bot] = BotTotals(*values)
        for a, b, *pair in self._query(
            "SELECT bot, opponent, blocks, diff, diff_sq, meetings FROM pair_totals WHERE tournament_id = ?",
            params,
        ):
            tally.pairs[a, b] = PairTotals(*pair)
        for bot, contract, made, attempted in self._query(
            "SELECT bot, contract, made, attempted FROM contract_totals WHERE tournament_id = ?", params
        ):
            tally.contracts[bot, contract] = ContractTotals(made, attempted)
        return tally

    def late_faults(self, tournament: int) -> LateFaults:
        """``tournament``'s late faults per bot and the sessions in which two or more bots were late.

        The same as :meth:`LateFaults.of <tournaments.stats.load_check.LateFaults.of>` over its
        sessions; it reads only the late faults (by their index).
        """
        late = LateFaults()
        bots: dict[int, set[str]] = defaultdict(set)
        for session_id, bot in self._query(
            "SELECT f.session_id, f.bot FROM faults f JOIN sessions s ON s.id = f.session_id"
            " WHERE f.kind = ? AND s.tournament_id = ?",
            (str(FaultKind.LATE), tournament),
        ):
            late.by_bot[bot] += 1
            bots[session_id].add(bot)
        late.together = sum(len(names) >= 2 for names in bots.values())
        return late


def _filters(
    *, tournament: int | None, bot: str | None, fault_kind: str | None, result: str | None
) -> tuple[str, list[object]]:
    """The condition on ``sessions s`` (placeholders only) and its parameters for these filters."""
    if result is not None and bot is None:
        msg = "the result filter needs a bot"
        raise StoreError(msg)
    conditions: list[str] = ["1"]
    params: list[object] = []
    if tournament is not None:
        conditions.append("s.tournament_id = ?")
        params.append(tournament)
    if fault_kind is not None:  # faults are rare: find them first, by their index
        by_bot = " AND bot = ?" if bot is not None else ""
        conditions.append(f"s.id IN (SELECT session_id FROM faults WHERE kind = ?{by_bot})")  # noqa: S608
        params += [fault_kind] if bot is None else [fault_kind, bot]
    if bot is not None:
        shares = {"win": " AND r.win_share > 0", "loss": " AND r.win_share = 0", None: ""}[result]
        seat = f"SELECT 1 FROM seat_results r WHERE r.session_id = s.id AND r.bot = ?{shares}"  # noqa: S608
        conditions.append(f"EXISTS ({seat})")
        params.append(bot)
    return " AND ".join(conditions), params


def _chunks(ids: list[int], size: int = 500) -> Iterator[list[int]]:
    """``ids`` in lists of at most ``size``: far below SQLite's limit on bound parameters."""
    for start in range(0, len(ids), size):
        yield ids[start : start + size]
