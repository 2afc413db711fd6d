"""A fault is one value: the match core's, a session result's, a log's and a store row's.

:class:`referee.match.faults.Fault` is written and read by its own methods (JSON for the
log, a row for the store, both in the order of :data:`FAULT_FIELDS`); what is none is
None, and the -1 that older logs and rows wrote for it reads back as None.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest

from referee.match import Answer, Ask, Garble, Reaction, Simulation, TimeLimits
from referee.match.faults import FAULT_FIELDS, Fault, FaultKind
from referee.rules import PROFILES
from tournaments.play.blocks import BlockRun, finish_session
from tournaments.store.database import Store

if TYPE_CHECKING:
    from pathlib import Path

EVERY = [
    Fault(
        kind=kind,
        bot="peel",
        table=table,
        seat=place,
        deal=place,
        decision=place,
        elapsed_ms=elapsed_ms,
        detail="détail ✓",
    )
    for kind in FaultKind
    for table, place, elapsed_ms in (("0f1e2d3c4b5a6978", 3, 812.5), ("", 0, 0.0), (None, None, None))
]
"""A fault of every kind with each field set, zero or none."""


@pytest.mark.parametrize("fault", EVERY, ids=lambda fault: f"{fault.kind}-{fault.seat}")
def test_a_fault_reads_back_from_its_json_and_its_row(fault: Fault) -> None:
    assert Fault.from_json(json.loads(json.dumps(fault.to_json()))) == fault
    assert Fault.from_row(fault.to_row()) == fault


def test_the_json_keys_and_the_stores_columns_are_the_fields_in_order(tmp_path: Path) -> None:
    assert FAULT_FIELDS == ("kind", "bot", "table", "seat", "deal", "decision", "elapsed_ms", "detail")
    assert tuple(EVERY[0].to_json()) == FAULT_FIELDS
    Store.open(tmp_path / "nap.db").close()
    with closing(sqlite3.connect(tmp_path / "nap.db")) as conn:
        columns = tuple(row[1] for row in conn.execute("PRAGMA table_info(faults)"))
    assert columns == ("id", "session_id", *FAULT_FIELDS)


def test_an_older_log_reads_with_none_for_its_minus_ones() -> None:
    """Logs written before a fault was one value: -1 for no decision, no table, a number always."""
    older = {"kind": "disconnect", "bot": "peel", "seat": 2, "deal": 4, "decision": -1, "elapsed_ms": 0.0,
             "detail": "connection lost"}  # fmt: skip
    assert Fault.from_json(older) == Fault(
        kind=FaultKind.DISCONNECT,
        bot="peel",
        table=None,
        seat=2,
        deal=4,
        decision=None,
        elapsed_ms=0.0,
        detail="connection lost",
    )


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("late", "a fault is an object, not str"),
        ({"kind": "crash", "bot": "peel"}, "unknown fault kind 'crash'"),
        ({"kind": ["late"], "bot": "peel"}, "unknown fault kind ['late']"),
        ({"kind": "late", "bot": 7}, "a fault's bot, table and detail are text"),
        ({"kind": "late", "bot": "peel", "deal": -2}, "a fault's deal is a count from 0, not -2"),
        ({"kind": "late", "bot": "peel", "seat": True}, "a fault's seat is a count from 0, not True"),
        ({"kind": "late", "bot": "peel", "elapsed_ms": "9"}, "a fault's elapsed_ms is a number"),
    ],
)
def test_what_is_no_fault_is_a_value_error_that_says_why(data: object, says: str) -> None:
    with pytest.raises(ValueError, match="^" + says.replace("[", r"\[").replace("]", r"\]")):
        Fault.from_json(data)


def steady(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
    """A bot that answers its first legal action at once."""
    del deadline_ms, now
    return [Answer(ask.request_id, str(ask.view.legal_actions[0]), 1.0)]


def garbler(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
    """A bot whose answer is bytes that are no message: a fault of its connection."""
    del ask, deadline_ms, now
    return [Garble(after_ms=1.0)]


def test_a_sessions_log_holds_its_results_faults_a_connection_fault_at_its_bots_seat() -> None:
    """The result holds the referee's faults, a connection's at its bot's seat; the log holds the same."""
    spec = BlockRun(
        tournament=1,
        index=0,
        board_seed=11,
        bots=("first", "garbler", "third"),
        profile=PROFILES["heather"],
        time_limits=TimeLimits(1000, 0),
        rotations=(0,),
    )
    simulation = Simulation(fault_limit=3, reconnect_grace_ms=0.0)
    for name in ("first", "third"):
        simulation.add_bot(name, steady)
    simulation.add_bot("garbler", garbler)
    [outcome] = simulation.play(spec.session(0))
    connection = [fault for fault in outcome.faults if fault.seat is None]
    assert connection, "the garbled message is a fault of the connection, at no seat"
    finished = finish_session(spec, 0, outcome)
    faults = finished.result.faults
    assert [fault.kind for fault in faults] == [fault.kind for fault in outcome.faults]
    assert all(fault.seat == 1 and fault.table == spec.table(0) for fault in faults if fault.bot == "garbler")
    assert finished.log["faults"] == [fault.to_json() for fault in faults]
    assert [Fault.from_json(fault) for fault in json.loads(json.dumps(finished.log["faults"]))] == list(
        faults
    )
    assert [seat.faults for seat in finished.result.seats] == [0, len(faults), 0]
