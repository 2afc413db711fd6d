"""A stored tournament's standings files, read from the store and written to its output folder.

:func:`write_standings` writes ``<out>/t<N>/standings.md``, ``.json`` and ``.html`` with the
sessions list and replay pages (:func:`~tournaments.report.publish.publish`), points
``<out>/latest`` at the folder and rewrites ``<out>/index.html``
(:mod:`tournaments.report.outfolder`). :class:`StandingsWriter` is the run observer
(:mod:`tournaments.play.observers`) that does so once a run finishes; a run that stops
before the end leaves the files of its earlier runs as they were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from referee.rules import DEFAULT_PROFILE
from tournaments.errors import OutputError, RunnerError, writing
from tournaments.plan.candidate_match import MatchSummary, summarize
from tournaments.plan.config import TournamentConfig, stored_profile
from tournaments.play.commands import standings_command
from tournaments.play.executors.record import recorded_usage
from tournaments.play.observers import RunEnd, RunObserver
from tournaments.report.outfolder import point_latest, tournament_folder, write_index
from tournaments.report.provenance import describe_tournament
from tournaments.report.publish import publish
from tournaments.report.session_pages import LISTED_LIMIT, session_links
from tournaments.stats.standings import standings_of
from tournaments.words import count

if TYPE_CHECKING:
    from pathlib import Path

    from tournaments.stats.standings import Standings
    from tournaments.store.database import Store, TournamentRow

__all__ = [
    "StandingsWriter",
    "session_pages",
    "stored_match",
    "stored_standings",
    "tournament_facts",
    "write_standings",
]


def stored_match(store: Store, row: TournamentRow) -> MatchSummary | None:
    """The summary of a stored match (None when the tournament is not a match)."""
    plan = TournamentConfig.from_json(row.config).match
    return None if plan is None else summarize(store.session_results(row.id), plan)


def stored_standings(store: Store, row: TournamentRow) -> Standings:
    """The standings of ``row``'s sessions (from the store's totals), told whether its profile has a pool.

    Rules that cannot be read back (an older tournament naming a house-rules file gone
    since) count as rules without a pool: the declarers' pool records then show only where
    they are not all zeros.
    """
    try:
        has_pool = stored_profile(row.config.get("profile", DEFAULT_PROFILE.name)).has_pool
    except RunnerError:
        has_pool = False
    return standings_of(store.tally([row.id]), has_pool=has_pool)


def tournament_facts(store: Store, row: TournamentRow) -> dict[str, Any]:
    """What ``row``'s tournament measured, for standings.json and ``status --json``."""
    tally = store.tally([row.id])
    blocks, planned = store.planned(row.id)
    return describe_tournament(
        row,
        played=tally.sessions,
        planned=planned,
        blocks=blocks,
        faults=tally.faults,
        usage=recorded_usage(store.path, row.id),
        late=store.late_faults(row.id),
    )


def session_pages(store: Store, tournament_id: int, total: int) -> dict[str, Any]:
    """What :func:`~tournaments.report.publish.publish` needs to list sessions and replays (of ``total``)."""
    rows = store.sessions_to_list(tournament_id, limit=LISTED_LIMIT)
    results = store.results_of(row.id for row in rows)
    return {
        "sessions": session_links(rows, list(results.values())),
        "log": store.log,
        "sessions_total": total,
    }


def standings_title(row: TournamentRow) -> str:
    """``Tournament 3: NAME``, or ``Match 3: NAME`` for a match: the title of its standings."""
    kind = "Tournament" if row.config.get("match") is None else "Match"
    return f"{kind} {row.id}: {row.name}"


def write_standings(store: Store, tournament_id: int, out: Path) -> tuple[Path, Path, Path]:
    """Write a tournament's standings files into ``<out>/t<N>``, point ``<out>/latest`` at it.

    Returns the paths of ``standings.md``, ``.json`` and ``.html``; OutputError (one line,
    naming the file) when one cannot be written.
    """
    row = store.tournament(tournament_id)
    standings = stored_standings(store, row)
    folder = tournament_folder(out, row.id)
    with writing(folder):
        paths = publish(
            standings,
            folder,
            title=standings_title(row),
            match=stored_match(store, row),
            about=tournament_facts(store, row),
            **session_pages(store, row.id, standings.sessions),
            db=store.path,
        )
        point_latest(out, row.id)
        write_index(out)
    return paths


class StandingsWriter(RunObserver):
    """Writes a tournament's standings files (:func:`write_standings`) once its run finishes.

    ``written`` holds the paths the last run wrote (empty until one has finished).
    """

    def __init__(self, *, store: Store, out: Path) -> None:
        self.store = store
        self.out = out
        self.written: tuple[Path, ...] = ()

    def ended(self, end: RunEnd) -> None:
        """Write the standings, unless the run stopped before the end.

        Files that cannot be written (a full disk) are one line that says what is kept and
        the command that writes them once there is room (docs/tournaments.md's promise).
        """
        if end.stopped is not None:
            return
        try:
            self.written = write_standings(self.store, end.tournament, self.out)
        except OutputError as exc:
            sessions = count(end.progress.recorded, "session")
            again = standings_command(end.tournament, db=self.store.path, out=self.out)
            msg = (
                f"{exc}; tournament {end.tournament}'s {sessions} are kept in {self.store.path}: "
                f"once there is room, {again} writes its standings"
            )
            raise OutputError(msg) from exc
