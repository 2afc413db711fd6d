"""Faults: what a bot did wrong, as data. A fault never stops the referee; it is recorded."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from referee.wire import nap_pb2


class FaultKind(StrEnum):
    """What kind of fault a bot made."""

    LATE = "late"
    """No answer before the request's deadline."""
    ILLEGAL = "illegal"
    """A well-formed bid or card that the rules forbid now."""
    MALFORMED = "malformed"
    """An action that is no bid or card, or a message that is not one (or makes no sense)."""
    UNKNOWN_REQUEST = "unknown-request"
    """An answer to a request id that is not outstanding on this bot's connection."""
    DISCONNECT = "disconnect"
    """The connection was lost (or the bot said goodbye) while it held seats."""

    @property
    def wire(self) -> nap_pb2.FaultKind:
        """The nap.v1 FaultKind number."""
        return _WIRE[self]


_WIRE: Final = {
    FaultKind.LATE: nap_pb2.FAULT_KIND_LATE,
    FaultKind.ILLEGAL: nap_pb2.FAULT_KIND_ILLEGAL,
    FaultKind.MALFORMED: nap_pb2.FAULT_KIND_MALFORMED,
    FaultKind.UNKNOWN_REQUEST: nap_pb2.FAULT_KIND_UNKNOWN_REQUEST,
    FaultKind.DISCONNECT: nap_pb2.FAULT_KIND_DISCONNECT,
}


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault, as recorded for a session.

    ``seat``, ``deal`` and ``decision`` (the index of the action within the deal) are None
    when the fault belongs to the bot's connection rather than to one decision (an
    unknown request id, a malformed message, a disconnect). ``elapsed_ms`` is the time
    from sending the request to the answer (or to the deadline), on the referee's clock.
    """

    kind: FaultKind
    bot: str
    table: str
    seat: int | None
    deal: int | None
    decision: int | None
    elapsed_ms: float | None
    detail: str
