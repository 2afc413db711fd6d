"""How a bot reaches the referee (:class:`Options`) and how its process ends (:class:`ExitCode`).

Plain values, apart from :mod:`clients.sdk.connection` (the only SDK module that imports
grpc), so that a bot's module, which names them, loads no network code until it serves.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from referee.wire.stream import DECISION_KINDS


class ExitCode(IntEnum):
    """The bot process's exit status."""

    OK = 0
    """The referee ended the stream (no more tables), or we were asked to stop."""
    ERROR = 1
    """The stream failed in a way reconnecting cannot mend."""
    REFUSED = 2
    """Unknown token (UNAUTHENTICATED) or a Refusal."""
    UNREACHABLE = 3
    """The referee stayed unreachable for the whole reconnect budget."""


@dataclass(frozen=True, slots=True)
class Options:
    """How to reach the referee and introduce the bot."""

    address: str
    """``host:port`` of the referee."""
    token: str
    """The secret token of the bot entry."""
    name: str
    """Bot name for the referee's logs."""
    version: str = "0"
    """Bot version for the referee's logs."""
    max_batch: int = 256
    """Decisions the bot accepts outstanding at once (Hello.max_batch)."""
    reconnect_for: float = 15.0
    """Seconds to keep trying to (re)connect after the stream breaks, before giving up."""
    events: bool = False
    """Ask for table events (Hello.events); :func:`clients.sdk.run` sets it for bots that
    override ``on_event``."""
    decisions: tuple[str, ...] = DECISION_KINDS
    """The decision kinds beyond bids and cards the bot answers (Hello.decisions): all of
    them, since :class:`~clients.sdk.Bot` declines each by default. A program behind the
    stdio bridge lists what it answers (``--decisions``)."""
