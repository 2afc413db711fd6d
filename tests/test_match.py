"""The match core in simulated time: every fault scenario of the referee, in milliseconds.

Each scenario seats scripted bots (callables that react to a request after a simulated
delay) at a table driven by :class:`referee.match.Simulation`: nothing here waits on a
real clock, so a 1000 ms deadline passes in microseconds and nothing is left to timing.
The gRPC referee is a transport over the same core (tests/test_referee_faults.py keeps a
few of these end to end with real processes).
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from referee.match import (
    DISQUALIFIED,
    Answer,
    Arbiter,
    Ask,
    BotState,
    Closed,
    CloseReason,
    Decision,
    Declared,
    Faulted,
    FaultKind,
    Finished,
    Garble,
    Leave,
    Match,
    SeatPenalized,
    SessionSpec,
    Simulation,
    Tell,
    TimeLimits,
)
from referee.match.bots import RETIRED_KEPT
from referee.rules import (
    CARDS,
    PASS,
    Bid,
    BidMade,
    Card,
    CardsExchanged,
    DealSettled,
    DealStarted,
    FaultPolicy,
    Penalty,
    Phase,
    PoolClaimed,
    SeatEvent,
    Session,
    WidowPeeked,
    WidowTaken,
    fallback_action,
    fresh_session,
    replay,
    verify,
)
from referee.rules.profiles import PROFILES

if TYPE_CHECKING:
    from collections.abc import Callable

    from referee.match import Reaction, SessionOutcome
    from referee.rules import SessionRecord

HEATHER = PROFILES["heather"]


def first_legal(after_ms: float = 1.0) -> Callable[[Ask, int, float], list[Reaction]]:
    """A bot that answers its first legal action after ``after_ms``."""

    def respond(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
        del deadline_ms, now
        return [Answer(ask.request_id, str(ask.view.legal_actions[0]), after_ms)]

    return respond


def silent(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
    del ask, deadline_ms, now
    return []


def spec(
    seats: tuple[str, ...],
    *,
    table: str = "t",
    seed: int = 3,
    decision_ms: int = 1000,
    bank_ms: int = 0,
    profile=HEATHER,
    policy: FaultPolicy | None = None,
) -> SessionSpec:
    return SessionSpec(
        table=table,
        profile=profile,
        seed=seed,
        seats=seats,
        time_limits=TimeLimits(decision_ms, bank_ms),
        fault_policy=policy,
    )


def play(
    bots: dict[str, Callable[[Ask, int, float], list[Reaction]]],
    *specs: SessionSpec,
    fault_limit: int = 3,
    grace_ms: float = 5000.0,
) -> tuple[Simulation, list[SessionOutcome]]:
    simulation = Simulation(fault_limit=fault_limit, reconnect_grace_ms=grace_ms)
    for name, respond in bots.items():
        simulation.add_bot(name, respond, listening=True)
    outcomes = simulation.play(*specs)
    for outcome in outcomes:
        assert verify(outcome.record) == []
        assert tuple(replay(outcome.record).balances) == outcome.record.balances
    return simulation, outcomes


def bad_decisions(outcome: SessionOutcome, seat: int = 0) -> list[Decision]:
    return [d for deal in outcome.decisions for d in deal if d.seat == seat]


def told(simulation: Simulation, bot: str, seat: int | None = None) -> list[SeatEvent | SeatPenalized]:
    """Everything ``bot`` was told (at ``seat``, or at all its seats), in order."""
    return [
        item
        for tell in simulation.received(bot)
        if isinstance(tell, Tell) and seat in (None, tell.seat)
        for item in tell.items
    ]


def events(items: list[SeatEvent | SeatPenalized]) -> list[SeatEvent]:
    return [item for item in items if isinstance(item, SeatEvent)]


def kinds(outcome: SessionOutcome) -> list[FaultKind]:
    return [fault.kind for fault in outcome.faults]


GOOD = first_legal()
SEATS = ("bad", "good", "good", "good")


class TestClocks:
    def test_a_bot_that_never_answers_is_late_then_disqualified(self) -> None:
        simulation, [outcome] = play({"bad": silent, "good": GOOD}, spec(SEATS))
        assert kinds(outcome) == [FaultKind.LATE] * 3
        first = outcome.faults[0]
        assert (first.bot, first.table, first.seat, first.deal, first.decision) == ("bad", "t", 0, 0, 0)
        assert first.elapsed_ms == 1000.0
        assert first.detail == "no answer within 1000 ms"
        assert outcome.disqualified == (0,)
        faults = [d.fault for d in bad_decisions(outcome)]
        assert faults[:3] == ["late"] * 3
        assert set(faults[3:]) == {DISQUALIFIED}
        notices = [item for item in simulation.received("bad") if not isinstance(item, Tell)]
        assert [type(n) for n in notices] == [Faulted, Faulted, Faulted, Closed]
        assert [n.count for n in notices if isinstance(n, Faulted)] == [1, 2, 3]
        closed = notices[3]
        assert isinstance(closed, Closed)
        assert closed.reason is CloseReason.DISQUALIFIED
        # the disqualified bot is told nothing more about the table
        assert simulation.received("bad")[-1] is closed

    def test_an_answer_in_time_is_played_and_one_after_the_deadline_is_late(self) -> None:
        _, [in_time] = play({"bad": first_legal(999.0), "good": GOOD}, spec(SEATS))
        assert in_time.faults == ()
        assert {d.latency_ms for d in bad_decisions(in_time)} == {999.0}
        _, [late] = play({"bad": first_legal(1001.0), "good": GOOD}, spec(SEATS))
        assert kinds(late)[0] is FaultKind.LATE
        # the answer that comes after the deadline is ignored: no second fault for it
        assert kinds(late) == [FaultKind.LATE] * 3

    def test_the_time_bank_pays_for_overruns_until_it_is_spent(self) -> None:
        """100 ms a decision and a 250 ms bank; each answer takes 200 ms: +100, +100, then late."""
        deadlines: list[int] = []

        def slow(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del now
            deadlines.append(deadline_ms)
            assert ask.bank_ms == deadline_ms - 100
            return [Answer(ask.request_id, str(ask.view.legal_actions[0]), 200.0)]

        _, [outcome] = play(
            {"bad": slow, "good": GOOD}, spec(SEATS, decision_ms=100, bank_ms=250), fault_limit=0
        )
        assert deadlines[:4] == [350, 250, 150, 100]
        assert outcome.faults[0].kind is FaultKind.LATE
        assert outcome.faults[0].detail == "no answer within 150 ms"
        assert [d.fault for d in bad_decisions(outcome)][:3] == [None, None, "late"]
        assert all(f.kind is FaultKind.LATE for f in outcome.faults)

    def test_the_margin_forgives_a_small_overrun_the_bot_is_not_told_of(self) -> None:
        """100 ms a decision, a 50 ms margin: 140 ms is in time, 151 ms is late."""
        told: list[int] = []

        def timed(after_ms: float) -> Callable[[Ask, int, float], list[Reaction]]:
            def respond(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
                del now
                told.append(deadline_ms)
                return [Answer(ask.request_id, str(ask.view.legal_actions[0]), after_ms)]

            return respond

        limits = TimeLimits(decision_ms=100, margin_ms=50)
        _, [in_margin] = play({"bad": timed(140.0), "good": GOOD}, replace(spec(SEATS), time_limits=limits))
        assert in_margin.faults == ()
        assert set(told) == {100}
        _, [late] = play({"bad": timed(151.0), "good": GOOD}, replace(spec(SEATS), time_limits=limits))
        assert late.faults[0].kind is FaultKind.LATE
        assert late.faults[0].detail == "no answer within 100 ms (and a 50 ms margin)"
        assert late.faults[0].elapsed_ms == 150.0


class TestAnswers:
    def test_an_illegal_answer_is_substituted_with_the_rules_reason(self) -> None:
        def illegal(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del deadline_ms, now
            legal = ask.view.legal_actions
            wrong = (
                next(card for card in CARDS if card not in legal)
                if ask.view.phase is Phase.PLAY
                else Bid("blucher")
            )
            return [Answer(ask.request_id, str(wrong), 1.0)]

        simulation, [outcome] = play({"bad": illegal, "good": GOOD}, spec(SEATS))
        assert kinds(outcome) == [FaultKind.ILLEGAL] * 3
        assert outcome.faults[0].detail == "blucher is not a contract of the heather rules"
        first = bad_decisions(outcome)[0]
        assert (first.action, first.fault) == ("pass", "illegal")
        faulted = next(item for item in simulation.received("bad") if isinstance(item, Faulted))
        assert faulted.action == "blucher"
        assert faulted.request_id > 0
        # every listening seat is told of the substitution, before the substituted bid
        seen = told(simulation, "good", seat=1)
        notice = next(i for i, item in enumerate(seen) if isinstance(item, SeatPenalized))
        assert seen[notice] == SeatPenalized(0, 0, FaultKind.ILLEGAL, PASS)
        after = seen[notice + 1]
        assert isinstance(after, SeatEvent)
        assert after.event == BidMade(0, PASS)

    def test_text_that_is_no_action_is_malformed(self) -> None:
        def garbage(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del deadline_ms, now
            return [Answer(ask.request_id, "a pony", 1.0)]

        _, [outcome] = play({"bad": garbage, "good": GOOD}, spec(SEATS))
        assert kinds(outcome) == [FaultKind.MALFORMED] * 3
        assert "not an action" in outcome.faults[0].detail
        assert outcome.disqualified == (0,)

    def test_an_answer_to_an_id_never_sent_is_an_unknown_request(self) -> None:
        def stranger(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del deadline_ms, now
            return [
                Answer(ask.request_id + 10_000, "pass", 0.5),
                Answer(ask.request_id, str(ask.view.legal_actions[0]), 1.0),
            ]

        _, [outcome] = play({"bad": stranger, "good": GOOD}, spec(SEATS), fault_limit=0)
        assert set(kinds(outcome)) == {FaultKind.UNKNOWN_REQUEST}
        fault = outcome.faults[0]
        assert fault.seat is None
        assert "is not outstanding" in fault.detail
        assert all(d.fault is None for d in bad_decisions(outcome))

    def test_an_answer_given_twice_draws_an_unknown_request_for_the_second(self) -> None:
        def twice(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del deadline_ms, now
            action = str(ask.view.legal_actions[0])
            return [Answer(ask.request_id, action, 1.0), Answer(ask.request_id, action, 2.0)]

        _, [outcome] = play({"bad": twice, "good": GOOD}, spec(SEATS), fault_limit=0)
        asked = len([d for d in bad_decisions(outcome) if not d.forced])
        assert kinds(outcome) == [FaultKind.UNKNOWN_REQUEST] * asked
        assert all(d.fault is None for d in bad_decisions(outcome))

    def test_an_answer_for_another_bots_seat_is_an_unknown_request_and_changes_nothing(self) -> None:
        theirs: list[int] = []

        def victim(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del deadline_ms, now
            theirs.append(ask.request_id)
            return [Answer(ask.request_id, str(ask.view.legal_actions[0]), 5.0)]

        def thief(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del deadline_ms, now
            stolen = [Answer(theirs[-1], "pass", 0.5)] if theirs else []
            return [*stolen, Answer(ask.request_id, str(ask.view.legal_actions[0]), 1.0)]

        _, [outcome] = play(
            {"bad": thief, "victim": victim, "good": GOOD},
            spec(("bad", "victim", "good", "good")),
            fault_limit=0,
        )
        _, [honest] = play(
            {"bad": GOOD, "victim": victim, "good": GOOD},
            spec(("bad", "victim", "good", "good")),
            fault_limit=0,
        )
        assert set(kinds(outcome)) == {FaultKind.UNKNOWN_REQUEST}
        assert {f.bot for f in outcome.faults} == {"bad"}
        assert outcome.record == honest.record  # the stolen answers moved nothing


class TestComingsAndGoings:
    def test_a_bot_back_within_the_grace_period_keeps_its_seat(self) -> None:
        """Away for 200 ms with a 2 s clock: one disconnect, the request sent again and answered."""
        state = {"asked": 0}

        def leaver(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del now
            state["asked"] += 1
            if state["asked"] == 3:
                return [Leave(after_ms=10.0, back_after_ms=200.0)]
            assert deadline_ms <= 2000
            return [Answer(ask.request_id, str(ask.view.legal_actions[0]), 1.0)]

        _, [outcome] = play({"bad": leaver, "good": GOOD}, spec(SEATS, decision_ms=2000))
        assert kinds(outcome) == [FaultKind.DISCONNECT]
        assert outcome.faults[0].seat is None
        assert outcome.disqualified == ()
        assert all(d.fault is None for d in bad_decisions(outcome))
        assert max(d.latency_ms for d in bad_decisions(outcome)) == pytest.approx(211.0)

    def test_a_bot_back_after_the_grace_period_lost_the_decisions_due_meanwhile(self) -> None:
        state = {"left": False}

        def leaver(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del deadline_ms, now
            if not state["left"]:
                state["left"] = True
                return [Leave(after_ms=10.0, back_after_ms=1500.0)]
            return [Answer(ask.request_id, str(ask.view.legal_actions[0]), 1.0)]

        _, [outcome] = play(
            {"bad": leaver, "good": first_legal(50.0)},
            spec(SEATS, decision_ms=10_000),
            grace_ms=1000.0,
            fault_limit=0,
        )
        faults = outcome.faults
        assert (faults[0].kind, faults[0].seat) == (FaultKind.DISCONNECT, None)
        assert (faults[1].kind, faults[1].seat) == (FaultKind.DISCONNECT, 0)
        assert faults[1].detail == "no answer within 10000 ms (bot disconnected)"
        assert faults[1].elapsed_ms == pytest.approx(1010.0)  # sent, away at 10 ms, 1 s of grace
        decisions = bad_decisions(outcome)
        assert decisions[0].fault == "disconnect"
        assert decisions[-1].fault is None  # back, it plays again

    def test_a_bot_that_garbles_is_malformed_then_disconnected(self) -> None:
        def garbler(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del ask, deadline_ms, now
            return [Garble(after_ms=1.0)]

        simulation, [outcome] = play({"bad": garbler, "good": GOOD}, spec(SEATS), grace_ms=300.0)
        assert kinds(outcome)[:2] == [FaultKind.MALFORMED, FaultKind.DISCONNECT]
        assert outcome.faults[0].seat is None
        assert outcome.disqualified == (0,)
        assert simulation.unseated == []

    def test_a_bot_gone_for_good_is_faulted_at_once_and_disqualified(self) -> None:
        def vanishing(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del ask, deadline_ms, now
            return [Leave(after_ms=1.0)]

        simulation, [outcome] = play({"bad": vanishing, "good": GOOD}, spec(SEATS), grace_ms=300.0)
        assert kinds(outcome) == [FaultKind.DISCONNECT] * 3
        assert [f.seat for f in outcome.faults] == [None, 0, 0]
        assert outcome.disqualified == (0,)
        assert simulation.now < 1000  # no clock ran out: once gone, it fails at once


class TestLimitsOfOnePeer:
    def test_a_flood_of_unknown_answers_is_cut_off(self) -> None:
        arbiter = Arbiter(max_unknown_answers=5)
        arbiter.add_bot("bot")
        arbiter.attach("bot", max_batch=8, listening=False)
        arbiter.open(spec(("bot",) * 4), 0.0)
        out = arbiter.answers("bot", [(10_000 + i, "pass") for i in range(50)], 1.0)
        assert len([item for item in out if isinstance(item, Faulted)]) == 5  # then no more are read
        assert arbiter.cut_off("bot")
        arbiter.attach("bot", max_batch=8, listening=False)  # a new connection starts afresh
        assert not arbiter.cut_off("bot")

    @pytest.mark.slow
    def test_the_ids_of_ended_requests_are_remembered_within_bounds(self) -> None:
        state = BotState("bot", max_outstanding=1)
        state.attach(max_batch=1, listening=False)
        for number in range(1, RETIRED_KEPT + 11):
            ask = Ask("t", 0, "bot", Session(HEATHER, table_size=3, seed=1).view_fields(0), 1, 0, 1, number)
            request = state.add(ask, 0.0)
            state.take(0.0)
            assert state.withdraw(request)
        assert len(state.retired) == RETIRED_KEPT
        assert state.answer(RETIRED_KEPT + 10) is True  # late answers to recent ones: ignored
        assert state.answer(1) is False  # to one long gone: unknown

    def test_a_request_is_clocked_from_when_it_was_written(self) -> None:
        """Taken at 0, written at 300 (the bot read slowly): a 400 ms answer after that is in time."""
        arbiter = Arbiter()
        arbiter.add_bot("bot")
        arbiter.attach("bot", max_batch=8, listening=False)
        arbiter.open(spec(("bot",) * 4, decision_ms=500), 0.0)
        [(ask, deadline)] = arbiter.take("bot", 0.0)
        assert deadline == 500
        arbiter.written("bot", 300.0)
        assert arbiter.tick(600.0) == []  # not late: its clock started at 300
        out = arbiter.answers("bot", [(ask.request_id, str(ask.view.legal_actions[0]))], 700.0)
        assert not [item for item in out if isinstance(item, Faulted)]
        [(again, _)] = arbiter.take("bot", 700.0)
        late = arbiter.tick(700.0 + 501)  # never written: it expires on the clock of its taking
        assert [item.fault.kind for item in late if isinstance(item, Faulted)] == [FaultKind.LATE]
        assert arbiter.bot("bot").answer(again.request_id) is True  # ended: an answer now is ignored


class TestDisqualification:
    def test_a_request_in_flight_is_withdrawn_when_its_bot_is_disqualified(self) -> None:
        """Three unknown ids while its own request is pending: disqualified, the request withdrawn."""

        def spammer(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del deadline_ms, now
            return [
                *(Answer(ask.request_id + 1000 + i, "pass", 1.0) for i in range(3)),
                Answer(ask.request_id, str(ask.view.legal_actions[0]), 50.0),
            ]

        _, [outcome] = play({"bad": spammer, "good": GOOD}, spec(SEATS))
        assert kinds(outcome) == [FaultKind.UNKNOWN_REQUEST] * 3
        assert outcome.disqualified == (0,)
        first = bad_decisions(outcome)[0]
        assert (first.fault, first.latency_ms) == (DISQUALIFIED, 1.0)
        assert {d.fault for d in bad_decisions(outcome)} == {DISQUALIFIED}

    def test_no_fault_limit_means_never_disqualified(self) -> None:
        _, [outcome] = play({"bad": silent, "good": GOOD}, spec(SEATS), fault_limit=0)
        assert outcome.disqualified == ()
        assert len(outcome.faults) == len([d for d in bad_decisions(outcome) if not d.forced])


def bold(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
    """Bids the highest contract it may; plays its first legal card."""
    del deadline_ms, now
    return [
        Answer(ask.request_id, str(ask.view.legal_actions[-1 if ask.view.phase is Phase.BIDDING else 0]), 1.0)
    ]


def revoking(*, when_declarer: bool) -> Callable[[Ask, int, float], list[Reaction]]:
    """Bids like ``bold`` (declarer) or passes (defender); in play answers a card it lacks."""

    def respond(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
        view = ask.view
        if view.phase is Phase.BIDDING:
            return bold(ask, deadline_ms, now) if when_declarer else [Answer(ask.request_id, "pass", 1.0)]
        missing = next(card for card in CARDS if card not in view.hand)
        return [Answer(ask.request_id, str(missing), 1.0)]

    return respond


def passer(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
    del deadline_ms, now
    legal = ask.view.legal_actions
    return [Answer(ask.request_id, str(PASS if PASS in legal else legal[0]), 1.0)]


class TestRevokePenalty:
    LADDER = PROFILES["full-ladder"]

    def test_a_faulting_declarer_settles_as_failed(self) -> None:
        _, [outcome] = play(
            {"bad": revoking(when_declarer=True), "good": passer},
            spec(SEATS, profile=self.LADDER, policy=FaultPolicy.REVOKE),
            fault_limit=0,
        )
        penalized = [
            (deal, settled)
            for deal, settled in zip(outcome.record.deals, outcome.settlements, strict=True)
            if deal.actions and deal.actions[-1] == Penalty(0)
        ]
        assert penalized
        for deal, settled in penalized:
            assert settled.declarer == 0
            assert settled.made is False
            contract = self.LADDER.contract(settled.contract or "")
            assert settled.payments[0] == -contract.lose * (len(deal.seats) - 1)
            assert all(p == contract.lose for p in settled.payments[1:])
        assert set(kinds(outcome)) == {FaultKind.ILLEGAL}

    def test_a_faulting_defender_alone_pays_the_declarer_a_made_contract(self) -> None:
        _, [outcome] = play(
            {"bad": revoking(when_declarer=False), "good": bold},
            spec(SEATS, profile=self.LADDER, policy=FaultPolicy.REVOKE),
            fault_limit=0,
        )
        penalized = [
            (deal, settled)
            for deal, settled in zip(outcome.record.deals, outcome.settlements, strict=True)
            if deal.actions and deal.actions[-1] == Penalty(0)
        ]
        assert penalized
        for deal, settled in penalized:
            assert settled.declarer != 0
            assert settled.made is True
            owed = self.LADDER.contract(settled.contract or "").win * (len(deal.seats) - 1)
            assert settled.payments[0] == -owed
            assert settled.payments[settled.declarer or 0] == owed
            assert sum(1 for p in settled.payments if p) == 2

    def test_the_penalty_is_told_with_its_fault_and_the_faulting_seat(self) -> None:
        simulation, [outcome] = play(
            {"bad": revoking(when_declarer=True), "good": passer},
            spec(SEATS, profile=self.LADDER, policy=FaultPolicy.REVOKE),
            fault_limit=0,
        )
        seen = told(simulation, "good")
        penalties = [item for item in seen if isinstance(item, SeatPenalized)]
        assert penalties
        assert all(p == SeatPenalized(0, p.deal, FaultKind.ILLEGAL, None) for p in penalties)
        settled = [item for item in events(seen) if isinstance(item.event, DealSettled)]
        assert {item.faulting_seat for item in settled} <= {None, 0}
        assert len([item for item in settled if item.faulting_seat == 0]) == len(penalties)
        assert outcome.disqualified == ()

    def test_in_the_auction_the_revoke_policy_substitutes(self) -> None:
        def bad_bidder(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            if ask.view.phase is Phase.BIDDING:
                return [Answer(ask.request_id, "a pony", 1.0)]
            return passer(ask, deadline_ms, now)

        _, [outcome] = play(
            {"bad": bad_bidder, "good": passer},
            spec(SEATS, profile=self.LADDER, policy=FaultPolicy.REVOKE),
            fault_limit=0,
        )
        assert {d.action for d in bad_decisions(outcome) if d.fault} == {"pass"}
        assert not any(isinstance(a, Penalty) for deal in outcome.record.deals for a in deal.actions)

    def test_at_the_widow_decision_the_revoke_policy_declines_the_widow(self) -> None:
        """A revoke is a card played (seed 001): a declarer faulting at the widow declines it and plays on."""

        def bad_at_the_widow(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            if ask.view.phase is Phase.WIDOW:
                return [Answer(ask.request_id, "widow:none?", 1.0)]
            return bold(ask, deadline_ms, now)

        _, [outcome] = play(
            {"bad": bad_at_the_widow, "good": passer},
            spec(SEATS, profile=PROFILES["peep"], policy=FaultPolicy.REVOKE),
            fault_limit=0,
        )
        at_the_widow = [d for d in bad_decisions(outcome) if d.fault]
        assert at_the_widow
        assert {d.action for d in at_the_widow} == {"widow:none"}
        assert not any(isinstance(a, Penalty) for deal in outcome.record.deals for a in deal.actions)

    def test_a_bot_that_drives_its_stack_far_below_zero_cannot_stop_the_table(self) -> None:
        """Purchase Nap, 10 chips, rebuys: it bids high and revokes, buys back in; every record verifies."""
        rules = replace(PROFILES["purchase"], name="pub", starting_chips=10, rebuy=True)
        _, outcomes = play(
            {"bad": revoking(when_declarer=True), "good": passer},
            *(
                spec(SEATS, table=f"t{seed}", seed=seed, profile=rules, policy=FaultPolicy.REVOKE)
                for seed in range(4)
            ),
            fault_limit=0,
        )  # play() verifies each record
        for outcome in outcomes:
            for deal in replay(outcome.record).deals:
                stacks = deal.stacks or ()
                assert all(stacks[seat] + deal.fees[seat] > 0 for seat in deal.seats), "no chips"
        assert all(outcome.record.balances[0] < -10 for outcome in outcomes)


class TestDeclared:
    """The outcome says what each deal's declarer did: its contract, and the pool, widow and exchange."""

    @pytest.mark.parametrize("name", ["heather", "purchase", "ecarte", "peep"])
    def test_each_declarer_as_the_records_events_tell_it(self, name: str) -> None:
        """Seeded random play: declarers as the record's events give them, each figure used."""
        rng = random.Random(5)  # three sessions of each profile use every figure

        def anything(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
            del deadline_ms, now
            return [Answer(ask.request_id, str(rng.choice(ask.view.legal_actions)), 1.0)]

        seats = ("a", "b", "c")
        _, outcomes = play(
            dict.fromkeys(seats, anything),
            *(spec(seats, table=f"t{seed}", seed=seed, profile=PROFILES[name]) for seed in range(3)),
        )
        for outcome in outcomes:
            assert outcome.declared == _declared_from_events(outcome.record)
        declared = [declarer for outcome in outcomes for declarer in outcome.declared]
        assert {d.made for d in declared} == {True, False}
        profile = PROFILES[name]
        assert any(d.pool_chips for d in declared) is profile.has_pool
        assert any(d.exchanged for d in declared) is bool(profile.exchange_max)
        assert {d.widow_taken for d in declared} == ({True, False} if profile.widow else {None})
        assert {d.peeked for d in declared} == ({True, False} if profile.widow else {None})


def _declared_from_events(record: SessionRecord) -> tuple[Declared, ...]:
    """What each deal's declarer did, as the events of a replay of ``record`` tell it."""
    session = fresh_session(record)
    declared = []
    for number, deal in enumerate(record.deals):
        exchanged: dict[int, int] = {}
        peeked: set[int] = set()
        widow: bool | None = None
        claimed = 0
        settled: DealSettled | None = None
        for event in (event for action in deal.actions for event in session.apply(action)):
            match event:
                case CardsExchanged(seat=seat, count=count):
                    exchanged[seat] = count
                case WidowPeeked(seat=seat):
                    peeked.add(seat)
                case WidowTaken(taken=taken):
                    widow = taken
                case PoolClaimed(amount=amount):
                    claimed += amount
                case DealSettled():
                    settled = event
        assert settled is not None
        if settled.declarer is not None and settled.contract is not None:
            declarer = settled.declarer
            declared.append(
                Declared(
                    number,
                    declarer,
                    settled.contract,
                    bool(settled.made),
                    claimed,
                    widow,
                    declarer in peeked if record.profile.widow else None,
                    exchanged.get(declarer, 0),
                )
            )
    return tuple(declared)


class TestWhatSeatsAreTold:
    def test_each_seat_is_told_its_own_hand_and_nothing_hidden(self) -> None:
        simulation, [outcome] = play({"a": GOOD, "b": GOOD}, spec(("a", "b", "a", "b"), seed=11))
        for name, seats in (("a", (0, 2)), ("b", (1, 3))):
            tells = [item for item in simulation.received(name) if isinstance(item, Tell)]
            assert {tell.seat for tell in tells} == set(seats)
            for tell in tells:
                for item in events(list(tell.items)):
                    if isinstance(item.event, DealStarted):
                        assert set(item.hand) == _dealt(outcome, item.deal, tell.seat)
                        assert item.event.seats == outcome.record.deals[item.deal].seats
                    else:
                        assert item.hand == ()

    def test_tables_play_at_once_without_waiting_on_each_other(self) -> None:
        simulation, outcomes = play(
            {"bad": silent, "good": GOOD},
            spec(SEATS, table="slow"),
            spec(("good",) * 4, table="fast"),
            fault_limit=0,
        )
        assert outcomes[1].faults == ()
        assert len(outcomes[0].faults) > 3
        del simulation


def _dealt(outcome: SessionOutcome, deal_number: int, seat: int) -> set[Card]:
    from referee.rules import Deal  # noqa: PLC0415

    record = outcome.record.deals[deal_number]
    deal = Deal(
        outcome.record.profile,
        deck=record.deck,
        dealer=record.dealer,
        table_size=outcome.record.table_size,
        seats=record.seats,
    )
    return set(deal.hands[seat])


class TestMatchAlone:
    """The table's loop without the arbiter: inputs in, outputs out."""

    def test_the_first_output_is_the_opening_then_one_request(self) -> None:
        match = Match(spec(("a", "b", "c", "d")), listening=("a",))
        out = match.start()
        assert isinstance(out[0], Tell)
        assert out[0].bot == "a"
        asks = [item for item in out if item.__class__.__name__ == "Ask"]
        assert len(asks) == 1
        assert match.asked is asks[0]
        ask = asks[0]
        assert ask.view.seat == ask.seat
        assert ask.view.legal_actions == match._session.legal_actions()  # noqa: SLF001

    def test_a_seat_that_does_not_answer_plays_the_fallback(self) -> None:
        match = Match(spec(("a", "b", "c", "d")))
        [ask] = match.start()
        assert isinstance(ask, Ask)
        out = match.unanswered(FaultKind.LATE, 1000.0)
        faulted = [item for item in out if isinstance(item, Faulted)]
        assert [(f.fault.kind, f.fault.seat, f.fault.bot) for f in faulted] == [
            (FaultKind.LATE, ask.seat, ask.bot)
        ]
        assert match._session.deal.bids == ((ask.seat, PASS),)  # noqa: SLF001
        assert fallback_action((PASS, Bid("nap"))) is PASS
        assert fallback_action((Card("AS"), Card("2H"), Card("2C"))) == Card("2C")

    def test_inputs_after_the_end_change_nothing(self) -> None:
        match = Match(spec(("a", "b", "c", "d")))
        match.start()
        out = match.abort()
        assert [type(item) for item in out] == [Closed] * 4 + [Finished]
        assert {item.reason for item in out if isinstance(item, Closed)} == {CloseReason.ABORTED}
        assert match.answered("pass", 1.0) == []
        assert match.unanswered(FaultKind.LATE, 1.0) == []
        assert match.abort() == []

    def test_a_late_answer_is_judged_by_the_clock_whoever_reports_it(self) -> None:
        match = Match(replace(spec(("a", "b", "c", "d")), time_limits=TimeLimits(100)))
        match.start()
        out = match.answered("pass", 100.5)
        assert [item.fault.kind for item in out if isinstance(item, Faulted)] == [FaultKind.LATE]
