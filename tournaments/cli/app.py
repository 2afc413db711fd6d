"""The ``nap`` command's shared pieces: the group, options, error handling, the console.

Each command is a thin layer over the library code the tests also use; every library
error becomes a one-line message and a non-zero exit.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click
import structlog
from rich.console import Console

from referee.rules import DEFAULT_PROFILE, ProfileError, get_profile
from referee.server import tune_collector
from tournaments.bots import RunnerError
from tournaments.commands import DB_VARIABLE, DEFAULT_DB, DEFAULT_OUT
from tournaments.config import TournamentConfig
from tournaments.entrants import BuildError
from tournaments.executors import recorded_usage
from tournaments.logfiles import LogError
from tournaments.match import MatchSummary, summarize
from tournaments.outfolder import logs_root, point_latest, tournament_folder, write_index
from tournaments.progress import standings_table, tournament_progress
from tournaments.provenance import describe_tournament
from tournaments.publish import match_lines, publish
from tournaments.runner import RunOptions, RunStart, run_tournament
from tournaments.scheduler import MIN_TABLE_SIZE, check_table_size
from tournaments.session_pages import session_links
from tournaments.standings import compute_standings
from tournaments.store import Store, StoreError, TournamentRow

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from referee.rules import Profile
    from tournaments.bots import BotEntry
    from tournaments.results import SessionResult
    from tournaments.standings import Standings

P = ParamSpec("P")
R = TypeVar("R")

KNOWN_ERRORS: tuple[type[Exception], ...] = (StoreError, RunnerError, LogError, ValueError, OSError)
"""Errors whose message is meant for the user (ManifestError, ProfileError, RecordError are ValueErrors)."""

console = Console()


def friendly(command: Callable[P, R]) -> Callable[P, R]:
    """Turn the library's errors into a one-line message and exit status 1.

    A failed build is the exception: its message is followed by everything the build wrote.
    """

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except BuildError as exc:  # the compiler's own words are the explanation
            message = (
                f"bot {exc.bot}: build failed with status {exc.status}; its output:\n"
                f"{textwrap.indent(exc.output, '  ')}"
            )
            raise click.ClickException(message) from None
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


json_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document on stdout instead of text (for scripts; notes go to stderr).",
)


def echo_json(data: object) -> None:
    """One JSON document on stdout, for scripts (nothing else is printed there)."""
    click.echo(json.dumps(data, indent=2, sort_keys=True))


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
    """Nap Arena: referee, tournaments and logs for Napoleon (Nap) bots.

    \b
    Quick start:
      nap tournament run            built-in bots, default rules, standings printed
      nap bot new mybot             scaffold a Python bot; then: nap bot check mybot
      nap log list --bot random     find sessions; nap log show ID --seat 0
    """  # noqa: D301 - click's no-rewrap marker is the \b character itself, not a backslash and b
    structlog.configure(
        processors=[  # structlog's defaults, but with the UTC timestamps the referee's logs have
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.StackInfoRenderer(),
            structlog.dev.set_exc_info,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO if verbose else logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )


profile_option = click.option(
    "--profile",
    "-p",
    default=DEFAULT_PROFILE.name,
    show_default=True,
    help="Rules profile: a built-in name or a house-rules .toml file.",
)
workers_option = click.option(
    "--workers",
    "-w",
    type=click.IntRange(1),
    default=None,
    help="Processes that play blocks, each with its own referee and bot processes (default: one per core).",
)
decision_option = click.option(
    "--decision-ms",
    type=click.IntRange(1),
    default=1000,
    show_default=True,
    help="Time limit per decision, in milliseconds.",
)
connect_timeout_option = click.option(
    "--connect-timeout",
    type=click.FloatRange(0.1),
    default=30.0,
    show_default=True,
    help="Seconds each bot process has to connect to the referee.",
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
    help="Output folder: each tournament's standings.md/.json/.html and logs in t<ID>/, "
    "and latest, a link to the newest.",
)


def stored_match(row: TournamentRow, results: Sequence[SessionResult]) -> MatchSummary | None:
    """The summary of a stored match (None when the tournament is not a match)."""
    plan = TournamentConfig.from_json(row.config).match
    return None if plan is None else summarize(results, plan)


def stored_standings(row: TournamentRow, results: Sequence[SessionResult]) -> Standings:
    """The standings of ``row``'s sessions, told whether its profile has a pool.

    A profile that no longer loads (a house-rules file moved away) counts as one without:
    the declarers' pool records then show only where they are not all zeros.
    """
    try:
        has_pool = get_profile(TournamentConfig.from_json(row.config).profile).has_pool
    except ProfileError:
        has_pool = False
    return compute_standings(results, has_pool=has_pool)


def planned_sessions(store: Store, tournament_id: int) -> int:
    """The sessions a tournament schedules (a match may stop before)."""
    return sum(len(block.bots) for block in store.blocks(tournament_id))


def tournament_facts(store: Store, row: TournamentRow, results: Sequence[SessionResult]) -> dict[str, Any]:
    """What ``row``'s tournament measured, for standings.json and ``status --json``."""
    return describe_tournament(
        row,
        played=len(store.finished_keys(row.id)),
        planned=planned_sessions(store, row.id),
        blocks=len(store.blocks(row.id)),
        faults=sum(len(result.faults) for result in results),
        usage=recorded_usage(store.path, row.id),
    )


def print_standings(standings: Standings, *, title: str, match: MatchSummary | None) -> None:
    """The standings table (and a match's summary) as ``tournament run`` and ``standings`` print them."""
    console.print(standings_table(standings, title=title))
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
    row = store.tournament(tournament_id)
    results = store.session_results(tournament_id)
    standings = stored_standings(row, results)
    match = stored_match(row, results)
    title = f"Tournament {row.id}: {row.name}"
    if show:
        print_standings(standings, title=title, match=match)
    folder = tournament_folder(out, row.id)
    publish(
        standings,
        folder,
        title=title,
        match=match,
        about=tournament_facts(store, row, results),
        sessions=session_links(store.find_sessions(tournament=row.id), results),
        db=store.path,
    )
    point_latest(out, row.id)
    write_index(out)
    screen.print(
        f"tournament {row.id} {row.status}, {len(store.finished_keys(row.id))} sessions: "
        f"standings.md, .json and .html written to {folder}/ (its logs are there too)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return folder


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


def seats_for(entrants: Sequence[BotEntry], table_size: int | None, profile: Profile | None = None) -> int:
    """The table size asked for, or 4 (fewer with fewer entrants); RunnerError when they cannot fill it.

    Fewer entrants than the smallest table are refused with how to enter a bot twice.
    The default keeps within ``profile``'s table sizes (``min_players`` to
    ``max_players``); a size asked for that the profile does not allow is a RunnerError.
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
    """Run a tournament with a progress display, then print and publish its standings.

    The progress display (a bar, or plain lines where there is no terminal) is this
    command's own: it takes the place of any in ``options``.
    """
    tune_collector()  # for the referee, when it plays here (one worker, or remote bots)
    with tournament_progress(console) as progress:
        tournament_id = run_tournament(
            config,
            store=store,
            logs_root=logs_root(out),
            options=dataclasses.replace(options or RunOptions(), progress=progress, on_start=announce_start),
        )
    publish_standings(store, tournament_id, out)
