"""``nap match``: whether the candidate beats its baseline, over duplicate blocks, with an optional SPRT."""

from __future__ import annotations

import functools
import json
from enum import IntEnum
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from referee.match import TimeLimits
from tournaments.cli.app import (
    DEFAULT_TABLE_SIZE,
    backstop_option,
    bank_option,
    build_sandbox,
    connect_timeout_option,
    console,
    db_option,
    decision_option,
    field_default,
    friendly,
    isolation_options,
    margin_option,
    note,
    out_option,
    profile_option,
    secret_seed,
    seed_option,
    table_size_option,
    workers_option,
)
from tournaments.cli.progress import ConsoleObserver, tournament_progress
from tournaments.errors import RunnerError, mapped
from tournaments.plan.candidate_match import MatchPlan, MatchSummary, summarize
from tournaments.plan.config import TournamentConfig
from tournaments.plan.scheduler import check_table_size
from tournaments.play.entrants import resolve, resolve_all
from tournaments.play.runner import RunOptions, run_tournament
from tournaments.report.outfolder import logs_root
from tournaments.report.publish import match_lines
from tournaments.report.standings_files import StandingsWriter
from tournaments.stats.sprt import Sprt
from tournaments.store.database import Store
from tournaments.words import count

if TYPE_CHECKING:
    from pathlib import Path

    from referee.rules import Profile
    from tournaments.plan.entries import BotEntry
    from tournaments.plan.isolation import BotLimits
    from tournaments.play.observers import RunStart

FIXED_SESSIONS = 200
"""Sessions a match plays without ``--sprt``."""

SPRT_MAX_SESSIONS = 20_000
"""The most sessions a match with ``--sprt`` may play before it gives up undecided."""

MATCH_CONCURRENCY = 4
"""Blocks in flight on each worker: enough to keep a slow candidate busy, and few to
finish for nothing once the test has decided (a tournament's default,
:data:`~tournaments.plan.config.DEFAULT_CONCURRENCY`, is far more)."""


class MatchExit(IntEnum):
    """``nap match``'s exit status, for a CI script: the verdict of ``--sprt``.

    Not 1 (any error, :func:`~tournaments.cli.app.friendly`) nor 2 (click's bad usage),
    so that a typo never reads as a verdict.
    """

    BETTER = 0
    """The test accepted H1; also any match without ``--sprt`` (its interval is the result)."""
    NOT_BETTER = 3
    """The test accepted H0."""
    UNDECIDED = 4
    """The match played its ``--sessions`` and neither bound was reached."""


def exit_status(summary: MatchSummary) -> MatchExit:
    """The exit status of a match that ended as ``summary`` says."""
    state = summary.state
    if state is None or state.verdict == "H1":
        return MatchExit.BETTER
    return MatchExit.NOT_BETTER if state.verdict == "H0" else MatchExit.UNDECIDED


@click.command("match")
@click.argument("candidate")
@click.argument("baseline", required=False)
@click.option(
    "--against",
    "-a",
    "pool",
    multiple=True,
    metavar="BOT",
    help="An opponent, instead of BASELINE's copies; repeat for a pool (ALIAS=BOT enters a bot again). "
    "Each block seats the candidate with table-size - 1 of them.",
)
@click.option(
    "--sprt",
    nargs=2,
    type=float,
    default=None,
    metavar="D0 D1",
    help="Stop as soon as a sequential test decides between an edge of D0 (H0) and of D1 (H1), "
    "in chips per session over the average opponent (e.g. --sprt 0 3).",
)
@click.option(
    "--alpha",
    type=float,
    default=field_default(Sprt, "alpha"),
    show_default=True,
    help="With --sprt: chance of accepting H1 under H0.",
)
@click.option(
    "--beta",
    type=float,
    default=field_default(Sprt, "beta"),
    show_default=True,
    help="With --sprt: chance of accepting H0 under H1.",
)
@click.option(
    "--min-blocks",
    type=click.IntRange(2),
    default=field_default(Sprt, "min_blocks"),
    show_default=True,
    help="With --sprt: blocks read before the test's first look.",
)
@table_size_option(str(DEFAULT_TABLE_SIZE))
@click.option(
    "--sessions",
    "-n",
    type=click.IntRange(1),
    default=None,
    help=f"Sessions to play, rounded up to whole blocks (default: {FIXED_SESSIONS}); with --sprt, "
    f"the most to play (default: {SPRT_MAX_SESSIONS}).",
)
@seed_option
@profile_option
@click.option(
    "--concurrency",
    "-j",
    type=click.IntRange(1),
    default=MATCH_CONCURRENCY,
    show_default=True,
    help="Blocks in flight at once on each worker.",
)
@workers_option
@decision_option
@bank_option
@margin_option
@backstop_option
@connect_timeout_option
@isolation_options
@click.option("--name", default=None, help="A name for the match.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the result as JSON on stdout (progress goes to stderr)."
)
@db_option
@out_option
@friendly
def match_command(  # noqa: PLR0913, PLR0917 - one parameter per command-line option
    candidate: str,
    baseline: str | None,
    pool: tuple[str, ...],
    sprt: tuple[float, float] | None,
    alpha: float,
    beta: float,
    min_blocks: int,
    table_size: int | None,
    sessions: int | None,
    seed: int | None,
    profile: Profile,
    concurrency: int,
    workers: int | None,
    decision_ms: int,
    bank_ms: int,
    margin_ms: int,
    backstop_ms: int,
    connect_timeout: float,
    sandbox: str,
    bot_limits: BotLimits,
    name: str | None,
    as_json: bool,  # noqa: FBT001 - a click flag
    db_path: Path,
    out: Path,
) -> None:
    """Play CANDIDATE against copies of BASELINE (or a pool, --against) and say whether it is better.

    CANDIDATE, BASELINE and each --against BOT are entrants as for 'nap tournament run':
    NAME plays the built-in or submitted bot of that name, a path (./mybot) a bot folder.

    Every duplicate block seats the candidate with table-size - 1 opponents, rotated so
    that each holds every hand; each block gives one number, the candidate's edge: its
    chips per session minus the average opponent's. Printed: the edge with its 95%
    interval, the likelihood of superiority, blocks and sessions, and with --sprt the
    test's verdict (docs/statistics.md says how to choose D0 and D1). An interrupted match
    resumes with `nap tournament resume ID`, and stops where it would have.

    Exit status, for CI: 0 when the test accepts H1 (better), and without --sprt; 3 when it
    accepts H0; 4 when --sessions ran out with neither; 1 on an error, 2 on bad usage.
    """
    if (baseline is None) == (not pool):
        msg = "give a BASELINE, or an opponent pool with --against (not both)"
        raise click.UsageError(msg)
    with mapped(ValueError):  # the test's parameters, as given
        test = (
            None
            if sprt is None
            else Sprt(d0=sprt[0], d1=sprt[1], alpha=alpha, beta=beta, min_blocks=min_blocks)
        )
    size = _table_size(table_size, profile)
    builds = build_sandbox(sandbox, bot_limits, hidden=(db_path, out))
    with Store.open(db_path) as store:
        entry = resolve(candidate, store=store, sandbox=builds, say=note)
        opponents = (
            resolve_all(pool, store=store, sandbox=builds, say=note)
            if pool
            else _copies(
                resolve(str(baseline), store=store, sandbox=builds, say=note), size - 1, taken=entry.name
            )
        )
        if entry.name in {opponent.name for opponent in opponents}:
            msg = f"the candidate and an opponent are both named {entry.name}; enter one as ALIAS=BOT"
            raise RunnerError(msg)
        if len(opponents) < size - 1:
            msg = f"{len(opponents)} opponents cannot fill a table of {size}; add --against or lower -k"
            raise RunnerError(msg)
        against = baseline if baseline is not None else ", ".join(o.name for o in opponents)
        config = TournamentConfig(
            name=name or _name(entry.name, str(against), profile, size, test),
            bots=(entry, *opponents),
            table_size=size,
            sessions=sessions or (SPRT_MAX_SESSIONS if test else FIXED_SESSIONS),
            seed=secret_seed() if seed is None else seed,
            profile=profile,
            concurrency=concurrency,
            time_limits=TimeLimits(
                decision_ms=decision_ms, session_bank_ms=bank_ms, margin_ms=margin_ms, backstop_ms=backstop_ms
            ),
            connect_timeout_s=connect_timeout,
            workers=workers,
            match=MatchPlan(candidate=entry.name, sprt=test),
            sandbox=sandbox,
            bot_limits=bot_limits,
        )
        screen = Console(stderr=True) if as_json else console
        files = StandingsWriter(store=store, out=out)
        with tournament_progress(screen) as progress:
            display = ConsoleObserver(progress, announce=functools.partial(_start_line, test=test))
            tournament = run_tournament(
                config,
                store=store,
                logs_root=logs_root(out),
                options=RunOptions(observers=(display, files)),
            )
        summary = summarize(store.session_results(tournament), MatchPlan(candidate=entry.name, sprt=test))
        paths = files.written
    if as_json:
        data: dict[str, Any] = {
            "tournament": tournament,
            **summary.to_json(),
            "files": [str(p) for p in paths],
        }
        click.echo(json.dumps(data, indent=2, sort_keys=True))
    else:
        console.print(f"match {tournament}: {config.name}", markup=False, highlight=False, soft_wrap=True)
        for line in match_lines(summary):
            console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
        console.print(f"written to {', '.join(str(p) for p in paths)}", markup=False, soft_wrap=True)
    status = exit_status(summary)
    if status is not MatchExit.BETTER:
        raise SystemExit(status)


def _table_size(table_size: int | None, rules: Profile) -> int:
    """The table size asked for, or :data:`DEFAULT_TABLE_SIZE` within what the profile allows."""
    size = table_size or max(rules.min_players, min(DEFAULT_TABLE_SIZE, rules.max_players))
    with mapped(ValueError):
        check_table_size(size, rules)
    return size


def _copies(baseline: BotEntry, count: int, *, taken: str) -> tuple[BotEntry, ...]:
    """``count`` copies of ``baseline``, named ``peel``, ``peel-2``, ... (never ``taken``)."""
    names = [baseline.name, *(f"{baseline.name}-{i}" for i in range(2, count + 2))]
    return tuple(baseline.renamed(name) for name in names if name != taken)[:count]


def _name(candidate: str, against: str, rules: Profile, size: int, test: Sprt | None) -> str:
    sprt = "" if test is None else f", SPRT [{test.d0:g}, {test.d1:g}]"
    return f"{candidate} vs {against} ({rules.name}, {size} seats{sprt})"


def _start_line(start: RunStart, *, test: Sprt | None) -> str:
    """The match's id and what is left to play (at most, with a test), with the command that resumes it."""
    left = start.progress.sessions - start.progress.recorded
    most = "at most " if test is not None else ""
    sessions = count(left, "session")
    return f"match {start.tournament}: {start.name}, {most}{sessions} (if it stops: {start.resume})"
