"""Database schemas as older versions of Nap Arena made them, for the upgrade tests.

Frozen here: the history, not the code. Each is the current schema's statements (of the
tables that version had) with the tables it had in another shape put back as they were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tournaments.store import schema as store_schema

if TYPE_CHECKING:
    import sqlite3

V1_DECLARATIONS = """CREATE TABLE declarations (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        contract TEXT NOT NULL,
        made INTEGER NOT NULL CHECK (made IN (0, 1)),
        FOREIGN KEY (session_id, seat) REFERENCES seat_results (session_id, seat))"""
"""The declarations table as schema version 1 made it (frozen here: the history, not the code)."""

V1_SESSIONS = """CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        tournament_id INTEGER NOT NULL,
        block_idx INTEGER NOT NULL,
        rotation INTEGER NOT NULL,
        log_path TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        UNIQUE (tournament_id, block_idx, rotation),
        FOREIGN KEY (tournament_id, block_idx) REFERENCES blocks (tournament_id, idx))"""
"""The sessions table as schema versions 1 and 2 made it, log paths and all."""

V3_TOURNAMENTS = """CREATE TABLE tournaments (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        config TEXT NOT NULL,  -- JSON object
        seed INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted')),
        created_at TEXT NOT NULL,
        finished_at TEXT)"""
"""The tournaments table as schema versions 1 to 3 made it: no ``unisolated``."""

V3_BLOCK_SEATS = """CREATE TABLE block_seats (
        tournament_id INTEGER NOT NULL,
        block_idx INTEGER NOT NULL,
        bot TEXT NOT NULL,
        sessions INTEGER NOT NULL,
        chips INTEGER NOT NULL,
        wins INTEGER NOT NULL,  -- win shares in 1/420
        PRIMARY KEY (tournament_id, block_idx, bot)) WITHOUT ROWID"""
"""The block_seats table as schema version 3 made it: no rotation-0 chips."""

V3_BOT_TOTALS = """CREATE TABLE bot_totals (
        tournament_id INTEGER NOT NULL,
        bot TEXT NOT NULL,
        sessions INTEGER NOT NULL, blocks INTEGER NOT NULL,
        chips INTEGER NOT NULL, chips_sq INTEGER NOT NULL,
        wins INTEGER NOT NULL, wins_sq INTEGER NOT NULL,
        expected INTEGER NOT NULL, faults INTEGER NOT NULL, beats INTEGER NOT NULL,
        pools INTEGER NOT NULL, pool_chips INTEGER NOT NULL, widows INTEGER NOT NULL,
        widows_taken INTEGER NOT NULL, widows_taken_made INTEGER NOT NULL,
        widows_peeked INTEGER NOT NULL, exchanged INTEGER NOT NULL,
        PRIMARY KEY (tournament_id, bot)) WITHOUT ROWID"""
"""The bot_totals table as schema version 3 made it: no rotation edges."""

V4_SEAT_RESULTS = """CREATE TABLE seat_results (
        session_id INTEGER NOT NULL REFERENCES sessions (id),
        seat INTEGER NOT NULL,
        bot TEXT NOT NULL,
        chips INTEGER NOT NULL,
        win_share REAL NOT NULL,
        faults INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (session_id, seat)) WITHOUT ROWID"""
"""The seat_results table as schema versions 1 to 4 made it: no counts of decisions asked and substituted."""

V4_BOT_TOTALS = """CREATE TABLE bot_totals (
        tournament_id INTEGER NOT NULL,
        bot TEXT NOT NULL,
        sessions INTEGER NOT NULL, blocks INTEGER NOT NULL,
        chips INTEGER NOT NULL, chips_sq INTEGER NOT NULL,
        wins INTEGER NOT NULL, wins_sq INTEGER NOT NULL,
        expected INTEGER NOT NULL, faults INTEGER NOT NULL, beats INTEGER NOT NULL,
        pools INTEGER NOT NULL, pool_chips INTEGER NOT NULL, widows INTEGER NOT NULL,
        widows_taken INTEGER NOT NULL, widows_taken_made INTEGER NOT NULL,
        widows_peeked INTEGER NOT NULL, exchanged INTEGER NOT NULL,
        rotation_blocks INTEGER NOT NULL DEFAULT 0,
        rotation_edge INTEGER NOT NULL DEFAULT 0,  -- in 1/3600 chip, whatever the table sizes
        rotation_edge_sq INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tournament_id, bot)) WITHOUT ROWID"""
"""The bot_totals table as schema version 4 made it: no counts of decisions."""

V6_TOURNAMENTS = """CREATE TABLE tournaments (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        config TEXT NOT NULL,  -- JSON object
        seed INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted')),
        created_at TEXT NOT NULL,
        finished_at TEXT,
        unisolated TEXT)  -- NULL: every run ran its bots isolated; else why the first that did not"""
"""The tournaments table as schema versions 4 to 6 made it: no ``uncontained``."""

V6_SEAT_RESULTS = """CREATE TABLE seat_results (
        session_id INTEGER NOT NULL REFERENCES sessions (id),
        seat INTEGER NOT NULL,
        bot TEXT NOT NULL,
        chips INTEGER NOT NULL,
        win_share REAL NOT NULL,
        faults INTEGER NOT NULL DEFAULT 0,
        asked INTEGER NOT NULL DEFAULT 0,  -- decisions asked of the seat (forced moves apart)
        substituted INTEGER NOT NULL DEFAULT 0,  -- of those, played by the referee (faults, disqualified)
        PRIMARY KEY (session_id, seat)) WITHOUT ROWID"""
"""The seat_results table as schema versions 5 and 6 made it: no CPU."""

V6_BOT_TOTALS = """CREATE TABLE bot_totals (
        tournament_id INTEGER NOT NULL,
        bot TEXT NOT NULL,
        sessions INTEGER NOT NULL, blocks INTEGER NOT NULL,
        chips INTEGER NOT NULL, chips_sq INTEGER NOT NULL,
        wins INTEGER NOT NULL, wins_sq INTEGER NOT NULL,
        expected INTEGER NOT NULL, faults INTEGER NOT NULL, beats INTEGER NOT NULL,
        pools INTEGER NOT NULL, pool_chips INTEGER NOT NULL, widows INTEGER NOT NULL,
        widows_taken INTEGER NOT NULL, widows_taken_made INTEGER NOT NULL,
        widows_peeked INTEGER NOT NULL, exchanged INTEGER NOT NULL,
        rotation_blocks INTEGER NOT NULL DEFAULT 0,
        rotation_edge INTEGER NOT NULL DEFAULT 0,  -- in 1/3600 chip, whatever the table sizes
        rotation_edge_sq INTEGER NOT NULL DEFAULT 0,
        asked INTEGER NOT NULL DEFAULT 0, substituted INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tournament_id, bot)) WITHOUT ROWID"""
"""The bot_totals table as schema versions 5 and 6 made it: no CPU."""

V5_FAULTS = """CREATE TABLE faults (
        id INTEGER PRIMARY KEY,  -- keeps the faults of a session in the order seen
        session_id INTEGER NOT NULL REFERENCES sessions (id),
        kind TEXT NOT NULL,
        bot TEXT NOT NULL,
        seat INTEGER NOT NULL,
        deal INTEGER NOT NULL,
        decision INTEGER NOT NULL,
        elapsed_ms REAL NOT NULL,
        detail TEXT NOT NULL)"""
"""The faults table as versions 1 to 5 made it: no table; -1 for no seat, deal or decision, 0 for no time."""

V5_FAULT_VALUES = {
    "seat": "coalesce(seat, -1)",
    "deal": "coalesce(deal, -1)",
    "decision": "coalesce(decision, -1)",
    "elapsed_ms": "coalesce(elapsed_ms, 0.0)",
}
"""What versions 1 to 5 wrote in a fault's columns that today's leaves NULL: SQL over today's row."""

OLD_TABLES: dict[int, dict[str, str]] = {
    1: {
        "declarations": V1_DECLARATIONS,
        "sessions": V1_SESSIONS,
        "tournaments": V3_TOURNAMENTS,
        "seat_results": V4_SEAT_RESULTS,
        "faults": V5_FAULTS,
    },
    2: {
        "sessions": V1_SESSIONS,
        "tournaments": V3_TOURNAMENTS,
        "seat_results": V4_SEAT_RESULTS,
        "faults": V5_FAULTS,
    },
    3: {
        "tournaments": V3_TOURNAMENTS,
        "block_seats": V3_BLOCK_SEATS,
        "bot_totals": V3_BOT_TOTALS,
        "seat_results": V4_SEAT_RESULTS,
        "faults": V5_FAULTS,
    },
    4: {
        "tournaments": V6_TOURNAMENTS,
        "seat_results": V4_SEAT_RESULTS,
        "bot_totals": V4_BOT_TOTALS,
        "faults": V5_FAULTS,
    },
    5: {
        "tournaments": V6_TOURNAMENTS,
        "seat_results": V6_SEAT_RESULTS,
        "bot_totals": V6_BOT_TOTALS,
        "faults": V5_FAULTS,
    },
    6: {"tournaments": V6_TOURNAMENTS, "seat_results": V6_SEAT_RESULTS, "bot_totals": V6_BOT_TOTALS},
}
"""The tables each version had in another shape than today's."""

OLD_STATEMENTS: dict[int, tuple[str, ...]] = {
    1: store_schema.SCHEMA,
    2: store_schema.SCHEMA,
    3: (*store_schema.SCHEMA, *store_schema.PACKED),
    4: (*store_schema.SCHEMA, *store_schema.PACKED),
    5: (*store_schema.SCHEMA, *store_schema.PACKED, store_schema.BOT_CONTENTS),
    6: (*store_schema.SCHEMA, *store_schema.PACKED, store_schema.BOT_CONTENTS),
}
"""Today's statements of the tables each version had (before the old shapes are put back)."""


def create_old_database(conn: sqlite3.Connection, version: int) -> None:
    """Make ``conn``'s empty database one of schema ``version`` (1 to 6), marked as ours, with no rows."""
    tables = OLD_TABLES[version]
    for statement in OLD_STATEMENTS[version]:
        old = (
            text for name, text in tables.items() if statement.lstrip().startswith(f"CREATE TABLE {name} ")
        )
        conn.execute(next(old, statement))
    conn.execute(f"PRAGMA application_id = {store_schema.APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {version}")
