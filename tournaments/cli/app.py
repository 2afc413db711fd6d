"""The ``nap`` command's shared pieces: the group, options, error handling, the console.

Each command is a thin layer over the library code the tests also use; every library
error becomes a one-line message and a non-zero exit.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import click
import structlog
from rich.console import Console
from rich.progress import Progress

from referee.server import tune_collector
from tournaments.bots import RunnerError
from tournaments.commands import DB_VARIABLE, DEFAULT_DB, DEFAULT_OUT
from tournaments.config import TournamentConfig
from tournaments.logfiles import LogError
from tournaments.match import MatchSummary, summarize
from tournaments.progress import progress_columns, standings_table
from tournaments.publish import match_lines, publish
from tournaments.runner import RunOptions, RunStart, run_tournament
from tournaments.scheduler import check_table_size
from tournaments.standings import compute_standings
from tournaments.store import Store, StoreError, TournamentRow

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from referee.rules import Profile
    from tournaments.results import SessionResult

P = ParamSpec("P")
R = TypeVar("R")

KNOWN_ERRORS: tuple[type[Exception], ...] = (StoreError, RunnerError, LogError, ValueError, OSError)
"""Errors whose message is meant for the user (ManifestError, ProfileError, RecordError are ValueErrors)."""

console = Console()


def friendly(command: Callable[P, R]) -> Callable[P, R]:
    """Turn the library's errors into a one-line message and exit status 1."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except KNOWN_ERRORS as exc:
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise click.ClickException(message) from None

    return wrapper


db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_DB,
    envvar=DB_VARIABLE,
    show_default=True,
    help="The tournament database (SQLite).",
)


@contextmanager
def open_store(path: Path, *, must_exist: bool = True, writing: bool = False) -> Iterator[Store]:
    """Open the database, refusing to create one where a read-only command expects it.

    A command that will write (``writing``) has the file checked first, so that a damaged
    database is refused before anything goes into it.
    """
    if must_exist and not path.exists():
        msg = f"{path}: no such database (run 'nap tournament run' first, or pass --db)"
        raise StoreError(msg)
    with Store.open(path, check=writing) as store:
        yield store


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="nap-arena")
@click.option("--verbose", "-v", is_flag=True, help="Log the referee's and runner's progress (info level).")
def main(*, verbose: bool) -> None:
    r"""Nap Arena: referee, tournaments and logs for Napoleon (Nap) bots.

    \b
    Quick start:
      nap tournament run            built-in bots, default rules, standings printed
      nap bot new mybot             scaffold a Python bot; then: nap bot check mybot
      nap log list --bot random     find sessions; nap log show ID --seat 0
    """
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO if verbose else logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )


bank_option = click.option(
    "--bank-ms",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Time bank per seat and session, in ms, drawn on by decisions that run past --decision-ms.",
)
margin_option = click.option(
    "--margin-ms",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Tolerance past each deadline, in ms, before a decision is late; bots are not told of it.",
)


out_option = click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_OUT,
    show_default=True,
    help="Output folder: standings.md/.json/.html and logs/.",
)


def stored_match(row: TournamentRow, results: Sequence[SessionResult]) -> MatchSummary | None:
    """The summary of a stored match (None when the tournament is not a match)."""
    plan = TournamentConfig.from_json(row.config).match
    return None if plan is None else summarize(results, plan)


def publish_standings(store: Store, tournament_id: int, out: Path) -> None:
    """Print a tournament's standings table (a match's summary too) and write them to ``out``."""
    row = store.tournament(tournament_id)
    results = store.session_results(tournament_id)
    standings = compute_standings(results)
    match = stored_match(row, results)
    title = f"Tournament {row.id}: {row.name}"
    console.print(standings_table(standings, title=title))
    if match is not None:
        for line in match_lines(match):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    paths = publish(standings, out, title=title, match=match)
    console.print(
        f"tournament {row.id} {row.status}, {len(store.finished_keys(row.id))} sessions: "
        f"standings written to {', '.join(str(p) for p in paths)}",
        markup=False,
        soft_wrap=True,
    )


def announce_start(start: RunStart) -> None:
    """Print the tournament's id and what is left to play, with the command that resumes it."""
    left = start.sessions - start.recorded
    sessions = f"{left} of {start.sessions} sessions left" if start.recorded else f"{left} sessions"
    console.print(
        f"tournament {start.tournament}: {start.name}, {sessions} (if it stops: {start.resume})",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def latest_tournament(store: Store) -> TournamentRow:
    """The most recent tournament; StoreError when there is none."""
    rows = store.tournaments()
    if not rows:
        msg = "the database holds no tournament yet (run 'nap tournament run')"
        raise StoreError(msg)
    return max(rows, key=lambda row: row.id)


def seats_for(entrants: Sequence[object], table_size: int | None, profile: Profile | None = None) -> int:
    """The table size asked for, or 4 (fewer with fewer entrants); RunnerError when they cannot fill it.

    The default keeps within ``profile``'s table sizes (``min_players`` to
    ``max_players``); a size asked for that the profile does not allow is a RunnerError.
    """
    size = table_size or min(4, len(entrants))
    if profile is not None:
        if table_size is None:
            size = max(profile.min_players, min(size, profile.max_players))
        try:
            check_table_size(size, profile)
        except ValueError as exc:
            raise RunnerError(str(exc)) from None
    if len(entrants) < size:
        msg = f"{len(entrants)} entrants cannot fill a table of {size}; add bots or lower --table-size"
        raise RunnerError(msg)
    return size


def play_and_publish(
    config: TournamentConfig, *, store: Store, out: Path, options: RunOptions | None = None
) -> None:
    """Run a tournament with a progress bar, then print and publish its standings.

    The progress bar is this command's own: it takes the place of any in ``options``.
    """
    tune_collector()  # for the referee, when it plays here (one worker, or remote bots)
    with Progress(*progress_columns(), console=console) as progress:
        tournament_id = run_tournament(
            config,
            store=store,
            logs_root=(out / "logs").resolve(),
            options=dataclasses.replace(options or RunOptions(), progress=progress, on_start=announce_start),
        )
    publish_standings(store, tournament_id, out)
