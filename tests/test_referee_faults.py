"""Misbehaving bot processes never crash, hang or stall the referee, end to end.

Every fault scenario is a unit test of the match core in simulated time
(tests/test_match.py); these keep the ones whose cause lives in the transport, with real
processes on a real gRPC referee: bytes that are no message, answers to ids the bot was
never sent, a process that dies, a bot that reconnects, and a bot that never answers.
Each seats one misbehaving bot process with a well-behaved one (holding the other
seats) and runs a normal table of well-behaved seats at the same time: the faulty
session completes with the right fault records, and the normal table is not held up.
Margins are generous: no assertion depends on how loaded the machine is.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from harness import arena, script, spec

from referee.rules import PROFILES, replay, verify
from referee.server import Decision, FaultKind, ServerLimits, SessionOutcome

pytestmark = pytest.mark.slow

LIMITS = ServerLimits(fault_limit=3, reconnect_grace_s=0.5)


def _play_with(
    command: list[str], *, limits: ServerLimits = LIMITS, decision_ms: int = 5000
) -> SessionOutcome:
    """Seat the bad bot at seat 0 of a 4-seat table and run a normal table alongside."""

    async def scenario() -> SessionOutcome:
        async with arena(limits) as ring:
            await ring.bot("good", script("random_bot"))
            await ring.bot("bad", command)
            faulty = spec(
                "faulty",
                ("bad", "good", "good", "good"),
                seed=3,
                decision_ms=decision_ms,
                profile=PROFILES["heather"],
            )
            normal = replace(faulty, table="normal", seats=("good",) * 4)
            outcome, clean = await asyncio.wait_for(
                asyncio.gather(ring.referee.play_session(faulty), ring.referee.play_session(normal)), 120
            )
            assert clean.faults == ()
            return outcome

    outcome = asyncio.run(scenario())
    assert outcome.record.winners
    assert verify(outcome.record) == []
    assert tuple(replay(outcome.record).balances) == outcome.record.balances
    return outcome


def _kinds(outcome: SessionOutcome) -> list[FaultKind]:
    return [fault.kind for fault in outcome.faults]


def _bad_decisions(outcome: SessionOutcome) -> list[Decision]:
    return [d for deal in outcome.decisions for d in deal if d.seat == 0]


def test_a_bot_that_never_answers_is_late_then_disqualified() -> None:
    outcome = _play_with(script("silent_bot"), decision_ms=300)
    assert _kinds(outcome) == [FaultKind.LATE] * 3
    fault = outcome.faults[0]
    assert (fault.bot, fault.table, fault.seat, fault.deal) == ("bad", "faulty", 0, 0)
    assert fault.detail == "no answer within 300 ms"
    assert outcome.disqualified == (0,)
    faults = [d.fault for d in _bad_decisions(outcome)]
    assert faults[:3] == ["late"] * 3
    assert set(faults[3:]) == {"disqualified"}


def test_bytes_that_are_no_message_are_malformed_and_end_the_stream() -> None:
    outcome = _play_with(script("garbage_bot"))
    kinds = _kinds(outcome)
    assert kinds[:2] == [FaultKind.MALFORMED, FaultKind.DISCONNECT]
    assert outcome.faults[0].seat is None
    assert outcome.disqualified == (0,)


def test_text_that_is_no_action_is_malformed() -> None:
    outcome = _play_with(script("illegal_bot", "--garbage", "1"))
    assert _kinds(outcome) == [FaultKind.MALFORMED] * 3
    assert "not an action" in outcome.faults[0].detail


def test_an_answer_to_a_request_not_its_own_is_an_unknown_request() -> None:
    outcome = _play_with(script("stranger_bot", "--strangers", "2"))
    assert _kinds(outcome) == [FaultKind.UNKNOWN_REQUEST] * 2
    assert "not outstanding" in outcome.faults[0].detail
    assert outcome.disqualified == ()
    assert all(d.fault is None for d in _bad_decisions(outcome))


def test_a_bot_that_dies_mid_trick_is_a_disconnect() -> None:
    outcome = _play_with(script("vanishing_bot"))
    kinds = _kinds(outcome)
    assert kinds == [FaultKind.DISCONNECT] * 3
    assert outcome.faults[0].seat is None
    assert outcome.disqualified == (0,)


def test_a_bot_that_reconnects_takes_its_seat_back() -> None:
    """Away for 200 ms with a 10 s clock and 5 s of grace: one disconnect, the request re-sent."""
    outcome = _play_with(
        script("reconnecting_bot", "--away-ms", "200"),
        limits=ServerLimits(fault_limit=3, reconnect_grace_s=5),
        decision_ms=10_000,
    )
    assert _kinds(outcome) == [FaultKind.DISCONNECT]
    assert outcome.disqualified == ()
    assert all(d.fault is None for d in _bad_decisions(outcome))
    assert max(d.latency_ms for d in _bad_decisions(outcome)) >= 200
