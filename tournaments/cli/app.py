"""The ``nap`` command's shared pieces: the group, options, error handling, the console.

Each command is a thin layer over the library code the tests also use; every library
error becomes a one-line message and a non-zero exit.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import logging
import os
import secrets
import sys
import textwrap
import webbrowser
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import click
import structlog
from rich.console import Console
from rich.table import Table

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE, Profile, ProfileError, RulesError, get_profile
from tournaments.errors import ArenaError, BuildError, StoreError
from tournaments.plan.config import TournamentConfig
from tournaments.plan.isolation import SANDBOX_MODES, BotLimits
from tournaments.plan.scheduler import MAX_TABLE_SIZE, MIN_TABLE_SIZE
from tournaments.play.commands import DB_VARIABLE, DEFAULT_DB, DEFAULT_OUT
from tournaments.play.entrants import WHICH_PLAYS
from tournaments.play.sandbox import Sandbox, SandboxSpec, sandbox_for
from tournaments.store.database import Store

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from _typeshed import DataclassInstance

P = ParamSpec("P")
R = TypeVar("R")

COMMANDS = {
    "arena": "tournaments.cli.arena:arena",
    "bot": "tournaments.cli.bots:bot",
    "log": "tournaments.cli.logs:log",
    "match": "tournaments.cli.match:match_command",
    "play": "tournaments.cli.play:play",
    "rules": "tournaments.cli.rules:rules",
    "serve": "tournaments.cli.serve:serve",
    "standings": "tournaments.cli.tournament:standings_command",
    "tournament": "tournaments.cli.tournament:tournament",
}
"""Each ``nap`` command and where it is defined: imported only when it runs (or for ``--help``),
so that ``nap log list`` does not import the referee, gRPC and the runner."""


KNOWN_ERRORS: tuple[type[Exception], ...] = (ArenaError, RulesError)
"""Errors whose message is meant for the user: the library's own (:class:`ArenaError`, into
which a file or a port the user named is mapped where it fails) and the rules engine's
(:class:`~referee.rules.RulesError`: a profile, a house-rules file, a record). Anything else,
a plain ValueError, KeyError or OSError included, is a bug: its traceback is shown."""


console = Console()


def friendly(command: Callable[P, R]) -> Callable[P, R]:
    """Turn the errors meant for the user (:data:`KNOWN_ERRORS`) into a one-line message and exit status 1.

    A failed build is the exception: its message is followed by everything the build wrote.
    Any other exception is raised as it is, with its traceback: it is a bug.
    """

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except Exception as exc:
            if isinstance(exc, BuildError):  # the compiler's own words are the explanation
                message = (
                    f"bot {exc.bot}: build failed with status {exc.status}; its output:\n"
                    f"{textwrap.indent(exc.output, '  ')}"
                )
                raise click.ClickException(message) from None
            if not isinstance(exc, KNOWN_ERRORS):
                raise
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
    with Store.open(path, check=writing, reading=not writing) as store:
        yield store


class _Commands(click.Group):
    """The ``nap`` group: its commands are imported when one runs (see :data:`COMMANDS`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = COMMANDS.get(cmd_name)
        if where is None:
            return super().get_command(ctx, cmd_name)
        module, name = where.split(":")
        command = getattr(importlib.import_module(module), name)
        assert isinstance(command, click.Command)  # noqa: S101 - COMMANDS names commands
        return command


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
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


class _Rules(click.ParamType[Profile, object]):
    """A rules profile named on the command line, resolved here, once: a built-in name or a .toml file.

    What a command gets is the profile as a value; a tournament stores that value whole,
    so no later step (a resume, a status, a worker on another machine) reads the file again.
    """

    name = "profile"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> Profile:
        del param, ctx  # the error is one line, not click's usage block
        if isinstance(value, Profile):
            return value
        try:
            return get_profile(str(value))
        except ProfileError as exc:  # one line and exit status 1, as for a bot that names none
            raise click.ClickException(str(exc)) from None


profile_rules = _Rules()
"""The type of an option that names rules: a profile's name or a house-rules file, read once."""

profile_option = click.option(
    "--profile",
    "-p",
    type=profile_rules,
    default=DEFAULT_PROFILE.name,
    show_default=True,
    help="Rules profile: a built-in name or a house-rules .toml file (read once, stored whole).",
)


DEFAULT_TABLE_SIZE = 4
"""Seats per table when ``--table-size`` is not given (fewer with fewer entrants, and within
what the rules profile allows)."""


def table_size_option(
    default: str = f"{DEFAULT_TABLE_SIZE}, or fewer with fewer entrants",
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``--table-size``/``-k``: seats per table, checked against the rules profile once it is known."""
    return click.option(
        "--table-size",
        "-k",
        type=click.IntRange(2),
        default=None,
        help=f"Seats per table, as the profile allows ({MIN_TABLE_SIZE}-{MAX_TABLE_SIZE} in Nap; "
        f"default: {default}).",
    )


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A table on a terminal; in a pipe or a log, tab-separated lines (headers first) that nothing cuts."""
    if not console.is_terminal:
        for cells in (headers, *rows):
            click.echo("\t".join(cells))
        return
    table = Table(*headers)
    for cells in rows:
        table.add_row(*cells)
    console.print(table)


def field_default(cls: type[DataclassInstance], name: str) -> object:
    """The default of field ``name`` of dataclass ``cls``: an option's, read from the value it describes."""
    for found in dataclasses.fields(cls):
        if found.name != name:
            continue
        if found.default is not dataclasses.MISSING:
            return found.default
        if found.default_factory is not dataclasses.MISSING:
            return found.default_factory()
        break
    msg = f"{cls.__name__} has no field {name!r} with a default"
    raise LookupError(msg)


def bots_option(help_text: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``--bot``/``-b`` BOT, repeatable: entrants in :func:`~tournaments.play.entrants.resolve`'s forms.

    The help ends with the rule for what a name plays (:data:`~tournaments.play.entrants.WHICH_PLAYS`).
    """
    return click.option(
        "--bot", "-b", "bots", multiple=True, metavar="BOT", help=f"{help_text} Which plays: {WHICH_PLAYS}."
    )


def note(line: str) -> None:
    """A one-line note for the user, on stderr: stdout stays the command's output (its JSON too)."""
    click.echo(line, err=True)


workers_option = click.option(
    "--workers",
    "-w",
    type=click.IntRange(1),
    default=None,
    help=(
        "Processes that play blocks, each with its own referee and bot processes "
        "(default: one per two cores)."
    ),
)
decision_option = click.option(
    "--decision-ms",
    type=click.IntRange(1),
    default=TimeLimits().decision_ms,
    show_default=True,
    help="Time limit per decision, in milliseconds.",
)
connect_timeout_option = click.option(
    "--connect-timeout",
    type=click.FloatRange(0.1),
    default=field_default(TournamentConfig, "connect_timeout_s"),
    show_default=True,
    help="Seconds each bot process has to connect to the referee.",
)
bank_option = click.option(
    "--bank-ms",
    type=click.IntRange(0),
    default=TimeLimits().session_bank_ms,
    show_default=True,
    help="Time bank per seat and session, in ms, drawn on by decisions that run past --decision-ms.",
)
margin_option = click.option(
    "--margin-ms",
    type=click.IntRange(0),
    default=TimeLimits().margin_ms,
    show_default=True,
    help="Tolerance past each deadline, in ms, before a decision is late; bots are not told of it.",
)
backstop_option = click.option(
    "--backstop-ms",
    type=click.IntRange(0),
    default=TimeLimits().backstop_ms,
    show_default=True,
    help="Wall-clock limit of a decision of a local bot, which is clocked in its own CPU, in ms "
    "(0: ten times --decision-ms, at least 10 s); it ends a bot that sleeps or hangs.",
)


out_option = click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_OUT,
    show_default=True,
    help="Output folder: each tournament's standings.md/.json/.html, sessions list and bot output "
    "in t<ID>/, and latest, a link to the newest.",
)


SEED_VARIABLE = "NAP_SEED"
"""The environment variable that gives ``--seed`` when the command line does not (a test suite's)."""

seed_option = click.option(
    "--seed",
    type=click.IntRange(0, 2**63 - 1),
    default=None,
    envvar=SEED_VARIABLE,
    help="The seed of every deal, for a run that anyone can reproduce; anyone who knows the seed knows "
    f"every card (also ${SEED_VARIABLE}). Default: a secret random seed, stored (a resume deals the same) "
    "and shown once finished.",
)


def secret_seed() -> int:
    """A fresh random seed in ``[0, 2**63)``, from the system's secure source: no bot can guess the deals."""
    return secrets.randbits(63)


def build_sandbox(mode: str, limits: BotLimits, *, hidden: tuple[Path, ...]) -> Sandbox | None:
    """The sandbox a build runs in under ``--sandbox mode`` (None: none); ``hidden`` stays out of sight."""
    return sandbox_for(mode, SandboxSpec(limits=limits, hidden=hidden))


def isolation_options(command: Callable[..., R]) -> Callable[..., R]:
    """``--sandbox`` and the bot limits, handed to ``command`` as ``sandbox`` and ``bot_limits``."""

    @functools.wraps(command)
    def wrapper(*args: object, bot_memory: int, bot_processes: int, bot_files: int, **kwargs: object) -> R:
        limits = BotLimits(memory_mb=bot_memory, processes=bot_processes, open_files=bot_files)
        return command(*args, bot_limits=limits, **kwargs)

    default = BotLimits()
    options = (
        click.option(
            "--sandbox",
            type=click.Choice(SANDBOX_MODES),
            default="auto",
            show_default=True,
            help="Run each bot process isolated with bubblewrap: no network, no other process, nothing "
            "of nap's but its own folder (docs/security.md). auto: where bwrap works, else with a warning.",
        ),
        click.option(
            "--bot-memory",
            type=click.IntRange(64),
            default=default.memory_mb,
            show_default=True,
            metavar="MIB",
            help="Memory each isolated bot process may allocate, in MiB.",
        ),
        click.option(
            "--bot-processes",
            type=click.IntRange(8),
            default=default.processes,
            show_default=True,
            help="Processes and threads each isolated bot process may run at once.",
        ),
        click.option(
            "--bot-files",
            type=click.IntRange(32),
            default=default.open_files,
            show_default=True,
            help="Files each isolated bot process may hold open.",
        ),
    )
    decorated: Callable[..., R] = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated


def open_browser(url: str) -> bool:
    """Open ``url`` in a graphical browser; False where there is none to open.

    On Linux without a display (an ssh session, a container) Python's ``webbrowser``
    would fall back to a text browser in this very terminal, which would hold it until
    closed: there, only the browser that ``$BROWSER`` names is tried.
    """
    graphical = sys.platform != "linux" or any(
        os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")
    )
    try:
        return graphical and webbrowser.open(url)
    except webbrowser.Error:
        return False
