"""One table's game loop as a pure state machine: ask, judge the answer, apply the fault policy.

A :class:`Match` plays one :class:`~referee.match.messages.SessionSpec`. It advances as
far as it can without a bot (forced moves when they are not asked, every decision of a
disqualified bot), then hands out an :class:`~referee.match.messages.Ask` for the seat to
act and waits for its reply: :meth:`Match.answered` with the bot's text, or
:meth:`Match.unanswered` when none came (late, the bot gone, the request withdrawn).

Judging a reply: past the seat's deadline (decision limit plus bank) on its bot's clock it
is late (on the CPU clock, the arbiter charges the CPU and says when it was outrun; the
wall clock is then a backstop); text that is no bid or card is malformed; a bid or card
the rules forbid now is illegal. A faulty
decision is replaced by the policy: under *substitute* the referee plays
:func:`~referee.rules.fallback_action` for the seat; under *revoke*, in play, the deal
stops with a :class:`~referee.rules.Penalty` against the seat. A bot whose faults at this
table reach the limit is disqualified: its table is closed to it, and the referee plays
the fallback for its seats to the end.

Every output is data; each seat is told what happened through
:meth:`~referee.rules.Session.tell`, its one exit for hidden information. Nothing here
reads a clock: elapsed times (and CPU charged) come in with the replies.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Final

from referee.match.clock import SeatClocks
from referee.match.faults import Fault, FaultKind
from referee.match.messages import (
    DISQUALIFIED,
    Ask,
    Closed,
    CloseReason,
    Decision,
    Declared,
    Faulted,
    Finished,
    SeatPenalized,
    SessionOutcome,
    Tell,
)
from referee.rules import (
    BID_NAMES,
    CARDS,
    Bid,
    DealSettled,
    FaultPolicy,
    IllegalActionError,
    Penalized,
    Penalty,
    Phase,
    PoolClaimed,
    Session,
    fallback_action,
    parse_action,
    record_of,
)

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Sequence

    from referee.match.messages import Output, SessionSpec
    from referee.rules import Action, Deal, Event, SeatEvent, SessionRecord

_ACTION_OF_TEXT: Final[dict[str, Action]] = {card.text: card for card in CARDS}
_ACTION_OF_TEXT.update({name: Bid(name) for name in BID_NAMES})
_TEXT_OF_ACTION: Final[dict[Action, str]] = {action: text for text, action in _ACTION_OF_TEXT.items()}
"""A card's or a bid's text (``str(action)`` without a call)."""
_new_decision: Final = tuple.__new__
"""Builds a :class:`Decision` from its fields' tuple without the named tuple's Python-level ``__new__``."""
_new_ask: Final = tuple.__new__
"""Builds an :class:`Ask` likewise."""
_DecisionFields = tuple[int, str, float, str | None, bool, float | None]
"""A :class:`Decision`'s fields, in order."""


class Match:
    """The state of one table's session between the bots' replies.

    ``fault_limit`` is the number of faults at this table after which a bot is
    disqualified (0: never). ``listening`` names the bots that want the table's events.
    ``request_ids`` numbers its requests (:attr:`Ask.request_id`): the arbiter's count,
    shared by its tables; by default a count of the table's own from 1.
    Each input returns the outputs it caused, in order.
    """

    def __init__(
        self,
        spec: SessionSpec,
        *,
        fault_limit: int = 0,
        listening: Collection[str] = (),
        request_ids: Iterator[int] | None = None,
    ) -> None:
        self.spec = spec
        self._request_ids = itertools.count(1) if request_ids is None else request_ids
        self.table = spec.table
        self._seats = spec.seats
        self._session = Session(spec.profile, table_size=len(spec.seats), seed=spec.seed)
        self._policy = spec.fault_policy or spec.profile.fault_policy
        self._clocks = SeatClocks(spec.time_limits, len(spec.seats))
        self._fault_limit = fault_limit
        self._listening = {bot for bot in listening if bot in spec.seats}
        self._faults: list[Fault] = []
        self._fault_counts: dict[str, int] = {}
        self._disqualified: set[str] = set()
        self._decisions: list[list[_DecisionFields]] = [[]]
        """Per deal, each decision's fields: plain tuples, which the garbage collector stops
        tracking, so that thousands of tables in flight do not lengthen its pauses."""
        self._settled: list[DealSettled] = []
        self._declared: list[Declared] = []
        self._penalty_fault = FaultKind.LATE
        """The kind of the fault behind the last penalty (told with it)."""
        self.asked: Ask | None = None
        """The request waiting for its reply, if any."""
        self.finished = False
        """Whether the session is over or was aborted (no input changes anything then)."""

    @property
    def bots(self) -> frozenset[str]:
        """The bots seated here."""
        return frozenset(self._seats)

    def record(self) -> SessionRecord:
        """The session's record so far: its decks (hidden cards) and every action applied.

        For the referee's own side only (a spectator's feed replays it into public events);
        never read on the way of a decision, so it costs nothing unless asked.
        """
        return record_of(self._session)

    # -- inputs ----------------------------------------------------------------------------

    def start(self) -> list[Output]:
        """Deal the first deal: tell the seats, then play on to the first request."""
        out: list[Output] = []
        self._tell(self._session.opening, 0, out)
        self._advance(out)
        return out

    def answered(self, text: str, elapsed_ms: float, cpu_ms: float | None = None) -> list[Output]:
        """The bot of the seat asked answered ``text`` after ``elapsed_ms``.

        ``cpu_ms`` is the CPU it was charged for it on the CPU clock (None: it is on the
        wall clock): then ``elapsed_ms`` is judged against the backstop only.
        """
        return self._reply(text, elapsed_ms, FaultKind.LATE, away=False, cpu_ms=cpu_ms, backstop=False)

    def unanswered(
        self,
        kind: FaultKind,
        elapsed_ms: float,
        *,
        away: bool = False,
        cpu_ms: float | None = None,
        backstop: bool = False,
    ) -> list[Output]:
        """No answer came for the seat asked: ``kind`` says why (late, or the bot gone).

        ``away`` says the bot was disconnected at the time (for the fault's detail);
        ``cpu_ms`` is the CPU it was charged on the CPU clock (None: it is on the wall
        clock), and ``backstop`` says it was late on the wall clock's backstop rather than
        in its CPU.
        """
        return self._reply(None, elapsed_ms, kind, away=away, cpu_ms=cpu_ms, backstop=backstop)

    def _reply(  # noqa: PLR0913 - one reply's parts
        self,
        text: str | None,
        elapsed_ms: float,
        kind: FaultKind,
        *,
        away: bool,
        cpu_ms: float | None,
        backstop: bool,
    ) -> list[Output]:
        """The seat asked answered ``text`` (None: no answer came, for the reason ``kind``)."""
        out: list[Output] = []
        asked = self.asked
        if asked is None or self.finished:
            return out
        self.asked = None
        seat = asked.seat
        disqualified = self._disqualified
        if disqualified and asked.bot in disqualified:  # while it was thinking
            action = self._fallback()
            self._apply((seat, str(action), elapsed_ms, DISQUALIFIED, False, cpu_ms), action, out)
        else:
            self._clocks.charge(seat, elapsed_ms if cpu_ms is None else cpu_ms)
            if text is None:
                detail = self._no_answer(asked, away=away, cpu=cpu_ms is not None, backstop=backstop)
                self._fault(asked, kind, detail, elapsed_ms, cpu_ms, "", out)
            else:
                self._judge(asked, text, elapsed_ms, cpu_ms, out)
        self._advance(out)
        return out

    def _judge(
        self, asked: Ask, text: str, elapsed_ms: float, cpu_ms: float | None, out: list[Output]
    ) -> None:
        """Play the answer if it is in time and legal; else record the fault and apply the policy."""
        if cpu_ms is None:
            if elapsed_ms > asked.late_ms:
                detail = self._no_answer(asked, away=False, cpu=False, backstop=False)
                self._fault(asked, FaultKind.LATE, detail, asked.late_ms, None, "", out)
                return
        elif cpu_ms > asked.late_ms or elapsed_ms > asked.backstop_ms:
            backstop = elapsed_ms > asked.backstop_ms
            detail = self._no_answer(asked, away=False, cpu=True, backstop=backstop)
            self._fault(asked, FaultKind.LATE, detail, elapsed_ms, cpu_ms, "", out)
            return
        action = _ACTION_OF_TEXT.get(text)
        played = text  # the canonical text: what the decision records
        if action is None:
            try:
                action = parse_action(text)
            except ValueError as exc:
                self._fault(asked, FaultKind.MALFORMED, str(exc), elapsed_ms, cpu_ms, text, out)
                return
            played = str(action)
        if action in asked.view.legal_actions:
            self._apply((asked.seat, played, elapsed_ms, None, False, cpu_ms), action, out)
        else:
            detail = self._illegal(action, text, asked.seat)
            self._fault(asked, FaultKind.ILLEGAL, detail, elapsed_ms, cpu_ms, text, out)

    def connection_fault(
        self, bot: str, kind: FaultKind, detail: str, *, request_id: int = 0, action: str = ""
    ) -> list[Output]:
        """Record a fault of ``bot``'s connection (not of one decision) at this table."""
        out: list[Output] = []
        if self.finished or bot in self._disqualified or bot not in self._seats:
            return out
        session = self._session
        fault = Fault(
            kind=kind,
            bot=bot,
            table=self.table,
            seat=None,
            deal=len(session.deals) - 1,
            decision=session.deal.action_count,
            elapsed_ms=None,
            detail=detail,
        )
        self._record(fault, request_id, action, out)
        return out

    def listen(self, bot: str, *, on: bool) -> None:
        """Whether ``bot`` wants this table's events from now on."""
        if on and bot in self._seats and bot not in self._disqualified:
            self._listening.add(bot)
        else:
            self._listening.discard(bot)

    def abort(self) -> list[Output]:
        """Stop the session where it stands: every bot still seated is told the table closed."""
        out: list[Output] = []
        if not self.finished:
            self._finish(CloseReason.ABORTED, out)
        return out

    # -- the loop --------------------------------------------------------------------------

    def _advance(self, out: list[Output]) -> None:
        """Play what needs no bot, then ask the seat to act; finish at the session's end."""
        session = self._session
        deals = session.deals
        seats = self._seats
        disqualified = self._disqualified
        ask_forced = self.spec.ask_forced
        while not session.over:
            deal = deals[-1]
            seat = deal.to_act
            assert seat is not None  # noqa: S101 - the session is not over
            bot = seats[seat]
            if disqualified and bot in disqualified:
                action = self._fallback()
                self._apply((seat, str(action), 0.0, DISQUALIFIED, False, None), action, out)
                continue
            legal = None
            if not ask_forced:
                legal = deal.legal_actions()
                if len(legal) == 1:
                    action = legal[0]
                    self._apply(
                        (seat, _TEXT_OF_ACTION.get(action) or str(action), 0.0, None, True, None),
                        action,
                        out,
                    )
                    continue
            clocks = self._clocks
            deadline = clocks.deadline_ms(seat)
            ask = self.asked = _new_ask(
                Ask,
                (
                    self.table,
                    seat,
                    bot,
                    session.view_fields(seat, legal_actions=legal),
                    deadline,
                    clocks.bank_ms(seat),
                    deadline + clocks.margin_ms,
                    next(self._request_ids),
                    clocks.backstop_at_ms(seat),
                ),
            )
            out.append(ask)
            return
        self._finish(CloseReason.SESSION_OVER, out)

    def _apply(self, decision: _DecisionFields, action: Action, out: list[Output]) -> None:
        session = self._session
        deals = session.deals
        deal_number = len(deals) - 1
        deal = deals[deal_number]
        events = session.apply(action)
        decisions = self._decisions
        decisions[deal_number].append(decision)
        if deal.over:
            self._settle(deal_number, deal, events)
            if len(deals) > len(decisions):
                decisions.append([])
        if self._listening:
            self._tell(events, deal_number, out)

    def _settle(self, number: int, deal: Deal, events: Sequence[Event]) -> None:
        """Keep deal ``number``'s settlement and what its declarer did.

        ``events`` are those of the action that ended the deal: its :class:`DealSettled`
        (always, :meth:`Session.apply`), then the session's, a :class:`PoolClaimed` among them.
        """
        claimed = 0
        for event in events:
            if isinstance(event, DealSettled):
                self._settled.append(settled := event)
            elif isinstance(event, PoolClaimed):  # the declarer's, after its settlement
                claimed += event.amount
        declarer = settled.declarer
        if declarer is None or settled.contract is None:
            return
        self._declared.append(
            Declared(
                deal=number,
                seat=declarer,
                contract=settled.contract,
                made=bool(settled.made),
                pool_chips=claimed,
                widow_taken=deal.widow_taken,
                peeked=declarer in deal.peeked if self._session.profile.widow else None,
                exchanged=deal.exchanged[declarer],
            )
        )

    def _fallback(self) -> Action:
        return fallback_action(self._session.legal_actions())

    def _finish(self, reason: CloseReason, out: list[Output]) -> None:
        self.finished = True
        self.asked = None  # (withdrawn by its bot's Closed)
        disqualified = self._disqualified
        out.extend(
            Closed(self.table, bot, reason) for bot in dict.fromkeys(self._seats) if bot not in disqualified
        )
        seats = sorted(seat for seat, bot in enumerate(self._seats) if bot in disqualified)
        outcome = SessionOutcome(
            record=record_of(self._session),
            decisions=tuple(
                tuple([_new_decision(Decision, decision) for decision in deal])
                for deal in self._decisions
                if deal
            ),
            faults=tuple(self._faults),
            disqualified=tuple(seats),
            settlements=tuple(self._settled),
            declared=tuple(self._declared),
        )
        out.append(Finished(self.table, outcome))

    # -- faults ----------------------------------------------------------------------------

    def _no_answer(self, asked: Ask, *, away: bool, cpu: bool, backstop: bool) -> str:
        """Why no answer counted, in a few words: on which clock it ran out."""
        margin = asked.late_ms - asked.deadline_ms
        within = f"{asked.deadline_ms} ms" + (f" (and a {margin} ms margin)" if margin else "")
        if cpu and backstop:
            within = f"the wall clock's backstop of {asked.backstop_ms} ms"
        elif cpu:
            within = f"{within} of its CPU"
        return f"no answer within {within}{' (bot disconnected)' if away else ''}"

    def _illegal(self, action: Action, text: str, seat: int) -> str:
        try:
            self._session.check(action, seat=seat)
        except IllegalActionError as exc:
            return str(exc)
        return f"{text} is not among the legal actions"

    def _fault(  # noqa: PLR0913, PLR0917 - one decision's fault
        self,
        asked: Ask,
        kind: FaultKind,
        detail: str,
        elapsed_ms: float,
        cpu_ms: float | None,
        text: str,
        out: list[Output],
    ) -> None:
        """Record a fault of the decision asked; play what the policy puts in its place."""
        seat = asked.seat
        session = self._session
        deal_number = len(session.deals) - 1
        fault = Fault(
            kind=kind,
            bot=asked.bot,
            table=self.table,
            seat=seat,
            deal=deal_number,
            decision=session.deal.action_count,
            elapsed_ms=round(elapsed_ms, 3),
            detail=detail,
        )
        self._record(fault, asked.request_id, text, out)
        if self._policy is FaultPolicy.REVOKE and session.deal.phase is Phase.PLAY:
            action: Action = Penalty(seat)
            self._penalty_fault = kind
        else:
            action = self._fallback()
            self._tell_all(SeatPenalized(seat, deal_number, kind, action), out)
        self._apply((seat, str(action), elapsed_ms, str(kind), False, cpu_ms), action, out)

    def _record(self, fault: Fault, request_id: int, action: str, out: list[Output]) -> None:
        self._faults.append(fault)
        bot = fault.bot
        count = self._fault_counts[bot] = self._fault_counts.get(bot, 0) + 1
        limit = self._fault_limit
        out.append(Faulted(fault, count, limit, request_id, action))
        if limit and count >= limit and bot not in self._disqualified:
            self._disqualified.add(bot)
            self._listening.discard(bot)
            out.append(
                Closed(
                    self.table,
                    bot,
                    CloseReason.DISQUALIFIED,
                    f"{count} faults: disqualified from this session",
                )
            )

    # -- what each seat is told ------------------------------------------------------------

    def _tell(self, events: Sequence[Event], deal: int, out: list[Output]) -> None:
        listening = self._listening
        if not listening:
            return
        session = self._session
        fault = self._penalty_fault
        out.extend(
            Tell(
                self.table,
                seat,
                bot,
                tuple(
                    item if item.event.__class__ is not Penalized else _penalized(item, fault)
                    for item in session.tell(seat, events, deal=deal)
                ),
            )
            for seat, bot in enumerate(self._seats)
            if bot in listening
        )

    def _tell_all(self, notice: SeatPenalized, out: list[Output]) -> None:
        listening = self._listening
        if not listening:
            return
        for seat, bot in enumerate(self._seats):
            if bot in listening:
                out.append(Tell(self.table, seat, bot, (notice,)))


def _penalized(told: SeatEvent, fault: FaultKind) -> SeatPenalized:
    """A revoke's penalty as the seats are told it: with the kind of the fault that caused it."""
    event = told.event
    if not isinstance(event, Penalized):
        msg = f"not a penalty: {event}"
        raise TypeError(msg)
    return SeatPenalized(event.seat, told.deal, fault)
