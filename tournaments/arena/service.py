"""The arena as one object: what its web layer and its command line call, and what it runs.

:func:`open_arena` opens (or, the first time, creates) an arena's database and folder
and gives an :class:`Arena`; the first start also makes the ``admin`` person and hands
back their token, which is shown once and never stored. :meth:`Arena.run` then plays:
it admits submissions one after another (:mod:`tournaments.arena.admission`) and keeps
the ladder playing (:mod:`tournaments.arena.ladder`), until it is cancelled.

Every question a person asks goes through here, with the :class:`~tournaments.arena.people.Caller`
their token names (None: nobody signed in); each method checks what that caller may see
or do and raises one of :mod:`tournaments.arena.errors`' kinds otherwise, which the web
layer turns into an HTTP status. The leaderboard is recomputed from the store each time a
block completes (:mod:`tournaments.arena.board`) and kept until the next; :attr:`Arena.changes`
tells whoever waits (a live page) that something changed.

The folder beside the database (``<db>-files/``) holds the entries' unpacked folders
(``bots/``) and the bot processes' logs (``logs/``): nothing of it is served but a bot's
log to its owner.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from dataclasses import dataclass, field
from time import monotonic
from typing import TYPE_CHECKING, Any

from tournaments.arena.board import EntryRecord, Leaderboard, entry_record, leaderboard
from tournaments.arena.errors import (
    ForbiddenError,
    NameTakenError,
    NotFoundError,
    NotPublicError,
    QuotaError,
    RefusedError,
    TooLargeError,
    UnauthorizedError,
)
from tournaments.arena.people import ADMIN, SUBMIT, Caller, caller_of, check_name, digest, new_token
from tournaments.arena.settings import ANCHORS, ArenaSettings
from tournaments.errors import RunnerError, StoreError
from tournaments.store.arena import ArenaMeta, ArenaStore, Submission

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from referee.match.faults import Fault
    from tournaments.play.executors.base import Usage
    from tournaments.play.tables import TableSource
    from tournaments.store.arena import Person

__all__ = ["ADMIN_NAME", "Arena", "Opened", "open_arena"]

ADMIN_NAME = "admin"
"""The person the first start makes, with every scope."""
BOARD_QUICK_S = 0.05
"""A leaderboard computed faster than this is computed again after every block."""
BOARD_SHARE = 20.0
"""A slower one (a ladder of many thousands of blocks) is computed again at most every this many
times what it took: the board stays within 1/20 of the arena's time, a few seconds behind at worst."""
FAULTS_SHOWN = 50
"""An entry's latest faults its owner's log shows, each with the decision it was made on."""


def files_folder(db: Path) -> Path:
    """The arena's folder beside its database: ``arena.db`` keeps its files in ``arena.db-files/``."""
    return db.with_name(f"{db.name}-files")


@dataclass(frozen=True, slots=True)
class Opened:
    """An arena opened by :func:`open_arena`; ``admin_token`` only on its first start (shown once)."""

    arena: Arena
    admin_token: str | None
    created: bool


def open_arena(db: Path, settings: ArenaSettings) -> Opened:
    """Open the arena in ``db`` (creating it, its admin and its secret seed the first time).

    A later start keeps the arena's rules and table sizes (RunnerError, one line, if
    ``settings`` asks for others) and takes ``settings``' house rules.
    """
    db.absolute().parent.mkdir(parents=True, exist_ok=True)
    store = ArenaStore.open_arena(db)
    try:
        meta = store.meta()
        token: str | None = None
        if meta is None:
            seed = secrets.randbits(63)
            meta = store.create_arena(
                config=settings.ladder_config(seed=seed).to_json(), seed=seed, settings=settings.to_json()
            )
            token = new_token()
            store.add_person(ADMIN_NAME, admin=True, token_digest=digest(token), scopes=(ADMIN, SUBMIT))
            stored = settings
        else:
            stored = _kept_settings(store, settings, db=db)
    except BaseException:
        store.close()
        raise
    folder = files_folder(db)
    (folder / "bots").mkdir(parents=True, exist_ok=True)
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    return Opened(
        arena=Arena(store, meta=meta, settings=stored, folder=folder),
        admin_token=token,
        created=token is not None,
    )


def _kept_settings(store: ArenaStore, settings: ArenaSettings, *, db: Path) -> ArenaSettings:
    """The arena's stored rules with ``settings``' house rules; RunnerError if ``settings`` changes a rule."""
    stored = ArenaSettings.from_json(store.settings())
    changed = stored.differences(settings)
    if changed:
        msg = f"{db} is an arena of other rules ({'; '.join(changed)}): start it without them"
        raise RunnerError(msg)
    kept = stored.with_house_rules(settings)
    store.save_settings(kept.to_json())
    return kept


@dataclass(slots=True)
class _Changes:
    """A counter that moves whenever the arena changes, and a way to wait until it moves."""

    number: int = 0
    _moved: asyncio.Event = field(default_factory=asyncio.Event)

    def moved(self) -> None:
        self.number += 1
        self._moved.set()
        self._moved = asyncio.Event()

    async def after(self, number: int) -> int:
        """Wait until the counter is past ``number``; the counter then."""
        while self.number <= number:
            await self._moved.wait()
        return self.number


@dataclass(slots=True)
class Trouble:
    """What keeps the arena from playing now, in one line (None: nothing), and the workers it plays on."""

    now: str | None = None
    usage: Usage | None = None


class Arena:
    """One arena: its store, settings and folder, and what each person may ask of it."""

    def __init__(self, store: ArenaStore, *, meta: ArenaMeta, settings: ArenaSettings, folder: Path) -> None:
        self.store = store
        self.meta = meta
        self.settings = settings
        self.folder = folder
        self.changes = _Changes()
        """Moves when a block completes or a submission changes (the live pages wait on it)."""
        self._board: Leaderboard | None = None
        self._stale = False
        self._board_at = 0.0
        self._board_cost = 0.0
        self.on_submitted: Callable[[Submission], None] | None = None
        """Told each new submission to admit (the admission queue, while the arena runs)."""
        self.tables: TableSource | None = None
        """The tables the ladder is playing now, for the live page (None: none yet)."""
        self.trouble = Trouble()
        """What keeps the arena from playing now, if anything, and where it plays."""

    @property
    def ladder(self) -> int:
        """The ladder's tournament in the store."""
        return self.meta.ladder

    def close(self) -> None:
        """Close the store; the arena is unusable afterwards."""
        self.store.close()

    # Who is asking

    def caller(self, token: str | None) -> Caller | None:
        """Who ``token`` names (None: nobody, or a wrong or revoked token)."""
        return caller_of(self.store, token)

    def me(self, caller: Caller | None) -> dict[str, Any]:
        """The caller's name and scopes; UnauthorizedError without a good token."""
        who = _signed_in(caller)
        return {"name": who.name, "admin": who.admin, "scopes": sorted(who.scopes)}

    # People: an admin's

    def add_person(self, caller: Caller | None, name: str, *, admin: bool = False) -> str:
        """Add ``name`` with a token of their own, which is returned (and never shown again)."""
        _admin(caller)
        try:
            check_name(name)
        except ValueError as exc:
            raise RefusedError(str(exc)) from None
        token = new_token()
        scopes = (ADMIN, SUBMIT) if admin else (SUBMIT,)
        try:
            self.store.add_person(name, admin=admin, token_digest=digest(token), scopes=scopes)
        except StoreError as exc:
            raise NameTakenError(str(exc)) from None
        return token

    def new_token(self, caller: Caller | None, name: str) -> str:
        """A new token for ``name`` (an admin's request, or their own)."""
        who = _signed_in(caller)
        if not (who.admin or who.name == name):
            msg = "only an admin can make a token for someone else"
            raise ForbiddenError(msg)
        person = self._person(name)
        token = new_token()
        scopes = (ADMIN, SUBMIT) if person.admin else (SUBMIT,)
        self.store.add_token(name, token_digest=digest(token), scopes=scopes)
        return token

    def revoke(self, caller: Caller | None, name: str) -> int:
        """Revoke every token of ``name``; how many were valid."""
        _admin(caller)
        self._person(name)
        return self.store.revoke_tokens(name)

    def people(self, caller: Caller | None) -> list[dict[str, Any]]:
        """Everyone, with how many valid tokens each has (admin)."""
        _admin(caller)
        return [
            {
                "name": person.name,
                "admin": person.admin,
                "created_at": person.created_at,
                "tokens": sum(t.revoked_at is None for t in self.store.tokens(person.name)),
            }
            for person in self.store.people()
        ]

    def _person(self, name: str) -> Person:
        try:
            return self.store.person(name)
        except StoreError as exc:
            raise NotFoundError(str(exc)) from None

    # Submissions

    def check_size(self, size: int | None) -> None:
        """Refuse an upload of ``size`` bytes (as its request says) before reading it: TooLargeError."""
        limit = self.settings.pack_limits.upload_bytes
        if size is not None and size > limit:
            msg = f"the pack is {size:,} bytes, over this arena's limit of {limit:,}"
            raise TooLargeError(msg)

    def submit(self, caller: Caller | None, data: bytes) -> Submission:
        """Take an upload from ``caller``: stored as a new submission, queued, or refused at once with why.

        The quota counts every submission of the last 24 hours, refused ones included.
        A pack refused by its first checks (not a gzip, too large) is stored as refused,
        so the person sees why in their list too.
        """
        from tournaments.arena.packs import PackError, check_upload  # noqa: PLC0415 - the upload path only

        who = _signed_in(caller)
        if not who.may_submit():
            msg = "this token may not submit"
            raise ForbiddenError(msg)
        self.check_size(len(data))
        made = self.store.submitted_since(who.name, hours=24)
        if made >= self.settings.quota:
            msg = (
                f"{who.name} made {made} submissions in the last 24 hours, the arena's quota: try again later"
            )
            raise QuotaError(msg)
        upload_digest = hashlib.sha256(data).hexdigest()
        try:
            check_upload(data, limits=self.settings.pack_limits)
        except PackError as exc:
            refused = self.store.add_submission(
                who.name, upload=data, digest=upload_digest, status="refused", reason=str(exc)
            )
            self.store.add_step(refused.id, "upload", f"refused: {exc}")
            self.changes.moved()
            msg = f"submission {refused.id} refused: {exc}"
            raise RefusedError(msg) from None
        submission = self.store.add_submission(who.name, upload=data, digest=upload_digest)
        self.store.add_step(submission.id, "upload", f"received {len(data):,} bytes; queued")
        self.changes.moved()
        if self.on_submitted is not None:
            self.on_submitted(submission)
        return submission

    def submissions(self, caller: Caller | None, *, owner: str | None = None) -> list[Submission]:
        """The caller's submissions (an admin's: ``owner``'s, or everyone's)."""
        who = _signed_in(caller)
        if owner is not None and not who.owns(owner):
            msg = "only an admin can list someone else's submissions"
            raise ForbiddenError(msg)
        return self.store.submissions(owner=owner if who.admin else who.name)

    def submission(self, caller: Caller | None, number: int) -> tuple[Submission, list[tuple[str, str, str]]]:
        """One of the caller's submissions with its whole admission log (its private steps too)."""
        who = _signed_in(caller)
        try:
            found = self.store.submission(number)
        except StoreError:
            msg = f"no submission {number}"
            raise NotFoundError(msg) from None
        if not who.owns(found.owner):
            msg = f"submission {number} is not yours"
            raise ForbiddenError(msg)
        return found, self.store.steps(number, private=True)

    # What everyone sees

    def leaderboard(self, *, fresh: bool = False) -> Leaderboard:
        """The leaderboard as of the last complete block (see :data:`BOARD_SHARE` for a large one).

        ``fresh``: computed again now if anything changed, however large (an entry's placing).
        """
        board = self._board
        if board is None or (self._stale and (fresh or self._may_recompute())):
            started = monotonic()
            board = self._board = leaderboard(self.store, self.ladder)
            self._stale = False
            self._board_at = monotonic()
            self._board_cost = self._board_at - started
        return board

    def _may_recompute(self) -> bool:
        """Whether a board that is out of date may be computed again now (a quick one always may)."""
        return self.board_due() == 0.0

    def board_due(self) -> float | None:
        """Seconds until an out-of-date board may be computed again (0: now; None: it is up to date).

        The event feed waits this long for a block that completed while the board was held
        back, so that the last block of a quiet spell reaches the pages too.
        """
        if self._board is not None and not self._stale:
            return None
        cost = self._board_cost
        if self._board is None or cost < BOARD_QUICK_S:
            return 0.0
        return max(0.0, self._board_at + cost * BOARD_SHARE - monotonic())

    def block_done(self) -> None:
        """A block completed (or an entry's status changed): the board is out of date, watchers told."""
        self._stale = True
        self.changes.moved()

    def entry(self, name: str) -> tuple[EntryRecord, list[tuple[str, str, str]]]:
        """An entry's public record and its admission's public steps."""
        record = entry_record(self.store, self.ladder, self.leaderboard(), name)
        if record is None:
            msg = f"no entry {name}"
            raise NotFoundError(msg)
        steps = [] if record.submission is None else self.store.steps(record.submission.id, private=False)
        return record, steps

    def session_log(self, session_id: int) -> bytes:
        """A ladder session's log (gzip JSON), once its block is complete; NotPublicError before."""
        try:
            row = self.store.session(session_id)
        except StoreError:
            msg = f"no session {session_id}"
            raise NotFoundError(msg) from None
        if row.tournament != self.ladder:
            msg = f"no session {session_id}"
            raise NotFoundError(msg)
        if not self.store.block_complete(self.ladder, row.block):
            msg = f"session {session_id} is not public until every rotation of its block has been played"
            raise NotPublicError(msg)
        return self.store.log(session_id)

    def entry_log(self, caller: Caller | None, name: str, *, tail_bytes: int = 64 << 10) -> dict[str, Any]:
        """An entry's bot logs for its owner (or an admin): each process's stderr, its latest faults.

        The stderr is the last ``tail_bytes`` of each process's; the faults are those of
        complete blocks only (their replay, at the decision, shows the cards), each with the
        address of that decision in its session's replay.
        """
        who = _signed_in(caller)
        submission = self.store.entry(name)
        owner = None if submission is None else submission.owner
        if submission is None and name not in ANCHORS:
            msg = f"no entry {name}"
            raise NotFoundError(msg)
        if not who.owns(owner):
            msg = f"the log of {name} is its owner's"
            raise ForbiddenError(msg)
        logs = []
        root = self.folder / "logs" / f"t{self.ladder}" / "bots"
        for path in sorted(root.glob(f"{name}*.log")) if root.is_dir() else []:
            if not _log_of(path.stem, name):
                continue
            size = path.stat().st_size
            with path.open("rb") as handle:
                handle.seek(max(0, size - tail_bytes))
                text = handle.read().decode("utf-8", errors="replace")
            logs.append({"process": path.stem, "bytes": size, "tail": text})
        faults = [
            {
                "session": session,
                "kind": str(fault.kind),
                "deal": fault.deal,
                "decision": fault.decision,
                "elapsed_ms": fault.elapsed_ms,
                "detail": fault.detail,
                "replay": _replay_at(session, fault),
            }
            for session, fault in self.store.faults_in_complete_blocks(self.ladder, name, limit=FAULTS_SHOWN)
        ]
        return {"entry": name, "logs": logs, "faults": faults}


def _replay_at(session: int, fault: Fault) -> str:
    """The replay's address at the decision a fault was made on, as the faulting seat saw it."""
    where = f"/sessions/{session}"
    if fault.deal is None:
        return where
    view = "table" if fault.seat is None else f"seat{fault.seat}"
    step = 0 if fault.decision is None else fault.decision + 1
    return f"{where}#view={view}&deal={fault.deal}&step={step}"


def _log_of(stem: str, name: str) -> bool:
    """Whether a log file's stem (``mybot.17-r0``, ``mybot.17-w2-r1``) is entry ``name``'s."""
    rest = stem.removeprefix(name)
    return rest != stem and (rest == "" or rest.startswith("-"))


def _signed_in(caller: Caller | None) -> Caller:
    if caller is None:
        msg = "a token is needed: sign in, or give it in the Authorization header (Bearer nap_...)"
        raise UnauthorizedError(msg)
    return caller


def _admin(caller: Caller | None) -> Caller:
    who = _signed_in(caller)
    if not who.admin:
        msg = "only an admin can do this"
        raise ForbiddenError(msg)
    return who
