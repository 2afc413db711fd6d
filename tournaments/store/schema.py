"""The SQL of the Nap Arena database: its schema and the queries too long to sit inline.

Schema version history (``PRAGMA user_version``):

1. bots, tournaments, blocks, sessions, seat_results, declarations, faults.
2. declarations gain the pool variants' ``pool_chips``, ``widow_taken``, ``peeked`` and ``exchanged``
   (:data:`MIGRATIONS` adds them to a version 1 file, with the defaults of a deal without
   a pool: 0, NULL, NULL, 0).
3. Session logs packed into the database: ``session_logs`` holds each session's log (the
   gzip JSON a log file held), committed with its result, and ``sessions.log_path`` is
   gone. The standings' running totals (:mod:`tournaments.stats.tally`): ``block_seats``,
   ``bot_totals``, ``pair_totals``, ``contract_totals`` and ``tournament_totals``, updated
   in each session's transaction. ``faults_bot_kind`` serves ``nap log list --bot --fault``.
   The upgrade (``tournaments.store.database._migrate``) reads every log file the old rows name
   into ``session_logs`` (the files stay where they are) and computes the totals.
4. The rotation check (:mod:`tournaments.stats.rotation_check`): ``block_seats`` gain
   ``first_chips`` and ``hand_chips``, ``bot_totals`` the sums of the rotation edges
   (``rotation_blocks``, ``rotation_edge``, ``rotation_edge_sq``); :data:`MIGRATIONS`
   rebuilds those two tables, which hold nothing but totals, and the upgrade computes
   every total again from the stored sessions (from :data:`TOTALS_VERSION` on, totals are
   kept as they are). ``tournaments.unisolated``: NULL while every run of the tournament
   ran its bots isolated, otherwise the reason the first run that did not gave; an
   upgraded file's tournaments were all played before isolation (:data:`UNISOLATED_BEFORE`).
5. Submitted versions (:mod:`tournaments.plan.versions`): ``bot_contents`` holds the pack of
   each content a bot was submitted with, once per content hash; a ``bots`` row whose hash
   is there is a submitted version, which ``--bot NAME[@VERSION]`` plays. An upgraded file
   has none: its bots are submitted again to be played by name. ``seat_results`` gain
   ``asked`` and ``substituted`` (the decisions asked of the seat, and those the referee
   played for it), 0 in the sessions of an upgraded file, and ``bot_totals`` their sums
   (rebuilt and computed again, as version 4 did).
6. A fault's row is :class:`referee.match.faults.Fault`'s (:data:`FAULTS`): its ``table``
   (NULL in the rows of an upgraded file), and NULL where it has no seat, deal, decision or
   time taken (a seat, deal or decision was -1, a time 0); :data:`MIGRATIONS` rebuilds the
   table, the -1s made NULL.
7. The CPU decision clock and the bots' containment (docs/security.md): ``seat_results``
   gain ``cpu_us`` and ``clocked`` (the CPU the seat's decisions were charged, in
   microseconds, and how many of its asked decisions were on the CPU clock), 0 in the
   sessions of an upgraded file, and ``bot_totals`` their sums (rebuilt and computed
   again, as version 5 did); ``tournaments.uncontained``: NULL while every run of the
   tournament contained each local bot's process tree in a cgroup of its own and clocked
   it in its CPU, otherwise what the first run that did not lacked; an upgraded file's
   tournaments were all played before (:data:`UNCONTAINED_BEFORE`).
"""

from __future__ import annotations

from referee.match.faults import FAULT_FIELDS

APPLICATION_ID = 0x4E415041
"""``PRAGMA application_id`` of a Nap Arena database: ``"NAPA"`` in ASCII."""

SCHEMA_VERSION = 7
"""``PRAGMA user_version`` this code writes and reads."""

TOTALS_VERSION = 7
"""The version that last changed what the totals hold: a file upgraded from an older one has
every total computed again from its sessions."""

UNISOLATED_BEFORE = "played before bots were isolated"
"""``tournaments.unisolated`` of every tournament of a file upgraded from before version 4."""

UNCONTAINED_BEFORE = "played before bots were contained and clocked in their CPU"
"""``tournaments.uncontained`` of every tournament of a file upgraded from before version 7."""

FAULTS = """CREATE TABLE faults (
        id INTEGER PRIMARY KEY,  -- keeps the faults of a session in the order seen
        session_id INTEGER NOT NULL REFERENCES sessions (id),
        kind TEXT NOT NULL,
        bot TEXT NOT NULL,
        "table" TEXT,  -- the table's id; NULL: stored before version 6
        seat INTEGER,  -- NULL: none (a fault of the bot's connection, away from its seat)
        deal INTEGER,  -- NULL: none (the bot sat at no table)
        decision INTEGER,  -- NULL: none
        elapsed_ms REAL,  -- NULL: no request answered
        detail TEXT NOT NULL)"""
"""A session's faults, one row each: :class:`referee.match.faults.Fault` (columns :data:`FAULT_COLUMNS`)."""

FAULT_INDEXES: tuple[str, ...] = (
    "CREATE INDEX faults_session ON faults (session_id)",
    "CREATE INDEX faults_kind ON faults (kind, session_id)",
)

FAULT_COLUMNS = ", ".join(f'"{name}"' for name in FAULT_FIELDS)
"""A fault's columns, quoted (``table`` is a word of SQL), in the order of :meth:`Fault.to_row`."""

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
        finished_at TEXT,
        unisolated TEXT,  -- NULL: every run ran its bots isolated; else why the first that did not
        uncontained TEXT)  -- NULL: every run contained its bots, clocked in their CPU; else why not""",
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
        asked INTEGER NOT NULL DEFAULT 0,  -- decisions asked of the seat (forced moves apart)
        substituted INTEGER NOT NULL DEFAULT 0,  -- of those, played by the referee (faults, disqualified)
        cpu_us INTEGER NOT NULL DEFAULT 0,  -- CPU its decisions were charged on the CPU clock
        clocked INTEGER NOT NULL DEFAULT 0,  -- asked decisions on the CPU clock
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
    FAULTS,
    *FAULT_INDEXES,
)

BLOCK_SEATS = """CREATE TABLE block_seats (
        tournament_id INTEGER NOT NULL,
        block_idx INTEGER NOT NULL,
        bot TEXT NOT NULL,
        sessions INTEGER NOT NULL,
        chips INTEGER NOT NULL,
        wins INTEGER NOT NULL,  -- win shares in 1/420
        first_chips INTEGER,  -- chips in rotation 0; NULL until it is in
        hand_chips INTEGER NOT NULL DEFAULT 0,  -- chips at its rotation-0 seat, over the sessions so far
        PRIMARY KEY (tournament_id, block_idx, bot)) WITHOUT ROWID"""

BOT_TOTALS = """CREATE TABLE bot_totals (
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
        cpu_us INTEGER NOT NULL DEFAULT 0, clocked INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tournament_id, bot)) WITHOUT ROWID"""

FAULTS_BOT_KIND = "CREATE INDEX faults_bot_kind ON faults (bot, kind, session_id)"
"""Serves ``nap log list --bot --fault`` (since version 3)."""

PACKED: tuple[str, ...] = (
    """CREATE TABLE session_logs (
        session_id INTEGER PRIMARY KEY REFERENCES sessions (id),
        data BLOB NOT NULL)  -- the session's log: gzip-compressed JSON (tournaments.store.logs)""",
    BLOCK_SEATS,
    BOT_TOTALS,
    """CREATE TABLE pair_totals (
        tournament_id INTEGER NOT NULL,
        bot TEXT NOT NULL,
        opponent TEXT NOT NULL,  -- bot < opponent
        blocks INTEGER NOT NULL,
        diff INTEGER NOT NULL,
        diff_sq INTEGER NOT NULL,
        meetings INTEGER NOT NULL,
        PRIMARY KEY (tournament_id, bot, opponent)) WITHOUT ROWID""",
    """CREATE TABLE contract_totals (
        tournament_id INTEGER NOT NULL,
        bot TEXT NOT NULL,
        contract TEXT NOT NULL,
        made INTEGER NOT NULL,
        attempted INTEGER NOT NULL,
        PRIMARY KEY (tournament_id, bot, contract)) WITHOUT ROWID""",
    """CREATE TABLE tournament_totals (
        tournament_id INTEGER PRIMARY KEY REFERENCES tournaments (id),
        sessions INTEGER NOT NULL,
        blocks INTEGER NOT NULL,
        faults INTEGER NOT NULL)""",
    FAULTS_BOT_KIND,
)
"""What version 3 added: the packed logs and the standings' totals (in today's shape)."""

BOT_CONTENTS = """CREATE TABLE bot_contents (
        content_hash TEXT PRIMARY KEY,
        pack BLOB NOT NULL)  -- the folder as submitted: gzip tar (tournaments.plan.versions.pack)"""
"""What version 5 added: the content of every submitted bot version."""

MIGRATIONS: dict[int, tuple[str, ...]] = {
    7: (
        "ALTER TABLE seat_results ADD COLUMN cpu_us INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE seat_results ADD COLUMN clocked INTEGER NOT NULL DEFAULT 0",
        "DROP TABLE bot_totals",  # totals only: computed again once the steps are done
        BOT_TOTALS,
        "ALTER TABLE tournaments ADD COLUMN uncontained TEXT",
        f"UPDATE tournaments SET uncontained = '{UNCONTAINED_BEFORE}'",  # noqa: S608 - our constant
    ),
    6: (
        "ALTER TABLE faults RENAME TO faults_v5",
        FAULTS,
        (
            "INSERT INTO faults (id, session_id, kind, bot, seat, deal, decision, elapsed_ms, detail)"
            " SELECT id, session_id, kind, bot, nullif(seat, -1), nullif(deal, -1), nullif(decision, -1),"
            " elapsed_ms, detail FROM faults_v5"
        ),
        "DROP TABLE faults_v5",  # and its indexes, made again:
        *FAULT_INDEXES,
        FAULTS_BOT_KIND,
    ),
    5: (
        BOT_CONTENTS,
        "ALTER TABLE seat_results ADD COLUMN asked INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE seat_results ADD COLUMN substituted INTEGER NOT NULL DEFAULT 0",
        "DROP TABLE bot_totals",  # totals only: computed again once the steps are done
        BOT_TOTALS,
    ),
    4: (
        "DROP TABLE block_seats",  # totals only: computed again once the steps are done
        BLOCK_SEATS,
        "DROP TABLE bot_totals",
        BOT_TOTALS,
        "ALTER TABLE tournaments ADD COLUMN unisolated TEXT",
        f"UPDATE tournaments SET unisolated = '{UNISOLATED_BEFORE}'",  # noqa: S608 - our constant
    ),
    3: PACKED,  # then the logs are read in (tournaments.store.database)
    2: (
        "ALTER TABLE declarations ADD COLUMN pool_chips INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE declarations ADD COLUMN widow_taken INTEGER CHECK (widow_taken IN (0, 1))",
        "ALTER TABLE declarations ADD COLUMN peeked INTEGER CHECK (peeked IN (0, 1))",
        "ALTER TABLE declarations ADD COLUMN exchanged INTEGER NOT NULL DEFAULT 0",
    ),
}
"""The statements that bring a file from the version before each key up to that version.

Each step may create a table in today's shape (version 3 makes ``block_seats`` and
``bot_totals`` as they are now, and version 4 makes them again): the totals tables hold
nothing that the sessions do not, and an upgrade from before :data:`TOTALS_VERSION` fills
them in once every step is done."""

SESSION_COLUMNS = """
    SELECT s.id, s.tournament_id, s.block_idx, s.rotation, b.board_seed, s.finished_at
    FROM sessions s
    JOIN blocks b ON b.tournament_id = s.tournament_id AND b.idx = s.block_idx
"""

BOT_COLUMNS = "SELECT id, name, version, command, language, folder, content_hash, registered_at FROM bots"
SUBMITTED = f"{BOT_COLUMNS} WHERE name = ? AND content_hash IN (SELECT content_hash FROM bot_contents)"  # noqa: S608 - our own columns
"""The submitted versions of one bot (a name to fill in; more conditions may follow)."""
TOURNAMENT_COLUMNS = (
    "SELECT id, name, config, seed, status, created_at, finished_at, unisolated, uncontained FROM tournaments"
)

DECLARATIONS_OF_SESSIONS = """
    SELECT d.session_id, d.seat, d.contract, d.made, d.pool_chips, d.widow_taken, d.peeked, d.exchanged
    FROM declarations d WHERE d.session_id IN (SELECT id FROM sessions s WHERE {where}) ORDER BY d.id
"""
FAULTS_OF_SESSIONS = (
    f"SELECT f.session_id, {FAULT_COLUMNS} FROM faults f"  # noqa: S608 - our own columns
    " WHERE f.session_id IN (SELECT id FROM sessions s WHERE {where}) ORDER BY f.id"
)
SEATS_OF_SESSIONS = """
    SELECT r.session_id, r.seat, r.bot, r.chips, r.win_share, r.faults, r.asked, r.substituted,
        r.cpu_us, r.clocked
    FROM seat_results r WHERE r.session_id IN (SELECT id FROM sessions s WHERE {where})
    ORDER BY r.session_id, r.seat
"""
SESSIONS_WHERE = """
    SELECT s.id, s.tournament_id, s.block_idx, s.rotation, b.board_seed
    FROM sessions s JOIN blocks b ON b.tournament_id = s.tournament_id AND b.idx = s.block_idx
    WHERE {where} ORDER BY s.tournament_id, s.block_idx, s.rotation
"""
"""The parts of sessions' results; ``{where}`` is a condition on ``sessions s`` (placeholders only)."""
