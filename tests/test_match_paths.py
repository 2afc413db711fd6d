"""The gRPC referee and in-process play are one match core: same choices, same records and faults.

Seeded sessions are played twice: over gRPC, with real bot processes on a real referee,
and in process, on :class:`referee.match.Simulation`, with the same deterministic
policies (tests/bots/policies.py) answering. Bots that play steadily, answer illegally,
answer garbage, or whose process dies mid-session, under both fault policies: the
records, every decision's action and fault, and every fault record (all but the
measured times) are identical.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest
from harness import arena, script
from policies import choose

from referee.match import Answer, FaultKind, Leave, SessionSpec, Simulation, TimeLimits
from referee.rules import PROFILES, FaultPolicy, SeatView
from referee.server import ServerLimits

if TYPE_CHECKING:
    from referee.match import Ask, Reaction, SessionOutcome

pytestmark = pytest.mark.slow

LIMITS = ServerLimits(fault_limit=4, reconnect_grace_s=0.3)
CLOCK = TimeLimits(decision_ms=10_000)
"""Generous: nothing in these sessions may depend on how fast the machine is."""
CASES = [
    (policy, fault_policy)
    for policy in ("steady", "illegal", "garbage", "dies")
    for fault_policy in (FaultPolicy.SUBSTITUTE, FaultPolicy.REVOKE)
]


def _specs(policy: str, fault_policy: FaultPolicy) -> list[SessionSpec]:
    return [
        SessionSpec(
            table=f"{policy}-{fault_policy.value}-{seed}",
            profile=PROFILES["full-ladder"],
            seed=seed,
            seats=("x", "steady", "steady", "steady"),
            time_limits=CLOCK,
            fault_policy=fault_policy,
        )
        for seed in (1, 2)
    ]


def _over_grpc(policy: str, specs: list[SessionSpec]) -> list[SessionOutcome]:
    async def scenario() -> list[SessionOutcome]:
        outcomes = []
        async with arena(LIMITS) as ring:
            await ring.bot("steady", script("scripted_bot", "--policy", "steady"))
            for spec in specs:  # one at a time: a dying bot is started afresh for each
                name = f"x-{spec.table}"
                await ring.bot(name, script("scripted_bot", "--policy", policy))
                seats = (name, *spec.seats[1:])
                outcome = await asyncio.wait_for(
                    ring.referee.play_session(
                        SessionSpec(
                            spec.table, spec.profile, spec.seed, seats, spec.time_limits, spec.fault_policy
                        )
                    ),
                    120,
                )
                outcomes.append(outcome)
        return outcomes

    return asyncio.run(scenario())


def _in_process(policy: str, specs: list[SessionSpec]) -> list[SessionOutcome]:
    def bot(name: str) -> object:
        def respond(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del deadline_ms, now
            legal = [str(action) for action in ask.view.legal_actions]
            text = choose(name, ask.table, SeatView(*ask.view), legal)
            if text is None:
                return [Leave(detail="connection lost")]
            return [Answer(ask.request_id, text, 0.5)]

        return respond

    outcomes = []
    for spec in specs:
        simulation = Simulation(
            fault_limit=LIMITS.fault_limit, reconnect_grace_ms=LIMITS.reconnect_grace_s * 1000
        )
        name = f"x-{spec.table}"
        simulation.add_bot(name, bot(policy))  # type: ignore[arg-type]
        simulation.add_bot("steady", bot("steady"))  # type: ignore[arg-type]
        [outcome] = simulation.play(
            SessionSpec(
                spec.table,
                spec.profile,
                spec.seed,
                (name, *spec.seats[1:]),
                spec.time_limits,
                spec.fault_policy,
            )
        )
        outcomes.append(outcome)
    return outcomes


def _comparable(outcome: SessionOutcome) -> tuple[object, ...]:
    decisions = [[(d.seat, d.action, d.fault, d.forced) for d in deal] for deal in outcome.decisions]
    faults = [
        (
            f.kind,
            f.bot,
            f.table,
            f.seat,
            f.deal,
            f.decision,
            # how a connection ended is the transport's to say
            "" if f.kind is FaultKind.DISCONNECT and f.seat is None else f.detail,
        )
        for f in outcome.faults
    ]
    return outcome.record, decisions, faults, outcome.disqualified, outcome.settlements


@pytest.mark.parametrize(("policy", "fault_policy"), CASES, ids=[f"{p}-{f.value}" for p, f in CASES])
def test_both_paths_give_the_same_records_and_faults(policy: str, fault_policy: FaultPolicy) -> None:
    specs = _specs(policy, fault_policy)
    remote = _over_grpc(policy, specs)
    local = _in_process(policy, specs)
    for over_grpc, in_process in zip(remote, local, strict=True):
        assert _comparable(over_grpc) == _comparable(in_process)
    faulty = [f for outcome in local for f in outcome.faults]
    if policy == "steady":
        assert faulty == []
    else:
        assert faulty  # the comparison covers faults, not only clean play
