"""``nap tournament`` and ``nap standings``: run, resume, inspect, publish."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click
from rich.console import Console
from rich.table import Table

from referee.match import TimeLimits
from tournaments.cli.app import (
    backstop_option,
    bank_option,
    bots_option,
    build_sandbox,
    connect_timeout_option,
    console,
    db_option,
    decision_option,
    echo_json,
    friendly,
    isolation_options,
    json_option,
    margin_option,
    note,
    open_store,
    out_option,
    profile_option,
    secret_seed,
    seed_option,
    table_size_option,
    workers_option,
)
from tournaments.cli.progress import ConsoleObserver, tournament_progress
from tournaments.cli.reports import (
    latest_ranked,
    latest_tournament,
    play_and_publish,
    print_standings,
    publish_standings,
    seats_for,
    show_published,
    start_line,
)
from tournaments.cli.watch import WatchRequest, play_watched, watch_options
from tournaments.errors import mapped
from tournaments.plan.config import TournamentConfig
from tournaments.plan.isolation import SANDBOX_MODES
from tournaments.plan.scheduler import check_table_size
from tournaments.play.commands import resume_command
from tournaments.play.entrants import DEFAULT_ENTRANTS, resolve_all
from tournaments.play.executors.local import LocalExecutor
from tournaments.play.executors.ray import INSTALL_RAY, RayExecutor, ray_installed
from tournaments.play.executors.record import recorded_usage
from tournaments.play.runner import RunOptions, resume_tournament, resume_tournament_async
from tournaments.report.outfolder import logs_root
from tournaments.report.provenance import shown_seed
from tournaments.report.publish import isolation_line, to_json
from tournaments.report.standings_files import (
    StandingsWriter,
    stored_match,
    stored_standings,
    tournament_facts,
)
from tournaments.store.database import Store
from tournaments.words import count

if TYPE_CHECKING:
    from collections.abc import Callable

    from referee.rules import Profile
    from tournaments.plan.isolation import BotLimits
    from tournaments.play.executors.base import Executor
    from tournaments.store.database import TournamentRow

P = ParamSpec("P")
R = TypeVar("R")


@click.group()
def tournament() -> None:
    """Run, resume and inspect tournaments, on this machine or on a Ray cluster."""


def executor_options(command: Callable[P, R]) -> Callable[P, R]:
    """``--executor`` and ``--ray-address``, read by :func:`chosen_executor`."""
    command = click.option(
        "--ray-address",
        metavar="ADDRESS",
        default=None,
        help="With --executor ray: join the Ray cluster whose head is at ADDRESS (host:port) "
        "instead of starting a local Ray instance.",
    )(command)
    return click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="Who plays the blocks: worker processes on this machine, or Ray workers "
        "(needs nap-arena[ray]; see docs/scaling.md).",
    )(command)


def chosen_executor(executor: str, ray_address: str | None) -> Executor:
    """The executor the options ask for; a one-line error when Ray is asked for but not installed."""
    if executor == "local":
        if ray_address is not None:
            msg = "--ray-address is for --executor ray"
            raise click.UsageError(msg)
        return LocalExecutor()
    if not ray_installed():
        raise click.ClickException(INSTALL_RAY)
    return RayExecutor(address=ray_address)


@tournament.command("run")
@bots_option(
    "An entrant: built-in (random, peel, pimc), submitted, or a bot folder; "
    "ALIAS=BOT enters it again. Repeat. Default: peel, random and a second copy of each.",
)
@table_size_option()
@click.option(
    "--sessions",
    "-n",
    type=click.IntRange(1),
    default=200,
    show_default=True,
    help="Sessions to play (rounded up to whole duplicate blocks).",
)
@seed_option
@profile_option
@click.option(
    "--concurrency",
    "-j",
    type=click.IntRange(1),
    default=None,
    help="Blocks in flight at once on each worker (default: the runner's).",
)
@workers_option
@decision_option
@bank_option
@margin_option
@backstop_option
@connect_timeout_option
@isolation_options
@click.option("--name", default=None, help="A name for the tournament.")
@click.option(
    "--live",
    type=float,
    default=None,
    metavar="SECONDS",
    help="Print live standings every SECONDS (a look, not a stopping rule: to stop once the data "
    "decides, use nap match --sprt).",
)
@executor_options
@watch_options
@db_option
@out_option
@friendly
def tournament_run(  # noqa: PLR0913, PLR0917 - one parameter per command-line option
    bots: tuple[str, ...],
    table_size: int | None,
    sessions: int,
    seed: int | None,
    profile: Profile,
    concurrency: int | None,
    workers: int | None,
    decision_ms: int,
    bank_ms: int,
    margin_ms: int,
    backstop_ms: int,
    connect_timeout: float,
    sandbox: str,
    bot_limits: BotLimits,
    name: str | None,
    live: float | None,
    executor: str,
    ray_address: str | None,
    watch: WatchRequest | None,
    db_path: Path,
    out: Path,
) -> None:
    """Run a round robin of duplicate sessions between bot processes and print the standings.

    Without --seed the deals come from a secret random seed, stored with the tournament
    (a resume deals the same cards) and shown once it has finished: a bot that knows the
    seed knows every card.
    """
    chosen = chosen_executor(executor, ray_address)  # before anything is stored
    if table_size is not None:  # refused before the database is opened, so nothing is stored
        with mapped(ValueError):
            check_table_size(table_size, profile)
    builds = build_sandbox(sandbox, bot_limits, hidden=(db_path, out))
    with Store.open(db_path) as store:
        entrants = resolve_all(bots or DEFAULT_ENTRANTS, store=store, sandbox=builds, say=note)
        size = seats_for(entrants, table_size, profile)
        options: dict[str, Any] = {"concurrency": concurrency} if concurrency else {}
        config = TournamentConfig(
            name=name or f"{profile.name}, {size} seats, {', '.join(e.name for e in entrants)}",
            bots=entrants,
            table_size=size,
            sessions=sessions,
            seed=secret_seed() if seed is None else seed,
            profile=profile,
            time_limits=TimeLimits(
                decision_ms=decision_ms, session_bank_ms=bank_ms, margin_ms=margin_ms, backstop_ms=backstop_ms
            ),
            connect_timeout_s=connect_timeout,
            workers=workers,
            sandbox=sandbox,
            bot_limits=bot_limits,
            **options,
        )
        play_and_publish(
            config, store=store, out=out, options=RunOptions(executor=chosen), live=live, watch=watch
        )


@tournament.command("resume")
@click.argument("tournament_id", type=int)
@executor_options
@click.option(
    "--sandbox",
    type=click.Choice(SANDBOX_MODES),
    default=None,
    help="Isolate the bots as this says instead of as the tournament was run (see tournament run).",
)
@watch_options
@db_option
@out_option
@friendly
def tournament_resume(  # noqa: PLR0913 - one parameter per command-line option
    tournament_id: int,
    executor: str,
    ray_address: str | None,
    sandbox: str | None,
    *,
    watch: WatchRequest | None,
    db_path: Path,
    out: Path,
) -> None:
    """Play the sessions an interrupted tournament has left (same deals), then print standings.

    A tournament that another process is playing right now is left alone (exit status 1).
    """
    chosen = chosen_executor(executor, ray_address)
    with open_store(db_path, writing=True) as store:
        store.tournament(tournament_id)
        with tournament_progress(console) as progress:
            options = RunOptions(
                observers=(
                    ConsoleObserver(progress, announce=start_line),
                    StandingsWriter(store=store, out=out),
                ),
                executor=chosen,
            )
            if watch is None:
                resume_tournament(
                    tournament_id, store=store, logs_root=logs_root(out), options=options, sandbox=sandbox
                )
            else:
                play_watched(
                    lambda watched: resume_tournament_async(
                        tournament_id, store=store, logs_root=logs_root(out), options=watched, sandbox=sandbox
                    ),
                    options,
                    store=store,
                    request=watch,
                )
        show_published(store, tournament_id, out)


@tournament.command("list")
@db_option
@json_option
@friendly
def tournament_list(db_path: Path, *, as_json: bool) -> None:
    """List the tournaments in the database."""
    with open_store(db_path) as store:
        rows = [
            (row, store.tally([row.id]).sessions, store.planned(row.id)[1]) for row in store.tournaments()
        ]
    if as_json:
        echo_json(
            {
                "format": "nap-arena-tournaments/1",
                "tournaments": [
                    {
                        "id": row.id,
                        "name": row.name,
                        "status": row.status,
                        "sessions": {"played": done, "planned": planned},
                        "seed": shown_seed(row),
                        "started_at": row.created_at,
                        "finished_at": row.finished_at,
                    }
                    for row, done, planned in rows
                ],
            }
        )
        return
    table = Table("id", "name", "status", "sessions", "seed", "started (UTC)")
    for row, done, planned in rows:
        table.add_row(
            str(row.id),
            row.name,
            row.status,
            f"{done}/{planned}",
            _seed(shown_seed(row)),
            _when(row.created_at, zone=False),
        )
    console.print(table)


@tournament.command("status")
@click.argument("tournament_id", type=int, required=False)
@db_option
@json_option
@friendly
def tournament_status(tournament_id: int | None, db_path: Path, *, as_json: bool) -> None:
    """Show a tournament's progress and what it measures (default: the latest)."""
    with open_store(db_path) as store:
        row = store.tournament(tournament_id) if tournament_id else latest_tournament(store)
        facts = tournament_facts(store, row)
        match = stored_match(store, row)
    if as_json:
        if match is not None:
            facts["match_summary"] = match.to_json()
        if _resumable(row):
            facts["resume"] = _resume(row.id, db_path)
        echo_json(facts)
        return
    for line in status_lines(facts):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if match is not None and match.state is not None:  # a match's test says how far it went
        console.print(f"  test: {match.state.describe()}; {match.verdict}", markup=False, soft_wrap=True)
    if _resumable(row):
        console.print(f"  resume with: {_resume(row.id, db_path)}", markup=False, soft_wrap=True)


def _resumable(row: TournamentRow) -> bool:
    """Interrupted, and not a person's sessions at the table (``nap play`` does not resume)."""
    return row.status == "interrupted" and row.config.get("person") is None


def _resume(tournament: int, db: Path) -> str:
    """The resume command, with the executor flags of the tournament's latest run."""
    usage = recorded_usage(db, tournament)
    return resume_command(tournament, db=db, flags=() if usage is None else usage.resume_flags)


def status_lines(facts: dict[str, Any]) -> list[str]:
    """``nap tournament status`` as lines of plain words, from :func:`describe_tournament`'s data."""
    sessions, limits, profile = facts["sessions"], facts["time_limits"], facts["profile"]
    ended = "finished" if facts["status"] == "finished" else "stopped"  # finished_at: when its last run ended
    finished = f", {ended} {_when(facts['finished_at'])}" if facts["finished_at"] else ""
    bots = ", ".join(
        f"{bot['name']} {bot['version']}" + (f" ({bot['content_hash'][:12]})" if bot["content_hash"] else "")
        for bot in facts["bots"]
    )
    asked = facts["workers_asked"]
    usage = facts["executor"]
    executor = (
        "not recorded"
        if usage is None
        else f"{usage['executor']}, {usage['description']}"
        + (f", {usage['lost']} lost" if usage["lost"] else "")
    )
    when = "now" if facts["status"] == "running" else "latest run"
    return [
        f"tournament {facts['id']}: {facts['name']}",
        (
            f"  status {facts['status']}, {sessions['played']} of {count(sessions['planned'], 'session')} "
            f"in {count(facts['blocks'], 'block')}, {count(facts['faults'], 'fault')}"
        ),
        f"  started {_when(facts['started_at'])}{finished}",
        (
            f"  {facts['table_size']} seats, seed {_seed(facts['seed'])}, "
            + (
                f"rules {profile['name']}: {profile['source']}"
                if "name" in profile
                else f"rules: {profile['error']}"
            )
        ),
        f"  bots: {bots}",
        f"  {_isolation(facts['isolation'])}",
        (
            f"  time limits: {limits['decision_ms']} ms per decision, bank {limits['session_bank_ms']} ms "
            f"per seat and session, margin {limits['margin_ms']} ms"
        ),
        *(f"  {line}" for line in isolation_line(facts["isolation"])[1:]),
        *(
            [f"  a decision clocked in CPU ends on the wall at {limits['backstop_ms']} ms (its backstop)"]
            if "cpu" in facts["isolation"].get("clocks", {}).values()
            else []
        ),
        f"  workers: {'one per two cores' if asked is None else asked} asked; executor {executor} ({when})",
        (
            f"  each worker: {facts['concurrency']} blocks in flight, bots restarted at most "
            f"{facts['max_restarts']} times, {facts['connect_timeout_s']:g} s to connect"
        ),
        *([f"  warning: {facts['load']['warning']}"] if facts["load"] and facts["load"]["warning"] else []),
    ]


def _isolation(isolation: dict[str, Any]) -> str:
    """Whether the bots ran isolated, in words (docs/security.md)."""
    if not isolation["isolated"]:
        return f"bots not isolated: {isolation['reason']}"
    limits = isolation["bot_limits"]
    if isolation.get("contained"):
        each = (
            f"each bot's processes together at most {limits['memory_mb']} MiB and {limits['processes']} "
            f"processes, with an equal CPU share; each process {limits['open_files']} open files"
        )
    else:
        each = (
            f"each process at most {limits['memory_mb']} MiB, {limits['processes']} processes, "
            f"{limits['open_files']} open files"
        )
    return f"bots isolated in every run (--sandbox {isolation['sandbox']}; {each})"


def _seed(seed: int | None) -> str:
    """A seed as shown: its number once the tournament has finished, ``secret`` before."""
    return "secret until finished" if seed is None else str(seed)


def _when(stamp: str, *, zone: bool = True) -> str:
    """A stored UTC timestamp as ``2026-11-30 16:21:34 UTC`` (``zone=False``: with no `` UTC``)."""
    return stamp[:19].replace("T", " ") + (" UTC" if zone else "")


@click.command("standings")
@click.argument("tournament_id", type=int, required=False)
@db_option
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write standings.md/.json/.html to this output folder's t<ID>/ (as tournament run does).",
)
@json_option
@friendly
def standings_command(tournament_id: int | None, db_path: Path, out: Path | None, *, as_json: bool) -> None:
    """Print (and with --out, republish) the standings of a tournament (default: the latest).

    Without TOURNAMENT_ID, a latest tournament that has no finished session (it stopped
    before its first) is an error, exit status 1, naming the latest one with sessions.
    """
    with open_store(db_path) as store:
        row = store.tournament(tournament_id) if tournament_id else latest_ranked(store)
        standings = stored_standings(store, row)
        match = stored_match(store, row)
        title = f"Tournament {row.id}: {row.name}"
        if as_json:
            echo_json(to_json(standings, title=title, match=match, about=tournament_facts(store, row)))
        else:
            print_standings(standings, title=title, match=match)
        if out is not None:
            publish_standings(
                store, row.id, out, show=False, screen=Console(stderr=True) if as_json else console
            )
