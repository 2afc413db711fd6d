"""Faults: what a bot did wrong, as data. A fault never stops a table; it is recorded.

A :class:`Fault` is one value from the match core to the page that shows it: a session's
result holds the same value, its log holds :meth:`Fault.to_json`, the store's ``faults``
rows hold :meth:`Fault.to_row` (columns :data:`FAULT_FIELDS`), and each is read back by
its own method, older logs and rows included.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence


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


_KINDS: Final = frozenset(kind.value for kind in FaultKind)


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """One fault, as recorded for a session.

    ``seat``, ``deal`` and ``decision`` (the index of the action within the deal) are None
    when the fault belongs to the bot's connection rather than to one decision (an
    unknown request id, a malformed message, a disconnect); ``deal`` and ``decision`` of
    such a fault say where the table stood when it was made. A session's result puts such
    a fault at the bot's seat (:func:`tournaments.play.blocks.finish_session`).
    ``table`` is None for a fault of a bot at no table, and in logs and rows stored
    before tables were recorded. ``elapsed_ms`` is the time from sending the request to the
    answer (or to the deadline), on the referee's clock; None when the fault answered no
    request.
    """

    kind: FaultKind
    bot: str
    table: str | None
    seat: int | None
    deal: int | None
    decision: int | None
    elapsed_ms: float | None
    detail: str

    def to_json(self) -> dict[str, str | int | float | None]:
        """The fault as a session log holds it: each field by its name, None as null."""
        return dict(zip(FAULT_FIELDS, self.to_row(), strict=True))

    @classmethod
    def from_json(cls, data: object) -> Fault:
        """Read :meth:`to_json`'s form back, and older logs' (-1 for no decision, no ``table``).

        ValueError says what is not a fault's.
        """
        if not isinstance(data, Mapping):
            msg = f"a fault is an object, not {type(data).__name__}"
            raise ValueError(msg)  # noqa: TRY004 - one error for every way a stored fault is malformed
        return cls.from_row(tuple(data.get(name) for name in FAULT_FIELDS))

    def to_row(self) -> FaultRow:
        """The fault's fields in :data:`FAULT_FIELDS` order, the kind as its name: a store's row."""
        return (
            str(self.kind),
            self.bot,
            self.table,
            self.seat,
            self.deal,
            self.decision,
            self.elapsed_ms,
            self.detail,
        )

    @classmethod
    def from_row(cls, row: Sequence[object]) -> Fault:
        """Read :meth:`to_row`'s form back; -1 for no seat, deal or decision (as once stored) is None.

        ValueError says what is not a fault's.
        """
        kind, bot, table, seat, deal, decision, elapsed_ms, detail = row
        if not isinstance(kind, str) or kind not in _KINDS:
            msg = f"unknown fault kind {kind!r}"
            raise ValueError(msg)
        if (
            not isinstance(bot, str)
            or not isinstance(table, str | None)
            or not isinstance(detail, str | None)
        ):
            msg = f"a fault's bot, table and detail are text, not {bot!r}, {table!r} and {detail!r}"
            raise ValueError(msg)  # noqa: TRY004 - one error for every way a stored fault is malformed
        if isinstance(elapsed_ms, bool) or not isinstance(elapsed_ms, int | float | None):
            msg = f"a fault's elapsed_ms is a number of milliseconds, not {elapsed_ms!r}"
            raise ValueError(msg)  # noqa: TRY004 - one error for every way a stored fault is malformed
        return cls(
            kind=FaultKind(kind),
            bot=bot,
            table=table,
            seat=_count("seat", seat),
            deal=_count("deal", deal),
            decision=_count("decision", decision),
            elapsed_ms=None if elapsed_ms is None else float(elapsed_ms),
            detail=detail or "",
        )


FaultRow = tuple[str, str, str | None, int | None, int | None, int | None, float | None, str]
"""A fault as a store's row holds it (:meth:`Fault.to_row`)."""

FAULT_FIELDS: Final = tuple(field.name for field in fields(Fault))
"""A fault's fields in order: the keys of its JSON, the columns of its row."""


def _count(name: str, value: object) -> int | None:
    """A seat, deal or decision read back: None for none (null, or the -1 that stood for it once)."""
    if value is None or value == -1:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = f"a fault's {name} is a count from 0, not {value!r}"
        raise ValueError(msg)
    return value
