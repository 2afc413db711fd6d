"""A machine too busy for the clock: bots late together (or late on a loaded machine) are noticed, said in
one line at the end of a run (each late fault only with ``nap -v``), and kept with the standings."""

from __future__ import annotations

import json
import logging
import os
from typing import TYPE_CHECKING

import pytest
import structlog
from click.testing import CliRunner
from structlog.testing import LogCapture

from referee.match import Faulted
from referee.match.faults import Fault, FaultKind
from referee.server import Referee
from tests.test_store import log_of
from tournaments.cli import main
from tournaments.play.runner import machine_loaded
from tournaments.results import SeatResult, SessionResult
from tournaments.stats.load_check import ADVICE, LateFaults
from tournaments.store.database import Store

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

# Late once a table, at its first decision: two of these at one table are two bots late together.
SLOW_BOT = '''"""Sleeps past the deadline at its first decision of each table, then plays at once."""

import time

from clients.sdk import Bot, run


class Slow(Bot):
    started = False

    def decide(self, view):
        if not self.started:  # one instance per table and seat
            self.started = True
            time.sleep(1.0)
        return view.legal_actions[0]


if __name__ == "__main__":
    run(Slow, name="slow", version="1")
'''


def fault(kind: FaultKind, bot: str, elapsed_ms: float) -> Fault:
    """A fault of ``bot`` at seat 0's first decision."""
    return Fault(kind=kind, bot=bot, table="t", seat=0, deal=0, decision=0, elapsed_ms=elapsed_ms, detail="")


def session(rotation: int, late: list[str], other: Sequence[tuple[str, str]] = ()) -> SessionResult:
    """Bots a, b, c; a late fault per bot in ``late``, a ``kind`` fault per ``(kind, bot)`` in ``other``."""
    faults = [fault(FaultKind.LATE, bot, 900.0) for bot in late]
    faults += [fault(FaultKind(kind), bot, 1.0) for kind, bot in other]
    return SessionResult(
        tournament=1,
        block=0,
        rotation=rotation,
        board_seed=7,
        seats=tuple(SeatResult(seat=i, bot=bot, chips=0, win_share=1 / 3) for i, bot in enumerate("abc")),
        faults=tuple(faults),
    )


class TestLateFaults:
    def test_one_slow_bot_is_the_bots_own_business(self) -> None:
        """However often one bot is late, the machine is not blamed."""
        late = LateFaults.of([session(r, ["a", "a"]) for r in range(3)])
        assert late.by_bot == {"a": 6}
        assert not late.busy
        assert late.warning() is None

    def test_two_bots_late_in_one_session_is_the_machine(self) -> None:
        late = LateFaults()
        assert not late.add(session(0, ["a"]))
        assert not late.add(session(1, ["b"], [("illegal", "c")]))
        assert late.add(session(2, ["a", "b"])), "the first busy session is said"
        assert not late.add(session(0, ["a", "c"])), "and only the first"
        assert late.together == 2
        assert late.total == 6
        warning = late.warning(load="load 6.0 on 2 cores")
        assert warning is not None
        assert "load 6.0 on 2 cores" in warning
        assert "a 3, b 2, c 1" in warning
        assert warning.endswith(ADVICE)

    def test_a_small_run_on_a_loaded_machine_is_the_machine(self) -> None:
        """No session with two bots late but a bot late while the load exceeded the cores."""
        late = LateFaults()
        assert not late.add(session(0, ["a"]))
        assert late.add(session(1, ["b"]), loaded=True)
        assert (late.together, late.loaded) == (0, 1)
        warning = late.warning(load="load 8.1 on 2 cores")
        assert warning == (
            "the machine may be too busy for the clock (load 8.1 on 2 cores): 2 late faults (a 1, b 1), "
            "1 fault while its load exceeded its cores; the referee played those decisions, so the "
            f"standings measure the load as well as the bots: {ADVICE}"
        )

    def test_a_run_ends_with_one_line_on_its_late_faults(self) -> None:
        """None without late faults; their count per bot; the warning when they point at the machine."""
        late = LateFaults()
        late.add(session(0, [], [("illegal", "c")]))
        assert late.summary() is None
        late.add(session(1, ["a", "a"]))
        assert late.summary() == (
            "2 late faults (a 2): the referee played those decisions by its fault policy "
            "(nap -v prints each one)"
        )
        late.add(session(2, ["a", "b"]))
        summary = late.summary(load="load 3.0 on 2 cores")
        assert summary == f"{late.warning(load='load 3.0 on 2 cores')} (nap -v prints each one)"
        assert "two or more bots late in 1 session;" in summary

    def test_the_machine_is_loaded_when_its_load_exceeds_its_cores(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(os, "cpu_count", lambda: 2)
        monkeypatch.setattr(os, "getloadavg", lambda: (2.5, 1.0, 1.0))
        assert machine_loaded()
        monkeypatch.setattr(os, "getloadavg", lambda: (2.0, 1.0, 1.0))
        assert not machine_loaded()

    def test_the_referee_logs_a_late_fault_at_info_and_any_other_as_a_warning(self) -> None:
        """A busy machine's late faults are for ``nap -v``; a bot's own faults stay warnings."""
        capture = LogCapture()
        logger = structlog.wrap_logger(
            structlog.ReturnLogger(),
            processors=[structlog.processors.add_log_level, capture],
            wrapper_class=structlog.make_filtering_bound_logger(logging.NOTSET),  # whatever a run configured
        )
        referee = Referee(logger=logger)
        referee.add_bot(name="a", token="t")  # noqa: S106 - a test's token
        late, illegal = fault(FaultKind.LATE, "a", 900.0), fault(FaultKind.ILLEGAL, "a", 1.0)
        referee.carry_out([Faulted(late, count=1, limit=10), Faulted(illegal, count=2, limit=10)])
        assert [(log["event"], log["kind"], log["log_level"]) for log in capture.entries] == [
            ("fault", "late", "info"),
            ("fault", "illegal", "warning"),
        ]

    def test_the_json_reads_back(self) -> None:
        late = LateFaults.of([session(0, ["a", "b"]), session(1, ["a"])])
        data = late.to_json()
        assert data["busy"] is True
        assert data["warning"] == late.warning()
        again = LateFaults.from_json(json.loads(json.dumps(data)))
        assert (again.by_bot, again.together) == (late.by_bot, late.together)

    def test_the_store_counts_as_the_sessions_do(self, tmp_path: Path) -> None:
        results = [
            session(0, ["a", "b"]),
            session(1, ["a"], [("late", "c"), ("illegal", "b")]),
            session(2, []),
        ]
        with Store.open(tmp_path / "nap.db") as store:
            tournament = store.create_tournament(
                name="t", config={}, seed=1, blocks=[(0, 7, ("a", "b", "c"))]
            )
            for result in results:
                store.record_session(result, log=log_of(result))
            stored = store.late_faults(tournament)
        expected = LateFaults.of(results)
        assert (
            (stored.by_bot, stored.together)
            == (expected.by_bot, expected.together)
            == ({"a": 2, "b": 1, "c": 1}, 2)
        )


@pytest.mark.slow
def test_a_run_with_bots_late_together_warns_and_the_standings_say_so(tmp_path: Path) -> None:
    """Two bots late at every table: the run warns with what to do, and the standings files carry it."""
    folder = tmp_path / "slow"
    folder.mkdir()
    folder.chmod(0o755)  # a sandbox run by root starts bots as another user
    (folder / "bot.py").write_text(SLOW_BOT, encoding="utf-8")
    (folder / "nap-bot.toml").write_text(
        'name = "slow"\nversion = "1"\ncommand = ["{python}", "bot.py"]\n', encoding="utf-8"
    )
    out = tmp_path / "out"
    # a sleep spends no CPU: the wall clock's backstop makes it late
    args = [
        "tournament", "run", "-b", str(folder), "-b", "s2=" + str(folder), "-b", "random", "-n", "3",
        "--decision-ms", "100", "--backstop-ms", "500", "--db", str(tmp_path / "nap.db"), "--out", str(out),
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    said = [line for line in result.output.splitlines() if "late fault" in line]
    assert len(said) == 1, "one line on the late faults, at the end of the run, and no line per fault"
    assert said[0].startswith("the machine may be too busy for the clock")
    assert said[0].endswith(f"{ADVICE} (nap -v prints each one)")
    assert " fault " not in result.stderr
    standings = json.loads((out / "t1" / "standings.json").read_text(encoding="utf-8"))
    load = standings["tournament"]["load"]
    assert load["busy"] is True
    assert load["sessions_late_together"] == 3
    assert {"slow", "s2"} <= set(load["late_faults"])  # random too, on a machine busy enough
    assert "Warning: the machine may be too busy" in (out / "t1" / "standings.md").read_text(encoding="utf-8")
    assert 'id="load"' in (out / "t1" / "standings.html").read_text(encoding="utf-8")
    status = CliRunner().invoke(main, ["tournament", "status", "--db", str(tmp_path / "nap.db")])
    assert "warning: the machine may be too busy" in status.output
    verbose = CliRunner().invoke(main, ["-v", *args[:-2], "--out", str(tmp_path / "out2")])
    assert verbose.exit_code == 0, verbose.output
    each = [line for line in verbose.stderr.splitlines() if " fault " in line and "kind=late" in line]
    assert len(each) >= 3, "with -v, a line per late fault (info level)"
