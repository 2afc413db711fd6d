"""The errors the tournaments library raises for its user: each ``str()`` is one clear line.

Every one derives from :class:`ArenaError`, which the command line catches with the rules
engine's :class:`~referee.rules.RulesError` (one line and exit status 1; a failed build
also shows what it wrote). Anything else that escapes is a bug, shown with its traceback:
a plain ValueError, KeyError or OSError included.

So a user's error is mapped into one of these where it happens, as httpx maps its
transports' errors: :func:`mapped` around a narrow call whose errors of a kind are all
about what the user asked (a test's parameters, a table size), :func:`writing` around the
writes of a file or folder the user named (a folder that is not writable, a full disk).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = [
    "ArenaError",
    "BuildError",
    "EntryStartError",
    "LogError",
    "ManifestError",
    "MissingLogError",
    "OutputError",
    "PlayError",
    "RunnerError",
    "StoreError",
    "TournamentBusyError",
    "TournamentInterrupted",
    "WatchError",
    "mapped",
    "writing",
]


class ArenaError(Exception):
    """A command cannot go on as asked, for a reason its user can act on; ``str()`` is one clear line."""


class RunnerError(ArenaError):
    """A tournament cannot run (or go on) as asked; ``str()`` is one clear line."""


class EntryStartError(RunnerError):
    """A bot entry whose processes could not start or connect for a block: ``entry`` names it.

    Raised for a host whose bots come and go (an arena's ladder): the block that seated the
    entry cannot be played, and the other blocks go on.
    """

    def __init__(self, message: str, *, entry: str) -> None:
        super().__init__(message)
        self.entry = entry


class PlayError(ArenaError):
    """``nap play`` cannot seat the person as asked (a seat, a name, a table size, no page opened)."""


class StoreError(ArenaError):
    """A storage failure the caller can report as is: ``str()`` is one clear line."""


class MissingLogError(StoreError):
    """A session recorded without its log: its log file was gone when the database was upgraded."""


class LogError(ArenaError):
    """A session log that cannot be written or read; ``str()`` is one clear line."""


class ManifestError(ArenaError, ValueError):
    """A bot folder or manifest that cannot be used; the message is one line naming the problem."""


class BuildError(RunnerError):
    """A bot's build command failed; ``output`` is everything it wrote (stdout, then stderr).

    The message ends with the output's last line, for callers that show one line only.
    """

    def __init__(self, message: str, *, bot: str, status: int, output: str) -> None:
        super().__init__(message)
        self.bot = bot
        self.status = status
        self.output = output


class TournamentBusyError(RunnerError):
    """Another live process is playing the tournament; ``pid`` is its id when known."""

    def __init__(self, tournament: int, pid: int | None) -> None:
        who = "another process" if pid is None else f"another process (pid {pid})"
        super().__init__(
            f"tournament {tournament} is being played by {who}: "
            "wait for it to finish, or stop that process before resuming"
        )
        self.tournament = tournament
        self.pid = pid


class TournamentInterrupted(RunnerError):  # noqa: N818 - a stop, not a bug
    """The tournament stopped before the end (a signal, a bot, a worker, the store); it can be resumed.

    ``str()`` is one line ending with the command that plays the rest; ``__cause__`` is
    the failure, if one stopped it.
    """

    def __init__(self, message: str, *, tournament: int) -> None:
        super().__init__(message)
        self.tournament = tournament


class WatchError(ArenaError):
    """The watch page cannot be served as asked (its port is taken, say); ``str()`` is one clear line."""


class OutputError(ArenaError):
    """A file or folder a command writes cannot be written (a full disk, say); ``str()`` names it."""


@contextlib.contextmanager
def mapped(*kinds: type[Exception], into: type[ArenaError] = RunnerError) -> Iterator[None]:
    """Within, an exception of ``kinds`` is the user's doing: raised again as ``into``, its message kept.

    Only around a call whose errors of those kinds all say what is wrong with what the user
    asked: wider, it would turn a bug into one line.
    """
    try:
        yield
    except kinds as exc:
        raise into(str(exc)) from exc


@contextlib.contextmanager
def writing(what: Path) -> Iterator[None]:
    """Within, an OSError is an :class:`OutputError` naming the file: the system's, else ``what``."""
    try:
        yield
    except OSError as exc:
        name = what if exc.filename is None else exc.filename
        msg = f"cannot write {name}: {exc.strerror or exc}"
        raise OutputError(msg) from exc
