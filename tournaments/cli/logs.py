"""``nap log``: find, read, verify and replay per-session logs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click
from rich.table import Table

from referee.match import FaultKind
from tournaments.cli.app import (
    console,
    db_option,
    echo_json,
    friendly,
    json_option,
    open_store,
    out_option,
)
from tournaments.errors import ArenaError, MissingLogError, StoreError, writing
from tournaments.play.botlogs import bot_output
from tournaments.report.audit import audit_session, open_log
from tournaments.report.outfolder import tournament_folder
from tournaments.report.replay_page import render_replay_html, write_replay
from tournaments.report.session_pages import fault_place
from tournaments.report.session_text import render_session
from tournaments.store.logs import write_encoded_log
from tournaments.words import count

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from referee.match.faults import Fault
    from tournaments.report.audit import SessionLog
    from tournaments.store.database import SessionRow, Store


@click.group()
def log() -> None:
    """Find, read, verify and replay per-session logs."""


def _filtered(command: Callable[..., None]) -> Callable[..., None]:
    """The options that choose sessions, shared by ``list`` and ``export``."""
    for option in reversed(
        (
            click.option("--tournament", "-t", type=int, help="Only this tournament."),
            click.option("--bot", "-b", help="Only sessions this bot played."),
            click.option(
                "--fault",
                "fault_kind",
                type=click.Choice([kind.value for kind in FaultKind]),
                help="Only sessions with a fault of this kind (made by --bot when given).",
            ),
            click.option(
                "--result", type=click.Choice(["win", "loss"]), help="Only sessions --bot won / did not win."
            ),
        )
    ):
        command = option(command)
    return command


@log.command("list")
@db_option
@_filtered
@click.option(
    "--limit", type=click.IntRange(0), default=50, show_default=True, help="At most this many rows (0: all)."
)
@click.option(
    "--offset", type=click.IntRange(0), default=0, help="Skip this many rows first (the next page)."
)
@json_option
@friendly
def log_list(  # noqa: PLR0913, PLR0917 - one parameter per command-line option
    db_path: Path,
    tournament: int | None,
    bot: str | None,
    fault_kind: str | None,
    result: Literal["win", "loss"] | None,
    limit: int,
    offset: int,
    as_json: bool,  # noqa: FBT001 - a click flag
) -> None:
    """List sessions, filtered: e.g. every session where your bot timed out (--bot X --fault late).

    One page at a time (--limit, --offset): a page comes as fast from a million sessions
    as from a hundred.
    """
    with open_store(db_path) as store:
        rows = store.find_sessions(
            tournament=tournament,
            bot=bot,
            fault_kind=fault_kind,
            result=result,
            limit=None if limit == 0 else limit + 1,  # one more says whether another page follows
            offset=offset,
        )
    more = limit != 0 and len(rows) > limit
    shown = rows[:limit] if more else rows
    if as_json:
        sessions = [
            {
                "id": row.id,
                "tournament": row.tournament,
                "block": row.block,
                "rotation": row.rotation,
                "board_seed": row.board_seed,
                "bots": list(row.bots),
                "finished_at": row.finished_at,
            }
            for row in shown
        ]
        echo_json({"format": "nap-arena-sessions/2", "offset": offset, "more": more, "sessions": sessions})
        return
    if not shown:
        console.print("no session matches" + (f" past the first {offset}" if offset else ""), markup=False)
        return
    table = Table("session", "tournament", "block", "rotation", "bots by seat", "finished (UTC)")
    for row in shown:
        table.add_row(
            str(row.id),
            str(row.tournament),
            str(row.block),
            str(row.rotation),
            " ".join(row.bots),
            row.finished_at[:19].replace("T", " "),
        )
    console.print(table)
    following = f"; more match: --offset {offset + len(shown)} shows the next page" if more else ""
    console.print(
        f"sessions {offset + 1}-{offset + len(shown)} of those matching{following}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


@log.command("show")
@click.argument("session_id", type=int)
@db_option
@out_option
@click.option("--seat", type=int, default=None, help="Show only what this seat saw (its own hand).")
@friendly
def log_show(session_id: int, db_path: Path, out: Path, seat: int | None) -> None:
    """Print a session's deals readably: hands, bids, each trick and its winner, the settlement.

    A bot that died is shown with its last output lines, from --out's bot logs.
    """
    with open_store(db_path) as store:
        row = store.session(session_id)
        session_log = open_log(store.log(session_id), name=f"the log of session {session_id}")
    size = session_log.record.table_size
    if seat is not None and not 0 <= seat < size:
        msg = f"--seat must be 0 to {size - 1} at a table of {size}, not {seat}"
        raise ArenaError(msg)
    text = render_session(
        session_log.record, bots=session_log.bots, seat=seat, decisions=session_log.decisions
    )
    click.echo(text)
    for line in fault_lines(session_log, tournament_folder(out, row.tournament) / "bots"):
        click.echo(line)


def fault_lines(session_log: SessionLog, bots_folder: Path) -> list[str]:
    """The session's faults, each at its deal and decision; for a bot that died, its exit and last lines.

    Empty when the session had no fault. Exit statuses and output come from the bot logs
    in ``bots_folder`` (the tournament's, so they may tell of other sessions too).
    """
    faults = session_log.faults
    if not faults:
        return []
    lines = ["", f"Faults ({len(faults)}):"]
    for fault in faults:
        took = "" if fault.elapsed_ms is None else f" after {fault.elapsed_ms:.1f} ms"
        played = _played(session_log.decisions, fault)
        seat = "" if fault.seat is None else f"seat {fault.seat} "
        lines.append(
            f"  {fault_place(fault)}: {seat}({fault.bot}) {fault.kind}{took}: {fault.detail}"
            + ("" if played is None else f"; played: {played}")
        )
    for bot in sorted({fault.bot for fault in faults if fault.kind is FaultKind.DISCONNECT}):
        said = bot_output([bots_folder], bot)
        if not said.files:
            continue
        exits = ", ".join(map(str, said.exits)) or "(none recorded)"
        lines.append(
            f"  {bot}: its process exited with status {exits} in this tournament; "
            f"its last output lines ({', '.join(map(str, said.files))}):"
        )
        lines += [f"    | {line}" for line in said.last_lines]
    return lines


def _played(decisions: Sequence[Sequence[Mapping[str, Any]]] | None, fault: Fault) -> str | None:
    """The action the log records at the fault's decision (what stood in for the faulty answer)."""
    deal, decision = fault.deal, fault.decision
    if decisions is None or deal is None or decision is None:
        return None
    if not deal < len(decisions) or not decision < len(decisions[deal]):
        return None
    action = decisions[deal][decision].get("action")
    return None if action is None else str(action)


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
        session_log = open_log(store.log(session_id), name=f"the log of session {session_id}")
    title = f"Session {session_id}: tournament {row.tournament}, block {row.block}, rotation {row.rotation}"
    page = render_replay_html(
        session_log.record,
        bots=session_log.bots,
        title=title,
        decisions=session_log.decisions,
        faults=session_log.faults,
    )
    path = output or Path(f"session-{session_id}.html")
    with writing(path):
        write_replay(path, page)
    console.print(f"wrote {path} (open it in a browser; no network needed)")


@log.command("verify")
@click.argument("session_ids", type=int, nargs=-1)
@db_option
@click.option("--tournament", "-t", type=int, help="Verify every session of this tournament.")
@friendly
def log_verify(session_ids: tuple[int, ...], db_path: Path, tournament: int | None) -> None:
    """Replay logs through the rules engine and report any mismatch (default: every session)."""
    bad = checked = 0
    with open_store(db_path) as store:
        ids = list(session_ids) or store.session_ids(tournament=tournament)
        for chunk in _pages(ids):
            rows = _known(store, chunk)
            results = store.results_of(chunk)
            for row in rows:
                checked += 1
                try:
                    problems = audit_session(row, results.get(row.id), store.log(row.id))
                except MissingLogError as exc:
                    problems = [str(exc)]
                bad += bool(problems)
                for problem in problems:
                    console.print(f"session {row.id}: {problem}", markup=False, highlight=False)
    console.print(f"verified {count(checked, 'session')}: {checked - bad} match, {bad} mismatch")
    if bad:
        raise SystemExit(1)


@log.command("export")
@click.argument("session_ids", type=int, nargs=-1)
@db_option
@_filtered
@click.option(
    "--to",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder to write the logs into, as t<TOURNAMENT>/b<BLOCK>-r<ROTATION>.json.gz.",
)
@friendly
def log_export(  # noqa: PLR0913, PLR0917 - one parameter per command-line option
    session_ids: tuple[int, ...],
    db_path: Path,
    tournament: int | None,
    bot: str | None,
    fault_kind: str | None,
    result: Literal["win", "loss"] | None,
    folder: Path,
) -> None:
    """Write session logs out as plain files (gzip JSON, docs/logs.md): the given ids, or every one matching.

    Each file is the log as stored, byte for byte; ``zcat`` or any gzip reader opens it.
    """
    written, missing = 0, 0
    with open_store(db_path) as store:
        ids = list(session_ids) or store.session_ids(
            tournament=tournament,
            bot=bot,
            fault_kind=fault_kind,
            result=result,
        )
        for chunk in _pages(ids):
            rows = _known(store, chunk)
            for row in rows:
                try:
                    data = store.log(row.id)
                except MissingLogError as exc:
                    click.echo(str(exc), err=True)
                    missing += 1
                    continue
                key = {"tournament": row.tournament, "block": row.block, "rotation": row.rotation}
                write_encoded_log(folder, **key, data=data)
                written += 1
    without = f"; {count(missing, 'session')} {'has' if missing == 1 else 'have'} no log (said above)"
    console.print(
        f"exported {count(written, 'session log')} to {folder}/{without if missing else ''}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    if missing:
        raise SystemExit(1)


def _known(store: Store, session_ids: Sequence[int]) -> list[SessionRow]:
    """The rows of these sessions, in order; StoreError at an unknown id."""
    rows = store.sessions_by_id(session_ids)
    missing = set(session_ids) - {row.id for row in rows}
    if missing:
        msg = f"unknown session: {min(missing)}"
        raise StoreError(msg)
    return rows


def _pages(ids: Sequence[int], size: int = 500) -> Iterator[Sequence[int]]:
    """``ids`` a page at a time, so that a million sessions never sit in memory at once."""
    for start in range(0, len(ids), size):
        yield ids[start : start + size]
