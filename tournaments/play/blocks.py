"""One duplicate block, played on a referee or in process: the unit of work of a tournament.

:class:`BlockRun` is a block to play, self-contained, so that any worker with a referee
and bot processes plays it (:meth:`tournaments.play.host.BlockHost.play_block`: its rotations
one after another, so no bot ever holds two hands of one board set at once);
:func:`finish_session` turns each played session into a :class:`FinishedSession`, the
:class:`~tournaments.results.SessionResult` and the log payload.
:func:`play_block_in_process` plays the same block on the referee's match core in
process (:class:`referee.match.Simulation`), with the bots' policies called directly and
no gRPC: the same tables, clocks, faults and policies, for comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from clients.sdk.local import LocalBot
from referee.match import SessionSpec, Simulation, TimeLimits
from tournaments.plan.scheduler import BlockSpec, derive_seed
from tournaments.results import Declaration, SeatResult, SessionResult

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from clients.sdk.bot import Bot
    from referee.match import Decision, Fault, SessionOutcome
    from referee.rules import FaultPolicy, Profile
    from referee.server import ServerLimits


IN_PROCESS_CORES = 1.0
"""Bots played in process decide in the player's thread, one at a time: one core's CPU at most."""


@dataclass(frozen=True, slots=True)
class BlockRun:
    """One block to play, self-contained so that any worker with a referee can play it.

    ``bots`` is the seat order of rotation 0; ``rotations`` are the rotations still to play
    (all of them, unless resuming). ``ask_forced`` as in :class:`TournamentConfig`.
    """

    tournament: int
    index: int
    board_seed: int
    bots: tuple[str, ...]
    profile: Profile
    time_limits: TimeLimits
    rotations: tuple[int, ...]
    fault_policy: FaultPolicy | None = None
    ask_forced: bool = False

    @property
    def block(self) -> BlockSpec:
        """The scheduler's view of the block (for its seatings)."""
        return BlockSpec(index=self.index, board_seed=self.board_seed, bots=self.bots)

    def table(self, rotation: int) -> str:
        """The table id of one rotation, which the bots see: 16 hex digits that say nothing.

        Derived from the board seed (itself from the tournament's seed and the block's
        place), so it is the same on every run of the tournament and unique among its
        tables, yet names neither the block nor the rotation: two rotations of one board
        cannot be matched by their ids without the seed.
        """
        return f"{derive_seed(self.board_seed, 'table', rotation):016x}"

    def session(self, rotation: int) -> SessionSpec:
        """The session one rotation plays."""
        return SessionSpec(
            table=self.table(rotation),
            profile=self.profile,
            seed=self.board_seed,
            seats=self.block.seating(rotation),
            time_limits=self.time_limits,
            fault_policy=self.fault_policy,
            ask_forced=self.ask_forced,
        )


@dataclass(frozen=True, slots=True)
class FinishedSession:
    """A played session: its result for the store and its log payload for the log file."""

    result: SessionResult
    log: dict[str, Any]


def _at_seat(fault: Fault, seating: Sequence[str]) -> Fault:
    """The referee's fault as a session's result holds it: a fault of the bot's connection at its seat."""
    if fault.seat is not None or fault.bot not in seating:
        return fault
    return replace(fault, seat=seating.index(fault.bot))


def finish_session(spec: BlockRun, rotation: int, outcome: SessionOutcome) -> FinishedSession:
    """A played session's result and log payload (pure).

    Chips are the seats' final balances; each of w winners gets win share 1/w; each seat
    counts the decisions it was asked and those the referee played for it, and the CPU
    they were charged on the CPU clock (and how many were on it); each deal
    a seat declared in adds a declaration (contract, made or failed; in a profile with a
    pool, also the chips taken from the pool, the widow, the peep and the cards exchanged),
    as the match core saw it settle (:class:`referee.match.Declared`).
    """
    seating = spec.block.seating(rotation)
    record = outcome.record
    faults = [_at_seat(fault, seating) for fault in outcome.faults]
    declared: list[list[Declaration]] = [[] for _ in seating]
    for declarer in outcome.declared:
        declared[declarer.seat].append(
            Declaration(
                declarer.contract,
                declarer.made,
                pool_chips=declarer.pool_chips,
                widow_taken=declarer.widow_taken,
                peeked=declarer.peeked,
                exchanged=declarer.exchanged,
            )
        )
    share = 1 / len(record.winners) if record.winners else 0.0
    asked, substituted = [0] * len(seating), [0] * len(seating)
    cpu_us, clocked = [0] * len(seating), [0] * len(seating)
    for deal in outcome.decisions:
        for decision in deal:
            if not decision.forced:
                asked[decision.seat] += 1
                substituted[decision.seat] += decision.fault is not None
                if decision.cpu_ms is not None:
                    clocked[decision.seat] += 1
                    cpu_us[decision.seat] += round(decision.cpu_ms * 1000)
    seats = tuple(
        SeatResult(
            seat=seat,
            bot=bot,
            chips=record.balances[seat],
            win_share=share if seat in record.winners else 0.0,
            declarations=tuple(declared[seat]),
            faults=sum(1 for fault in faults if fault.seat == seat),
            asked=asked[seat],
            substituted=substituted[seat],
            cpu_us=cpu_us[seat],
            clocked=clocked[seat],
        )
        for seat, bot in enumerate(seating)
    )
    result = SessionResult(
        tournament=spec.tournament,
        block=spec.index,
        rotation=rotation,
        board_seed=spec.board_seed,
        seats=seats,
        faults=tuple(faults),
    )
    log = {
        "board_seed": spec.board_seed,
        "profile": spec.profile.name,
        "bots": [{"seat": seat, "bot": bot} for seat, bot in enumerate(seating)],
        "record": record.to_json(),
        "decisions": [[_decision_json(decision) for decision in deal] for deal in outcome.decisions],
        "faults": [fault.to_json() for fault in faults],
        "disqualified": list(outcome.disqualified),
        "result": {
            "seats": [
                {
                    "seat": s.seat,
                    "bot": s.bot,
                    "chips": s.chips,
                    "win_share": s.win_share,
                    "faults": s.faults,
                    "declarations": [
                        _declaration_json(d, pool=record.profile.has_pool) for d in s.declarations
                    ],
                }
                for s in seats
            ],
            "winners": list(record.winners),
        },
    }
    return FinishedSession(result=result, log=log)


def _declaration_json(declaration: Declaration, *, pool: bool) -> dict[str, Any]:
    """A declaration in a log's result; the pool variants' fields only in a profile with a pool."""
    item: dict[str, Any] = {"contract": declaration.contract, "made": declaration.made}
    if pool:
        item["pool_chips"] = declaration.pool_chips
        item["widow_taken"] = declaration.widow_taken
        item["peeked"] = declaration.peeked
        item["exchanged"] = declaration.exchanged
    return item


def _decision_json(decision: Decision) -> dict[str, Any]:
    item: dict[str, Any] = {
        "action": decision.action,
        "seat": decision.seat,
        "latency_ms": round(decision.latency_ms, 3),
    }
    if decision.cpu_ms is not None:
        item["cpu_ms"] = round(decision.cpu_ms, 3)
    if decision.fault is not None:
        item["fault"] = decision.fault
    if decision.forced:
        item["forced"] = True
    return item


def play_block_in_process(
    spec: BlockRun,
    bots: Mapping[str, Callable[[], Bot]],
    *,
    limits: ServerLimits | None = None,
) -> list[FinishedSession]:
    """Play the block on the match core in process: no gRPC, no bot processes.

    ``bots`` maps each bot name to a factory of :class:`clients.sdk.Bot` (one instance
    per seat and session, as the SDK makes them), answering through
    :class:`clients.sdk.local.LocalBot`. The sessions are the referee's: the same table
    ids, clocks (each bot on the CPU clock, as a local bot in a tournament: the CPU its
    decision took in this thread, with its think time on the wall as the backstop's),
    fault policy, fault limit and forced moves as over gRPC, so the same bots' choices
    give the same records and faults.
    ``limits`` are the referee's (its fault limit and reconnect grace); None plays with
    the match core's defaults, which are the referee's own (tests/test_import_graph.py
    checks it), without importing the referee's server and so grpc.
    """
    finished = []
    for rotation in spec.rotations:
        if limits is None:
            simulation = Simulation()
        else:
            simulation = Simulation(
                fault_limit=limits.fault_limit, reconnect_grace_ms=limits.reconnect_grace_s * 1000
            )
        for name in dict.fromkeys(spec.block.seating(rotation)):
            local = LocalBot(bots[name], rules=spec.profile)
            simulation.add_bot(
                name, local.respond, listening=local.listening, on_tell=local.tell, cores=IN_PROCESS_CORES
            )
        [outcome] = simulation.play(spec.session(rotation))
        finished.append(finish_session(spec, rotation, outcome))
    return finished
