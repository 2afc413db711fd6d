"""The codec: domain values to protobuf messages of `nap.v1` and back.

This is the only module that knows both sides: the values of `referee.rules` (views,
events, profiles) and of `referee.match` (what a seat is told, faults, closed tables) on
one side, the generated messages on the other. It imports the generated message module
(never grpc), so the SDK can use it to read what the referee sends.

Actions travel as text (``str(action)``: ``"nap"``, ``"10S"``) and are read back with
:func:`referee.rules.parse_action`. A view's fields are written and read through their
forms (:mod:`referee.wire.seatview`, read from :class:`~referee.rules.SeatView` itself), so
this module names none of them; the referee's hot path is :mod:`referee.wire.fastcodec`,
which writes the same bytes by hand (tests/test_codec.py compares them over many sessions).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from referee.match import CloseReason, FaultKind, SeatPenalized
from referee.rules import (
    AllPassed,
    AuctionWon,
    BidMade,
    CardPlayed,
    CardsExchanged,
    ChipsPaid,
    Contract,
    DealSettled,
    DealStarted,
    Event,
    Penalized,
    PoolClaimed,
    PoolReturned,
    Profile,
    ProfileError,
    SeatEliminated,
    SeatEvent,
    SeatRebought,
    SeatView,
    SessionOver,
    Suit,
    TrickWon,
    TrumpChosen,
    WidowPeeked,
    WidowTaken,
    parse_action,
)
from referee.rules.profiles import parameter_texts, parameters_from_texts
from referee.wire._gen.nap.v1 import nap_pb2
from referee.wire.seatview import VIEW_FORMS, bid_from, card_from, plays_from

if TYPE_CHECKING:
    from referee.match import Closed, Faulted
    from referee.rules.actions import Action

__all__ = [
    "closed_to_proto",
    "event_from_proto",
    "fault_kind_from_proto",
    "fault_kind_to_proto",
    "fault_to_proto",
    "profile_to_proto",
    "request_to_proto",
    "told_from_proto",
    "told_to_proto",
    "view_from_proto",
    "view_to_proto",
]

_SUIT_FROM: Final = {suit.letter: suit for suit in Suit}


# ---------------------------------------------------------------------------------------
# Views and decision requests
# ---------------------------------------------------------------------------------------


def view_to_proto(view: SeatView, *, table: str) -> nap_pb2.SeatView:
    """Encode ``view`` at ``table``.

    Each field in its form (:mod:`referee.wire.seatview`): ``legal_actions`` is not part
    of the wire view but travels in the DecisionRequest (see :func:`request_to_proto`).
    The current trick is sent during play only; while a lead is awaited it holds the
    leader (the seat to act) and no cards. The pool variants' fields are left at their
    defaults when the view's are (``exchanged`` empty while every count is 0), so a view
    of a profile without a pool is what it was before they existed.
    """
    msg = nap_pb2.SeatView()
    _fill_view(msg, view, table)
    return msg


def request_to_proto(
    view: SeatView,
    *,
    table: str,
    request_id: int,
    deadline_ms: int,
    time_bank_ms: int,
) -> nap_pb2.DecisionRequest:
    """Encode a decision request for the seat to act in ``view`` (legal actions from the view)."""
    msg = nap_pb2.DecisionRequest(
        request_id=request_id,
        table=table,
        seat=view.seat,
        deadline_ms=deadline_ms,
        legal_actions=[str(action) for action in view.legal_actions],
        time_bank_ms=time_bank_ms,
    )
    _fill_view(msg.view, view, table)
    return msg


def _fill_view(msg: nap_pb2.SeatView, view: SeatView, table: str) -> None:
    msg.table = table
    for form in VIEW_FORMS:
        form.put(msg, view)


def view_from_proto(msg: nap_pb2.SeatView | nap_pb2.DecisionRequest) -> SeatView:
    """Decode a wire view (or a request's view, with its legal actions).

    Given a DecisionRequest, the view's ``legal_actions`` are the request's; given a bare
    SeatView (which does not carry them), they are empty. Raises ValueError on a card,
    bid, suit or phase that is not one.
    """
    if isinstance(msg, nap_pb2.DecisionRequest):
        legal: tuple[Action, ...] = tuple(parse_action(text) for text in msg.legal_actions)
        wire = msg.view
    else:
        legal = ()
        wire = msg
    return SeatView(legal_actions=legal, **{form.name: form.get(wire) for form in VIEW_FORMS})


# ---------------------------------------------------------------------------------------
# Table events
# ---------------------------------------------------------------------------------------


def told_to_proto(  # noqa: C901, PLR0912, PLR0915 - one flat branch per event kind
    item: SeatEvent | SeatPenalized,
    *,
    table: str,
    seat: int,
) -> nap_pb2.TableEvent:
    """Encode what ``seat`` at ``table`` is told: an engine event or a penalty notice.

    A :class:`~referee.rules.SeatEvent` carries the context its event lacks: the deal it
    belongs to, the addressed seat's own hand on a DealStarted (only ever its own), the
    session balances and the faulting seat on a DealSettled. A
    :class:`~referee.match.SeatPenalized` becomes a SeatPenalized event: PENALTY_SUBSTITUTE
    with the action played for the seat (which also arrives as its own BidMade or
    CardPlayed), or PENALTY_REVOKE without one. The engine's own Penalized never comes
    here: the match core tells it as a SeatPenalized, which knows the fault's kind
    (TypeError otherwise). The pool variants' events are public and carry no card: an
    exchange is told as its count, a peep as who peeped.
    """
    msg = nap_pb2.TableEvent(table=table, seat=seat, deal_number=item.deal)
    if isinstance(item, SeatPenalized):
        penalized = msg.seat_penalized
        penalized.seat = item.seat
        penalized.fault = _FAULT_KIND_TO[item.fault]
        if item.substitute is None:
            penalized.penalty = nap_pb2.PENALTY_REVOKE
        else:
            penalized.penalty = nap_pb2.PENALTY_SUBSTITUTE
            penalized.substitute_action = str(item.substitute)
        return msg
    event = item.event
    if isinstance(event, CardPlayed):
        played = msg.card_played
        played.seat = event.seat
        played.card = event.card.text
    elif isinstance(event, BidMade):
        bid = msg.bid_made
        bid.seat = event.seat
        bid.bid = event.bid.name
    elif isinstance(event, TrickWon):
        won = msg.trick_won
        won.trick_number = event.number
        won.winner = event.winner
        add_card = won.cards.add
        for played_by, card in event.plays:
            add_card(seat=played_by, card=card.text)
    elif isinstance(event, DealStarted):
        started = msg.deal_started
        started.dealer = event.dealer
        started.hand.extend([card.text for card in item.hand])
        started.seats_in_play.extend(event.seats)
    elif isinstance(event, AuctionWon):
        msg.auction_won.declarer = event.declarer
        msg.auction_won.contract = event.contract
    elif isinstance(event, AllPassed):
        msg.all_passed.SetInParent()
    elif isinstance(event, TrumpChosen):
        msg.trump_chosen.suit = event.suit.letter
    elif isinstance(event, DealSettled):
        settled = msg.deal_settled
        if event.declarer is not None:
            settled.declarer = event.declarer
        settled.contract = event.contract or ""
        settled.tricks_taken = event.tricks
        settled.made = bool(event.made)
        settled.payments.extend(event.payments)
        settled.balances.extend(item.balances)
        if item.faulting_seat is not None:
            settled.faulting_seat = item.faulting_seat
    elif isinstance(event, SeatEliminated):
        msg.seat_eliminated.seat = event.seat
        msg.seat_eliminated.reason = nap_pb2.ELIMINATION_REASON_OUT_OF_CHIPS
    elif isinstance(event, SeatRebought):
        msg.seat_rebought.seat = event.seat
        msg.seat_rebought.chips = event.chips
    elif isinstance(event, SessionOver):
        msg.session_over.balances.extend(event.balances)
        msg.session_over.winners.extend(event.winners)
    elif isinstance(event, CardsExchanged):
        msg.cards_exchanged.seat = event.seat
        msg.cards_exchanged.count = event.count
    elif isinstance(event, ChipsPaid):
        msg.chips_paid.seat = event.seat
        msg.chips_paid.amount = event.amount
    elif isinstance(event, WidowPeeked):
        msg.widow_peeked.seat = event.seat
    elif isinstance(event, WidowTaken):
        msg.widow_taken.seat = event.seat
        msg.widow_taken.taken = event.taken
    elif isinstance(event, PoolClaimed):
        msg.pool_claimed.seat = event.seat
        msg.pool_claimed.amount = event.amount
    elif isinstance(event, PoolReturned):
        msg.pool_returned.refunds.extend(event.refunds)
    elif isinstance(event, Penalized):
        text = (
            f"{event!r} is told as a referee.match.SeatPenalized, which carries the "
            "fault's kind, not as an engine event"
        )
        raise TypeError(text)
    else:  # pragma: no cover - the Event union is closed
        text = f"not an event: {event!r}"
        raise TypeError(text)
    return msg


def event_from_proto(msg: nap_pb2.TableEvent) -> Event | None:  # noqa: C901, PLR0911, PLR0912 - one return per kind
    """Decode a wire event into the engine's event, or None when it has none.

    None for a substitution notice (a SeatPenalized with PENALTY_SUBSTITUTE: the referee's
    doing, not the engine's) and for event kinds this version does not know (receivers
    ignore those). DealStarted's hand and DealSettled's balances and faulting seat are
    wire context with no place in the engine's events.
    """
    kind = msg.WhichOneof("event")
    if kind == "card_played":
        return CardPlayed(msg.card_played.seat, card_from(msg.card_played.card))
    if kind == "bid_made":
        return BidMade(msg.bid_made.seat, bid_from(msg.bid_made.bid))
    if kind == "trick_won":
        won = msg.trick_won
        return TrickWon(won.trick_number, won.winner, plays_from(won.cards))
    if kind == "deal_started":
        started = msg.deal_started
        return DealStarted(msg.deal_number, started.dealer, tuple(started.seats_in_play))
    if kind == "auction_won":
        return AuctionWon(msg.auction_won.declarer, msg.auction_won.contract)
    if kind == "all_passed":
        return AllPassed()
    if kind == "trump_chosen":
        return TrumpChosen(_SUIT_FROM[msg.trump_chosen.suit])
    if kind == "deal_settled":
        settled = msg.deal_settled
        declarer = settled.declarer if settled.HasField("declarer") else None
        return DealSettled(
            declarer=declarer,
            contract=settled.contract or None,
            tricks=settled.tricks_taken,
            made=settled.made if declarer is not None else None,
            payments=tuple(settled.payments),
        )
    if kind == "seat_penalized":
        penalized = msg.seat_penalized
        if penalized.penalty == nap_pb2.PENALTY_REVOKE:
            return Penalized(penalized.seat)
        return None
    if kind == "seat_eliminated":
        return SeatEliminated(msg.seat_eliminated.seat)
    if kind == "seat_rebought":
        return SeatRebought(msg.seat_rebought.seat, msg.seat_rebought.chips)
    if kind == "session_over":
        over = msg.session_over
        return SessionOver(tuple(over.balances), tuple(over.winners))
    return _pool_event_from_proto(msg, kind)


def told_from_proto(msg: nap_pb2.TableEvent) -> SeatEvent | SeatPenalized | None:
    """What a seat was told, as :func:`told_to_proto` had it: the inverse of that function.

    The engine's event with the context the wire adds (the deal, the seat's own hand on a
    DealStarted, the balances and faulting seat on a DealSettled), or the penalty notice;
    None for an event kind this version does not know. For a client that shows a seat
    everything it was told (``nap play``'s page), where :func:`event_from_proto` gives only
    the engine's event.
    """
    if msg.WhichOneof("event") == "seat_penalized":
        penalized = msg.seat_penalized
        fault = _FAULT_KIND_FROM.get(penalized.fault)
        if fault is None:
            return None
        substitute = (
            parse_action(penalized.substitute_action)
            if penalized.penalty == nap_pb2.PENALTY_SUBSTITUTE
            else None
        )
        return SeatPenalized(seat=penalized.seat, deal=msg.deal_number, fault=fault, substitute=substitute)
    event = event_from_proto(msg)
    if event is None:
        return None
    if isinstance(event, DealStarted):
        return SeatEvent(event.deal, event, hand=tuple(card_from(text) for text in msg.deal_started.hand))
    if isinstance(event, DealSettled):
        settled = msg.deal_settled
        faulting = settled.faulting_seat if settled.HasField("faulting_seat") else None
        return SeatEvent(msg.deal_number, event, balances=tuple(settled.balances), faulting_seat=faulting)
    return SeatEvent(msg.deal_number, event)


def _pool_event_from_proto(msg: nap_pb2.TableEvent, kind: str | None) -> Event | None:  # noqa: PLR0911 - one return per kind
    """The pool variants' events (exchanges, peeps, the widow, chips paid, the pool claimed or returned)."""
    if kind == "cards_exchanged":
        return CardsExchanged(msg.cards_exchanged.seat, msg.cards_exchanged.count)
    if kind == "chips_paid":
        return ChipsPaid(msg.chips_paid.seat, msg.chips_paid.amount)
    if kind == "widow_peeked":
        return WidowPeeked(msg.widow_peeked.seat)
    if kind == "widow_taken":
        return WidowTaken(msg.widow_taken.seat, msg.widow_taken.taken)
    if kind == "pool_claimed":
        return PoolClaimed(msg.pool_claimed.seat, msg.pool_claimed.amount)
    if kind == "pool_returned":
        return PoolReturned(tuple(msg.pool_returned.refunds))
    return None


# ---------------------------------------------------------------------------------------
# Faults and closed tables
# ---------------------------------------------------------------------------------------

_FAULT_KIND_TO: Final[dict[FaultKind, nap_pb2.FaultKind]] = {
    FaultKind.LATE: nap_pb2.FAULT_KIND_LATE,
    FaultKind.ILLEGAL: nap_pb2.FAULT_KIND_ILLEGAL,
    FaultKind.MALFORMED: nap_pb2.FAULT_KIND_MALFORMED,
    FaultKind.UNKNOWN_REQUEST: nap_pb2.FAULT_KIND_UNKNOWN_REQUEST,
    FaultKind.DISCONNECT: nap_pb2.FAULT_KIND_DISCONNECT,
    FaultKind.OVERSIZED: nap_pb2.FAULT_KIND_OVERSIZED,
}
"""By name: ``UNKNOWN_REQUEST`` is ``FAULT_KIND_UNKNOWN_REQUEST`` (tests/test_codec.py checks every kind)."""
_FAULT_KIND_FROM: Final[dict[int, FaultKind]] = {number: kind for kind, number in _FAULT_KIND_TO.items()}
_CLOSE_REASON_TO: Final[dict[CloseReason, nap_pb2.TableClosedReason]] = {
    CloseReason.SESSION_OVER: nap_pb2.TABLE_CLOSED_REASON_SESSION_OVER,
    CloseReason.ABORTED: nap_pb2.TABLE_CLOSED_REASON_ABORTED,
    CloseReason.DISQUALIFIED: nap_pb2.TABLE_CLOSED_REASON_DISQUALIFIED,
}


def fault_kind_to_proto(kind: FaultKind) -> nap_pb2.FaultKind:
    """The nap.v1 FaultKind number of ``kind``."""
    return _FAULT_KIND_TO[kind]


def fault_kind_from_proto(number: int) -> FaultKind | None:
    """The fault kind a nap.v1 FaultKind number names; None for UNSPECIFIED or an unknown one."""
    return _FAULT_KIND_FROM.get(number)


def fault_to_proto(faulted: Faulted) -> nap_pb2.Fault:
    """Encode the notice of a fault to its bot.

    The seat is left unset when the fault belongs to the bot's connection rather than to
    one of its seats' decisions (``fault.seat`` None); the message is the fault's detail.
    """
    fault = faulted.fault
    msg = nap_pb2.Fault(
        kind=_FAULT_KIND_TO[fault.kind],
        request_id=faulted.request_id,
        table=fault.table,
        action=faulted.action,
        message=fault.detail,
        fault_count=faulted.count,
        fault_limit=faulted.limit,
    )
    if fault.seat is not None:
        msg.seat = fault.seat
    return msg


def closed_to_proto(closed: Closed) -> nap_pb2.TableClosed:
    """Encode the notice that nothing more will come to a bot from ``closed.table``."""
    return nap_pb2.TableClosed(
        table=closed.table, reason=_CLOSE_REASON_TO[closed.reason], message=closed.message
    )


# ---------------------------------------------------------------------------------------
# Profiles
# ---------------------------------------------------------------------------------------


_IN_FIELDS_OF_THEIR_OWN: Final = frozenset({"name", "summary", "min_players", "max_players", "hand_size"})
"""The parameters a Profile message holds in fields of its own (the ladder too); the others
are its text ``parameters`` (:func:`~referee.rules.profiles.parameter_texts`)."""


def profile_to_proto(profile: Profile) -> nap_pb2.Profile:
    """Encode a rules profile (parameter keys as listed in docs/protocol.md)."""
    return nap_pb2.Profile(
        name=profile.name,
        description=profile.summary,
        min_seats=profile.min_players,
        max_seats=profile.max_players,
        hand_size=profile.hand_size,
        contracts=[
            nap_pb2.Contract(
                bid=contract.name,
                label=contract.label,
                tricks=contract.tricks,
                misere=contract.misere,
                won_per_opponent=contract.win,
                lost_per_opponent=contract.lose,
                over=contract.over or "",
            )
            for contract in profile.contracts
        ],
        parameters={
            name: text
            for name, text in parameter_texts(profile).items()
            if name not in _IN_FIELDS_OF_THEIR_OWN
        },
    )


def profile_from_proto(msg: nap_pb2.Profile) -> Profile:
    """Decode a rules profile sent by :func:`profile_to_proto` (``from_proto(to_proto(p)) == p``).

    A parameter the message lacks (a referee older than the parameter) takes the
    profile's default. Raises ProfileError (a ValueError) when it makes no valid profile.
    """
    texts = {name: text for name, text in msg.parameters.items() if name not in _IN_FIELDS_OF_THEIR_OWN}
    try:
        parameters = {"source": "", **parameters_from_texts(texts)}
        return Profile(
            name=msg.name,
            summary=msg.description,
            contracts=tuple(
                Contract(
                    c.bid,
                    c.label,
                    c.tricks,
                    c.won_per_opponent,
                    c.lost_per_opponent,
                    c.misere,
                    c.over or None,
                )
                for c in msg.contracts
            ),
            min_players=msg.min_seats,
            max_players=msg.max_seats,
            hand_size=msg.hand_size,
            **parameters,
        )
    except (TypeError, ValueError) as exc:
        text = f"the profile {msg.name!r} from the referee is not a valid profile: {exc}"
        raise ProfileError(text) from exc
