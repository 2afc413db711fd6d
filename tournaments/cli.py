"""The ``nap`` command: submit a bot, run a local tournament, inspect per-match logs.

Each command is a thin layer over the library code the tests also use; every library
error becomes a one-line message and a non-zero exit.
"""

from __future__ import annotations

import functools
import logging
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click
import structlog
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from referee.rules import PROFILES, get_profile
from referee.server import TimeLimits
from referee.server.app import port_in_use
from tournaments.audit import audit_session, open_log
from tournaments.bots import RunnerError
from tournaments.entrants import DEFAULT_ENTRANTS, build, entry_from_manifest, resolve_all
from tournaments.logfiles import LogError
from tournaments.manifest import content_hash, read_manifest, scaffold
from tournaments.practice import CheckReport, check_bot
from tournaments.progress import progress_columns, standings_table
from tournaments.publish import publish, render_markdown
from tournaments.replay_page import render_replay_html, write_replay
from tournaments.runner import Hosting, TournamentConfig, remote_bot, resume_tournament, run_tournament
from tournaments.show import render_session
from tournaments.standings import compute_standings
from tournaments.store import Store, StoreError, TournamentRow

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_DB = Path("nap.db")
DEFAULT_OUT = Path("nap-out")
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


@bot.command("check")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--sessions", "-n", type=click.IntRange(1), default=6, show_default=True)
@click.option("--table-size", "-k", type=click.IntRange(3, 7), default=3, show_default=True)
@click.option("--profile", "-p", default="heather", show_default=True)
@click.option("--decision-ms", type=click.IntRange(1), default=1000, show_default=True)
@friendly
def bot_check(folder: Path, sessions: int, table_size: int, profile: str, decision_ms: int) -> None:
    """Play practice sessions against the built-in bots; report faults and latency, with a verdict."""
    report = _check(
        folder, sessions=sessions, table_size=table_size, profile=profile, decision_ms=decision_ms
    )
    if not report.passed:
        raise SystemExit(1)


@bot.command("submit")
@click.argument("folder", type=click.Path(path_type=Path))
@db_option
@click.option(
    "--sessions",
    "-n",
    type=click.IntRange(1),
    default=6,
    show_default=True,
    help="Practice sessions to play before registering.",
)
@friendly
def bot_submit(folder: Path, db_path: Path, sessions: int) -> None:
    """Validate, check, and register a bot folder as a new version (by content hash)."""
    manifest = read_manifest(folder)
    report = _check(folder, sessions=sessions, table_size=3, profile="heather", decision_ms=1000)
    if not report.passed:
        msg = f"bot {manifest.name} did not pass its check; not registered"
        raise RunnerError(msg)
    with Store.open(db_path) as store:
        known = {row.id for row in store.bots()}
        row = store.register_bot(
            name=manifest.name,
            version=manifest.version,
            command=manifest.command,
            language=manifest.language,
            folder=str(manifest.folder),
            content_hash=content_hash(manifest.folder),
        )
    state = "already registered as" if row.id in known else "registered as"
    console.print(
        f"{manifest.name} {manifest.version} {state} bot {row.id} (hash {row.content_hash[:12]})",
        markup=False,
    )


def _check(folder: Path, *, sessions: int, table_size: int, profile: str, decision_ms: int) -> CheckReport:
    manifest = read_manifest(folder)
    build(manifest)
    entry = entry_from_manifest(manifest)
    with Progress(*progress_columns(), console=console, transient=True) as progress:
        report = check_bot(
            entry,
            sessions=sessions,
            table_size=table_size,
            profile=profile,
            decision_ms=decision_ms,
            progress=progress,
        )
    _print_check(report)
    return report


def _print_check(report: CheckReport) -> None:
    if report.error:
        console.print(f"{report.bot}: FAIL: {report.error}", markup=False)
        return
    latency = ", ".join(f"{k} {v:.1f} ms" for k, v in report.latency_ms.items()) or "no decisions"
    faults = ", ".join(f"{n} {kind}" for kind, n in sorted(report.faults.items())) or "none"
    console.print(
        f"{report.bot}: {report.sessions} sessions, {report.decisions} decisions, "
        f"{report.chips_per_session:+.1f} chips/session against the built-in bots",
        markup=False,
    )
    console.print(f"  latency: {latency}\n  faults: {faults}", markup=False)
    verdict = "PASS" if report.passed else "FAIL"
    console.print(f"  verdict: {verdict}", markup=False)


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


# ----------------------------------------------------------------------------- tournaments


@main.group()
def tournament() -> None:
    """Run, resume and inspect local tournaments."""


out_option = click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_OUT,
    show_default=True,
    help="Output folder: standings.md/.json/.html and logs/.",
)


@tournament.command("run")
@click.option(
    "--bot",
    "-b",
    "bots",
    multiple=True,
    metavar="BOT",
    help="An entrant: built-in (random, peel), registered name, or bot folder; "
    "ALIAS=BOT enters it again. Repeat. Default: peel, random and a second copy of each.",
)
@click.option(
    "--table-size",
    "-k",
    type=click.IntRange(3, 7),
    default=None,
    help="Seats per table (default: 4, or fewer with fewer entrants).",
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
    default="heather",
    show_default=True,
    help="Rules profile: a built-in name or a house-rules .toml file.",
)
@click.option(
    "--concurrency",
    "-j",
    type=click.IntRange(1),
    default=None,
    help="Blocks in flight at once (default: the runner's).",
)
@click.option(
    "--decision-ms",
    type=click.IntRange(1),
    default=1000,
    show_default=True,
    help="Time limit per decision, in milliseconds.",
)
@click.option(
    "--connect-timeout",
    type=click.FloatRange(0.1),
    default=30.0,
    show_default=True,
    help="Seconds each bot process has to connect to the referee.",
)
@click.option("--name", default=None, help="A name for the tournament.")
@click.option(
    "--live", type=float, default=None, metavar="SECONDS", help="Print live standings every SECONDS."
)
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
    decision_ms: int,
    connect_timeout: float,
    name: str | None,
    live: float | None,
    db_path: Path,
    out: Path,
) -> None:
    """Run a round robin of duplicate sessions between bot processes and print the standings."""
    rules = get_profile(profile)
    with Store.open(db_path) as store:
        entrants = resolve_all(bots or DEFAULT_ENTRANTS, store=store)
        size = table_size or min(4, len(entrants))
        if len(entrants) < size:
            msg = f"{len(entrants)} entrants cannot fill a table of {size}; add --bot or lower --table-size"
            raise RunnerError(msg)
        options: dict[str, Any] = {"concurrency": concurrency} if concurrency else {}
        config = TournamentConfig(
            name=name or f"{rules.name}, {size} seats, {', '.join(e.name for e in entrants)}",
            bots=entrants,
            table_size=size,
            sessions=sessions,
            seed=seed,
            profile=profile,
            time_limits=TimeLimits(decision_ms=decision_ms),
            connect_timeout_s=connect_timeout,
            **options,
        )
        with Progress(*progress_columns(), console=console) as progress:
            tournament_id = run_tournament(
                config,
                store=store,
                logs_root=(out / "logs").resolve(),
                progress=progress,
                standings_every=live,
            )
        _publish(store, tournament_id, out)


@tournament.command("resume")
@click.argument("tournament_id", type=int)
@db_option
@out_option
@friendly
def tournament_resume(tournament_id: int, db_path: Path, out: Path) -> None:
    """Play the sessions an interrupted tournament has left (same deals), then print standings."""
    with Store.open(db_path) as store:
        store.tournament(tournament_id)
        with Progress(*progress_columns(), console=console) as progress:
            resume_tournament(
                tournament_id, store=store, logs_root=(out / "logs").resolve(), progress=progress
            )
        _publish(store, tournament_id, out)


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
        row = store.tournament(tournament_id) if tournament_id else _latest(store)
        done, planned = len(store.finished_keys(row.id)), _planned(store, row.id)
        faults = sum(len(r.faults) for r in store.session_results(row.id))
    console.print(
        f"tournament {row.id}: {row.name}\n  status {row.status}, {done} of {planned} sessions, "
        f"{faults} faults, seed {row.seed}, started {row.created_at[:19]}",
        markup=False,
    )
    config = dict(row.config)
    bots = config.pop("bots", [])
    names = [b["name"] for b in bots] if isinstance(bots, list) else []
    console.print(f"  bots: {', '.join(names)}", markup=False)
    for key, value in config.items():
        console.print(f"  {key}: {value}", markup=False)
    if row.status == "interrupted":
        console.print(f"  resume with: nap tournament resume {row.id}", markup=False)


def _planned(store: Store, tournament_id: int) -> int:
    return sum(len(block.bots) for block in store.blocks(tournament_id))


def _publish(store: Store, tournament_id: int, out: Path) -> None:
    row = store.tournament(tournament_id)
    standings = compute_standings(store.session_results(tournament_id))
    title = f"Tournament {row.id}: {row.name}"
    console.print(standings_table(standings, title=title))
    paths = publish(standings, out, title=title)
    console.print(f"standings written to {', '.join(str(p) for p in paths)}", markup=False)


# ----------------------------------------------------------------------------- serve


@main.command("serve")
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
@click.option(
    "--bot",
    "-b",
    "bots",
    multiple=True,
    metavar="BOT",
    help="A local entrant, as for 'nap tournament run' (built-in, registered or folder).",
)
@click.option(
    "--table-size",
    "-k",
    type=click.IntRange(3, 7),
    default=None,
    help="Seats per table (default: 4, or fewer with fewer entrants).",
)
@click.option("--sessions", "-n", type=click.IntRange(1), default=40, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--profile", "-p", default="heather", show_default=True)
@click.option("--decision-ms", type=click.IntRange(1), default=1000, show_default=True)
@click.option(
    "--wait",
    type=click.FloatRange(0.1),
    default=300.0,
    show_default=True,
    help="Seconds to wait for every remote bot to connect.",
)
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
    seed: int,
    profile: str,
    decision_ms: int,
    wait: float,
    db_path: Path,
    out: Path,
) -> None:
    """Run the referee on a port for remote bots and play a tournament among them.

    Remote bots connect to HOST:PORT with their token (in any language; see
    docs/protocol.md); local entrants (--bot) are started as processes as usual. The
    sessions are stored and published like those of 'nap tournament run'.
    """
    if port_in_use(host, port):
        msg = f"cannot listen on {host}:{port}: the port is in use"
        raise OSError(msg)
    tokens = dict(_name_token(spec) for spec in remotes)
    rules = get_profile(profile)
    with Store.open(db_path) as store:
        entrants = (*(remote_bot(name) for name in tokens), *resolve_all(bots, store=store))
        size = table_size or min(4, len(entrants))
        if len(entrants) < size:
            msg = f"{len(entrants)} entrants cannot fill a table of {size}; add --remote or --bot"
            raise RunnerError(msg)
        config = TournamentConfig(
            name=f"served on port {port}: {', '.join(e.name for e in entrants)}",
            bots=entrants,
            table_size=size,
            sessions=sessions,
            seed=seed,
            profile=profile,
            time_limits=TimeLimits(decision_ms=decision_ms),
            connect_timeout_s=wait,
        )
        hosting = Hosting(
            host=host,
            port=port,
            tokens={n: t for n, t in tokens.items() if t},
            announce=_announce(host, rules.name),
        )
        with Progress(*progress_columns(), console=console) as progress:
            tournament_id = run_tournament(
                config, store=store, logs_root=(out / "logs").resolve(), progress=progress, hosting=hosting
            )
        _publish(store, tournament_id, out)


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
