"""The SQL of the Nap Arena database: its schema and the queries too long to sit inline.

Schema version history (``PRAGMA user_version``):

1. bots, tournaments, blocks, sessions, seat_results, declarations, faults.
2. declarations gain the pool variants' ``pool_chips``, ``widow_taken``, ``peeked`` and ``exchanged``
   (:data:`MIGRATIONS` adds them to a version 1 file, with the defaults of a deal without
   a pool: 0, NULL, NULL, 0).
"""

from __future__ import annotations

APPLICATION_ID = 0x4E415041
"""``PRAGMA application_id`` of a Nap Arena database: ``"NAPA"`` in ASCII."""

SCHEMA_VERSION = 2
"""``PRAGMA user_version`` this code writes and reads."""

SCHEMA: tuple[str, ...] = (
    """CREATE TABLE bots (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        command TEXT NOT NULL,  -- JSON list of argv
        language TEXT,
        folder TEXT,
        content_hash TEXT NOT NULL,
        registered_at TEXT NOT NULL,
        UNIQUE (name, content_hash))""",
    """CREATE TABLE tournaments (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        config TEXT NOT NULL,  -- JSON object
        seed INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted')),
        created_at TEXT NOT NULL,
        finished_at TEXT)""",
    """CREATE TABLE blocks (
        tournament_id INTEGER NOT NULL REFERENCES tournaments (id),
        idx INTEGER NOT NULL,
        board_seed INTEGER NOT NULL,
        bots TEXT NOT NULL,  -- JSON list: the bot at each seat in rotation 0
        PRIMARY KEY (tournament_id, idx)) WITHOUT ROWID""",
    """CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        tournament_id INTEGER NOT NULL,
        block_idx INTEGER NOT NULL,
        rotation INTEGER NOT NULL,
        log_path TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        UNIQUE (tournament_id, block_idx, rotation),
        FOREIGN KEY (tournament_id, block_idx) REFERENCES blocks (tournament_id, idx))""",
    """CREATE TABLE seat_results (
        session_id INTEGER NOT NULL REFERENCES sessions (id),
        seat INTEGER NOT NULL,
        bot TEXT NOT NULL,
        chips INTEGER NOT NULL,
        win_share REAL NOT NULL,
        faults INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (session_id, seat)) WITHOUT ROWID""",
    "CREATE INDEX seat_results_bot ON seat_results (bot, session_id)",
    """CREATE TABLE declarations (
        id INTEGER PRIMARY KEY,  -- keeps the declarations of a seat in deal order
        session_id INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        contract TEXT NOT NULL,
        made INTEGER NOT NULL CHECK (made IN (0, 1)),
        pool_chips INTEGER NOT NULL DEFAULT 0,  -- taken from the pool that deal
        widow_taken INTEGER CHECK (widow_taken IN (0, 1)),  -- NULL: no widow
        peeked INTEGER CHECK (peeked IN (0, 1)),  -- paid to see the widow; NULL: no widow
        exchanged INTEGER NOT NULL DEFAULT 0,  -- cards exchanged before the auction
        FOREIGN KEY (session_id, seat) REFERENCES seat_results (session_id, seat))""",
    "CREATE INDEX declarations_session ON declarations (session_id)",
    """CREATE TABLE faults (
        id INTEGER PRIMARY KEY,  -- keeps the faults of a session in the order seen
        session_id INTEGER NOT NULL REFERENCES sessions (id),
        kind TEXT NOT NULL,
        bot TEXT NOT NULL,
        seat INTEGER NOT NULL,
        deal INTEGER NOT NULL,
        decision INTEGER NOT NULL,
        elapsed_ms REAL NOT NULL,
        detail TEXT NOT NULL)""",
    "CREATE INDEX faults_session ON faults (session_id)",
    "CREATE INDEX faults_kind ON faults (kind, session_id)",
)

MIGRATIONS: dict[int, tuple[str, ...]] = {
    2: (
        "ALTER TABLE declarations ADD COLUMN pool_chips INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE declarations ADD COLUMN widow_taken INTEGER CHECK (widow_taken IN (0, 1))",
        "ALTER TABLE declarations ADD COLUMN peeked INTEGER CHECK (peeked IN (0, 1))",
        "ALTER TABLE declarations ADD COLUMN exchanged INTEGER NOT NULL DEFAULT 0",
    ),
}
"""The statements that bring a file from the version before each key up to that version."""

FIND_SESSIONS = """
    SELECT s.id, s.tournament_id, s.block_idx, s.rotation, b.board_seed, s.log_path,
           s.finished_at
    FROM sessions s
    JOIN blocks b ON b.tournament_id = s.tournament_id AND b.idx = s.block_idx
    WHERE (:session_id IS NULL OR s.id = :session_id)
      AND (:tournament IS NULL OR s.tournament_id = :tournament)
      AND (:bot IS NULL OR EXISTS (
            SELECT 1 FROM seat_results r WHERE r.session_id = s.id AND r.bot = :bot
              AND (:result IS NULL OR (r.win_share > 0) = (:result = 'win'))))
      AND (:fault_kind IS NULL OR EXISTS (
            SELECT 1 FROM faults f WHERE f.session_id = s.id AND f.kind = :fault_kind
              AND (:bot IS NULL OR f.bot = :bot)))
    ORDER BY s.tournament_id, s.block_idx, s.rotation
"""

BOT_COLUMNS = "SELECT id, name, version, command, language, folder, content_hash, registered_at FROM bots"
TOURNAMENT_COLUMNS = "SELECT id, name, config, seed, status, created_at, finished_at FROM tournaments"

DECLARATIONS_OF_TOURNAMENT = """
    SELECT d.session_id, d.seat, d.contract, d.made, d.pool_chips, d.widow_taken, d.peeked, d.exchanged
    FROM declarations d JOIN sessions s ON s.id = d.session_id
    WHERE s.tournament_id = ? ORDER BY d.id
"""
FAULTS_OF_TOURNAMENT = """
    SELECT f.session_id, f.kind, f.bot, f.seat, f.deal, f.decision, f.elapsed_ms, f.detail
    FROM faults f JOIN sessions s ON s.id = f.session_id
    WHERE s.tournament_id = ? ORDER BY f.id
"""
SEATS_OF_TOURNAMENT = """
    SELECT r.session_id, r.seat, r.bot, r.chips, r.win_share, r.faults
    FROM seat_results r JOIN sessions s ON s.id = r.session_id
    WHERE s.tournament_id = ? ORDER BY r.session_id, r.seat
"""
SESSIONS_OF_TOURNAMENT = """
    SELECT s.id, s.block_idx, s.rotation, b.board_seed
    FROM sessions s JOIN blocks b ON b.tournament_id = s.tournament_id AND b.idx = s.block_idx
    WHERE s.tournament_id = ? ORDER BY s.block_idx, s.rotation
"""
