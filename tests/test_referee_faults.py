"""Misbehaving bots never crash, hang or stall the referee: each fault is recorded as data.

Each scenario seats one misbehaving bot process with a well-behaved one (holding the
other seats) and runs a normal table of well-behaved seats at the same time: the faulty
session completes with the right fault records, and the normal table is not held up.
Clocks are short (200 ms a decision) so the suite stays quick.
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from referee.rules import PROFILES, FaultPolicy, Penalty, replay, verify
from referee.server import FaultKind, ServerLimits, SessionOutcome

sys.path.insert(0, str(Path(__file__).parent / "bots"))
from harness import arena, script, spec

pytestmark = pytest.mark.slow

LIMITS = ServerLimits(fault_limit=3, reconnect_grace_s=0.3)


def _play_with(command: list[str], *, limits: ServerLimits = LIMITS, decision_ms: int = 200,
               profile_name: str = "heather", policy: FaultPolicy | None = None,
               seed: int = 3) -> SessionOutcome:
    """Seat the bad bot at seat 0 of a 4-seat table and run a normal table alongside."""

    async def scenario() -> SessionOutcome:
        async with arena(limits) as ring:
            await ring.bot("good", script("random_bot"))
            await ring.bot("bad", command)
            faulty = spec("faulty", ("bad", "good", "good", "good"), seed=seed,
                          decision_ms=decision_ms, profile=PROFILES[profile_name])
            if policy is not None:
                faulty = replace(faulty, fault_policy=policy)
            normal = spec("normal", ("good",) * 4, seed=seed, decision_ms=decision_ms)
            started = time.monotonic()

            async def timed() -> float:
                outcome = await ring.referee.play_session(normal)
                assert outcome.faults == ()
                return time.monotonic() - started

            outcome, normal_s = await asyncio.wait_for(asyncio.gather(
                ring.referee.play_session(faulty), timed()), 60)
            # The normal table needs no clock at all: it never waits on the faulty one.
            assert normal_s < 10
            return outcome

    outcome = asyncio.run(scenario())
    assert outcome.record.winners
    assert verify(outcome.record) == []
    replayed = replay(outcome.record)
    assert tuple(replayed.balances) == outcome.record.balances
    return outcome


def _with_policy(session_spec, policy):
    from dataclasses import replace  # noqa: PLC0415

    return replace(session_spec, fault_policy=policy)


def _kinds(outcome: SessionOutcome) -> list[FaultKind]:
    return [fault.kind for fault in outcome.faults]


def _bad_decisions(outcome: SessionOutcome) -> list:
    return [d for deal in outcome.decisions for d in deal if d.seat == 0]


def test_a_bot_that_never_answers_is_late_then_disqualified() -> None:
    outcome = _play_with(script("silent_bot"))
    assert _kinds(outcome) == [FaultKind.LATE] * 3
    fault = outcome.faults[0]
    assert (fault.bot, fault.table, fault.seat, fault.deal) == ("bad", "faulty", 0, 0)
    assert fault.elapsed_ms is not None
    assert fault.elapsed_ms >= 200
    assert "no answer within 200 ms" in fault.detail
    assert outcome.disqualified == (0,)
    faults = [d.fault for d in _bad_decisions(outcome)]
    assert faults[:3] == ["late"] * 3
    assert set(faults[3:]) == {"disqualified"}


def test_an_illegal_answer_is_substituted_with_the_rules_reason() -> None:
    outcome = _play_with(script("illegal_bot"))
    assert _kinds(outcome) == [FaultKind.ILLEGAL] * 3
    assert all(f.detail for f in outcome.faults)
    first = _bad_decisions(outcome)[0]
    assert first.action == "pass"
    assert first.fault == "illegal"
    assert outcome.disqualified == (0,)


def test_text_that_is_no_action_is_malformed() -> None:
    outcome = _play_with(script("illegal_bot", "--garbage", "1"))
    assert _kinds(outcome) == [FaultKind.MALFORMED] * 3
    assert "not an action" in outcome.faults[0].detail


def test_revoke_policy_stops_the_deal_against_the_faulting_seat() -> None:
    """Under the revoke policy a fault in play is a Penalty: the deal stops and settles."""
    outcome = _play_with(script("illegal_bot"), limits=ServerLimits(fault_limit=0),
                         profile_name="full-ladder", policy=FaultPolicy.REVOKE, seed=5)
    assert set(_kinds(outcome)) == {FaultKind.ILLEGAL}
    assert outcome.disqualified == ()
    penalties = [a for deal in outcome.record.deals for a in deal.actions
                 if isinstance(a, Penalty)]
    assert penalties
    assert all(p.seat == 0 for p in penalties)
    for deal in outcome.record.deals:
        if deal.actions and isinstance(deal.actions[-1], Penalty):
            assert deal.actions[-1] == Penalty(0)


def test_bytes_that_are_no_message_are_malformed_and_end_the_stream() -> None:
    outcome = _play_with(script("garbage_bot"))
    kinds = _kinds(outcome)
    assert kinds[:2] == [FaultKind.MALFORMED, FaultKind.DISCONNECT]
    assert outcome.faults[0].seat is None
    assert outcome.disqualified == (0,)


def test_an_answer_to_a_request_not_its_own_is_an_unknown_request() -> None:
    outcome = _play_with(script("stranger_bot", "--strangers", "2"))
    assert _kinds(outcome) == [FaultKind.UNKNOWN_REQUEST] * 2
    assert "not outstanding" in outcome.faults[0].detail
    assert outcome.disqualified == ()
    assert all(d.fault is None for d in _bad_decisions(outcome))


def test_a_bot_that_dies_mid_trick_is_a_disconnect() -> None:
    outcome = _play_with(script("vanishing_bot"))
    kinds = _kinds(outcome)
    assert kinds[0] == FaultKind.DISCONNECT
    assert len(kinds) == 3
    assert outcome.disqualified == (0,)


def test_a_bot_that_reconnects_takes_its_seat_back() -> None:
    """Away for 200 ms with a 2 s clock: one disconnect, the request re-sent and answered."""
    outcome = _play_with(script("reconnecting_bot", "--away-ms", "200"),
                         limits=ServerLimits(fault_limit=3, reconnect_grace_s=5),
                         decision_ms=2000)
    assert _kinds(outcome) == [FaultKind.DISCONNECT]
    assert outcome.disqualified == ()
    assert all(d.fault is None for d in _bad_decisions(outcome))
    assert max(d.latency_ms for d in _bad_decisions(outcome)) >= 200
