"""``nap bot``: scaffold, check, submit and list bots."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE
from tournaments.arena.client import URL_VARIABLE, ClientError, normalize_url
from tournaments.cli.app import (
    build_sandbox,
    console,
    db_option,
    decision_option,
    echo_json,
    friendly,
    isolation_options,
    json_option,
    open_store,
    print_table,
    profile_option,
    secret_seed,
    seed_option,
)
from tournaments.cli.arena import submit_folder
from tournaments.cli.progress import ConsoleObserver, tournament_progress
from tournaments.errors import RunnerError, writing
from tournaments.plan.entries import BUILTIN_BOTS
from tournaments.plan.manifest import content_hash, read_manifest, scaffold
from tournaments.plan.scheduler import MAX_TABLE_SIZE, MIN_TABLE_SIZE
from tournaments.plan.versions import pack
from tournaments.play.entrants import build, entry_from_manifest
from tournaments.play.practice import BASELINE, CheckReport, check_bot
from tournaments.report.check import check_lines
from tournaments.store.database import Store

if TYPE_CHECKING:
    from referee.rules import Profile
    from tournaments.plan.isolation import BotLimits

CHECK_SESSIONS = 6
"""Practice sessions ``nap bot check`` and ``nap bot submit`` play by default."""


CONFIGURED_ARENA = ""
"""``--arena`` given without a URL: the configured arena's."""


@click.group()
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
    with writing(parent / name):
        folder = scaffold(parent, name)
    console.print(f"created {folder}/ (nap-bot.toml, bot.py)\nnext: nap bot check {folder}")


@bot.command("check")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--sessions", "-n", type=click.IntRange(1), default=CHECK_SESSIONS, show_default=True)
@click.option(
    "--table-size", "-k", type=click.IntRange(MIN_TABLE_SIZE, MAX_TABLE_SIZE), default=3, show_default=True
)
@profile_option
@decision_option
@click.option(
    "--baseline",
    type=click.Choice(sorted(BUILTIN_BOTS)),
    default=BASELINE,
    show_default=True,
    help="Play the same deals again with this built-in bot in your bot's seat, to compare scores.",
)
@click.option("--no-baseline", is_flag=True, help="Skip the baseline (half the time).")
@seed_option
@isolation_options
@json_option
@friendly
def bot_check(  # noqa: PLR0913, PLR0917 - one parameter per command-line option
    folder: Path,
    sessions: int,
    table_size: int,
    profile: Profile,
    decision_ms: int,
    baseline: str,
    no_baseline: bool,  # noqa: FBT001 - a click flag
    seed: int | None,
    sandbox: str,
    bot_limits: BotLimits,
    as_json: bool,  # noqa: FBT001 - a click flag
) -> None:
    """Play practice sessions against the built-in bots; report faults, latency and score, with a verdict.

    The verdict is PASS when the bot played every session without a fault and its process
    never exited on its own; exit status 1 on FAIL. The same deals are then played with a
    reference bot (--baseline, peel by default) in your bot's seat, so that your score reads
    against its score: the difference is shown, but does not count in the verdict.
    """
    report = _check(
        folder,
        sessions=sessions,
        table_size=table_size,
        profile=profile,
        decision_ms=decision_ms,
        baseline=None if no_baseline else baseline,
        screen=Console(stderr=True) if as_json else console,
        seed=secret_seed() if seed is None else seed,
        isolation=(sandbox, bot_limits),
    )
    if as_json:
        echo_json(report.to_json())
    else:
        for line in check_lines(report):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    if not report.passed:
        raise SystemExit(1)


@bot.command("submit")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option(
    "--arena",
    "arena_url",
    metavar="[URL]",
    is_flag=False,
    flag_value=CONFIGURED_ARENA,
    default=None,
    callback=lambda ctx, param, value: _arena_address(value, param, ctx),
    help="Upload the bot to an arena instead, which builds, checks and places it on its ladder itself. "
    f"URL: the arena's address (without it: ${URL_VARIABLE}, else the one nap arena login saved).",
)
@click.option(
    "--wait",
    is_flag=True,
    help="With --arena: follow the submission until placed (exit 0) or refused (exit 1), as "
    "nap arena status ID --wait does.",
)
@db_option
@click.option(
    "--sessions",
    "-n",
    type=click.IntRange(1),
    default=CHECK_SESSIONS,
    show_default=True,
    help="Practice sessions to play before registering.",
)
@isolation_options
@friendly
def bot_submit(  # noqa: PLR0913, PLR0917 - one parameter per command-line option
    folder: Path,
    arena_url: str | None,
    wait: bool,  # noqa: FBT001 - a click flag
    db_path: Path,
    sessions: int,
    sandbox: str,
    bot_limits: BotLimits,
) -> None:
    """Validate, check, and keep a bot folder's content as a new version (by content hash).

    The version plays exactly as it was checked, whatever happens to the folder: --bot NAME
    plays the latest version, --bot NAME@VERSION or NAME@HASH an older one.

    With --arena, the folder's content is uploaded to an arena instead (the same pack, its
    manifest read here first): the command prints the submission's number and how to
    follow it, nap arena status ID --wait. Give --arena last, or with its URL: a word after
    it is read as the URL.
    """
    local = _local_options_given(click.get_current_context())
    if arena_url is not None:
        if local:
            msg = f"{', '.join(local)}: for a submission to this machine's database, not to an arena"
            raise click.UsageError(msg)
        code = submit_folder(folder, arena_url=arena_url or None, wait=wait)
        if code:
            raise SystemExit(code)
        return
    if wait:
        msg = "--wait follows a submission to an arena: give --arena too"
        raise click.UsageError(msg)
    manifest = read_manifest(folder)
    report = _check(
        folder,
        sessions=sessions,
        table_size=3,
        profile=DEFAULT_PROFILE,
        decision_ms=TimeLimits().decision_ms,
        baseline=None,
        screen=console,
        seed=secret_seed(),
        isolation=(sandbox, bot_limits),
        hidden=(db_path,),
    )
    for line in check_lines(report):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if not report.passed:
        msg = f"bot {manifest.name} did not pass its check; not registered"
        raise RunnerError(msg)
    with Store.open(db_path) as store:
        known = {row.id for row in store.bots() if store.submitted(row.name, row.content_hash) is not None}
        row = store.register_bot(
            name=manifest.name,
            version=manifest.version,
            command=manifest.command,
            language=manifest.language,
            folder=str(manifest.folder),
            content_hash=content_hash(manifest.folder),
            pack=pack(manifest.folder),
        )
    state = "already submitted as" if row.id in known else "submitted as"
    console.print(
        f"{manifest.name} {manifest.version} {state} bot {row.id} (hash {row.content_hash[:12]})",
        markup=False,
    )


def _arena_address(value: str | None, param: click.Parameter, ctx: click.Context) -> str | None:
    """``--arena``'s value, refused at once if it is no address (``--arena mybot``: a folder read as one)."""
    if value:
        try:
            normalize_url(value)
        except ClientError:
            msg = (
                f"{value!r} is not an arena's address (http://HOST:PORT): give --arena last, or with its URL"
            )
            raise click.BadParameter(msg, ctx=ctx, param=param) from None
    return value


def _local_options_given(ctx: click.Context) -> list[str]:
    """The options of a local submission given on the command line (not their defaults), as ``--db``."""
    return [
        f"--{name.replace('_', '-')}".replace("--db-path", "--db")
        for name in ("db_path", "sessions", "sandbox", "bot_memory", "bot_processes", "bot_files")
        if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
    ]


def _check(  # noqa: PLR0913 - the options of `nap bot check`
    folder: Path,
    *,
    sessions: int,
    table_size: int,
    profile: Profile,
    decision_ms: int,
    baseline: str | None,
    screen: Console,
    seed: int,
    isolation: tuple[str, BotLimits],
    hidden: tuple[Path, ...] = (),
) -> CheckReport:
    """Build the bot (in the sandbox ``isolation`` asks for) and play its practice sessions there."""
    sandbox, limits = isolation
    manifest = read_manifest(folder)
    build(manifest, sandbox=build_sandbox(sandbox, limits, hidden=hidden))
    entry = entry_from_manifest(manifest)
    with tournament_progress(screen, transient=True) as progress:
        return check_bot(
            entry,
            sessions=sessions,
            table_size=table_size,
            profile=profile,
            decision_ms=decision_ms,
            baseline=baseline,
            observers=(ConsoleObserver(progress),),
            seed=seed,
            sandbox=sandbox,
            bot_limits=limits,
        )


@bot.command("list")
@db_option
@friendly
def bot_list(db_path: Path) -> None:
    """List the registered bots and their versions.

    A submitted version (nap bot submit) is kept: --bot NAME@VERSION plays it as it was.
    The others were entered as folders in a tournament, and are listed for the record.
    Without a terminal (a pipe, a script) each bot is one tab-separated line, under a
    line of headers.
    """
    headers = ("id", "name", "version", "language", "hash", "registered (UTC)", "kept", "folder")
    with open_store(db_path) as store:
        rows = [
            (
                str(row.id),
                row.name,
                row.version,
                row.language or "",
                row.content_hash[:12],
                row.registered_at[:19].replace("T", " "),
                "submitted" if store.submitted(row.name, row.content_hash) is not None else "",
                row.folder or "",
            )
            for row in store.bots()
        ]
    print_table(headers, rows)
