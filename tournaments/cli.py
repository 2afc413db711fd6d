"""The ``nap`` command: submit a bot, run a local tournament, inspect per-match logs.

Each command is a thin layer over the library code the tests also use; every library
error becomes a one-line message and a non-zero exit.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click
from rich.console import Console
from rich.table import Table

from referee.rules import PROFILES, ProfileError, RecordError, get_profile
from tournaments.audit import audit_session, open_log
from tournaments.logfiles import LogError
from tournaments.manifest import ManifestError, scaffold
from tournaments.publish import publish, render_markdown
from tournaments.replay_page import render_replay_html, write_replay
from tournaments.show import render_session
from tournaments.standings import compute_standings
from tournaments.store import Store, StoreError, TournamentRow

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_DB = Path("nap.db")
DEFAULT_OUT = Path("nap-out")
KNOWN_ERRORS: tuple[type[Exception], ...] = (
    StoreError,
    ManifestError,
    ProfileError,
    RecordError,
    LogError,
    ValueError,
    OSError,
)

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
    envvar="NAP_DB",
    show_default=True,
    help="The tournament database (SQLite).",
)


@contextmanager
def open_store(path: Path, *, must_exist: bool = True) -> Iterator[Store]:
    """Open the database, refusing to create one where a read-only command expects it."""
    if must_exist and not path.exists():
        msg = f"{path}: no such database (run 'nap tournament run' first, or pass --db)"
        raise StoreError(msg)
    with Store.open(path) as store:
        yield store


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="nap-arena")
def main() -> None:
    r"""Nap Arena: referee, tournaments and logs for Napoleon (Nap) bots.

    \b
    Quick start:
      nap tournament run            built-in bots, default rules, standings printed
      nap bot new mybot             scaffold a Python bot; then: nap bot check mybot
      nap log list --bot random     find sessions; nap log show ID --seat 0
    """


# ----------------------------------------------------------------------------- rules


@main.group()
def rules() -> None:
    """The rules profiles (seed documents) and house rules."""


@rules.command("list")
def rules_list() -> None:
    """List the built-in profiles."""
    table = Table("profile", "source", "seats", "summary")
    for profile in PROFILES.values():
        table.add_row(
            profile.name, profile.source, f"{profile.min_players}-{profile.max_players}", profile.summary
        )
    console.print(table)


@rules.command("show")
@click.argument("name")
@friendly
def rules_show(name: str) -> None:
    """Show every parameter of a profile (a built-in NAME or a house-rules .toml file)."""
    profile = get_profile(name)
    console.print(f"[bold]{profile.name}[/bold]  ({profile.source})\n{profile.summary}\n")
    params = profile.parameters()
    contracts: dict[str, dict[str, Any]] = params.pop("contracts")  # type: ignore[assignment]
    table = Table("contract", "tricks", "won (each opponent pays)", "lost (pays each)", "only over")
    for contract in contracts.values():
        tricks = "none (misère)" if contract["misere"] else f">= {contract['tricks']}"
        table.add_row(
            contract["label"], tricks, str(contract["win"]), str(contract["lose"]), contract["over"] or ""
        )
    console.print(table)
    for key, value in params.items():
        if key not in {"name", "source", "summary"}:
            console.print(f"  {key} = {value}")


# ----------------------------------------------------------------------------- bots


@main.group()
def bot() -> None:
    """Write, check, submit and list bots."""


@bot.command("new")
@click.argument("name")
@click.option(
    "--dir",
    "parent",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(),
    help="Where to create the bot's folder.",
)
@friendly
def bot_new(name: str, parent: Path) -> None:
    """Create folder NAME with a manifest and a working Python bot to edit."""
    folder = scaffold(parent, name)
    console.print(f"created {folder}/ (nap-bot.toml, bot.py)\nnext: nap bot check {folder}")


@bot.command("list")
@db_option
@friendly
def bot_list(db_path: Path) -> None:
    """List the registered bots and their versions."""
    with open_store(db_path) as store:
        table = Table("id", "name", "version", "language", "hash", "registered", "folder")
        for row in store.bots():
            table.add_row(
                str(row.id),
                row.name,
                row.version,
                row.language or "",
                row.content_hash[:12],
                row.registered_at[:19],
                row.folder or "",
            )
        console.print(table)


# ----------------------------------------------------------------------------- standings


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
        tournament = store.tournament(tournament_id) if tournament_id else _latest(store)
        standings = compute_standings(store.session_results(tournament.id))
    title = f"Tournament {tournament.id}: {tournament.name}"
    console.print(render_markdown(standings, title=title), markup=False, highlight=False)
    if out is not None:
        for path in publish(standings, out, title=title):
            console.print(f"wrote {path}")


def _latest(store: Store) -> TournamentRow:
    rows = store.tournaments()
    if not rows:
        msg = "the database holds no tournament yet (run 'nap tournament run')"
        raise StoreError(msg)
    return max(rows, key=lambda row: row.id)


# ----------------------------------------------------------------------------- logs


@main.group()
def log() -> None:
    """Find, read, verify and replay per-session logs."""


@log.command("list")
@db_option
@click.option("--tournament", "-t", type=int, help="Only this tournament.")
@click.option("--bot", "-b", help="Only sessions this bot played.")
@click.option(
    "--fault",
    "fault_kind",
    type=click.Choice(["late", "illegal", "malformed", "unknown-request", "disconnect", "crash"]),
    help="Only sessions with a fault of this kind (by --bot when given).",
)
@click.option("--result", type=click.Choice(["win", "loss"]), help="Only sessions --bot won / did not win.")
@click.option("--limit", type=int, default=50, show_default=True, help="At most this many rows (0: all).")
@friendly
def log_list(  # noqa: PLR0913, PLR0917 - one parameter per command-line option
    db_path: Path,
    tournament: int | None,
    bot: str | None,
    fault_kind: str | None,
    result: str | None,
    limit: int,
) -> None:
    """List sessions, filtered: e.g. every session where your bot timed out (--bot X --fault late)."""
    with open_store(db_path) as store:
        rows = store.find_sessions(tournament=tournament, bot=bot, fault_kind=fault_kind, result=result)  # type: ignore[arg-type]
    table = Table("session", "tournament", "block", "rotation", "bots by seat", "finished", "log")
    shown = rows if limit == 0 else rows[:limit]
    for row in shown:
        table.add_row(
            str(row.id),
            str(row.tournament),
            str(row.block),
            str(row.rotation),
            " ".join(row.bots),
            row.finished_at[:19],
            str(row.log_path),
        )
    console.print(table)
    console.print(f"{len(shown)} of {len(rows)} sessions")


@log.command("show")
@click.argument("session_id", type=int)
@db_option
@click.option("--seat", type=int, default=None, help="Show only what this seat saw (its own hand).")
@friendly
def log_show(session_id: int, db_path: Path, seat: int | None) -> None:
    """Print a session's deals readably: hands, bids, each trick and its winner, the settlement."""
    with open_store(db_path) as store:
        row = store.session(session_id)
    session_log = open_log(row.log_path)
    text = render_session(
        session_log.record, bots=session_log.bots, seat=seat, decisions=session_log.decisions
    )
    click.echo(text)


@log.command("html")
@click.argument("session_id", type=int)
@db_option
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the page (default: session-ID.html).",
)
@friendly
def log_html(session_id: int, db_path: Path, output: Path | None) -> None:
    """Write a self-contained replay page: step through bids and tricks, switch seat views."""
    with open_store(db_path) as store:
        row = store.session(session_id)
    session_log = open_log(row.log_path)
    title = f"Session {session_id}: tournament {row.tournament}, block {row.block}, rotation {row.rotation}"
    page = render_replay_html(
        session_log.record, bots=session_log.bots, title=title, decisions=session_log.decisions
    )
    path = write_replay(output or Path(f"session-{session_id}.html"), page)
    console.print(f"wrote {path} (open it in a browser; no network needed)")


@log.command("verify")
@click.argument("session_ids", type=int, nargs=-1)
@db_option
@click.option("--tournament", "-t", type=int, help="Verify every session of this tournament.")
@friendly
def log_verify(session_ids: tuple[int, ...], db_path: Path, tournament: int | None) -> None:
    """Replay logs through the rules engine and report any mismatch (default: every session)."""
    with open_store(db_path) as store:
        rows = (
            [store.session(i) for i in session_ids]
            if session_ids
            else store.find_sessions(tournament=tournament)
        )
        results = {
            (r.tournament, r.block, r.rotation): r
            for t in {row.tournament for row in rows}
            for r in store.session_results(t)
        }
    bad = 0
    for row in rows:
        problems = audit_session(row, results.get((row.tournament, row.block, row.rotation)))
        if problems:
            bad += 1
            for problem in problems:
                console.print(f"session {row.id}: {problem}", markup=False, highlight=False)
    console.print(f"verified {len(rows)} sessions: {len(rows) - bad} match, {bad} mismatch")
    if bad:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
