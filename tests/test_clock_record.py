"""What a run records of its bots' clocks and containment, and how people read a decision's CPU.

Played in this process (tests/inprocess_helpers.py): nothing is started. A run whose bots
cannot be contained says so in one line and in the store, which the standings then say;
a remote bot is always on the wall clock; a decision's CPU appears beside its time in
``nap log show`` and the replay page's captions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from structlog.testing import capture_logs

from tests.inprocess_helpers import CONFIG, InProcess
from tournaments.plan.isolation import LOCAL_ON_THE_WALL
from tournaments.play import runner
from tournaments.play.host import remote_bot
from tournaments.play.runner import RunOptions, run_tournament, uncontained
from tournaments.report.provenance import isolation_record
from tournaments.report.publish import isolation_line
from tournaments.report.session_text import decision_note
from tournaments.store.database import Store, TournamentRow

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_a_run_that_cannot_contain_its_bots_says_so_and_the_standings_say_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "containment_problem", lambda: "no cgroup v1 pids controller here")
    with Store.open(tmp_path / "nap.db") as store, capture_logs() as said:
        run_tournament(CONFIG, store=store, logs_root=tmp_path, options=RunOptions(executor=InProcess()))
        row = store.tournament(1)
    warned = [log["event"] for log in said if log["log_level"] == "warning"]
    assert "bots not contained: no cgroup v1 pids controller here (docs/security.md)" in warned
    assert row.uncontained == (
        "bots not contained (no cgroup v1 pids controller here): each process has its own limits, "
        "their CPU read from /proc"
    )
    isolation = isolation_record(row)
    assert isolation["contained"] is False
    assert isolation["clocks"] == {"a": "cpu", "b": "cpu", "c": "cpu"}
    assert isolation_line(isolation)[1] == (
        f"Decisions clocked in their own CPU (a, b, c); not contained in every run: {row.uncontained} "
        "(docs/security.md)."
    )


def test_what_a_run_does_not_contain_or_clock_in_cpu() -> None:
    """Remote bots are on the wall clock; local ones too where neither cgroups nor /proc can be read."""
    local = CONFIG.bots[:2]
    assert uncontained(local, None, proc=True) is None
    assert uncontained((*local, remote_bot("c")), None, proc=True) == (
        "remote bots are not contained, and clocked on the wall: c"
    )
    nowhere = uncontained(local, "cgroups are Linux's, not darwin's", proc=False)
    assert nowhere == (
        "bots not contained (cgroups are Linux's, not darwin's): each process has its own limits, "
        + LOCAL_ON_THE_WALL
    )
    row = TournamentRow(
        1, "t", {"bots": [bot.to_json() for bot in local]}, 1, "finished", "", None, None, nowhere
    )
    assert isolation_record(row)["clocks"] == {"a": "wall", "b": "wall"}
    assert isolation_line(isolation_record(row))[1].startswith(
        "Decisions clocked on the wall (a, b); not contained"
    )


def test_a_decisions_cpu_is_shown_beside_its_time() -> None:
    assert (
        decision_note({"action": "QH", "seat": 1, "latency_ms": 812.4, "cpu_ms": 3.25})
        == " (812.4 ms, CPU 3.2 ms)"
    )
    assert decision_note({"action": "QH", "seat": 1, "latency_ms": 0.8}) == " (0.8 ms)"
