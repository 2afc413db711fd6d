"""Each bot contained as a whole and clocked in its own CPU, with real bot processes in real cgroups.

A tournament's local bots run each in a cgroup of their own (:mod:`tournaments.play.containment`)
and the referee clocks their decisions in their CPU: a bot that burns CPU past its limit
is charged, one that only waits is not, until the wall clock's backstop; a hostile bot
that keeps cores busy in threads or children slows nobody else and its own decisions are
the ones charged; a bot that spreads memory or processes over children is stopped at
the limit of its whole tree, and the run says which. The tests need cgroups that nap can
write (root on a hybrid or v1 hierarchy, or a delegated v2 subtree) and are skipped
elsewhere; the clock's logic itself is tested in simulated time (tests/test_cpu_clock.py).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from referee.match import TimeLimits
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import BotEntry, example_bot
from tournaments.plan.isolation import BotLimits
from tournaments.play.containment import containment_problem
from tournaments.play.runner import run_tournament
from tournaments.store.database import Store
from tournaments.store.logs import decode_log

if TYPE_CHECKING:
    from tournaments.results import SessionResult

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(containment_problem() is not None, reason=f"no cgroups here: {containment_problem()}"),
]

HERE = Path(__file__).resolve().parent / "bots_contained"
PYTHON = sys.executable


def _entry(name: str, script: str, *args: str) -> BotEntry:
    return BotEntry(name=name, version="1", command=(PYTHON, script, *args), cwd=HERE)


@dataclasses.dataclass
class Run:
    """A finished tournament: its sessions' results, their logs' decisions, and the bots' logs."""

    results: list[SessionResult]
    decisions: dict[tuple[int, int], list[list[dict[str, object]]]]
    logs: Path

    def said(self, bot: str, prefix: str) -> list[str]:
        return [
            line
            for path in sorted(self.logs.glob(f"{bot}-r*.log"))
            for line in path.read_text().splitlines()
            if line.startswith(prefix)
        ]

    def faults(self, bot: str) -> list[str]:
        return [
            f"{fault.kind}: {fault.detail}" for r in self.results for fault in r.faults if fault.bot == bot
        ]

    def chips(self, bot: str) -> dict[tuple[int, int], int]:
        return {(r.block, r.rotation): s.chips for r in self.results for s in r.seats if s.bot == bot}

    def cpu_ms(self, bot: str) -> list[float]:
        """The CPU each of ``bot``'s asked decisions was charged."""
        seats = {(r.block, r.rotation): [s.seat for s in r.seats if s.bot == bot] for r in self.results}
        return [
            float(str(decision["cpu_ms"]))
            for key, deals in self.decisions.items()
            for deal in deals
            for decision in deal
            if decision["seat"] in seats[key] and not decision.get("forced")
        ]


def play(
    tmp_path: Path,
    *bots: BotEntry,
    name: str = "run",
    sessions: int = 3,
    limits: TimeLimits | None = None,
    bot_limits: BotLimits | None = None,
) -> Run:
    """Play a tournament of ``bots`` at one 3-seat table size, seeded; what it left."""
    config = TournamentConfig(
        name=name,
        bots=bots,
        table_size=3,
        sessions=sessions,
        seed=29,
        concurrency=2,
        workers=1,
        max_restarts=0,
        time_limits=limits or TimeLimits(),
        bot_limits=bot_limits or BotLimits(),
    )
    logs = tmp_path / f"out-{name}"
    with Store.open(tmp_path / f"{name}.db") as store:
        run_tournament(config, store=store, logs_root=logs)
        results = store.session_results(1)
        decisions: dict[tuple[int, int], list[list[dict[str, object]]]] = {}
        for row in store.find_sessions(tournament=1):
            log: dict[str, Any] = decode_log(store.log(row.id), name="log")
            decisions[row.block, row.rotation] = log["decisions"]
        assert store.tournament(1).uncontained is None
    assert not _groups_left(), "the run left cgroups behind"
    return Run(results, decisions, logs / "t1" / "bots")


def _groups_left() -> list[Path]:
    """The cgroup folders a host of this process left (every host removes its own when it stops)."""
    stem = f"nap-{os.getpid()}-"
    found = []
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") or [""]:
            base = Path("/sys/fs/cgroup") / controller / path.lstrip("/")
            if base.is_dir():
                found += [folder for folder in base.iterdir() if folder.name.startswith(stem)]
    return found


OPPONENTS = (example_bot("random"), example_bot("peel"))


def test_a_bot_that_burns_cpu_past_its_limit_is_charged_and_one_that_waits_is_not(tmp_path: Path) -> None:
    """300 ms a decision: 600 ms of CPU is late, 600 ms asleep is not (it would be on the wall clock)."""
    limits = TimeLimits(decision_ms=300)
    burner = play(
        tmp_path, _entry("clocked", "clocked_bot.py", "burn", "600"), *OPPONENTS, name="burn", limits=limits
    )
    late = burner.faults("clocked")
    assert late
    assert set(late) == {"late: no answer within 300 ms of its CPU"}
    assert burner.faults("random") == burner.faults("peel") == []
    sleeper = play(
        tmp_path, _entry("clocked", "clocked_bot.py", "sleep", "600"), *OPPONENTS, name="sleep", limits=limits
    )
    assert [fault for r in sleeper.results for fault in r.faults] == []
    assert max(sleeper.cpu_ms("clocked")) < 300


def test_a_bot_that_sleeps_past_the_backstop_is_charged(tmp_path: Path) -> None:
    limits = TimeLimits(decision_ms=300, backstop_ms=1000)
    sleeper = play(
        tmp_path, _entry("clocked", "clocked_bot.py", "sleep", "1500"), *OPPONENTS, sessions=1, limits=limits
    )
    late = sleeper.faults("clocked")
    assert late
    assert set(late) == {"late: no answer within the wall clock's backstop of 1000 ms"}


@pytest.mark.parametrize("mode", ["threads", "children"])
def test_a_bot_that_keeps_cores_busy_slows_nobody_and_is_charged_itself(tmp_path: Path, mode: str) -> None:
    """Four busy threads (or children) beside it: its opponents' faults and chips are those of a calm run.

    It answers what the referee plays in its place, so the games are the same whether or
    not its decisions are late. Its opponents are charged their own CPU only, a few
    milliseconds a decision; it is charged its workers' CPU.
    """
    calm = play(
        tmp_path, _entry("spinner", "spinner_bot.py", "none", "0"), *OPPONENTS, name="calm", sessions=6
    )
    busy = play(tmp_path, _entry("spinner", "spinner_bot.py", mode, "4"), *OPPONENTS, name=mode, sessions=6)
    for opponent in ("random", "peel"):
        assert busy.faults(opponent) == calm.faults(opponent) == []
        assert busy.chips(opponent) == calm.chips(opponent)
        assert max(busy.cpu_ms(opponent)) < 100
    assert all(fault.startswith("late: ") for fault in busy.faults("spinner"))
    assert sum(busy.cpu_ms("spinner")) > 3 * sum(calm.cpu_ms("spinner"))


def test_memory_spread_over_children_is_stopped_at_the_limit_of_the_whole_tree(tmp_path: Path) -> None:
    """Four children of 100 MiB each, under 256 MiB: within each process's limit, not within the tree's."""
    run = play(
        tmp_path,
        _entry("forker", "forker_bot.py", "memory", "100", "4"),
        *OPPONENTS,
        sessions=3,
        bot_limits=BotLimits(memory_mb=256),
    )
    alive = [int(line.split()[1]) for line in run.said("forker", "forker: ")]
    assert alive
    assert max(alive) <= 2
    said = "\n".join(run.said("forker", "---"))
    assert "it reached its memory limit (256 MiB for all its processes together" in said


def test_forks_past_the_process_limit_are_refused_for_the_whole_tree(tmp_path: Path) -> None:
    run = play(
        tmp_path,
        _entry("forker", "forker_bot.py", "processes"),
        *OPPONENTS,
        bot_limits=BotLimits(processes=32),
    )
    made = [int(line.split()[1]) for line in run.said("forker", "forker: ")]
    assert made
    assert max(made) < 32
    said = "\n".join(run.said("forker", "---"))
    assert "it reached its limit of processes and threads (32 for all its processes together" in said
