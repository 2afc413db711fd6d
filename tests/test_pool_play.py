"""random, peel and pimc play the pool variants to the end with no fault, in process and over gRPC."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from clients.bots.peel import PeelBot
from clients.bots.pimc import PimcBot
from clients.bots.random_bot import RandomBot
from clients.sdk.local import LocalBot
from referee.match import SessionSpec, Simulation, TimeLimits
from referee.rules import PEEP, Exchange, TakeWidow, get_profile
from tournaments.cli import main

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from clients.sdk import Bot

POOL_PROFILES = ("purchase", "ecarte", "peep")


def _factories(seed: int) -> dict[str, Callable[[], Bot]]:
    return {
        "random": lambda: RandomBot(seed=seed),
        "peel": PeelBot,
        "pimc": lambda: PimcBot(seed=seed),
    }


@pytest.mark.slow
@pytest.mark.parametrize("profile", POOL_PROFILES)
def test_in_process_the_three_bots_finish_with_no_fault_and_no_fallback(profile: str) -> None:
    """The referee's match core with the bots called in process, on a frozen clock (so no
    decision is ever late): every session ends, zero-sum, with no fault, no bot answering
    anything illegal (no fallback played), and the pool decisions used."""
    rules = get_profile(profile)
    kinds: set[str] = set()
    for seed in range(2):
        simulation = Simulation()
        locals_ = {
            name: LocalBot(factory, rules=rules, clock=lambda: 0.0)
            for name, factory in _factories(seed).items()
        }
        for name, local in locals_.items():
            simulation.add_bot(name, local.respond, listening=local.listening, on_tell=local.tell)
        specs = [
            SessionSpec(
                table=f"{profile}-{seed}-{rotation}",
                profile=rules,
                seed=seed,
                seats=("random", "peel", "pimc")[rotation:] + ("random", "peel", "pimc")[:rotation],
                time_limits=TimeLimits(),
            )
            for rotation in range(3)
        ]
        for outcome in simulation.play(*specs):
            assert not outcome.faults
            assert not outcome.disqualified
            assert sum(outcome.record.balances) == 0
            for deal in outcome.record.deals:
                for action in deal.actions:
                    if isinstance(action, Exchange):
                        kinds.add("exchange" if action.cards else "decline")
                    elif action is PEEP:
                        kinds.add("peep")
                    elif isinstance(action, TakeWidow):
                        kinds.add("widow")
        assert {name: local.fallbacks for name, local in locals_.items()} == dict.fromkeys(locals_, 0)
    assert kinds >= ({"peep", "widow"} if rules.widow else {"exchange", "decline"})


def _nap(*args: str | Path) -> str:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("profile", POOL_PROFILES)
def test_a_real_tournament_over_grpc_has_no_fault(profile: str, tmp_path: Path) -> None:
    """`nap tournament run --profile P -b random -b peel -b pimc -n 6`: real bot processes on
    the referee; no fault recorded, nothing on any bot's stderr (the SDK writes there when
    it plays the fallback for a bot), and the log shows the pool's decisions.

    The decision clock is a minute: pimc's budget is counted, but the referee's clock is the
    wall's, and a loaded machine under coverage once took pimc past the default second."""
    db, out = tmp_path / "nap.db", tmp_path / "out"
    _nap("tournament", "run", "--profile", profile, "-b", "random", "-b", "peel", "-b", "pimc",
         "-n", "6", "--decision-ms", "60000", "--db", db, "--out", out)  # fmt: skip
    standings = json.loads(_nap("standings", "--db", db, "--json", "--out", tmp_path / "again"))
    assert {line["bot"]: line["faults"] for line in standings["bots"]} == {"random": 0, "peel": 0, "pimc": 0}
    assert all(line["sessions"] == 6 for line in standings["bots"])
    logs = list((out / "t1" / "bots").glob("*.log"))
    assert logs
    for log in logs:
        said = [line for line in log.read_text().splitlines() if line.strip() and not line.startswith("---")]
        assert not said, (log.name, said[:5])
    shown = _nap("log", "show", "1", "--db", db)
    assert ("peeps at the widow" in shown) if profile == "peep" else ("exchanges" in shown)
    assert "Pool: " in shown
    seat = _nap("log", "show", "1", "--db", db, "--seat", "0")
    assert "as seat 0" in seat
    assert "Widow (face down)" not in seat
    others = [
        line for line in seat.splitlines() if " exchanges " in line and not line.startswith("    seat 0 ")
    ]
    assert all("gives up" not in line for line in others)
