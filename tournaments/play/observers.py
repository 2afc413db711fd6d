"""Who follows a run: the one interface through which a run tells what it does.

A run (:mod:`tournaments.play.runner`) prints nothing, serves no page and writes no
standings file itself: it tells each :class:`RunObserver` of its ``RunOptions.observers``
(fastchess's ``IOutput`` is the model). The console (:mod:`tournaments.cli.progress`: the
start line, the progress line, live standings), the watch page (:mod:`tournaments.web.watch`)
and the standings files (:mod:`tournaments.report.standings_files`) are each one observer;
anything else that follows runs (a service driving many) is one more.

What an observer is told, in this order, on the runner's event loop:

- :meth:`~RunObserver.started` once the tournament is stored and locked for this run,
  before its first session (a run refused before that tells nothing);
- :meth:`~RunObserver.committed` after each session is committed with its log;
- :meth:`~RunObserver.standings` every :attr:`~RunObserver.standings_every` seconds
  while sessions are played (None, the default: never);
- :meth:`~RunObserver.tables` at most once, when the tables in play can be asked;
- :meth:`~RunObserver.ended` once, however the run ends after it started.

Each method of the base class does nothing, so an observer overrides only what it needs.
An observer is called between two commits: it returns quickly, and what it raises stops
the run as a bug does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tournaments.play.tables import TableSource
    from tournaments.results import SessionResult
    from tournaments.stats.standings import Standings

__all__ = ["RunEnd", "RunObserver", "RunProgress", "RunStart"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunProgress:
    """How far a tournament is: at its run's start, after each session committed, at its end."""

    recorded: int
    """Sessions of the tournament recorded so far, those of earlier runs included."""
    sessions: int
    """All the tournament's sessions (a match with a test may stop before)."""
    test: str | None = None
    """A match's test so far, after its candidate (``mybot: block 12, LLR 1.03 ...``); None
    for a tournament, or a match without a test."""
    busy: bool = False
    """The late faults so far say the machine is too busy for the bots' clocks
    (:mod:`tournaments.stats.load_check`)."""
    decided: bool = False
    """A match's test has decided: the sessions still in play finish, and the run stops
    there, short of ``sessions`` (the most it might have played)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStart:
    """What a run is about to play."""

    tournament: int
    name: str
    resume: str
    """The command that plays the rest, should this run stop."""
    progress: RunProgress
    """Where the tournament stands as the run starts (a resume: what earlier runs recorded)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunEnd:
    """How a run ended."""

    tournament: int
    progress: RunProgress
    """How far the tournament got."""
    stopped: str | None = None
    """Why the run stopped before the end, in one line (a signal, a bot, a worker, the
    store, a bug); None when it finished: every session played, or a match's test decided."""
    late: str | None = None
    """The tournament's late faults so far in one line, with the busy-machine warning when
    they point at the machine (:meth:`tournaments.stats.load_check.LateFaults.summary`);
    None when there were none. Each late fault was logged at info level only."""


class RunObserver:
    """Follows a run; every method does nothing here, so a subclass overrides what it needs."""

    standings_every: float | None = None
    """Seconds between two calls of :meth:`standings` while the run plays (None: never)."""

    def started(self, start: RunStart) -> None:
        """The run is about to play ``start``."""

    def committed(self, result: SessionResult, progress: RunProgress) -> None:
        """``result`` is committed with its log; ``progress`` counts it."""

    def standings(self, standings: Standings) -> None:
        """The standings of every session recorded so far (see :attr:`standings_every`)."""

    def tables(self, source: TableSource) -> None:
        """``source`` gives the tables in play and their public events (:mod:`tournaments.play.tables`).

        Asking costs the run nothing until someone does; a source that cannot say
        (:attr:`~tournaments.play.tables.TableSource.unavailable`) says why.
        """

    def ended(self, end: RunEnd) -> None:
        """The run is over, as ``end`` says; nothing more is told."""
