"""``nap serve``: host a tournament for remote bots on a port."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import click

from referee.server import TimeLimits, port_in_use
from tournaments.errors import RunnerError, mapped
from tournaments.plan.config import TournamentConfig
from tournaments.plan.scheduler import check_table_size
from tournaments.play.entrants import resolve_all
from tournaments.play.host import Hosting, remote_bot
from tournaments.play.runner import RunOptions
from tournaments.store.database import Store

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from referee.rules import Profile
    from tournaments.plan.isolation import BotLimits

from tournaments.cli.app import (
    backstop_option,
    bank_option,
    bots_option,
    build_sandbox,
    console,
    db_option,
    decision_option,
    friendly,
    isolation_options,
    margin_option,
    note,
    out_option,
    profile_option,
    secret_seed,
    seed_option,
    table_size_option,
)
from tournaments.cli.reports import (
    play_and_publish,
    seats_for,
)


@click.command("serve")
@click.option("--host", default="0.0.0.0", show_default=True, help="Address to listen on.")  # noqa: S104
@click.option("--port", type=click.IntRange(0, 65535), default=50051, show_default=True)
@click.option(
    "--remote",
    "-r",
    "remotes",
    multiple=True,
    metavar="NAME[=TOKEN]",
    required=True,
    help="A bot that connects from elsewhere with this token (made up and printed if absent). Repeat.",
)
@bots_option("A local entrant, as for 'nap tournament run' (built-in, submitted or a folder).")
@table_size_option()
@click.option("--sessions", "-n", type=click.IntRange(1), default=40, show_default=True)
@seed_option
@profile_option
@decision_option
@bank_option
@margin_option
@backstop_option
@click.option(
    "--wait",
    type=click.FloatRange(0.1),
    default=300.0,
    show_default=True,
    help="Seconds to wait for every remote bot to connect.",
)
@isolation_options
@db_option
@out_option
@friendly
def serve(  # noqa: PLR0913, PLR0917 - one parameter per command-line option
    host: str,
    port: int,
    remotes: tuple[str, ...],
    bots: tuple[str, ...],
    table_size: int | None,
    sessions: int,
    seed: int | None,
    profile: Profile,
    decision_ms: int,
    bank_ms: int,
    margin_ms: int,
    backstop_ms: int,
    wait: float,
    sandbox: str,
    bot_limits: BotLimits,
    db_path: Path,
    out: Path,
) -> None:
    """Run the referee on a port for remote bots and play a tournament among them.

    Remote bots connect to HOST:PORT with their token (in any language; see
    docs/protocol.md); local entrants (--bot) are started as processes as usual,
    isolated (--sandbox). A remote bot cannot be isolated, nor split into one process per
    rotation: the standings watch its results on boards it has seen played before
    (docs/security.md). The sessions are stored and published like those of 'nap
    tournament run'.
    """
    if port_in_use(host, port):
        msg = f"cannot listen on {host}:{port}: the port is in use"
        raise RunnerError(msg)
    port = port or free_port(host)  # the tournament's name and the bots' address need the real one
    tokens = dict(_name_token(spec) for spec in remotes)
    if table_size is not None:  # refused before the database is opened, so nothing is stored
        with mapped(ValueError):
            check_table_size(table_size, profile)
    with Store.open(db_path) as store:
        builds = build_sandbox(sandbox, bot_limits, hidden=(db_path, out))
        entrants = (
            *(remote_bot(name) for name in tokens),
            *resolve_all(bots, store=store, sandbox=builds, say=note),
        )
        size = seats_for(entrants, table_size, profile)
        config = TournamentConfig(
            name=f"served on port {port}: {', '.join(e.name for e in entrants)}",
            bots=entrants,
            table_size=size,
            sessions=sessions,
            seed=secret_seed() if seed is None else seed,
            profile=profile,
            time_limits=TimeLimits(
                decision_ms=decision_ms, session_bank_ms=bank_ms, margin_ms=margin_ms, backstop_ms=backstop_ms
            ),
            connect_timeout_s=wait,
            sandbox=sandbox,
            bot_limits=bot_limits,
        )
        hosting = Hosting(
            host=host,
            port=port,
            tokens={n: t for n, t in tokens.items() if t},
            announce=_announce(host, profile.name),
        )
        play_and_publish(config, store=store, out=out, options=RunOptions(hosting=hosting))


def free_port(host: str) -> int:
    """A port free on ``host`` now, as the system picks for port 0 (free until someone else takes it).

    RunnerError (one line) when nothing can listen on ``host`` (not an address of this machine).
    """
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        try:
            probe.bind((host, 0))
        except OSError as exc:
            msg = f"cannot listen on {host}: {exc.strerror or exc}"
            raise RunnerError(msg) from exc
        return int(probe.getsockname()[1])


def _name_token(spec: str) -> tuple[str, str]:
    name, _, token = spec.partition("=")
    if not name.strip():
        msg = f"--remote takes NAME or NAME=TOKEN, not {spec!r}"
        raise click.BadParameter(msg)
    return name.strip(), token.strip()


def _announce(host: str, profile: str) -> Callable[[int, Mapping[str, str]], None]:
    def announce(port: int, tokens: Mapping[str, str]) -> None:
        console.print(f"referee listening on {host}:{port} (profile {profile}); waiting for:", markup=False)
        for name, token in tokens.items():
            console.print(f"  {name}: NAP_REFEREE=<this host>:{port} NAP_TOKEN={token}", markup=False)

    return announce
