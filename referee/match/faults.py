"""Faults: what a bot did wrong, as data. A fault never stops a table; it is recorded."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class FaultKind(StrEnum):
    """What kind of fault a bot made."""

    LATE = "late"
    """No answer before the request's deadline."""
    ILLEGAL = "illegal"
    """A well-formed bid or card that the rules forbid now."""
    MALFORMED = "malformed"
    """An action that is no bid or card, or a message that is not one (or makes no sense)."""
    UNKNOWN_REQUEST = "unknown-request"
    """An answer to a request id that is not outstanding for this bot (never sent to it,
    sent to another bot, or already answered)."""
    DISCONNECT = "disconnect"
    """The bot went away (its connection was lost, it said goodbye, or its process died)
    while it held seats; as a decision's fault: it did not come back in time to answer."""
    OVERSIZED = "oversized"
    """A message larger than the referee accepts; the connection ends."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """One fault, as recorded for a session.

    ``seat``, ``deal`` and ``decision`` (the index of the action within the deal) are None
    when the fault belongs to the bot's connection rather than to one decision (an
    unknown request id, a malformed message, a disconnect); ``deal`` and ``decision`` of
    such a fault say where the table stood when it was made. ``elapsed_ms`` is the time
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
