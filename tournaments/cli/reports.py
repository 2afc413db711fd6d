"""What several ``nap`` commands print and publish: standings, a tournament's facts, its pages.

Kept apart from :mod:`tournaments.cli.app` so that the commands that only read (``nap log
list``) start without importing the runner and the referee.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from referee.server import tune_collector
from tournaments.cli.app import DEFAULT_TABLE_SIZE, console
from tournaments.cli.progress import ConsoleObserver, show_standings, tournament_progress
from tournaments.errors import RunnerError, StoreError, mapped
from tournaments.plan.scheduler import MIN_TABLE_SIZE, check_table_size
from tournaments.play.runner import RunOptions, run_tournament, run_tournament_async
from tournaments.report.outfolder import logs_root, tournament_folder
from tournaments.report.publish import flag_warnings, match_lines
from tournaments.report.standings_files import (
    StandingsWriter,
    stored_match,
    stored_standings,
    write_standings,
)
from tournaments.words import count

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from rich.console import Console

    from referee.rules import Profile
    from tournaments.cli.watch import WatchRequest
    from tournaments.plan.candidate_match import MatchSummary
    from tournaments.plan.config import TournamentConfig
    from tournaments.plan.entries import BotEntry
    from tournaments.play.observers import RunStart
    from tournaments.stats.standings import Standings
    from tournaments.store.database import Store, TournamentRow


def print_standings(standings: Standings, *, title: str, match: MatchSummary | None) -> None:
    """The standings (and a match's summary) as ``tournament run`` and ``standings`` print them.

    A table on a terminal, plain lines elsewhere (:func:`~tournaments.cli.progress.show_standings`).

    A bot the rotation check flags gets its warning under the table; nobody flagged, no line.
    """
    show_standings(console, standings, title=title)
    for warning in flag_warnings(standings):
        console.print(warning, markup=False, highlight=False, soft_wrap=True)
    if match is not None:
        for line in match_lines(match):
            console.print(line, markup=False, highlight=False, soft_wrap=True)


def publish_standings(
    store: Store, tournament_id: int, out: Path, *, show: bool = True, screen: Console = console
) -> Path:
    """Write a tournament's standings into its folder ``<out>/t<N>``, point ``<out>/latest`` at it.

    With ``show`` the standings table is printed first; what was written is said on
    ``screen``. Returns the tournament's folder.
    """
    if show:
        show_published(store, tournament_id, out, said=False)
    write_standings(store, tournament_id, out)
    return say_published(store, tournament_id, out, screen=screen)


def show_published(store: Store, tournament_id: int, out: Path, *, said: bool = True) -> None:
    """Print a tournament's standings (and a match's summary); ``said``: then where they are written."""
    row = store.tournament(tournament_id)
    print_standings(
        stored_standings(store, row), title=f"Tournament {row.id}: {row.name}", match=stored_match(store, row)
    )
    if said:
        say_published(store, tournament_id, out)


def say_published(store: Store, tournament_id: int, out: Path, *, screen: Console = console) -> Path:
    """Say on ``screen`` that the tournament's standings are written in its folder; the folder."""
    row = store.tournament(tournament_id)
    folder = tournament_folder(out, row.id)
    screen.print(
        f"tournament {row.id} {row.status}, {count(store.tally([row.id]).sessions, 'session')}: "
        f"standings.md, .json and .html written to {folder}/",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return folder


def start_line(start: RunStart) -> str:
    """The tournament's id and what is left to play, with the command that resumes it."""
    left = start.progress.sessions - start.progress.recorded
    sessions = (
        f"{left} of {count(start.progress.sessions, 'session')} left"
        if start.progress.recorded
        else count(left, "session")
    )
    return f"tournament {start.tournament}: {start.name}, {sessions} (if it stops: {start.resume})"


def latest_tournament(store: Store) -> TournamentRow:
    """The most recent tournament; StoreError when there is none."""
    rows = store.tournaments()
    if not rows:
        msg = "the database holds no tournament yet (run 'nap tournament run')"
        raise StoreError(msg)
    return max(rows, key=lambda row: row.id)


def latest_ranked(store: Store) -> TournamentRow:
    """The most recent tournament, when it has a session to rank; else StoreError, one line.

    A latest tournament without a session (stopped before its first: a bot refused, a
    command not found) would print an empty table. The error says so and names the latest
    tournament with sessions, without showing those in its place: a script would take them
    for the new run's.
    """
    row = latest_tournament(store)
    if store.tally([row.id]).sessions:
        return row
    played = [other.id for other in store.tournaments() if store.tally([other.id]).sessions]
    where = (
        f"tournament {max(played)} is the latest with sessions: nap standings {max(played)}"
        if played
        else "no tournament has any yet"
    )
    msg = f"tournament {row.id}, the latest, has no finished session ({row.status}); {where}"
    raise StoreError(msg)


def seats_for(entrants: Sequence[BotEntry], table_size: int | None, profile: Profile | None = None) -> int:
    """The table size asked for, or the default; RunnerError when the entrants cannot fill it.

    Fewer entrants than the smallest table are refused with how to enter a bot twice. The
    default is :data:`~tournaments.cli.app.DEFAULT_TABLE_SIZE`, fewer with fewer entrants,
    within ``profile``'s table sizes (``min_players`` to ``max_players``); a size asked for
    that the profile does not allow is a RunnerError.
    """
    fewest = MIN_TABLE_SIZE if profile is None else profile.min_players
    if len(entrants) < fewest:
        names = ", ".join(entry.name for entry in entrants) or "none"
        first = entrants[0].name if entrants else "peel"
        more = " ".join(f"--bot {first}{n}={first}" for n in range(2, 2 + fewest - len(entrants)))
        msg = (
            f"a tournament needs at least {fewest} entrants, got {len(entrants)} ({names}); "
            f"ALIAS=BOT enters a bot again under another name: add {more}"
        )
        raise RunnerError(msg)
    size = table_size or min(DEFAULT_TABLE_SIZE, len(entrants))
    if profile is not None:
        if table_size is None:
            size = max(profile.min_players, min(size, profile.max_players))
        with mapped(ValueError):
            check_table_size(size, profile)
    if len(entrants) < size:
        msg = f"{len(entrants)} entrants cannot fill a table of {size}; add bots or lower --table-size"
        raise RunnerError(msg)
    return size


def play_and_publish(  # noqa: PLR0913 - keywords, each a part of the run
    config: TournamentConfig,
    *,
    store: Store,
    out: Path,
    options: RunOptions | None = None,
    live: float | None = None,
    watch: WatchRequest | None = None,
) -> None:
    """Run a tournament on the console, then print its standings, written to its folder meanwhile.

    The console (:class:`~tournaments.cli.progress.ConsoleObserver`: a bar, or plain
    lines where there is no terminal; live standings every ``live`` seconds) and the
    standings files (:class:`~tournaments.report.standings_files.StandingsWriter`) follow
    the run beside any observers ``options`` has. ``watch``: serve the run's live page
    meanwhile (``--watch``).
    """
    tune_collector()  # for the referee, when it plays here (one worker, or remote bots)
    chosen = options or RunOptions()
    with tournament_progress(console) as progress:
        followed = dataclasses.replace(
            chosen,
            observers=(
                *chosen.observers,
                ConsoleObserver(progress, announce=start_line, standings_every=live),
                StandingsWriter(store=store, out=out),
            ),
        )
        if watch is None:
            tournament_id = run_tournament(config, store=store, logs_root=logs_root(out), options=followed)
        else:
            from tournaments.cli.watch import play_watched  # noqa: PLC0415 - the web server only when asked

            tournament_id = play_watched(
                lambda watched: run_tournament_async(
                    config, store=store, logs_root=logs_root(out), options=watched
                ),
                followed,
                store=store,
                request=watch,
            )
    show_published(store, tournament_id, out)
