"""Results never depend on the machine's load: the built-in bots play the same beside six busy processes.

A seeded tournament of random, peel and pimc, played quietly and again beside six
CPU-bound processes (a load of six more than the machine's, on top of whatever else runs):
byte-identical standings and no late fault, because every local bot's decisions are
clocked in its own CPU, and every built-in bot counts its budget (pimc's time cap, in its
own CPU, never bites here: its log would say so). On the same loaded machine, a bot that
truly exceeds its CPU is still charged, and one that sleeps past the wall clock's backstop
too. ``bench/clock.py`` prints the same run's figures.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from tournaments.cli import main
from tournaments.store.database import Store

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.slow

PYTHON = sys.executable
BUSY = 6
CLOCKED = Path(__file__).resolve().parent / "bots_contained"


@contextlib.contextmanager
def busy_machine(processes: int = BUSY) -> Iterator[None]:
    """``processes`` CPU-bound processes beside the test, for as long as it lasts."""
    spinning = [subprocess.Popen([PYTHON, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for process in spinning:
            process.kill()
        for process in spinning:
            process.wait()


def tournament(folder: Path, *args: str) -> tuple[bytes, dict[str, object], list[str]]:
    """Run ``nap tournament run ARGS`` in ``folder``: its standings.md, its load record, every fault."""
    folder.mkdir(parents=True, exist_ok=True)
    where = ("--db", str(folder / "nap.db"), "--out", str(folder / "out"))
    result = CliRunner().invoke(main, ["tournament", "run", *args, *where])
    assert result.exit_code == 0, result.output
    standings = folder / "out" / "t1"
    load = json.loads((standings / "standings.json").read_text())["tournament"]["load"]
    with Store.open(folder / "nap.db") as store:
        faults = [f"{f.bot} {f.kind}: {f.detail}" for r in store.session_results(1) for f in r.faults]
    return (standings / "standings.md").read_bytes(), load, faults


BUILT_IN = ("--bot", "random", "--bot", "peel", "--bot", "pimc", "-k", "3", "-n", "30", "--seed", "41")
TIGHT = (
    "--bot",
    "random",
    "--bot",
    "peel",
    "--bot",
    "random-2=random",
    "-k",
    "3",
    "-n",
    "30",
    "--seed",
    "41",
)
TIGHT_CLOCK = ("--decision-ms", "50")
"""A clock of 50 ms, which the wall clock let the load outrun: 9 late faults beside six busy
processes (and other work: load 11-20), where the bots' own CPU is under 1 ms a decision."""


@pytest.mark.parametrize(
    "tournament_args", [BUILT_IN, (*TIGHT, *TIGHT_CLOCK)], ids=["built-in bots", "a 50 ms clock"]
)
def test_the_built_in_bots_play_the_same_quietly_and_beside_six_busy_processes(
    tmp_path: Path, tournament_args: tuple[str, ...]
) -> None:
    quiet_standings, quiet_load, quiet_faults = tournament(tmp_path / "quiet", *tournament_args)
    with busy_machine():
        busy_standings, busy_load, busy_faults = tournament(tmp_path / "busy", *tournament_args)
    assert quiet_faults == busy_faults == []
    assert quiet_load["late_faults"] == busy_load["late_faults"] == {}
    assert busy_standings == quiet_standings
    capped = [
        line
        for run in ("quiet", "busy")
        for log in (tmp_path / run / "out" / "t1" / "bots").glob("pimc-r*.log")
        for line in log.read_text().splitlines()
        if "time cap cut" in line
    ]
    assert capped == []


def test_on_a_busy_machine_a_bot_over_its_cpu_or_past_the_backstop_is_still_charged(tmp_path: Path) -> None:
    """300 ms a decision: 600 ms of CPU is late on its CPU (the backstop far off, as the burning takes
    long on this machine); a 3 s sleep is late on the 1.5 s backstop."""
    table = ("--decision-ms", "300", "-k", "3", "-n", "3", "--seed", "5")
    with busy_machine():
        for how, ms, backstop, detail in (
            ("burn", "600", "60000", "no answer within 300 ms of its CPU"),
            ("sleep", "3000", "1500", "no answer within the wall clock's backstop of 1500 ms"),
        ):
            limits = (*table, "--backstop-ms", backstop)
            folder = tmp_path / how
            folder.mkdir()
            bot = folder / "clocked"
            bot.mkdir()
            (bot / "nap-bot.toml").write_text(
                f'name = "clocked"\nversion = "1"\ncommand = ["{{python}}", "{CLOCKED / "clocked_bot.py"}", '
                f'"{how}", "{ms}"]\n'
            )
            _, _, faults = tournament(folder, "--bot", str(bot), "--bot", "random", "--bot", "peel", *limits)
            assert faults
            assert set(faults) == {f"clocked late: {detail}"}, how
