"""``nap bot``: scaffold, check, submit and list bots."""

from __future__ import annotations

from pathlib import Path

import click
from rich.progress import Progress
from rich.table import Table

from referee.rules import DEFAULT_PROFILE
from tournaments.bots import RunnerError
from tournaments.cli.app import console, db_option, friendly, main, open_store
from tournaments.entrants import build, entry_from_manifest
from tournaments.manifest import content_hash, read_manifest, scaffold
from tournaments.practice import CheckReport, check_bot
from tournaments.progress import progress_columns
from tournaments.store import Store


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
@click.option("--profile", "-p", default=DEFAULT_PROFILE.name, show_default=True)
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
    report = _check(folder, sessions=sessions, table_size=3, profile=DEFAULT_PROFILE.name, decision_ms=1000)
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
