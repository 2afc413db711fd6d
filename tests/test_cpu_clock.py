"""The CPU decision clock, in simulated time: what a local bot is charged, and what it is not.

A bot process serves many tables and holds many requests at once; the referee reads its
process's CPU from outside and shares it out (:mod:`referee.match.cpu`). These tests drive
the ledger alone with schedules of work, and whole sessions on
:class:`referee.match.Simulation` with bots whose simulated processes spend CPU as the test
says: nothing waits on a real clock or reads a real CPU.

- an honest bot (each decision's own work within its limit, done while it holds the
  request) is never late, in whatever order it works and however many tables it serves,
  and each decision records the CPU its own work took when it works through them in turn;
- a slow bot cannot hide its work behind many tables: the share of its decisions that
  are late does not fall as it holds more of them;
- a bot that truly exceeds its CPU is charged; one that sleeps is not, until the wall
  clock's backstop; one that keeps cores busy in the background is charged, and only it.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from referee.match import (
    Answer,
    Arbiter,
    Ask,
    Clock,
    CpuLedger,
    Faulted,
    FaultKind,
    SessionSpec,
    Simulation,
    TimeLimits,
)
from referee.match.bots import CPU_POLL_MS
from referee.rules import fallback_action
from referee.rules.profiles import PROFILES

if TYPE_CHECKING:
    from collections.abc import Callable

    from referee.match import Reaction, SessionOutcome

HEATHER = PROFILES["heather"]
LIMIT = 1000.0


# -- the ledger alone -------------------------------------------------------------------------


class Serial:
    """A bot process working through the requests it holds one at a time, in an order of its choosing.

    ``work`` is each request's own CPU; ``pick`` chooses which held request to work on
    next. The process reads as the referee would: at each sending and each answer, and
    every ``poll`` ms of CPU in between.
    """

    def __init__(self, ledger: CpuLedger, *, poll: float = 7.0) -> None:
        self.ledger = ledger
        self.cpu = 0.0
        self.poll = poll
        self.charged: dict[int, float] = {}
        self.late: list[int] = []
        ledger.read(0.0)

    def send(self, request_id: int, limit: float = LIMIT) -> None:
        self.ledger.read(self.cpu)
        self.ledger.hold(request_id, limit)

    def spend(self, ms: float) -> None:
        """Spend ``ms`` of CPU, reading in steps of ``poll``: the requests outrun are late."""
        while ms > 0:
            step = min(self.poll, ms)
            self.cpu += step
            ms -= step
            self.ledger.read(self.cpu)
            self.late += [request_id for request_id, _ in self.ledger.overrun()]

    def answer(self, request_id: int) -> None:
        self.ledger.read(self.cpu)
        self.late += [late for late, _ in self.ledger.overrun()]
        if request_id not in self.late:
            self.charged[request_id] = self.ledger.release(request_id)


def test_an_honest_bot_working_through_many_tables_in_turn_is_charged_its_own_work() -> None:
    """Forty requests held at once, each 900 ms of work: 36 s of CPU, none late, each charged 900."""
    process = Serial(CpuLedger())
    for request_id in range(40):
        process.send(request_id)
    for request_id in range(40):
        process.spend(900.0)
        process.answer(request_id)
    assert process.late == []
    assert process.charged == pytest.approx(dict.fromkeys(range(40), 900.0))


def test_an_honest_bot_is_never_late_in_whatever_order_and_interleaving_it_works() -> None:
    """Random honest schedules: requests come and go, the work of those held is interleaved at random.

    Each request's own work is at most its limit and done only while it is held; the
    limits vary (the bank). No request is ever late, and the CPU charged adds up to the
    work done.
    """
    rng = random.Random(39)
    for _ in range(200):
        ledger = CpuLedger()
        cpu = 0.0
        ledger.read(cpu)
        held: dict[int, float] = {}  # request id -> its own work still to do
        charged = 0.0
        next_id = 0
        for _ in range(rng.randrange(5, 60)):
            if held and rng.random() < 0.4:  # the process works on one request it holds
                request_id = rng.choice(list(held))
                step = min(held[request_id], rng.uniform(1.0, 400.0))
                held[request_id] -= step
                cpu += step
                ledger.read(cpu)
                assert ledger.overrun() == []
                if held[request_id] <= 0 or rng.random() < 0.2:  # answered, all its work done or not
                    del held[request_id]
                    charged += ledger.release(request_id)
            else:  # the referee sends one more (at times on the heels of another)
                limit = rng.choice((LIMIT, LIMIT, 1500.0, 300.0))
                ledger.read(cpu)
                ledger.hold(next_id, limit)
                held[next_id] = rng.uniform(0.0, limit)
                next_id += 1
        for request_id in list(held):
            charged += ledger.release(request_id)
        assert charged == pytest.approx(cpu)


@pytest.mark.parametrize("tables", [1, 4, 16, 64])
def test_a_slow_bot_cannot_hide_its_work_behind_many_tables(tables: int) -> None:
    """Each decision takes 1.5 times its limit: the requests it holds lend it their limits once, no more.

    The process works through the requests it holds in turn, each table sending its next
    request as soon as the last is answered. However many it holds, the CPU its answers in
    time took never exceeds the limits of all its decisions (the late ones included) and
    of the requests it holds: ``tables`` limits lent once. Once those are spent, every
    decision is late, as with one table.
    """
    process = Serial(CpuLedger(), poll=5.0)
    queue = list(range(tables))
    for request_id in queue:
        process.send(request_id)
    decisions = 2000
    for next_id in range(tables, tables + decisions):
        current = queue.pop(0)
        process.spend(1500.0)
        process.answer(current)
        process.send(next_id)
        queue.append(next_id)
    in_time = len(process.charged)
    assert in_time * 1500.0 <= (decisions + tables) * LIMIT
    assert in_time + len(process.late) >= decisions
    last = set(range(decisions - 500, decisions))
    assert last <= set(process.late), f"{len(last - set(process.late))} of the last 500 in time"


def test_a_reading_lower_than_the_last_starts_again_from_it() -> None:
    """The process was started again: its counter starts again from 0."""
    ledger = CpuLedger()
    ledger.read(5000.0)
    ledger.hold(1, LIMIT)
    ledger.read(0.0)
    ledger.read(400.0)
    assert ledger.release(1) == 400.0


def test_cpu_spent_while_nothing_is_held_is_no_requests() -> None:
    ledger = CpuLedger()
    ledger.read(0.0)
    ledger.read(5000.0)  # between tables
    ledger.hold(1, LIMIT)
    ledger.read(5300.0)
    assert ledger.slack_ms == 700.0
    assert ledger.release(1) == 300.0


def test_the_next_reading_is_due_when_the_cores_could_spend_the_slack() -> None:
    ledger = CpuLedger(cores=2.0)
    ledger.read(0.0)
    assert ledger.check_in_ms(least_ms=CPU_POLL_MS) is None
    ledger.hold(1, LIMIT)
    ledger.hold(2, LIMIT)
    assert ledger.check_in_ms(least_ms=CPU_POLL_MS) == 1000.0  # 2000 ms of limits, two cores
    ledger.read(1995.0)
    assert ledger.check_in_ms(least_ms=CPU_POLL_MS) == CPU_POLL_MS


def test_the_oldest_request_held_is_late_and_takes_its_limit_and_the_excess() -> None:
    """Three requests held, 3050 ms spent: the oldest is late with 1050 ms; the others share 2000."""
    ledger = CpuLedger()
    ledger.read(0.0)
    ledger.hold(1, LIMIT)
    ledger.read(200.0)
    ledger.hold(2, LIMIT)
    ledger.read(1900.0)
    ledger.hold(3, LIMIT)
    ledger.read(3050.0)
    assert ledger.overrun() == [(1, 1050.0)]
    assert ledger.slack_ms == 0.0
    assert ledger.release(2) == 1000.0
    assert ledger.release(3) == 1000.0


# -- sessions on the CPU clock ---------------------------------------------------------------


def spec(seats: tuple[str, ...], *, limits: TimeLimits | None = None, table: str = "t") -> SessionSpec:
    return SessionSpec(table, HEATHER, 3, seats, limits or TimeLimits(decision_ms=1000))


def thinking(after_ms: float, cpu_ms: float) -> Callable[[Ask, int, float], list[Reaction]]:
    """A bot that answers its first legal action ``after_ms`` later, having spent ``cpu_ms`` on it."""

    def respond(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
        del deadline_ms, now
        return [Answer(ask.request_id, str(ask.view.legal_actions[0]), after_ms, cpu_ms)]

    return respond


def fallback(after_ms: float, cpu_ms: float) -> Callable[[Ask, int, float], list[Reaction]]:
    """A bot that answers what the referee would play for it: faults do not change the game."""

    def respond(ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
        del deadline_ms, now
        action = str(fallback_action(ask.view.legal_actions))
        return [Answer(ask.request_id, action, after_ms, cpu_ms)]

    return respond


def play(
    bots: dict[str, tuple[Callable[[Ask, int, float], list[Reaction]], float]],
    *specs: SessionSpec,
    cores: float | None = 2.0,
) -> tuple[Simulation, list[SessionOutcome]]:
    """Play ``specs``; each bot is (its reactions, the cores its process keeps busy besides)."""
    simulation = Simulation(fault_limit=0)
    for name, (respond, busy) in bots.items():
        simulation.add_bot(name, respond, cores=cores, busy=busy)
    return simulation, simulation.play(*specs)


SEATS = ("bot", "good", "good", "good")
GOOD = (thinking(5.0, 5.0), 0.0)


def late(outcome: SessionOutcome, bot: str = "bot") -> list[str]:
    return [fault.detail for fault in outcome.faults if fault.kind is FaultKind.LATE and fault.bot == bot]


def test_a_bot_that_truly_exceeds_its_cpu_is_charged() -> None:
    _, [outcome] = play({"bot": (thinking(1500.0, 1500.0), 0.0), "good": GOOD}, spec(SEATS))
    details = late(outcome)
    assert details
    assert set(details) == {"no answer within 1000 ms of its CPU"}
    decisions = [d for deal in outcome.decisions for d in deal if d.seat == 0 and not d.forced]
    assert {d.fault for d in decisions} == {"late"}
    assert all(d.cpu_ms is not None and d.cpu_ms >= 1000.0 for d in decisions)


def test_a_bot_that_waits_on_the_wall_clock_is_not_late_on_the_cpu_clock() -> None:
    """2 s on the wall, 50 ms of CPU: late on the wall clock, in time on the CPU clock."""
    _, [cpu] = play({"bot": (thinking(2000.0, 50.0), 0.0), "good": GOOD}, spec(SEATS))
    assert cpu.faults == ()
    decisions = [d for deal in cpu.decisions for d in deal if d.seat == 0 and not d.forced]
    assert {d.cpu_ms for d in decisions} == {50.0}
    assert {d.latency_ms for d in decisions} == {2000.0}
    _, [wall] = play({"bot": (thinking(2000.0, 50.0), 0.0), "good": GOOD}, spec(SEATS), cores=None)
    assert set(late(wall)) == {"no answer within 1000 ms"}


def test_a_bot_that_sleeps_past_the_backstop_is_charged() -> None:
    """The backstop is ten times the decision's limit, at least 10 s; ``backstop_ms`` sets it."""
    _, [outcome] = play({"bot": (thinking(10_500.0, 1.0), 0.0), "good": GOOD}, spec(SEATS))
    assert set(late(outcome)) == {"no answer within the wall clock's backstop of 10000 ms"}
    assert outcome.faults[0].elapsed_ms == 10_000.0
    limits = TimeLimits(decision_ms=1000, backstop_ms=3000)
    _, [shorter] = play({"bot": (thinking(3500.0, 1.0), 0.0), "good": GOOD}, spec(SEATS, limits=limits))
    assert set(late(shorter)) == {"no answer within the wall clock's backstop of 3000 ms"}


def test_the_bank_pays_for_cpu_not_for_waiting() -> None:
    """100 ms a decision, a 250 ms bank: 200 ms of CPU draws on it; 200 ms asleep does not."""
    limits = TimeLimits(decision_ms=100, session_bank_ms=250)
    _, [spending] = play({"bot": (thinking(200.0, 200.0), 0.0), "good": GOOD}, spec(SEATS, limits=limits))
    decisions = [d for deal in spending.decisions for d in deal if d.seat == 0 and not d.forced]
    assert [d.fault for d in decisions][:3] == [None, None, "late"]
    _, [sleeping] = play({"bot": (thinking(200.0, 20.0), 0.0), "good": GOOD}, spec(SEATS, limits=limits))
    assert sleeping.faults == ()


def test_a_bot_busy_in_the_background_is_charged_and_its_opponents_are_not() -> None:
    """Threads keeping two cores busy beside decisions of 100 ms in 600 ms: its own decisions are late.

    It answers what the referee plays for a late decision, so the game is the same with or
    without the threads: the opponents' faults (none) and chips are the same, and the
    opponents' decisions are charged their own CPU only.
    """
    bots = {"bot": (fallback(600.0, 100.0), 0.0), "good": GOOD}
    for seed in (3, 4, 5):
        table = replace(spec(SEATS), seed=seed)
        _, [calm] = play(bots, table)
        _, [spun] = play({**bots, "bot": (fallback(600.0, 100.0), 2.0)}, table)
        assert calm.faults == ()
        assert late(spun)
        assert {fault.bot for fault in spun.faults} == {"bot"}
        assert spun.record.balances == calm.record.balances
        good = [d for deal in spun.decisions for d in deal if d.seat != 0 and not d.forced]
        assert {d.cpu_ms for d in good} == {5.0}


def test_each_decision_records_its_cpu_and_the_clock_is_the_bots() -> None:
    simulation, [outcome] = play({"bot": (thinking(30.0, 12.5), 0.0), "good": GOOD}, spec(SEATS))
    assert simulation.clock("bot") is Clock.CPU
    mine = [d for deal in outcome.decisions for d in deal if d.seat == 0 and not d.forced]
    assert {d.cpu_ms for d in mine} == {12.5}
    forced = [d for deal in outcome.decisions for d in deal if d.forced]
    assert {d.cpu_ms for d in forced} <= {None}
    simulation, [wall] = play({"bot": (thinking(30.0, 12.5), 0.0), "good": GOOD}, spec(SEATS), cores=None)
    assert simulation.clock("bot") is Clock.WALL
    assert {d.cpu_ms for deal in wall.decisions for d in deal} == {None}


def test_a_backstop_too_short_is_refused() -> None:
    with pytest.raises(ValueError, match="backstop_ms"):
        TimeLimits(backstop_ms=-1)
    assert TimeLimits(decision_ms=3000).backstop == 30_000
    assert replace(TimeLimits(), backstop_ms=500).backstop == 500


def test_cpu_spent_before_a_request_is_sent_is_judged_among_the_requests_held_then() -> None:
    """1.5 s of CPU on the one request held, read just before a second is sent: the first is late.

    The reading comes before the second request is held; were it judged after, the second's
    limit would hide the overrun, though that CPU was spent before it was sent.
    """
    arbiter = Arbiter(fault_limit=0)
    arbiter.add_bot("bot")
    arbiter.clock_cpu("bot", cores=2.0)
    arbiter.attach("bot", max_batch=8, listening=False)
    seats = ("bot", "bot", "bot")
    outputs = arbiter.open(spec(seats, table="first"), 0.0)
    assert arbiter.read_cpu("bot", 0.0, 0.0) == []
    [(first, _)] = arbiter.take("bot", 0.0)
    outputs = arbiter.open(spec(seats, table="second"), 10.0)
    outputs = arbiter.read_cpu("bot", 1500.0, 1500.0)
    [late] = [item.fault for item in outputs if isinstance(item, Faulted)]
    assert (late.table, late.kind, late.detail) == (
        "first",
        FaultKind.LATE,
        "no answer within 1000 ms of its CPU",
    )
    taken = arbiter.take("bot", 1500.0)
    assert {ask.table for ask, _ in taken} == {
        "first",
        "second",
    }  # the first's next request, and the second's
    assert first.table == "first"
