"""The bot's side of a Play stream, so that the SDK never touches protobuf.

The mirror of :mod:`referee.wire.stream`: what a bot sends is written here as the bytes
to send (:func:`hello_message`, :func:`answers_message`, :func:`goodbye_message`), and
what the referee sends is read into small frozen values by :func:`read_referee_message`
(:class:`Welcome`, :class:`Refusal`, :class:`Batch`, :class:`TableClosed`, :class:`Fault`).
The SDK's connection opens the stream at :data:`PLAY_METHOD` with bytes both ways, so gRPC
neither encodes nor decodes.

A batch is on the bot's hot path, so it is read shallowly: each :class:`Request` carries
what every decision needs (ids, seat, legal action texts) and keeps the message it came
in, whose view :class:`RequestViews` decodes lazily (:mod:`referee.wire.fastdecode`);
each :class:`EventNotice` likewise, decoded by :func:`event_of` only for a bot that
listens. Answers are written field by field (:mod:`referee.wire.protowire`), byte for
byte what protobuf writes, from plain tuples the dispatcher makes at C speed. So the
SDK's CPU per decision is what it was when it built the messages itself (``bench/sdk.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, NamedTuple

from google.protobuf.message import DecodeError

from referee.rules import BID_NAMES, CARDS, DECLINE_EXCHANGE, DECLINE_WIDOW, PEEP, ProfileError, TakeWidow
from referee.wire._gen.nap.v1 import nap_pb2
from referee.wire.codec import event_from_proto, fault_kind_from_proto, profile_from_proto, told_from_proto
from referee.wire.fastdecode import ViewDecoder
from referee.wire.protowire import field_tag, length_delimited, varint
from referee.wire.stream import PROTOCOL_VERSION, RefusalReason

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from referee.match import FaultKind, SeatPenalized
    from referee.rules import Event, Profile, SeatEvent, SeatView

__all__ = [
    "PLAY_METHOD",
    "Answer",
    "Answers",
    "Batch",
    "EventNotice",
    "Fault",
    "RefereeMessage",
    "Refusal",
    "Request",
    "RequestViews",
    "TableClosed",
    "Welcome",
    "answers_message",
    "event_of",
    "goodbye_message",
    "hello_message",
    "read_batch",
    "read_referee_message",
    "told_of",
]

_PLAY: Final = nap_pb2.DESCRIPTOR.services_by_name["Referee"].methods_by_name["Play"]
PLAY_METHOD: Final = f"/{_PLAY.containing_service.full_name}/{_PLAY.name}"
"""The gRPC method of the Play stream (``/nap.v1.Referee/Play``), read from the descriptors."""


# ---------------------------------------------------------------------------------------
# What the referee sends
# ---------------------------------------------------------------------------------------


class Request(NamedTuple):
    """One decision for one seat (nap.v1 DecisionRequest).

    A tuple made at C speed, holding what every decision needs; the fields only the stdio
    bridge reads are read from the message when asked (each read of a message's field
    costs about what making this tuple does).
    """

    request_id: int
    """Echoed in the answer."""
    table: str
    seat: int
    legal_actions: Sequence[str]
    """The legal actions as the referee spells them (the message's own list, not a copy:
    not to be changed); an answer is one of these, verbatim."""
    message: nap_pb2.DecisionRequest
    """The request as received, for the decoders of its view: :class:`RequestViews`, and the
    stdio bridge's JSON lines."""

    @property
    def deadline_ms(self) -> int:
        """The decision's time limit as the referee sent it (from when it sent it)."""
        return self.message.deadline_ms

    @property
    def time_bank_ms(self) -> int:
        """What is left of the seat's time bank."""
        return self.message.time_bank_ms


class EventNotice(NamedTuple):
    """A table event as a seat may see it (nap.v1 TableEvent), not decoded yet (:func:`event_of`)."""

    table: str
    seat: int
    message: nap_pb2.TableEvent


@dataclass(frozen=True, slots=True)
class Fault:
    """Something the bot sent was faulty (nap.v1 Fault), for its own debugging: the game went on."""

    kind: FaultKind | None
    """None for a kind this version does not know."""
    table: str
    request_id: int
    message: str
    """The referee's detail, e.g. "must follow suit: hearts"."""
    count: int
    """Faults counted against the bot so far, this one included."""
    limit: int
    """Faults after which the bot is disqualified; 0: no limit."""


@dataclass(frozen=True, slots=True)
class Batch:
    """Work for the bot (nap.v1 Batch): its requests, the events before them, and its notices."""

    requests: tuple[Request, ...]
    events: tuple[EventNotice, ...] = ()
    closed: tuple[str, ...] = ()
    """Tables that closed (with Hello.notices_in_batch): handle them after the requests."""
    faults: tuple[Fault, ...] = ()


@dataclass(frozen=True, slots=True)
class TableClosed:
    """Nothing more will come for ``table`` (a notice of its own, without Hello.notices_in_batch)."""

    table: str


@dataclass(frozen=True, slots=True)
class Welcome:
    """The referee accepted the bot (nap.v1 Welcome)."""

    bot_id: str
    server_version: str
    protocol_version: int
    rules: Profile | None
    """The rules every table of the connection plays; None when the profile makes none."""
    rules_problem: str
    """Why the profile makes no rules ("" when it does)."""
    decision_ms: int
    session_bank_ms: int
    max_outstanding: int
    """The most requests the referee will have outstanding on the connection at once."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """The referee refused the bot (nap.v1 Refusal) and ends the stream."""

    reason: RefusalReason | None
    """None for a reason this version does not know."""
    message: str

    @property
    def code(self) -> str:
        """The reason as nap.v1 names it, without its prefix (``NO_TABLES``), for a log line."""
        return self.reason.name if self.reason is not None else "UNSPECIFIED"


RefereeMessage = Welcome | Refusal | Batch | TableClosed | Fault
"""Anything :func:`read_referee_message` gives."""

_from_string: Final = nap_pb2.RefereeMessage.FromString
_new: Final = tuple.__new__
_REFUSAL_FROM: Final = {
    nap_pb2.RefusalReason.Value(f"REFUSAL_REASON_{reason.name}"): reason for reason in RefusalReason
}


def read_referee_message(data: bytes) -> RefereeMessage | None:  # noqa: PLR0911 - one return per kind
    """Read one message the referee sent on the Play stream; never raises.

    None for a kind this version does not know, and for bytes that are no RefereeMessage:
    receivers ignore what they do not know.
    """
    try:
        message = _from_string(data)
    except DecodeError:
        return None
    kind = message.WhichOneof("kind")
    if kind == "batch":
        return read_batch(message.batch)
    if kind == "table_closed":
        return TableClosed(message.table_closed.table)
    if kind == "fault":
        return _fault(message.fault)
    if kind == "welcome":
        return _welcome(message.welcome)
    if kind == "refusal":
        refusal = message.refusal
        return Refusal(_REFUSAL_FROM.get(refusal.reason), refusal.message)
    return None


def read_batch(batch: nap_pb2.Batch) -> Batch:
    """The :class:`Batch` value of a Batch message (its views and events are decoded later)."""
    requests = tuple(
        [
            _new(Request, (request.request_id, request.table, request.seat, request.legal_actions, request))
            for request in batch.requests
        ]
    )
    events = batch.events
    closed = batch.closed
    faults = batch.faults
    if not (events or closed or faults):
        return Batch(requests)
    return Batch(
        requests,
        tuple([_new(EventNotice, (event.table, event.seat, event)) for event in events]),
        tuple([notice.table for notice in closed]),
        tuple([_fault(fault) for fault in faults]),
    )


def _fault(fault: nap_pb2.Fault) -> Fault:
    return Fault(
        kind=fault_kind_from_proto(fault.kind),
        table=fault.table,
        request_id=fault.request_id,
        message=fault.message,
        count=fault.fault_count,
        limit=fault.fault_limit,
    )


def _welcome(welcome: nap_pb2.Welcome) -> Welcome:
    try:
        rules: Profile | None = profile_from_proto(welcome.profile)
        problem = ""
    except ProfileError as exc:
        rules = None
        problem = str(exc)
    return Welcome(
        bot_id=welcome.bot_id,
        server_version=welcome.server_version,
        protocol_version=welcome.protocol_version,
        rules=rules,
        rules_problem=problem,
        decision_ms=welcome.time_limits.decision_ms,
        session_bank_ms=welcome.time_limits.session_bank_ms,
        max_outstanding=welcome.max_outstanding,
    )


class RequestViews:
    """The views of one connection's requests: :class:`~referee.wire.fastdecode.ViewDecoder`'s lazy ones.

    :meth:`view` equals ``view_from_proto`` of the request; call :meth:`forget` when a
    table closes.
    """

    __slots__ = ("_decoder",)

    def __init__(self) -> None:
        self._decoder = ViewDecoder()

    def view(self, request: Request) -> SeatView:
        """The request's view with its legal actions decoded; ValueError if one is no action."""
        return self._decoder.request(request.message)

    def forget(self, table: str) -> None:
        """Drop what is remembered of ``table``'s views."""
        self._decoder.forget(table)


def event_of(notice: EventNotice) -> Event | None:
    """The engine's event of ``notice``; None for one the engine has not (see ``event_from_proto``)."""
    return event_from_proto(notice.message)


def told_of(notice: EventNotice) -> SeatEvent | SeatPenalized | None:
    """All that ``notice`` tells its seat: the event with its hand, balances or penalty."""
    return told_from_proto(notice.message)


# ---------------------------------------------------------------------------------------
# What the bot sends
# ---------------------------------------------------------------------------------------


class Answer(NamedTuple):
    """The bot's decision for one request (nap.v1 Answer)."""

    request_id: int
    action: str
    """The action text, sent verbatim."""


Answers = tuple[Answer, ...]
"""The answers of one Answers message, in order."""

_BOT_ANSWERS: Final = field_tag(nap_pb2.BotMessage, "answers")
_ANSWERS_ANSWER: Final = field_tag(nap_pb2.Answers, "answers")
_ANSWER_ID: Final = field_tag(nap_pb2.Answer, "request_id")
_ANSWER_ACTION: Final = field_tag(nap_pb2.Answer, "action")


def _action_field(action: str) -> bytes:
    if not action:
        return b""  # proto3 leaves an empty string out
    text = action.encode()
    return _ANSWER_ACTION + varint(len(text)) + text


_ACTION_FIELDS: Final = {
    text: _action_field(text)
    for text in (
        *(card.text for card in CARDS),
        *BID_NAMES,
        *(str(action) for action in (PEEP, DECLINE_EXCHANGE, DECLINE_WIDOW)),
        *(str(TakeWidow(card)) for card in CARDS),
    )
}
"""The action field of each canonical action text, written once (other texts as they come)."""


def answers_message(answers: Iterable[Answer]) -> bytes:
    """The BotMessage that sends ``answers`` (an Answers message, empty if they are none).

    Byte for byte what protobuf writes for ``Answer(request_id=, action=)`` each (a 0 id
    or an empty action left out, as proto3 does). ``think_ms`` is not sent: the referee
    times each decision on its own clock and reads none.
    """
    actions = _ACTION_FIELDS
    parts: list[bytes] = []
    add = parts.append
    for request_id, action in answers:
        body = (
            _ANSWER_ID + varint(request_id) if request_id else b""  # 0 is left out, as protobuf does
        ) + (actions.get(action) or _action_field(action))
        add(_ANSWERS_ANSWER)
        add(varint(len(body)))
        add(body)
    return length_delimited(_BOT_ANSWERS, b"".join(parts))


def hello_message(  # noqa: PLR0913 - the Hello's fields, keywords
    *,
    token: str,
    bot_name: str,
    bot_version: str,
    max_batch: int,
    events: bool,
    notices_in_batch: bool,
    decisions: Iterable[str],
) -> bytes:
    """The BotMessage that opens a Play stream, at this package's :data:`PROTOCOL_VERSION`."""
    return nap_pb2.BotMessage(
        hello=nap_pb2.Hello(
            token=token,
            bot_name=bot_name,
            bot_version=bot_version,
            protocol_version=PROTOCOL_VERSION,
            max_batch=max_batch,
            events=events,
            notices_in_batch=notices_in_batch,
            decisions=decisions,
        )
    ).SerializeToString()


def goodbye_message(reason: str) -> bytes:
    """The BotMessage by which the bot leaves, for ``reason`` (its own words, for the referee's logs)."""
    return nap_pb2.BotMessage(goodbye=nap_pb2.Goodbye(reason=reason)).SerializeToString()
