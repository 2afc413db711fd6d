"""The arena's records in its database: people and their tokens, submissions, and the ladder's blocks.

An arena (``nap arena serve``, :mod:`tournaments.arena`) keeps everything in one Nap Arena
database: its ladder is one tournament of the store (:class:`~tournaments.store.database.Store`),
whose blocks are added as the ladder chooses its tables, and whose sessions are recorded,
with their logs and the standings' totals, exactly as a tournament's; the tables here hold
what only an arena has. They are created the first time a file is opened as an arena
(:meth:`ArenaStore.open`), so a tournament's database never has them, and ``nap log show``
or ``nap standings`` read an arena's sessions as they read any.

- ``arena_people``: who may submit (and who administers); ``arena_tokens``: their tokens,
  stored as SHA-256 digests only (a token is 256 random bits, so a plain digest is as
  good as a slow hash and can be looked up), each with its scopes and, once revoked, when.
- ``arena_submissions``: every upload and where its admission stands; once admitted it is
  an entry of the ladder under :attr:`Submission.entry`. The upload's bytes are kept in
  ``arena_uploads`` by their SHA-256, so the same bytes uploaded twice are stored once.
- ``arena_steps``: each submission's admission log, a line per step, some for its owner only.
- ``arena_blocks``: what the ladder chose each block for (a placement or the ladder) and,
  for a block that will never be complete (an entry could not start), why.
- ``arena_meta``: the ladder's tournament and the arena's secret seed.

The arena process alone writes here (the pages and the API read); the SQL is this module's.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final, Literal, get_args

from referee.match.faults import FAULT_FIELDS, Fault
from tournaments.errors import StoreError
from tournaments.stats.ladder import BlockFigures
from tournaments.store.database import Row, SessionRow, Store

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

__all__ = [
    "ARENA_TABLES",
    "ArenaMeta",
    "ArenaStore",
    "BlockKind",
    "LadderBlock",
    "Person",
    "Submission",
    "SubmissionStatus",
    "TokenRow",
]

SubmissionStatus = Literal["queued", "building", "checking", "placing", "placed", "refused", "retired"]
"""Where a submission stands: ``queued`` to ``placing`` on the way in, then ``placed`` (on the
ladder) or ``refused`` (with the reason); ``retired`` when newer versions of its owner took its
place (its results kept)."""

ON_LADDER: Final = ("placing", "placed")
"""The statuses of a submission the ladder seats."""

BlockKind = Literal["placement", "ladder"]
"""Why the ladder chose a block: to place an entry against the anchors, or the ladder's own play."""

ARENA_TABLES: Final = (
    """CREATE TABLE IF NOT EXISTS arena_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS arena_people (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        admin INTEGER NOT NULL CHECK (admin IN (0, 1)),
        created_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS arena_tokens (
        id INTEGER PRIMARY KEY,
        person_id INTEGER NOT NULL REFERENCES arena_people (id),
        digest TEXT NOT NULL UNIQUE,  -- SHA-256 of the token, hex
        scopes TEXT NOT NULL,  -- space-separated: submit, admin
        created_at TEXT NOT NULL,
        revoked_at TEXT)""",
    """CREATE TABLE IF NOT EXISTS arena_uploads (
        digest TEXT PRIMARY KEY,  -- SHA-256 of the bytes, hex
        data BLOB NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS arena_submissions (
        id INTEGER PRIMARY KEY,
        person_id INTEGER NOT NULL REFERENCES arena_people (id),
        submitted_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        upload TEXT NOT NULL REFERENCES arena_uploads (digest),
        size INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN
            ('queued', 'building', 'checking', 'placing', 'placed', 'refused', 'retired')),
        reason TEXT,  -- one line: why it was refused or retired
        name TEXT, version TEXT, language TEXT,  -- from its manifest, once read
        command TEXT,  -- JSON list, once read
        content_hash TEXT,  -- of the unpacked folder
        entry TEXT UNIQUE,  -- the ladder's name for it (the bot of its sessions), once admitted
        rating TEXT)  -- JSON: the provisional rating when it was placed""",
    "CREATE INDEX IF NOT EXISTS arena_submissions_person ON arena_submissions (person_id, submitted_at)",
    """CREATE TABLE IF NOT EXISTS arena_steps (
        id INTEGER PRIMARY KEY,
        submission_id INTEGER NOT NULL REFERENCES arena_submissions (id),
        at TEXT NOT NULL,
        step TEXT NOT NULL,
        text TEXT NOT NULL,
        private INTEGER NOT NULL CHECK (private IN (0, 1)))  -- 1: for its owner only""",
    "CREATE INDEX IF NOT EXISTS arena_steps_submission ON arena_steps (submission_id)",
    """CREATE TABLE IF NOT EXISTS arena_blocks (
        block_idx INTEGER PRIMARY KEY,  -- of the ladder's tournament
        kind TEXT NOT NULL CHECK (kind IN ('placement', 'ladder')),
        placing TEXT,  -- a placement block: the entry it places
        abandoned TEXT)  -- NULL, or why the block will never be complete""",
)
"""The arena's own tables, created (if absent) whenever a file is opened as an arena."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True, slots=True)
class Person:
    """Someone who may submit bots (and, if ``admin``, add people)."""

    id: int
    name: str
    admin: bool
    created_at: str


@dataclass(frozen=True, slots=True)
class TokenRow:
    """A token of ``person`` (its digest only), what it may do, and when it was revoked (None: valid)."""

    id: int
    person: Person
    scopes: frozenset[str]
    created_at: str
    revoked_at: str | None


@dataclass(frozen=True, slots=True)
class Submission:
    """One upload and its admission; ``entry`` is its name on the ladder once admitted.

    Timestamps are ISO 8601 in UTC. ``name``, ``version``, ``language``, ``command`` and
    ``content_hash`` are None until its manifest is read; ``rating`` is the provisional
    rating it was placed with (JSON of an :class:`~tournaments.stats.estimates.Estimate`).
    """

    id: int
    owner: str
    submitted_at: str
    updated_at: str
    upload: str
    size: int
    status: SubmissionStatus
    reason: str | None
    name: str | None
    version: str | None
    language: str | None
    command: tuple[str, ...] | None
    content_hash: str | None
    entry: str | None
    rating: Mapping[str, object] | None


@dataclass(frozen=True, slots=True)
class ArenaMeta:
    """The arena's fixed facts: its ladder's tournament and its secret seed."""

    ladder: int
    seed: int
    created_at: str


@dataclass(frozen=True, slots=True)
class LadderBlock:
    """A block of the ladder: its seats (rotation 0), board seed, kind and the sessions stored so far."""

    index: int
    board_seed: int
    bots: tuple[str, ...]
    kind: BlockKind
    placing: str | None
    sessions: int
    abandoned: str | None

    @property
    def complete(self) -> bool:
        """Whether every rotation is stored: only then does the block count, and show its cards."""
        return self.sessions >= len(self.bots)


_SUBMISSION_COLUMNS: Final = (
    "SELECT s.id, p.name, s.submitted_at, s.updated_at, s.upload, s.size, s.status, s.reason, s.name,"
    " s.version, s.language, s.command, s.content_hash, s.entry, s.rating"
    " FROM arena_submissions s JOIN arena_people p ON p.id = s.person_id"
)
_BLOCK_COLUMNS: Final = (
    "SELECT b.idx, b.board_seed, b.bots, a.kind, a.placing, a.abandoned,"
    " (SELECT count(*) FROM sessions s WHERE s.tournament_id = b.tournament_id AND s.block_idx = b.idx)"
    " FROM blocks b JOIN arena_blocks a ON a.block_idx = b.idx WHERE b.tournament_id = ?"
)


_STATUSES: Final[tuple[SubmissionStatus, ...]] = get_args(SubmissionStatus)


def _status(text: str) -> SubmissionStatus:
    for status in _STATUSES:
        if status == text:
            return status
    msg = f"unknown submission status: {text}"
    raise StoreError(msg)


def _submission(row: Row) -> Submission:
    sid, owner, submitted, updated, upload, size, status, reason, name, version, *rest = row
    language, command, digest, entry, rating = rest
    return Submission(
        id=sid,
        owner=owner,
        submitted_at=submitted,
        updated_at=updated,
        upload=upload,
        size=size,
        status=_status(status),
        reason=reason,
        name=name,
        version=version,
        language=language,
        command=None if command is None else tuple(json.loads(command)),
        content_hash=digest,
        entry=entry,
        rating=None if rating is None else json.loads(rating),
    )


def _person(row: Row) -> Person:
    person_id, name, admin, created_at = row
    return Person(id=person_id, name=name, admin=bool(admin), created_at=created_at)


class ArenaStore(Store):
    """A Nap Arena database opened as an arena: the store's sessions, and the arena's own records."""

    @classmethod
    def open_arena(cls, path: Path, *, busy_timeout_ms: int = 5000, check: bool = True) -> ArenaStore:
        """Open (or create) the database at ``path`` with the arena's tables in it."""
        store = cls.open(path, busy_timeout_ms=busy_timeout_ms, check=check)
        try:
            with store._transaction() as conn:  # noqa: SLF001 - our own class's transaction
                for statement in ARENA_TABLES:
                    conn.execute(statement)
        except BaseException:
            store.close()
            raise
        assert isinstance(store, ArenaStore)  # noqa: S101 - cls.open builds a cls
        return store

    # The arena's fixed facts

    def meta(self) -> ArenaMeta | None:
        """The arena's ladder and seed; None before its first start (:meth:`create_arena`)."""
        values: dict[str, str] = dict(self._query("SELECT key, value FROM arena_meta"))
        if "ladder" not in values:
            return None
        return ArenaMeta(
            ladder=int(values["ladder"]), seed=int(values["seed"]), created_at=values["created_at"]
        )

    def create_arena(
        self, *, config: Mapping[str, object], seed: int, settings: Mapping[str, object]
    ) -> ArenaMeta:
        """Create the ladder's tournament (no blocks yet) and record the arena's facts and settings."""
        ladder = self.create_tournament(name="arena ladder", config=config, seed=seed, blocks=())
        created = _now()
        with self._transaction() as conn:
            conn.executemany(
                "INSERT INTO arena_meta (key, value) VALUES (?, ?)",
                [
                    ("ladder", str(ladder)),
                    ("seed", str(seed)),
                    ("created_at", created),
                    ("settings", json.dumps(dict(settings), sort_keys=True)),
                ],
            )
        return ArenaMeta(ladder=ladder, seed=seed, created_at=created)

    def settings(self) -> dict[str, object]:
        """The arena's settings as stored (:class:`~tournaments.arena.settings.ArenaSettings` JSON)."""
        rows = self._query("SELECT value FROM arena_meta WHERE key = 'settings'")
        if not rows:
            msg = f"{self.path} holds no arena settings"
            raise StoreError(msg)
        data = json.loads(rows[0][0])
        if not isinstance(data, dict):
            msg = f"{self.path}: the arena's settings are damaged"
            raise StoreError(msg)
        return data

    def save_settings(self, settings: Mapping[str, object]) -> None:
        """Keep the arena's settings (a start may change its house rules)."""
        with self._transaction() as conn:
            conn.execute(
                "UPDATE arena_meta SET value = ? WHERE key = 'settings'",
                (json.dumps(dict(settings), sort_keys=True),),
            )

    # People and tokens

    def add_person(self, name: str, *, admin: bool, token_digest: str, scopes: Iterable[str]) -> Person:
        """Add a person with their first token (its digest); StoreError if the name is taken."""
        with self._transaction() as conn:
            try:
                cursor = conn.execute(
                    "INSERT INTO arena_people (name, admin, created_at) VALUES (?, ?, ?)",
                    (name, int(admin), _now()),
                )
            except sqlite3.IntegrityError as exc:
                msg = f"there is already someone called {name}"
                raise StoreError(msg) from exc
            person_id = int(cursor.lastrowid or 0)
            _insert_token(conn, person_id, token_digest, scopes)
        return self.person(name)

    def add_token(self, person: str, *, token_digest: str, scopes: Iterable[str]) -> None:
        """Give ``person`` one more token (its digest)."""
        found = self.person(person)
        with self._transaction() as conn:
            _insert_token(conn, found.id, token_digest, scopes)

    def person(self, name: str) -> Person:
        """The person called ``name``; StoreError if nobody is."""
        rows = self._query("SELECT id, name, admin, created_at FROM arena_people WHERE name = ?", (name,))
        if not rows:
            msg = f"nobody is called {name}"
            raise StoreError(msg)
        return _person(rows[0])

    def people(self) -> list[Person]:
        """Everyone, in the order they were added."""
        return [
            _person(row)
            for row in self._query("SELECT id, name, admin, created_at FROM arena_people ORDER BY id")
        ]

    def token(self, digest: str) -> TokenRow | None:
        """The token with this digest, revoked or not; None when there is none."""
        rows = self._query(
            "SELECT t.id, p.id, p.name, p.admin, p.created_at, t.scopes, t.created_at, t.revoked_at"
            " FROM arena_tokens t JOIN arena_people p ON p.id = t.person_id WHERE t.digest = ?",
            (digest,),
        )
        if not rows:
            return None
        token_id, *person, scopes, created_at, revoked_at = rows[0]
        return TokenRow(
            id=token_id,
            person=_person(tuple(person)),
            scopes=frozenset(scopes.split()),
            created_at=created_at,
            revoked_at=revoked_at,
        )

    def tokens(self, person: str) -> list[TokenRow]:
        """``person``'s tokens, oldest first, the revoked ones included."""
        found = self.person(person)
        rows = self._query(
            "SELECT id, scopes, created_at, revoked_at FROM arena_tokens WHERE person_id = ? ORDER BY id",
            (found.id,),
        )
        return [
            TokenRow(id=i, person=found, scopes=frozenset(scopes.split()), created_at=at, revoked_at=revoked)
            for i, scopes, at, revoked in rows
        ]

    def revoke_tokens(self, person: str) -> int:
        """Revoke every valid token of ``person``; how many were."""
        found = self.person(person)
        with self._transaction() as conn:
            cursor = conn.execute(
                "UPDATE arena_tokens SET revoked_at = ? WHERE person_id = ? AND revoked_at IS NULL",
                (_now(), found.id),
            )
        return cursor.rowcount

    # Submissions

    def add_submission(
        self,
        owner: str,
        *,
        upload: bytes,
        digest: str,
        status: SubmissionStatus = "queued",
        reason: str | None = None,
    ) -> Submission:
        """Record an upload by ``owner`` (its bytes kept once per digest) as a new submission."""
        person = self.person(owner)
        now = _now()
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO arena_uploads (digest, data) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (digest, upload),
            )
            cursor = conn.execute(
                "INSERT INTO arena_submissions"
                " (person_id, submitted_at, updated_at, upload, size, status, reason)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (person.id, now, now, digest, len(upload), status, reason),
            )
        return self.submission(int(cursor.lastrowid or 0))

    def upload(self, digest: str) -> bytes:
        """The bytes of an upload; StoreError if there is none with this digest."""
        rows = self._query("SELECT data FROM arena_uploads WHERE digest = ?", (digest,))
        if not rows:
            msg = f"no upload with digest {digest[:12]}"
            raise StoreError(msg)
        return bytes(rows[0][0])

    def submission(self, submission_id: int) -> Submission:
        """The submission with this id; StoreError if there is none."""
        rows = self._query(f"{_SUBMISSION_COLUMNS} WHERE s.id = ?", (submission_id,))
        if not rows:
            msg = f"unknown submission: {submission_id}"
            raise StoreError(msg)
        return _submission(rows[0])

    def submissions(
        self, *, owner: str | None = None, statuses: Iterable[SubmissionStatus] | None = None
    ) -> list[Submission]:
        """The submissions (of ``owner``, in ``statuses``), oldest first."""
        conditions, params = ["1"], []
        if owner is not None:
            conditions.append("p.name = ?")
            params.append(owner)
        if statuses is not None:
            wanted = list(statuses)
            conditions.append(f"s.status IN ({', '.join('?' * len(wanted))})")
            params += wanted
        query = f"{_SUBMISSION_COLUMNS} WHERE {' AND '.join(conditions)} ORDER BY s.id"
        return [_submission(row) for row in self._query(query, params)]

    def entry(self, name: str) -> Submission | None:
        """The submission admitted as ladder entry ``name``; None for an anchor or an unknown name."""
        rows = self._query(f"{_SUBMISSION_COLUMNS} WHERE s.entry = ?", (name,))
        return _submission(rows[0]) if rows else None

    def submitted_since(self, owner: str, *, hours: float) -> int:
        """How many submissions ``owner`` made in the last ``hours`` (refused ones included)."""
        since = (datetime.now(UTC) - timedelta(hours=hours)).isoformat(timespec="milliseconds")
        [(count,)] = self._query(
            "SELECT count(*) FROM arena_submissions s JOIN arena_people p ON p.id = s.person_id"
            " WHERE p.name = ? AND s.submitted_at >= ?",
            (owner, since),
        )
        return int(count)

    def update_submission(
        self, submission_id: int, *, status: SubmissionStatus, **facts: object
    ) -> Submission:
        """Move a submission to ``status``, with any of its facts (``reason``, ``name``, ``entry``, ...)."""
        allowed = {"reason", "name", "version", "language", "command", "content_hash", "entry", "rating"}
        unknown = set(facts) - allowed
        if unknown:
            msg = f"not a submission's fact: {', '.join(sorted(unknown))}"
            raise ValueError(msg)
        values = {
            key: json.dumps(value) if key in {"command", "rating"} and value is not None else value
            for key, value in facts.items()
        }
        columns = "".join(f", {key} = ?" for key in values)
        with self._transaction() as conn:
            cursor = conn.execute(
                f"UPDATE arena_submissions SET status = ?, updated_at = ?{columns} WHERE id = ?",  # noqa: S608 - our columns
                (status, _now(), *values.values(), submission_id),
            )
            if cursor.rowcount == 0:
                msg = f"unknown submission: {submission_id}"
                raise StoreError(msg)
        return self.submission(submission_id)

    def add_step(self, submission_id: int, step: str, text: str, *, private: bool = False) -> None:
        """Add a line to a submission's admission log (``private``: for its owner only)."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO arena_steps (submission_id, at, step, text, private) VALUES (?, ?, ?, ?, ?)",
                (submission_id, _now(), step, text, int(private)),
            )

    def steps(self, submission_id: int, *, private: bool) -> list[tuple[str, str, str]]:
        """A submission's admission log as (time, step, text); the private lines only if ``private``."""
        rows = self._query(
            "SELECT at, step, text FROM arena_steps"
            " WHERE submission_id = ? AND (private = 0 OR ?) ORDER BY id",
            (submission_id, int(private)),
        )
        return [(at, step, text) for at, step, text in rows]

    # The ladder's blocks

    def add_ladder_blocks(
        self, ladder: int, blocks: Sequence[tuple[int, int, tuple[str, ...], BlockKind, str | None]]
    ) -> None:
        """Add blocks to the ladder's tournament as (index, board seed, bots, kind, entry placed)."""
        with self._transaction() as conn:
            conn.executemany(
                "INSERT INTO blocks (tournament_id, idx, board_seed, bots) VALUES (?, ?, ?, ?)",
                [(ladder, index, seed, json.dumps(list(bots))) for index, seed, bots, _, _ in blocks],
            )
            conn.executemany(
                "INSERT INTO arena_blocks (block_idx, kind, placing) VALUES (?, ?, ?)",
                [(index, kind, placing) for index, _, _, kind, placing in blocks],
            )

    def abandon_block(self, index: int, reason: str) -> None:
        """Mark a block that will never be complete (it is not played again, and never counts)."""
        with self._transaction() as conn:
            conn.execute("UPDATE arena_blocks SET abandoned = ? WHERE block_idx = ?", (reason, index))

    def ladder_blocks(self, ladder: int, *, complete: bool | None = None) -> list[LadderBlock]:
        """The ladder's blocks by index: all, only the complete ones, or only those still to finish.

        ``complete=False`` leaves out the abandoned blocks: they will never be played.
        """
        rows = self._query(f"{_BLOCK_COLUMNS} ORDER BY b.idx", (ladder,))
        blocks = [
            LadderBlock(
                index=index,
                board_seed=seed,
                bots=tuple(json.loads(bots)),
                kind=kind,
                placing=placing,
                sessions=sessions,
                abandoned=abandoned,
            )
            for index, seed, bots, kind, placing, abandoned, sessions in rows
        ]
        if complete is None:
            return blocks
        if complete:
            return [block for block in blocks if block.complete]
        return [block for block in blocks if not block.complete and block.abandoned is None]

    def placement_blocks_complete(self, ladder: int, entry: str) -> int:
        """How many of ``entry``'s placement blocks are complete."""
        [(count,)] = self._query(
            "SELECT count(*) FROM arena_blocks a JOIN blocks b ON b.tournament_id = ? AND b.idx = a.block_idx"
            " WHERE a.kind = 'placement' AND a.placing = ? AND json_array_length(b.bots) <="
            " (SELECT count(*) FROM sessions s"
            " WHERE s.tournament_id = b.tournament_id AND s.block_idx = b.idx)",
            (ladder, entry),
        )
        return int(count)

    def rotations_stored(self, ladder: int, block: int) -> set[int]:
        """The rotations of the ladder's ``block`` whose sessions are stored."""
        rows = self._query(
            "SELECT rotation FROM sessions WHERE tournament_id = ? AND block_idx = ?", (ladder, block)
        )
        return {rotation for (rotation,) in rows}

    def block_complete(self, ladder: int, block: int) -> bool:
        """Whether every rotation of the ladder's ``block`` is stored."""
        rows = self._query(
            "SELECT json_array_length(b.bots), (SELECT count(*) FROM sessions s"
            " WHERE s.tournament_id = b.tournament_id AND s.block_idx = b.idx)"
            " FROM blocks b WHERE b.tournament_id = ? AND b.idx = ?",
            (ladder, block),
        )
        return bool(rows) and rows[0][1] >= rows[0][0]

    def complete_sessions(self, ladder: int, bot: str, *, limit: int) -> list[SessionRow]:
        """The latest ``limit`` sessions ``bot`` sat in of the ladder's complete blocks, newest first.

        Read from the newest back along the bot's sessions, so a page costs the same
        however many sessions the bot played.
        """
        rows = self._query(
            "SELECT s.id FROM seat_results r JOIN sessions s ON s.id = r.session_id"
            " JOIN blocks b ON b.tournament_id = s.tournament_id AND b.idx = s.block_idx"
            " WHERE r.bot = ? AND s.tournament_id = ? AND json_array_length(b.bots) <= (SELECT count(*)"
            " FROM sessions t WHERE t.tournament_id = s.tournament_id AND t.block_idx = s.block_idx)"
            " ORDER BY r.session_id DESC LIMIT ?",
            (bot, ladder, limit),
        )
        return self.sessions_by_id([session_id for (session_id,) in rows])

    def faults_in_complete_blocks(self, ladder: int, bot: str, *, limit: int) -> list[tuple[int, Fault]]:
        """``bot``'s latest faults (``limit`` at most) in the ladder's complete blocks: (session, fault)."""
        columns = ", ".join(f'f."{name}"' for name in FAULT_FIELDS)
        rows = self._query(
            f"SELECT s.id, {columns} FROM faults f JOIN sessions s ON s.id = f.session_id"  # noqa: S608 - our columns
            " JOIN blocks b ON b.tournament_id = s.tournament_id AND b.idx = s.block_idx"
            " WHERE f.bot = ? AND s.tournament_id = ?"
            " AND json_array_length(b.bots) <= (SELECT count(*) FROM sessions t"
            " WHERE t.tournament_id = b.tournament_id AND t.block_idx = b.idx)"
            " ORDER BY f.id DESC LIMIT ?",
            (bot, ladder, limit),
        )
        return [(session, Fault.from_row(fault)) for session, *fault in rows]

    def fault_kinds(self, ladder: int, bot: str) -> dict[str, int]:
        """How many faults of each kind ``bot`` made in the ladder's sessions."""
        rows = self._query(
            "SELECT f.kind, count(*) FROM faults f JOIN sessions s ON s.id = f.session_id"
            " WHERE f.bot = ? AND s.tournament_id = ? GROUP BY f.kind ORDER BY f.kind",
            (bot, ladder),
        )
        return dict(rows)

    def block_figures(self, ladder: int) -> list[BlockFigures]:
        """Each complete block's figures: every entry's mean chips per session over the block."""
        rows = self._query(
            "SELECT bs.block_idx, bs.bot, bs.chips, bs.sessions FROM block_seats bs"
            " JOIN blocks b ON b.tournament_id = bs.tournament_id AND b.idx = bs.block_idx"
            " WHERE bs.tournament_id = ? AND bs.sessions = json_array_length(b.bots)"
            " ORDER BY bs.block_idx, bs.bot",
            (ladder,),
        )
        chips: dict[int, dict[str, float]] = {}
        for block, bot, total, sessions in rows:
            chips.setdefault(block, {})[bot] = total / sessions
        return [BlockFigures(block, figures) for block, figures in chips.items()]


def _insert_token(conn: sqlite3.Connection, person_id: int, digest: str, scopes: Iterable[str]) -> None:
    conn.execute(
        "INSERT INTO arena_tokens (person_id, digest, scopes, created_at) VALUES (?, ?, ?, ?)",
        (person_id, digest, " ".join(sorted(set(scopes))), _now()),
    )
