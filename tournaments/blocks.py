"""One duplicate block, played on a referee or in process: the unit of work of a tournament.

:func:`run_block` plays a block's rotations one after another (so no bot ever holds two
hands of one board set at once) on a given referee and returns each session's
:class:`FinishedSession`: the :class:`~tournaments.results.SessionResult` and the log
payload. It is a function of its :class:`BlockRun` and a referee only, so a worker
elsewhere (Ray) can run it with its own referee and bot processes, with no change to
scheduling or storage. :func:`play_block_in_process` plays the same block with the bots'
policies called directly, without gRPC, for comparison.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clients.sdk.bot import Bot, lowest_action
from referee.rules import (
    Action,
    DealSettled,
    FaultPolicy,
    Profile,
    Session,
    SessionRecord,
    record_of,
)
from referee.server import Decision, Referee, SessionSpec, TimeLimits
from tournaments.results import Declaration, FaultRecord, SeatResult, SessionResult
from tournaments.scheduler import BlockSpec

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence

    from referee.server import Fault

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
        """The referee's table id for one rotation: unique across tournaments and blocks."""
        return f"t{self.tournament}-b{self.index}-r{rotation}"


@dataclass(frozen=True, slots=True)
class FinishedSession:
    """A played session: its result for the store and its log payload for the log file."""

    result: SessionResult
    log: dict[str, Any]


async def run_block(
    spec: BlockRun,
    referee: Referee,
    *,
    on_session: Callable[[FinishedSession], Awaitable[None]] | None = None,
) -> list[FinishedSession]:
    """Play the block's remaining rotations one after another on ``referee``.

    ``on_session`` (if given) is awaited with each session as soon as it is over, before
    the next rotation starts: the tournament commits there, so a crash loses at most the
    sessions in flight. Every bot of ``spec.bots`` must be registered with ``referee``.
    """
    finished = []
    block = spec.block
    for rotation in spec.rotations:
        seating = block.seating(rotation)
        outcome = await referee.play_session(SessionSpec(
            table=spec.table(rotation), profile=spec.profile, seed=spec.board_seed,
            seats=seating, time_limits=spec.time_limits, fault_policy=spec.fault_policy,
            ask_forced=spec.ask_forced,
        ))
        session = finish_session(spec, rotation, outcome.record, outcome.decisions,
                                 [_fault_record(fault, seating) for fault in outcome.faults],
                                 disqualified=outcome.disqualified,
                                 settled=outcome.settlements or None)
        if on_session is not None:
            await on_session(session)
        finished.append(session)
    return finished


def _fault_record(fault: Fault, seating: Sequence[str]) -> FaultRecord:
    """The referee's fault as stored: a missing seat is the bot's seat, other gaps are -1."""
    seat = fault.seat
    if seat is None:
        seat = seating.index(fault.bot) if fault.bot in seating else -1
    return FaultRecord(
        kind=str(fault.kind), bot=fault.bot, seat=seat,
        deal=-1 if fault.deal is None else fault.deal,
        decision=-1 if fault.decision is None else fault.decision,
        elapsed_ms=0.0 if fault.elapsed_ms is None else float(fault.elapsed_ms),
        detail=fault.detail,
    )


def settlements(record: SessionRecord) -> list[DealSettled]:
    """Replay ``record`` and return each deal's settlement, in order."""
    session = Session(record.profile, table_size=record.table_size, seed=record.seed,
                      dealer=record.first_dealer, decks=[d.deck for d in record.deals])
    settled: list[DealSettled] = []
    for deal in record.deals:
        for action in deal.actions:
            settled.extend(e for e in session.apply(action) if isinstance(e, DealSettled))
    return settled


def finish_session(  # noqa: PLR0913 - the parts of a played session, all keywords but the key
    spec: BlockRun,
    rotation: int,
    record: SessionRecord,
    decisions: Iterable[Iterable[Decision]],
    faults: Sequence[FaultRecord],
    *,
    disqualified: Sequence[int] = (),
    settled: Sequence[DealSettled] | None = None,
) -> FinishedSession:
    """Build a played session's result and log payload (pure).

    Chips are the seats' final balances; each of w winners gets win share 1/w; each deal
    a seat declared in adds a declaration (contract, made or failed). ``settled`` are the
    deals' settlements when the caller has them (the referee's outcome does); otherwise
    they come from replaying ``record``.
    """
    seating = spec.block.seating(rotation)
    declared: list[list[Declaration]] = [[] for _ in seating]
    for settled_deal in settlements(record) if settled is None else settled:
        if settled_deal.declarer is not None and settled_deal.contract is not None:
            declared[settled_deal.declarer].append(
                Declaration(settled_deal.contract, bool(settled_deal.made)))
    share = 1 / len(record.winners) if record.winners else 0.0
    seats = tuple(
        SeatResult(seat=seat, bot=bot, chips=record.balances[seat],
                   win_share=share if seat in record.winners else 0.0,
                   declarations=tuple(declared[seat]),
                   faults=sum(1 for fault in faults if fault.seat == seat))
        for seat, bot in enumerate(seating)
    )
    result = SessionResult(tournament=spec.tournament, block=spec.index, rotation=rotation,
                           board_seed=spec.board_seed, seats=seats, faults=tuple(faults))
    log = {
        "board_seed": spec.board_seed,
        "profile": spec.profile.name,
        "bots": [{"seat": seat, "bot": bot} for seat, bot in enumerate(seating)],
        "record": record.to_json(),
        "decisions": [
            [_decision_json(decision) for decision in deal] for deal in decisions
        ],
        "faults": [
            {"kind": f.kind, "bot": f.bot, "seat": f.seat, "deal": f.deal,
             "decision": f.decision, "elapsed_ms": f.elapsed_ms, "detail": f.detail}
            for f in faults
        ],
        "disqualified": list(disqualified),
        "result": {
            "seats": [
                {"seat": s.seat, "bot": s.bot, "chips": s.chips, "win_share": s.win_share,
                 "faults": s.faults,
                 "declarations": [{"contract": d.contract, "made": d.made}
                                  for d in s.declarations]}
                for s in seats
            ],
            "winners": list(record.winners),
        },
    }
    return FinishedSession(result=result, log=log)


def _decision_json(decision: Decision) -> dict[str, Any]:
    item: dict[str, Any] = {"action": decision.action, "seat": decision.seat,
                            "latency_ms": round(decision.latency_ms, 3)}
    if decision.fault is not None:
        item["fault"] = decision.fault
    if decision.forced:
        item["forced"] = True
    return item


def play_block_in_process(
    spec: BlockRun, bots: Mapping[str, Callable[[], Bot]]
) -> list[FinishedSession]:
    """Play the block with each bot's policy called directly: no referee, no gRPC, no clock.

    ``bots`` maps each bot name to a factory of :class:`clients.sdk.Bot` (one instance per
    seat and session, as the SDK makes them). A bot that raises or answers an illegal
    action is faulted (``crash`` / ``illegal``) and the lowest legal action is played.
    Each bot's ``table`` is the same id the referee would use, and forced moves are asked
    or not as the referee would (``spec.ask_forced``), so seeded bots choose the same
    actions here as over gRPC.
    """
    finished = []
    block = spec.block
    for rotation in spec.rotations:
        seating = block.seating(rotation)
        session = Session(spec.profile, table_size=len(seating), seed=spec.board_seed)
        players = []
        for place, name in enumerate(seating):
            bot = bots[name]()
            bot.table, bot.seat = spec.table(rotation), place
            players.append(bot)
        listeners = [bot for bot in players if type(bot).on_event is not Bot.on_event]
        _tell(listeners, session.opening)
        decisions: list[list[Decision]] = [[]]
        faults: list[FaultRecord] = []
        settled: list[DealSettled] = []
        while not session.over:
            to_act = session.to_act
            assert to_act is not None  # noqa: S101 - a session not over has a seat to act
            seat: int = to_act
            deal_number = len(session.deals) - 1
            decision, action, detail = _decide_in_process(session, players[seat], seat,
                                                          ask_forced=spec.ask_forced)
            if decision.fault is not None:
                faults.append(FaultRecord(decision.fault, seating[seat], seat, deal_number,
                                          len(session.deal.actions), decision.latency_ms,
                                          detail))
            decisions[deal_number].append(decision)
            events = session.apply(action)
            settled.extend(e for e in events if isinstance(e, DealSettled))
            if len(session.deals) > len(decisions):
                decisions.append([])
            _tell(listeners, events)
        finished.append(finish_session(spec, rotation, record_of(session),
                                       [d for d in decisions if d], faults, settled=settled))
    return finished


def _decide_in_process(session: Session, bot: Bot, seat: int, *, ask_forced: bool,
                       ) -> tuple[Decision, Action, str]:
    """The seat's decision, the action played, and the fault's detail if the bot faulted."""
    legal = session.legal_actions()
    if not ask_forced and len(legal) == 1:
        return Decision(seat, str(legal[0]), 0.0, None, forced=True), legal[0], ""
    view = session.view(seat)
    start = time.perf_counter()
    fault: tuple[str, str] | None = None
    try:
        action = bot.decide(view)
    except Exception as exc:  # noqa: BLE001 - a bot's failure is a fault, not ours
        action, fault = lowest_action(legal), ("crash", repr(exc))
    else:
        if action not in legal:
            fault = ("illegal", f"{action} is not among the legal actions")
            action = lowest_action(legal)
    elapsed = (time.perf_counter() - start) * 1000
    decision = Decision(seat, str(action), elapsed, None if fault is None else fault[0])
    return decision, action, "" if fault is None else fault[1]


def _tell(listeners: Sequence[Bot], events: Iterable[object]) -> None:
    for event in events:
        for bot in listeners:
            bot.on_event(event)
