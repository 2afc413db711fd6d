"""One process plays a tournament at a time: an advisory lock on a file beside the database.

:func:`tournament_lock` holds an exclusive ``flock`` on ``<db>-t<N>.lock`` for as long as
a run plays tournament N, so a second run of the same tournament is refused before it
touches anything. The kernel releases the lock when the holder's process ends, however it
ends (``kill -9`` included): a dead run never leaves its tournament stuck, and the lock
file it leaves behind is simply locked by the next run. The file holds the holder's pid,
for the refusal's message only: the lock, not the file, says who plays.

Lock files are removed by their holder while it still holds the lock; a process that
opened the file just before that locks a name nobody else will see, so it checks that the
path still names the file it locked, and starts again when it does not.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from contextlib import contextmanager
from typing import TYPE_CHECKING

from tournaments.errors import RunnerError, TournamentBusyError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = ["TournamentBusyError", "lock_path", "tournament_lock"]

_ATTEMPTS = 100
"""Lock files replaced under our feet in a row before giving up (one is already rare)."""


def lock_path(db: Path, tournament: int) -> Path:
    """The lock file of ``tournament`` in database ``db``, beside the database's real file."""
    real = db.resolve()
    return real.with_name(f"{real.name}-t{tournament}.lock")


@contextmanager
def tournament_lock(db: Path, tournament: int) -> Iterator[Path]:
    """Hold ``tournament``'s lock while open; yields the lock file's path.

    Raises :class:`TournamentBusyError` at once, taking nothing, when a live process holds
    it, and RunnerError (one line) when the lock file cannot be made.
    """
    path = lock_path(db, tournament)
    fd = _acquire(path, tournament)
    try:
        with contextlib.suppress(OSError):  # the pid is for messages only
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        yield path
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # still locked here: see the module's docstring
        os.close(fd)


def _acquire(path: Path, tournament: int) -> int:
    for _ in range(_ATTEMPTS):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            msg = f"cannot lock tournament {tournament} ({path}): {exc.strerror or exc}"
            raise RunnerError(msg) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder(fd)
            os.close(fd)
            raise TournamentBusyError(tournament, pid) from None
        except OSError as exc:
            os.close(fd)
            msg = f"cannot lock tournament {tournament} ({path}): {exc.strerror or exc}"
            raise RunnerError(msg) from exc
        try:
            current = path.stat()
        except FileNotFoundError:
            current = None
        if current is not None and os.path.samestat(os.fstat(fd), current):
            return fd
        os.close(fd)  # its holder removed it between our open and our lock: take the new one
    msg = f"cannot lock tournament {tournament} ({path}): the lock file keeps being replaced"
    raise RunnerError(msg)


def _holder(fd: int) -> int | None:
    """The pid the lock's holder wrote into the file, if it has yet."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None
