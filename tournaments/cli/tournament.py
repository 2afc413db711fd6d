"""``nap tournament`` and ``nap standings``: run, resume, inspect, publish."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click
from rich.progress import Progress
from rich.table import Table

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE, get_profile
from tournaments.cli.app import (
    announce_start,
    bank_option,
    console,
    db_option,
    friendly,
    latest_tournament,
    main,
    margin_option,
    open_store,
    out_option,
    play_and_publish,
    publish_standings,
    seats_for,
    stored_match,
)
from tournaments.commands import resume_command
from tournaments.config import TournamentConfig, time_limits_from_json
from tournaments.entrants import DEFAULT_ENTRANTS, resolve_all
from tournaments.executors import (
    INSTALL_RAY,
    Executor,
    LocalExecutor,
    RayExecutor,
    ray_installed,
    recorded_usage,
)
from tournaments.progress import progress_columns
from tournaments.publish import publish, render_markdown
from tournaments.runner import RunOptions, resume_tournament
from tournaments.scheduler import check_table_size
from tournaments.standings import compute_standings
from tournaments.store import Store

if TYPE_CHECKING:
    from collections.abc import Callable

P = ParamSpec("P")
R = TypeVar("R")


@main.group()
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
@click.option(
    "--bot",
    "-b",
    "bots",
    multiple=True,
    metavar="BOT",
    help="An entrant: built-in (random, peel, pimc), registered name, or bot folder; "
    "ALIAS=BOT enters it again. Repeat. Default: peel, random and a second copy of each.",
)
@click.option(
    "--table-size",
    "-k",
    type=click.IntRange(2),
    default=None,
    help="Seats per table, as the profile allows (3-7 in Nap; default: 4, or fewer with fewer entrants).",
)
@click.option(
    "--sessions",
    "-n",
    type=click.IntRange(1),
    default=200,
    show_default=True,
    help="Sessions to play (rounded up to whole duplicate blocks).",
)
@click.option(
    "--seed", type=int, default=1, show_default=True, help="Tournament seed: same seed, same deals."
)
@click.option(
    "--profile",
    "-p",
    default=DEFAULT_PROFILE.name,
    show_default=True,
    help="Rules profile: a built-in name or a house-rules .toml file.",
)
@click.option(
    "--concurrency",
    "-j",
    type=click.IntRange(1),
    default=None,
    help="Blocks in flight at once on each worker (default: the runner's).",
)
@click.option(
    "--workers",
    "-w",
    type=click.IntRange(1),
    default=None,
    help="Processes that play blocks, each with its own referee and bot processes (default: one per core).",
)
@click.option(
    "--decision-ms",
    type=click.IntRange(1),
    default=1000,
    show_default=True,
    help="Time limit per decision, in milliseconds.",
)
@bank_option
@margin_option
@click.option(
    "--connect-timeout",
    type=click.FloatRange(0.1),
    default=30.0,
    show_default=True,
    help="Seconds each bot process has to connect to the referee.",
)
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
@db_option
@out_option
@friendly
def tournament_run(  # noqa: PLR0913, PLR0917 - one parameter per command-line option
    bots: tuple[str, ...],
    table_size: int | None,
    sessions: int,
    seed: int,
    profile: str,
    concurrency: int | None,
    workers: int | None,
    decision_ms: int,
    bank_ms: int,
    margin_ms: int,
    connect_timeout: float,
    name: str | None,
    live: float | None,
    executor: str,
    ray_address: str | None,
    db_path: Path,
    out: Path,
) -> None:
    """Run a round robin of duplicate sessions between bot processes and print the standings."""
    chosen = chosen_executor(executor, ray_address)  # before anything is stored
    rules = get_profile(profile)
    if table_size is not None:  # refused before the database is opened, so nothing is stored
        check_table_size(table_size, rules)
    with Store.open(db_path) as store:
        entrants = resolve_all(bots or DEFAULT_ENTRANTS, store=store)
        size = seats_for(entrants, table_size, rules)
        options: dict[str, Any] = {"concurrency": concurrency} if concurrency else {}
        config = TournamentConfig(
            name=name or f"{rules.name}, {size} seats, {', '.join(e.name for e in entrants)}",
            bots=entrants,
            table_size=size,
            sessions=sessions,
            seed=seed,
            profile=profile,
            time_limits=TimeLimits(decision_ms=decision_ms, session_bank_ms=bank_ms, margin_ms=margin_ms),
            connect_timeout_s=connect_timeout,
            workers=workers,
            **options,
        )
        play_and_publish(
            config, store=store, out=out, options=RunOptions(standings_every=live, executor=chosen)
        )


@tournament.command("resume")
@click.argument("tournament_id", type=int)
@executor_options
@db_option
@out_option
@friendly
def tournament_resume(
    tournament_id: int, executor: str, ray_address: str | None, db_path: Path, out: Path
) -> None:
    """Play the sessions an interrupted tournament has left (same deals), then print standings.

    A tournament that another process is playing right now is left alone (exit status 1).
    """
    chosen = chosen_executor(executor, ray_address)
    with open_store(db_path, writing=True) as store:
        store.tournament(tournament_id)
        with Progress(*progress_columns(), console=console) as progress:
            resume_tournament(
                tournament_id,
                store=store,
                logs_root=(out / "logs").resolve(),
                options=RunOptions(progress=progress, on_start=announce_start, executor=chosen),
            )
        publish_standings(store, tournament_id, out)


@tournament.command("list")
@db_option
@friendly
def tournament_list(db_path: Path) -> None:
    """List the tournaments in the database."""
    with open_store(db_path) as store:
        table = Table("id", "name", "status", "sessions", "seed", "created")
        for row in store.tournaments():
            done = len(store.finished_keys(row.id))
            table.add_row(
                str(row.id),
                row.name,
                row.status,
                f"{done}/{_planned(store, row.id)}",
                str(row.seed),
                row.created_at[:19],
            )
        console.print(table)


@tournament.command("status")
@click.argument("tournament_id", type=int, required=False)
@db_option
@friendly
def tournament_status(tournament_id: int | None, db_path: Path) -> None:
    """Show a tournament's progress and configuration (default: the latest)."""
    with open_store(db_path) as store:
        row = store.tournament(tournament_id) if tournament_id else latest_tournament(store)
        done, planned = len(store.finished_keys(row.id)), _planned(store, row.id)
        results = store.session_results(row.id)
        faults = sum(len(r.faults) for r in results)
        match = stored_match(row, results)
    console.print(
        f"tournament {row.id}: {row.name}\n  status {row.status}, {done} of {planned} sessions, "
        f"{faults} faults, seed {row.seed}, started {row.created_at[:19]}",
        markup=False,
    )
    config = dict(row.config)
    bots = config.pop("bots", [])
    names = [b["name"] for b in bots] if isinstance(bots, list) else []
    console.print(f"  bots: {', '.join(names)}", markup=False)
    limits = time_limits_from_json(config.pop("time_limits", None))  # type: ignore[arg-type]
    console.print(
        f"  time limits: {limits.decision_ms} ms per decision, bank {limits.session_bank_ms} ms "
        f"per seat and session, margin {limits.margin_ms} ms",
        markup=False,
        soft_wrap=True,
    )
    for key, value in config.items():
        console.print(f"  {key}: {value}", markup=False)
    usage = recorded_usage(db_path, row.id)
    if usage is not None:
        when = "now" if row.status == "running" else "latest run"
        console.print(f"  executor: {usage} ({when})", markup=False, soft_wrap=True)
    if match is not None and match.state is not None:  # a match's test says how far it went
        console.print(f"  test: {match.state.describe()}; {match.verdict}", markup=False, soft_wrap=True)
    if row.status == "interrupted":
        console.print(f"  resume with: {resume_command(row.id, db=db_path)}", markup=False, soft_wrap=True)


def _planned(store: Store, tournament_id: int) -> int:
    return sum(len(block.bots) for block in store.blocks(tournament_id))


@main.command("standings")
@click.argument("tournament_id", type=int, required=False)
@db_option
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write standings.md/.json/.html to this folder.",
)
@friendly
def standings_command(tournament_id: int | None, db_path: Path, out: Path | None) -> None:
    """Print (and with --out, republish) the standings of a tournament (default: the latest)."""
    with open_store(db_path) as store:
        tournament = store.tournament(tournament_id) if tournament_id else latest_tournament(store)
        results = store.session_results(tournament.id)
        standings = compute_standings(results)
        match = stored_match(tournament, results)
    title = f"Tournament {tournament.id}: {tournament.name}"
    console.print(render_markdown(standings, title=title, match=match), markup=False, highlight=False)
    if out is not None:
        for path in publish(standings, out, title=title, match=match):
            console.print(f"wrote {path}")
