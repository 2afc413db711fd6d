"""Database schemas as older versions of Nap Arena made them, for the upgrade tests.

Frozen here: the history, not the code. Each is the current schema's statements with the
tables that version had in another shape put back as they were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tournaments import store_schema

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

OLD_TABLES: dict[int, dict[str, str]] = {
    1: {"declarations": V1_DECLARATIONS, "sessions": V1_SESSIONS},
    2: {"sessions": V1_SESSIONS},
}
"""The tables each version had in another shape than today's."""


def create_old_database(conn: sqlite3.Connection, version: int) -> None:
    """Make ``conn``'s empty database one of schema ``version`` (1 or 2), marked as ours."""
    tables = OLD_TABLES[version]
    for statement in store_schema.SCHEMA:
        old = (
            text for name, text in tables.items() if statement.lstrip().startswith(f"CREATE TABLE {name} ")
        )
        conn.execute(next(old, statement))
    conn.execute(f"PRAGMA application_id = {store_schema.APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {version}")
