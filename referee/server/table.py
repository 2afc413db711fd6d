"""One table: plays one session, asking each seat's bot for its decisions.

The table owns the clocks of its seats (decision limit plus a per-session time bank),
classifies every bad reply as a :class:`Fault`, applies the fault policy, disqualifies a
bot that passes the fault limit, and tells each seat what it may see: every request and
every event is built from that seat's own view.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from referee.rules import (
    BID_NAMES,
    CARDS,
    PASS,
    Bid,
    Card,
    DealSettled,
    DealStarted,
    FaultPolicy,
    IllegalActionError,
    Penalized,
    Penalty,
    Phase,
    Profile,
    Session,
    SessionRecord,
    parse_action,
    record_of,
)
from referee.server.faults import Fault, FaultKind
from referee.wire import nap_pb2
from referee.wire.codec import event_to_proto, seat_penalized_to_proto
from referee.wire.fastcodec import RequestEncoder

if TYPE_CHECKING:
    from collections.abc import Sequence

    from referee.rules import Action, Event
    from referee.server.connection import BotLink
    from referee.server.limits import ServerLimits, TimeLimits
    from referee.server.pending import Pending, Reply

DISQUALIFIED = "disqualified"
"""``Decision.fault`` of a decision the referee made for a disqualified bot."""


@dataclass(frozen=True, slots=True)
class SessionSpec:
    """A session to play: the table id, rules, seed, bot name per seat and clocks.

    ``fault_policy`` None means the profile's own. ``ask_forced`` False: a seat whose only
    legal action is forced (exactly one legal action) is not asked; the referee plays it
    at once and the bot sees it in its next view (and in its events).
    """

    table: str
    profile: Profile
    seed: int
    seats: tuple[str, ...]
    time_limits: TimeLimits
    fault_policy: FaultPolicy | None = None
    ask_forced: bool = True


@dataclass(frozen=True, slots=True)
class Decision:
    """One action of a deal, as the referee decided it.

    ``action`` is its text; ``latency_ms`` how long the bot took; ``fault`` the fault kind
    when the referee substituted or penalized it (or ``"disqualified"``), else None;
    ``forced`` True when it was the seat's only legal action and the referee played it
    without asking (latency 0).
    """

    seat: int
    action: str
    latency_ms: float
    fault: str | None
    forced: bool = False


@dataclass(frozen=True, slots=True)
class SessionOutcome:
    """A played session: its record, its decisions per deal in order, faults, disqualified seats.

    ``settlements`` are the deals' settlements in order (what replaying the record gives).
    """

    record: SessionRecord
    decisions: tuple[tuple[Decision, ...], ...]
    faults: tuple[Fault, ...]
    disqualified: tuple[int, ...]
    settlements: tuple[DealSettled, ...] = ()


def lowest_card(cards: Sequence[Action]) -> Action:
    """The lowest card by rank, ties broken by suit order (clubs lowest)."""
    return min(cards, key=lambda card: (card.rank, card.suit) if isinstance(card, Card)
               else (0, 0))


_ACTION_OF_TEXT: Final[dict[str, Action]] = {card.text: card for card in CARDS}
_ACTION_OF_TEXT.update({name: Bid(name) for name in BID_NAMES})


class Table:
    """Plays one :class:`SessionSpec` with the given bot links (one per seat).

    The session advances in callbacks: a reply to the seat to act applies its action and
    asks the next seat at once, without a task switch per decision; :meth:`play` awaits
    the end.
    """

    def __init__(self, spec: SessionSpec, links: Sequence[BotLink], *, limits: ServerLimits,
                 logger: Any) -> None:  # noqa: ANN401 - any structlog-compatible logger
        self.spec = spec
        self.table = spec.table
        self._links = tuple(links)
        self._limits = limits
        self._log = logger
        self._policy = spec.fault_policy or spec.profile.fault_policy
        self._session = Session(spec.profile, table_size=len(spec.seats), seed=spec.seed)
        self._banks = [spec.time_limits.session_bank_ms] * len(spec.seats)
        self._decision_ms = spec.time_limits.decision_ms
        self._faults: list[Fault] = []
        self._fault_counts: dict[str, int] = {}
        self._disqualified: set[str] = set()
        self._seats_of: dict[str, list[int]] = {}
        for seat, link in enumerate(self._links):
            self._seats_of.setdefault(link.name, []).append(seat)
        self._unique_links = {link.name: link for link in self._links}
        self._decision = 0
        self._last_fault = FaultKind.LATE
        self._encoder = RequestEncoder(spec.table)
        self._decisions: list[list[Decision]] = [[]]
        self._settled: list[DealSettled] = []
        self._pending: Pending | None = None
        self._asked: tuple[int, tuple[Action, ...], int] | None = None
        """The seat asked, its legal actions and its time bank when asked."""
        self._done: asyncio.Future[None] | None = None

    # -- the session -----------------------------------------------------------------------

    async def play(self) -> SessionOutcome:
        """Play the session to its end and return what happened."""
        session = self._session
        done = self._done = asyncio.get_running_loop().create_future()
        for link in self._unique_links.values():
            link.tables[self.table] = self
        try:
            self._broadcast(session.opening, deal_number=0)
            self._advance()
            await done
        finally:
            self._done = None
            pending = self._pending
            self._pending = None
            for name, link in self._unique_links.items():
                link.leave(self.table, pending)
                if name not in self._disqualified:
                    self._close_for(link, nap_pb2.TABLE_CLOSED_REASON_SESSION_OVER
                                    if session.over else nap_pb2.TABLE_CLOSED_REASON_ABORTED)
        disqualified = sorted(s for name in self._disqualified for s in self._seats_of[name])
        return SessionOutcome(
            record=record_of(session),
            decisions=tuple(tuple(deal) for deal in self._decisions if deal),
            faults=tuple(self._faults),
            disqualified=tuple(disqualified),
            settlements=tuple(self._settled),
        )

    def _advance(self) -> None:
        """Play what needs no bot, then ask the seat to act; resolve :meth:`play` at the end.

        The request is encoded from the fields of that seat's view
        (:meth:`Session.view_fields`), the one source of what a seat may see.
        """
        session = self._session
        deals = session.deals
        links = self._links
        disqualified = self._disqualified
        ask_forced = self.spec.ask_forced
        while not session.over:
            deal = deals[-1]
            seat = deal.to_act
            assert seat is not None  # noqa: S101 - the session is not over
            link = links[seat]
            self._decision = deal.action_count
            if disqualified and link.name in disqualified:
                action = self._substitute()
                self._apply(Decision(seat, str(action), 0.0, DISQUALIFIED), action)
                continue
            if not ask_forced:
                legal = deal.legal_actions()
                if len(legal) == 1:
                    action = legal[0]
                    self._apply(Decision(seat, str(action), 0.0, None, forced=True), action)
                    continue
            fields = session.view_fields(seat)
            bank = self._banks[seat]
            self._asked = (seat, fields[18], bank)
            self._pending = link.ask(fields, table=self.table,
                                     deadline_ms=self._decision_ms + bank, time_bank_ms=bank,
                                     on_reply=self._on_reply, encoder=self._encoder)
            return
        done = self._done
        if done is not None and not done.done():
            done.set_result(None)

    def _on_reply(self, reply: Reply) -> None:
        done = self._done
        if done is None or done.done():
            return  # the session was stopped meanwhile
        try:
            decision, action = self._judge(reply)
            self._apply(decision, action)
            self._advance()
        except BaseException as exc:  # noqa: BLE001 - handed to play(), which raises it
            if not done.done():
                done.set_exception(exc)

    def _apply(self, decision: Decision, action: Action) -> None:
        deals = self._session.deals
        deal_number = len(deals) - 1
        events = self._session.apply(action)
        decisions = self._decisions
        decisions[deal_number].append(decision)
        if len(deals) > len(decisions):
            decisions.append([])
        for event in events:
            if event.__class__ is DealSettled:
                self._settled.append(event)
        self._broadcast(events, deal_number=deal_number)

    def _judge(self, reply: Reply) -> tuple[Decision, Action]:
        """The decision a reply makes and its action: the bot's, or the fault policy's."""
        asked = self._asked
        assert asked is not None  # noqa: S101 - a reply answers the last request
        seat, legal, bank = asked
        self._asked = self._pending = None
        link = self._links[seat]
        if self._disqualified and link.name in self._disqualified:  # while it was thinking
            action = self._substitute()
            return Decision(seat, str(action), reply.elapsed_ms, DISQUALIFIED), action
        decision_ms = self._decision_ms
        elapsed = reply.elapsed_ms
        over = elapsed - decision_ms
        if over > 0:
            self._banks[seat] = max(0, bank - int(over + 0.999))
        text = reply.action
        if text is None:
            kind = reply.missing or FaultKind.LATE
            away = "" if link.connected else " (bot disconnected)"
            detail = f"no answer within {decision_ms + bank} ms{away}"
            return self._fault(seat, kind, detail, elapsed, "")
        found = _ACTION_OF_TEXT.get(text)
        if found is not None:
            action, canonical = found, text  # a spelling found there is its action's str()
        else:
            try:
                action = parse_action(text)
            except ValueError as exc:
                return self._fault(seat, FaultKind.MALFORMED, str(exc), elapsed, text)
            canonical = str(action)
        if action not in legal:
            try:
                self._session.check(action, seat=seat)
                detail = f"{text} is not among the legal actions"
            except IllegalActionError as exc:
                detail = str(exc)
            return self._fault(seat, FaultKind.ILLEGAL, detail, elapsed, text)
        return Decision(seat, canonical, elapsed, None), action

    def _substitute(self) -> Action:
        session = self._session
        if session.deal.phase is Phase.BIDDING:
            return PASS
        return lowest_card(session.legal_actions())

    def _fault(self, seat: int, kind: FaultKind, detail: str, elapsed_ms: float,
               action_text: str) -> tuple[Decision, Action]:
        """Record a fault of ``seat``'s decision; return the decision the policy puts in its place."""
        link = self._links[seat]
        session = self._session
        deal_number = len(session.deals) - 1
        if self._policy is FaultPolicy.REVOKE and session.deal.phase is Phase.PLAY:
            action: Action = Penalty(seat)
            penalty = None
        else:
            action = self._substitute()
            penalty = seat_penalized_to_proto(table=self.table, seat=0, deal_number=deal_number,
                                              faulting_seat=seat, fault=kind.wire,
                                              substitute=action)
        self._record(Fault(kind, link.name, self.table, seat, deal_number, self._decision,
                           round(elapsed_ms, 3), detail),
                     request_seat=seat, action=action_text)
        if penalty is not None:
            self._broadcast_notice(penalty)
        self._last_fault = kind
        return Decision(seat, str(action), elapsed_ms, str(kind)), action

    def bot_fault(self, bot: str, kind: FaultKind, detail: str, *, request_id: int = 0,
                  action: str = "") -> None:
        """Record a fault of ``bot``'s connection (not of one decision) at this table."""
        if bot in self._disqualified:
            return
        self._record(Fault(kind, bot, self.table, None, len(self._session.deals) - 1,
                           self._decision, None, detail),
                     request_id=request_id, action=action)

    def _record(self, fault: Fault, *, request_seat: int | None = None, request_id: int = 0,
                action: str = "") -> None:
        self._faults.append(fault)
        count = self._fault_counts.get(fault.bot, 0) + 1
        self._fault_counts[fault.bot] = count
        limit = self._limits.fault_limit
        self._log.warning("fault", kind=str(fault.kind), bot=fault.bot, table=self.table,
                          seat=fault.seat, deal=fault.deal, decision=fault.decision,
                          elapsed_ms=fault.elapsed_ms, detail=fault.detail,
                          count=count, limit=limit)
        link = self._unique_links[fault.bot]
        notice = nap_pb2.RefereeMessage()
        wire = notice.fault
        wire.kind = fault.kind.wire
        wire.request_id = request_id
        wire.table = self.table
        if request_seat is not None:
            wire.seat = request_seat
        wire.action = action
        wire.message = fault.detail
        wire.fault_count = count
        wire.fault_limit = limit
        link.notify(notice)
        if limit and count >= limit and fault.bot not in self._disqualified:
            self._disqualified.add(fault.bot)
            self._log.warning("disqualified", bot=fault.bot, table=self.table, faults=count)
            pending = self._pending
            asked = self._asked
            link.leave(self.table, pending if asked is not None
                       and self._links[asked[0]] is link else None)
            self._close_for(link, nap_pb2.TABLE_CLOSED_REASON_DISQUALIFIED,
                            f"{count} faults: disqualified from this session")

    def _close_for(self, link: BotLink, reason: nap_pb2.TableClosedReason,
                   message: str = "") -> None:
        closed = nap_pb2.RefereeMessage()
        closed.table_closed.table = self.table
        closed.table_closed.reason = reason
        closed.table_closed.message = message
        link.notify(closed)

    # -- what each seat sees ---------------------------------------------------------------

    def _listeners(self) -> list[tuple[int, BotLink]]:
        return [(seat, link) for seat, link in enumerate(self._links)
                if link.wants_events and link.name not in self._disqualified]

    def _broadcast_notice(self, template: nap_pb2.TableEvent) -> None:
        for seat, link in self._listeners():
            event = nap_pb2.TableEvent()
            event.CopyFrom(template)
            event.seat = seat
            link.send_events((event,))

    def _broadcast(self, events: Sequence[Event], *, deal_number: int) -> None:
        for link in self._links:  # the common case: nobody listens
            if link.wants_events:
                break
        else:
            return
        listeners = self._listeners()
        if not listeners:
            return
        session = self._session
        faulting = next((e.seat for e in events if isinstance(e, Penalized)), None)
        fault_kind = self._last_fault.wire
        balances = tuple(session.balances)
        for seat, link in listeners:
            out = []
            number = deal_number
            for event in events:
                hand: Sequence[Card] = ()
                if isinstance(event, DealStarted):
                    number = event.deal
                    if seat in event.seats:
                        hand = tuple(session.deals[event.deal].hands[seat])
                out.append(event_to_proto(
                    event, table=self.table, seat=seat, deal_number=number, hand=hand,
                    balances=balances if isinstance(event, DealSettled) else (),
                    faulting_seat=faulting if isinstance(event, DealSettled) else None,
                    fault=fault_kind if isinstance(event, Penalized) else 0,
                ))
            link.send_events(out)

