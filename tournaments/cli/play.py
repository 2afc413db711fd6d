"""``nap play``: take a seat against bots, in a page served on this machine."""

from __future__ import annotations

import asyncio
import getpass
from typing import TYPE_CHECKING

import click

from referee.server import TimeLimits, tune_collector
from tournaments.cli.app import (
    bots_option,
    build_sandbox,
    console,
    db_option,
    field_default,
    friendly,
    isolation_options,
    note,
    open_browser,
    out_option,
    profile_option,
    secret_seed,
    seed_option,
)
from tournaments.cli.reports import publish_standings
from tournaments.play.entrants import resolve_all
from tournaments.report.outfolder import logs_root
from tournaments.store.database import Store
from tournaments.web.play import HUMAN_DECISION_MS, TableSpec, play_at_table, seating_of
from tournaments.words import count

if TYPE_CHECKING:
    from pathlib import Path

    from referee.rules import Profile
    from tournaments.plan.isolation import BotLimits


@click.command("play")
@bots_option("A bot to play against (built-in, submitted or a folder, as for 'nap tournament run'). Repeat.")
@profile_option
@click.option(
    "--sessions",
    "-n",
    type=click.IntRange(1),
    default=field_default(TableSpec, "sessions"),
    show_default=True,
    help="Sessions, one after another.",
)
@click.option(
    "--seat",
    type=click.IntRange(0),
    default=field_default(TableSpec, "seat"),
    show_default=True,
    help="Your seat, from 0 (the bots take the others in the order given).",
)
@click.option(
    "--name", default=None, help="Your name in the store and on the page (default: your user name)."
)
@click.option(
    "--decision-ms",
    type=click.IntRange(1),
    default=HUMAN_DECISION_MS,
    show_default=True,
    help="Time per decision, yours and the bots', in milliseconds.",
)
@click.option("--no-browser", is_flag=True, help="Only print the page's address; open no browser.")
@click.option(
    "--wait",
    type=click.FloatRange(0.1),
    default=field_default(TableSpec, "wait_s"),
    show_default=True,
    help="Seconds to wait for the page to be opened before giving up.",
)
@seed_option
@isolation_options
@db_option
@out_option
@friendly
def play(  # noqa: PLR0913, PLR0917 - one parameter per command-line option
    bots: tuple[str, ...],
    profile: Profile,
    sessions: int,
    seat: int,
    name: str | None,
    decision_ms: int,
    no_browser: bool,  # noqa: FBT001 - a click flag
    wait: float,
    seed: int | None,
    sandbox: str,
    bot_limits: BotLimits,
    db_path: Path,
    out: Path,
) -> None:
    """Play Nap against bots in your browser: a page on 127.0.0.1 with a secret address.

    Your seat is a client of the referee like any bot's, so the page sees only your
    hand and what is public. At your decision's deadline the referee plays for you as it
    does for a late bot. The sessions are stored as a tournament of their own, with
    their logs (nap log show, nap log html, nap log verify). See docs/play.md.
    """
    with Store.open(db_path) as store:
        builds = build_sandbox(sandbox, bot_limits, hidden=(db_path, out))
        spec = TableSpec(
            person=name if name is not None else _user_name(),
            bots=resolve_all(bots, store=store, sandbox=builds, say=note),
            profile=profile,
            seed=secret_seed() if seed is None else seed,
            seat=seat,
            sessions=sessions,
            time_limits=TimeLimits(decision_ms=decision_ms),
            sandbox=sandbox,
            bot_limits=bot_limits,
            wait_s=wait,
        )
        seating = seating_of(spec)  # a bad seat or name is refused before anything starts

        def show(url: str) -> None:
            console.print(
                f"your table ({', '.join(seating)}; profile {profile.name}): {url}",
                markup=False,
                soft_wrap=True,
            )
            if not no_browser and not open_browser(url):
                console.print("no browser found here: open that address in one", markup=False, soft_wrap=True)

        tune_collector()
        played = asyncio.run(play_at_table(spec, store=store, logs_root=logs_root(out), on_url=show))
        if played.left:
            console.print(
                f"the page was closed: the referee played the rest of that session for you; "
                f"{len(played.sessions)} of {count(played.planned, 'session')} played",
                markup=False,
                soft_wrap=True,
            )
        if played.sessions:
            publish_standings(store, played.tournament, out)
            first = played.sessions[0]
            console.print(
                f"sessions stored: {', '.join(map(str, played.sessions))}; replay: nap log html {first}",
                markup=False,
            )


def _user_name() -> str:
    """The name of whoever runs the command (``you`` where the system cannot say)."""
    try:
        return getpass.getuser() or "you"
    except (OSError, KeyError):
        return "you"
