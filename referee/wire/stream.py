"""The messages of a Play stream's life, so that the transport never touches protobuf.

A bot's stream opens with its Hello, which the referee answers with a Welcome or a
Refusal; then the bot sends Answers until it says Goodbye or goes. :func:`read_bot_message`
reads whatever the bot sent into a small frozen value (:class:`Hello`, :data:`Answers`,
:class:`Goodbye`, or :class:`Malformed` with its one-line detail); :func:`welcome_message` and
:func:`refusal_message` give the referee's replies as the bytes to write. What to do with
a Hello (check its version, refuse it, attach the bot) is the transport's business.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from google.protobuf.message import DecodeError

from referee.wire._gen.nap.v1 import nap_pb2
from referee.wire.codec import profile_to_proto

if TYPE_CHECKING:
    from collections.abc import Collection

    from referee.match import TimeLimits
    from referee.rules import Profile

__all__ = [
    "DECISION_KINDS",
    "EMPTY_MESSAGE",
    "NOT_A_BOT_MESSAGE",
    "PROTOCOL_VERSION",
    "Answers",
    "BotMessage",
    "Goodbye",
    "Hello",
    "Malformed",
    "RefusalReason",
    "decisions_needed",
    "missing_decisions",
    "read_bot_message",
    "refusal_message",
    "too_many_answers",
    "welcome_message",
]

PROTOCOL_VERSION: Final = 1
"""The protocol version of ``nap.v1``, the package these messages belong to."""


class RefusalReason(StrEnum):
    """Why the referee refuses a bot's Hello (nap.v1 RefusalReason)."""

    PROTOCOL_VERSION = "protocol version"
    """The referee does not speak the Hello's protocol version."""
    BAD_HELLO = "bad hello"
    """The first message was not a Hello, or a Hello field is invalid (e.g. max_batch 0)."""
    ALREADY_CONNECTED = "already connected"
    """This identity already has a live connection."""
    DISQUALIFIED = "disqualified"
    """This identity was disqualified for too many faults."""
    NO_TABLES = "no tables"
    """The referee has no tables for this identity (e.g. the tournament is over)."""
    SHUTTING_DOWN = "shutting down"
    """The referee is shutting down."""
    UNSUPPORTED_DECISIONS = "unsupported decisions"
    """The profile asks decisions the Hello does not list (:func:`missing_decisions`)."""


_REFUSAL_TO: Final[dict[RefusalReason, nap_pb2.RefusalReason]] = {
    RefusalReason.PROTOCOL_VERSION: nap_pb2.REFUSAL_REASON_PROTOCOL_VERSION,
    RefusalReason.BAD_HELLO: nap_pb2.REFUSAL_REASON_BAD_HELLO,
    RefusalReason.ALREADY_CONNECTED: nap_pb2.REFUSAL_REASON_ALREADY_CONNECTED,
    RefusalReason.DISQUALIFIED: nap_pb2.REFUSAL_REASON_DISQUALIFIED,
    RefusalReason.NO_TABLES: nap_pb2.REFUSAL_REASON_NO_TABLES,
    RefusalReason.SHUTTING_DOWN: nap_pb2.REFUSAL_REASON_SHUTTING_DOWN,
    RefusalReason.UNSUPPORTED_DECISIONS: nap_pb2.REFUSAL_REASON_UNSUPPORTED_DECISIONS,
}
"""By name: ``BAD_HELLO`` is ``REFUSAL_REASON_BAD_HELLO`` (tests/test_wire_stream.py refuses for each)."""


DECISION_KINDS: Final = ("exchange", "peep", "widow")
"""The kinds of decision beyond bids and cards that a Hello may list (nap.v1 Hello.decisions):
the exchange round of Purchase and Écarté Nap, the peep at the widow and the declarer's
widow decision of Peep Nap."""


def decisions_needed(profile: Profile) -> tuple[str, ...]:
    """The kinds of :data:`DECISION_KINDS` ``profile`` asks of a bot: none, exchange, or peep and widow."""
    needed: tuple[str, ...] = ()
    if profile.exchange_max:
        needed += ("exchange",)
    if profile.widow:
        needed += ("peep", "widow")
    return needed


def missing_decisions(profile: Profile, decisions: Collection[str]) -> str | None:
    """Why a bot whose Hello listed ``decisions`` cannot play ``profile``, in one line; None when it can.

    A Hello written before these kinds existed lists none: it can play every profile that
    asks only bids and cards.
    """
    missing = [kind for kind in decisions_needed(profile) if kind not in decisions]
    if not missing:
        return None
    listed = ", ".join(decisions) or "none"
    kinds = missing[0] if len(missing) == 1 else f"{', '.join(missing[:-1])} and {missing[-1]}"
    return (
        f"profile {profile.name!r} asks {kinds} decisions, which this bot's Hello "
        f"does not list (Hello.decisions: {listed})"
    )


@dataclass(frozen=True, slots=True)
class Hello:
    """A bot's introduction, the first message of its stream (see nap.v1 Hello).

    ``max_batch`` is how many decisions it accepts outstanding at once (0 if it did not
    say: invalid); ``events`` and ``notices_in_batch`` are its opt-ins; ``decisions`` the
    kinds of :data:`DECISION_KINDS` it says it can answer (others it listed are dropped).
    """

    token: str
    bot_name: str
    bot_version: str
    protocol_version: int
    max_batch: int
    events: bool
    notices_in_batch: bool
    decisions: tuple[str, ...] = ()


Answers = tuple[tuple[int, str], ...]
"""A bot's answers, in the order sent: (request id, action text verbatim) pairs. May be empty."""


@dataclass(frozen=True, slots=True)
class Goodbye:
    """The bot is leaving, for ``reason`` (its own words, for logs)."""

    reason: str


TEXT_KEPT: Final = 120
"""Characters kept of any text a bot sends (an action, a name, a goodbye's reason): more
than any action or sensible name; the rest is cut off (and the cut marked with "…")
before the referee stores, logs or echoes it, so that no bot can make it write megabytes."""


def clip(text: str) -> str:
    """``text`` cut to :data:`TEXT_KEPT` characters, the cut marked (so it is never an action)."""
    return text if len(text) <= TEXT_KEPT else text[:TEXT_KEPT] + "…"


NOT_A_BOT_MESSAGE: Final = "a message that is not a BotMessage"
""":attr:`Malformed.detail` of bytes that do not parse as a BotMessage."""
EMPTY_MESSAGE: Final = "an empty BotMessage"
""":attr:`Malformed.detail` of a BotMessage with none of the kinds this version knows."""


@dataclass(frozen=True, slots=True)
class Malformed:
    """What the bot sent is no message this referee can act on; ``detail`` says why, in one line.

    ``fatal`` tells the two cases apart: True for bytes that are no BotMessage at all
    (:data:`NOT_A_BOT_MESSAGE`: the bot is not speaking nap.v1, so there is no point
    reading on), False for a BotMessage that holds none of the kinds this version knows
    (:data:`EMPTY_MESSAGE`: perhaps a newer protocol's; the stream may go on).
    """

    detail: str
    fatal: bool


BotMessage = Hello | Answers | Goodbye | Malformed
"""Anything :func:`read_bot_message` gives."""

_NOT_A_BOT_MESSAGE: Final = Malformed(NOT_A_BOT_MESSAGE, fatal=True)
_EMPTY: Final = Malformed(EMPTY_MESSAGE, fatal=False)
_from_string: Final = nap_pb2.BotMessage.FromString


_COUNTED_BYTES: Final = 1 << 16
"""A message up to this size has its bytes counted before its fields are walked (it is cheaper)."""
_TOP_FIELDS: Final = 64
"""More top-level fields than a BotMessage ever holds (one, and a few from a newer protocol)."""
_ANSWERS_FIELD: Final = nap_pb2.BotMessage.DESCRIPTOR.fields_by_name["answers"].number
_ANSWER_FIELD: Final = nap_pb2.Answers.DESCRIPTOR.fields_by_name["answers"].number
_LEN: Final = 2
_ANSWER_TAG: Final = bytes([_ANSWER_FIELD << 3 | _LEN])
"""The one byte that opens each answer of an Answers message."""
_SKIP: Final = {0: -1, 1: 8, 5: 4}
"""Bytes to skip after the tag, by wire type (-1: a varint); length-delimited fields are read."""


def too_many_answers(data: bytes, most: int) -> str | None:
    """Why a bot's message is refused unread, from its first bytes; None when it may be read.

    A message with more answers than ``most`` (the requests the bot may hold) is refused
    as soon as the count passes ``most``: only the fields' tags and lengths are read, so
    a hostile message of a hundred thousand answers costs what ``most`` of them cost,
    not the seconds its decoding would take while other tables wait. A walk that meets
    more top-level fields than any BotMessage has refuses the message too (so no number
    of them can make the walk long). Bytes that cannot be walked are left to
    :func:`read_bot_message` (no BotMessage then).

    Every answer starts with the byte of its tag (:data:`_ANSWER_TAG`), so a message with
    no more of those bytes than ``most`` holds no more answers: a message of the usual
    size (up to :data:`_COUNTED_BYTES`) is let through on that count alone, at C speed.
    """
    if len(data) <= _COUNTED_BYTES and data.count(_ANSWER_TAG) <= most:
        return None
    fields = answers = 0
    position, end = 0, len(data)
    try:
        while position < end:
            tag, position = _read_varint(data, position)
            fields += 1
            if fields > _TOP_FIELDS:
                return f"a message of more than {_TOP_FIELDS} fields"
            kind = tag & 7
            if kind != _LEN:
                position = _skip(data, position, kind)
                continue
            size, position = _read_varint(data, position)
            stop = position + size
            if tag >> 3 == _ANSWERS_FIELD:
                while position < stop:
                    inner, position = _read_varint(data, position)
                    if inner & 7 != _LEN:
                        position = _skip(data, position, inner & 7)
                        continue
                    length, position = _read_varint(data, position)
                    position += length
                    answers += inner >> 3 == _ANSWER_FIELD
                    if answers > most:
                        return f"more than {most} answers in one message, more than it may hold"
            position = stop
    except ValueError:
        return None
    return None


def _read_varint(data: bytes, position: int) -> tuple[int, int]:
    """The varint at ``position`` and the position after it; ValueError past the end or too long."""
    value = shift = 0
    while shift < 64:  # a varint holds 64 bits at most
        if position >= len(data):
            msg = "a varint past the end"
            raise ValueError(msg)
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7
    msg = "a varint too long"
    raise ValueError(msg)


def _skip(data: bytes, position: int, kind: int) -> int:
    """The position after a field of wire type ``kind`` (not length-delimited); ValueError for a group."""
    size = _SKIP.get(kind)
    if size is None:
        msg = f"wire type {kind}"
        raise ValueError(msg)
    return _read_varint(data, position)[1] if size < 0 else position + size


def read_bot_message(data: bytes) -> BotMessage:
    """Read one message a bot sent on its Play stream; never raises.

    Every text in it is cut by :func:`clip`.

    A Hello after the first message is returned like the first: whether it is a fault
    (a second Hello) is the caller's business.
    """
    try:
        message = _from_string(data)
    except DecodeError:
        return _NOT_A_BOT_MESSAGE
    kind = message.WhichOneof("kind")
    if kind == "answers":
        return tuple(
            [
                (answer.request_id, action if len(action := answer.action) <= TEXT_KEPT else clip(action))
                for answer in message.answers.answers
            ]
        )
    if kind == "hello":
        hello = message.hello
        return Hello(
            token=hello.token,
            bot_name=clip(hello.bot_name),
            bot_version=clip(hello.bot_version),
            protocol_version=hello.protocol_version,
            max_batch=hello.max_batch,
            events=hello.events,
            notices_in_batch=hello.notices_in_batch,
            decisions=tuple(kind for kind in DECISION_KINDS if kind in hello.decisions),
        )
    if kind == "goodbye":
        return Goodbye(clip(message.goodbye.reason))
    return _EMPTY


def welcome_message(  # noqa: PLR0913 - the Welcome's fields, keywords
    *,
    bot_id: str,
    profile: Profile,
    time_limits: TimeLimits,
    max_outstanding: int,
    server_version: str,
    protocol_version: int = PROTOCOL_VERSION,
) -> bytes:
    """The RefereeMessage that welcomes bot ``bot_id``: the profile and clocks of its tables.

    ``max_outstanding`` is the most requests the referee will have outstanding on this
    connection at once (min of the Hello's max_batch and the referee's own cap).
    """
    message = nap_pb2.RefereeMessage()
    welcome = message.welcome
    welcome.protocol_version = protocol_version
    welcome.server_version = server_version
    welcome.bot_id = bot_id
    welcome.profile.CopyFrom(profile_to_proto(profile))
    welcome.time_limits.decision_ms = time_limits.decision_ms
    welcome.time_limits.session_bank_ms = time_limits.session_bank_ms
    welcome.max_outstanding = max_outstanding
    return message.SerializeToString()


def refusal_message(reason: RefusalReason, text: str) -> bytes:
    """The RefereeMessage that refuses a bot for ``reason``; ``text`` explains it to a human."""
    message = nap_pb2.RefereeMessage()
    message.refusal.reason = _REFUSAL_TO[reason]
    message.refusal.message = text
    return message.SerializeToString()
