"""Re-verifying session logs: replay each log's record through the rules engine.

A log passes when its record replays (every action legal, every deal dealt as recorded),
the replay ends with the balances and winners the record claims, and the database holds
the same result for the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from referee.match.faults import Fault
from referee.rules import RecordError, SessionRecord, verify
from tournaments.errors import LogError
from tournaments.report.session_text import bot_names
from tournaments.store.logs import decode_log

if TYPE_CHECKING:
    from tournaments.results import SessionResult
    from tournaments.store.database import SessionRow


def load_record(payload: dict[str, Any]) -> SessionRecord:
    """The session record inside a log payload (RecordError when it is not one)."""
    record = payload.get("record")
    if not isinstance(record, dict):
        msg = "the log holds no session record"
        raise RecordError(msg)
    return SessionRecord.from_json(record)


@dataclass(frozen=True, slots=True)
class SessionLog:
    """A session log read back: its record, the bot at each seat, the decisions per deal, its faults."""

    record: SessionRecord
    bots: list[str]
    decisions: list[list[dict[str, Any]]] | None
    payload: dict[str, Any]
    faults: tuple[Fault, ...] = ()


def open_log(data: bytes, *, name: str) -> SessionLog:
    """Read a log (its bytes, as the store keeps them) and its record; LogError / RecordError when it cannot.

    ``name`` says which log in the error's one line.
    """
    payload = decode_log(data, name=name)
    record = load_record(payload)
    bots = payload.get("bots")
    names = (
        bot_names(bots, record.table_size)
        if isinstance(bots, list)
        else [f"seat {seat}" for seat in range(record.table_size)]
    )
    decisions = payload.get("decisions")
    return SessionLog(
        record,
        names,
        decisions if isinstance(decisions, list) else None,
        payload,
        _faults(payload, name=name),
    )


def _faults(payload: dict[str, Any], *, name: str) -> tuple[Fault, ...]:
    """The log's faults (none when it has no ``faults``); LogError when one cannot be read."""
    faults = payload.get("faults") or []
    if not isinstance(faults, list):
        msg = f"{name} is not a valid session log: its faults are no list"
        raise LogError(msg)
    try:
        return tuple(Fault.from_json(fault) for fault in faults)
    except ValueError as exc:
        msg = f"{name} is not a valid session log: {exc}"
        raise LogError(msg) from exc


def audit_session(row: SessionRow, result: SessionResult | None, log: bytes) -> list[str]:
    """Every mismatch between a session's log, its replay and the database (empty: all agree)."""
    try:
        payload = decode_log(log, name=f"the log of session {row.id}")
        record = load_record(payload)
    except (LogError, RecordError) as exc:
        return [str(exc)]
    problems = verify(record)
    key = (payload.get("tournament"), payload.get("block"), payload.get("rotation"))
    if key != (row.tournament, row.block, row.rotation):
        problems.append(f"log is for {key}, database row for {(row.tournament, row.block, row.rotation)}")
    if result is not None:
        stored = tuple(seat.chips for seat in result.seats)
        if stored != record.balances:
            problems.append(f"database chips {stored}, log balances {record.balances}")
        bots = tuple(seat.bot for seat in result.seats)
        if bots != row.bots:
            problems.append(f"database bots {bots}, session row bots {row.bots}")
    return problems
