"""What several ``nap`` commands print and publish: standings, a tournament's facts, its pages.

Kept apart from :mod:`tournaments.cli.app` so that the commands that only read (``nap log
list``) start without importing the runner and the referee.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from referee.rules import DEFAULT_PROFILE
from referee.server import tune_collector
from tournaments.cli.app import console
from tournaments.cli.progress import show_standings, standings_printer, tournament_progress
from tournaments.errors import RunnerError, StoreError
from tournaments.plan.config import TournamentConfig, stored_profile
from tournaments.plan.match import MatchSummary, summarize
from tournaments.plan.scheduler import MIN_TABLE_SIZE, check_table_size
from tournaments.play.executors.record import recorded_usage
from tournaments.play.runner import RunOptions, RunStart, run_tournament, run_tournament_async
from tournaments.report.outfolder import logs_root, point_latest, tournament_folder, write_index
from tournaments.report.provenance import describe_tournament
from tournaments.report.publish import flag_warnings, match_lines, publish
from tournaments.report.session_pages import LISTED_LIMIT, session_links
from tournaments.stats.standings import standings_of

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from rich.console import Console

    from referee.rules import Profile
    from tournaments.cli.watch import WatchRequest
    from tournaments.plan.entries import BotEntry
    from tournaments.stats.standings import Standings
    from tournaments.store.database import Store, TournamentRow


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
    row = store.tournament(tournament_id)
    standings = stored_standings(store, row)
    match = stored_match(store, row)
    title = f"Tournament {row.id}: {row.name}"
    if show:
        print_standings(standings, title=title, match=match)
    folder = tournament_folder(out, row.id)
    publish(
        standings,
        folder,
        title=title,
        match=match,
        about=tournament_facts(store, row),
        **session_pages(store, row.id, standings.sessions),
        db=store.path,
    )
    point_latest(out, row.id)
    write_index(out)
    screen.print(
        f"tournament {row.id} {row.status}, {standings.sessions} sessions: "
        f"standings.md, .json and .html written to {folder}/",
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
    config: TournamentConfig,
    *,
    store: Store,
    out: Path,
    options: RunOptions | None = None,
    watch: WatchRequest | None = None,
) -> None:
    """Run a tournament with a progress display, then print and publish its standings.

    The progress display (a bar, or plain lines where there is no terminal) is this
    command's own: it takes the place of any in ``options``. ``watch``: serve the run's
    live page meanwhile (``--watch``).
    """
    tune_collector()  # for the referee, when it plays here (one worker, or remote bots)
    with tournament_progress(console) as progress:
        chosen = dataclasses.replace(
            options or RunOptions(),
            progress=progress,
            on_start=announce_start,
            on_standings=standings_printer(progress),
        )
        if watch is None:
            tournament_id = run_tournament(config, store=store, logs_root=logs_root(out), options=chosen)
        else:
            from tournaments.cli.watch import play_watched  # noqa: PLC0415 - the web server only when asked

            tournament_id = play_watched(
                lambda watched: run_tournament_async(
                    config, store=store, logs_root=logs_root(out), options=watched
                ),
                chosen,
                store=store,
                request=watch,
            )
    publish_standings(store, tournament_id, out)
