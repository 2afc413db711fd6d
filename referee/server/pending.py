"""The small values a bot link deals in: a request in flight, its reply, a stream's state."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable

    from referee.server.faults import FaultKind

__all__ = ["Pending", "Reply", "Seated", "StreamState"]


class Seated(Protocol):
    """A table the bot sits at, told about faults that belong to the bot's connection."""

    def bot_fault(self, bot: str, kind: FaultKind, detail: str, *, request_id: int = 0,
                  action: str = "") -> None:
        """Record a connection-level fault of ``bot``."""


@dataclass(frozen=True, slots=True)
class Reply:
    """How a request ended: an answer (``action``), or none (``missing`` says why)."""

    action: str | None
    elapsed_ms: float
    missing: FaultKind | None = None


@dataclass(slots=True, eq=False)
class Pending:
    """A request from ask to reply; the asker holds it to withdraw it."""

    request_id: int
    table: str
    head: bytes
    tail: bytes
    deadline_ms: int
    on_reply: Callable[[Reply], None]
    done: bool = False
    sent_at: float | None = None
    expires_at: float | None = None


@dataclass(slots=True, eq=False)
class StreamState:
    """One attached stream; ``closed`` tells its writer to stop."""

    closed: bool = False
    wake: asyncio.Event = field(default_factory=asyncio.Event)
