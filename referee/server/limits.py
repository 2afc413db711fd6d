"""The referee's limits as small frozen values: the clocks of a decision and the server's caps."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TimeLimits:
    """The clocks a decision runs under, in milliseconds.

    Each decision has ``decision_ms``; time spent beyond it is drawn from the seat's
    ``session_bank_ms`` (per seat, per session; 0 means no bank). A decision is late once
    it outruns ``decision_ms`` plus what is left of the bank.
    """

    decision_ms: int = 1000
    session_bank_ms: int = 0

    def __post_init__(self) -> None:
        if self.decision_ms < 1 or self.session_bank_ms < 0:
            msg = "decision_ms must be at least 1 and session_bank_ms at least 0"
            raise ValueError(msg)


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """What the referee allows a bot connection.

    ``max_message_bytes`` caps every gRPC message both ways. ``max_outstanding`` caps the
    decision requests in flight to one bot (the bot's own ``max_batch`` may lower it).
    ``fault_limit`` is the number of faults in one session after which a bot is
    disqualified from it (0: never). ``reconnect_grace_s`` is how long a bot that lost its
    connection may take to come back and take its seats again. ``batch_window_s`` is how
    long a new request may wait for the bot to answer what it already holds, so that the
    two travel in one batch (0: send at once).
    """

    max_message_bytes: int = 4 * 1024 * 1024
    max_outstanding: int = 256
    fault_limit: int = 10
    reconnect_grace_s: float = 5.0
    batch_window_s: float = 0.005

    def __post_init__(self) -> None:
        if self.max_message_bytes < 1024 or self.max_outstanding < 1:
            msg = "max_message_bytes must be at least 1024 and max_outstanding at least 1"
            raise ValueError(msg)
        if self.fault_limit < 0 or self.reconnect_grace_s < 0 or self.batch_window_s < 0:
            msg = "fault_limit, reconnect_grace_s and batch_window_s must not be negative"
            raise ValueError(msg)
