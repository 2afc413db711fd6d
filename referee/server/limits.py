"""The referee's caps on a bot connection, as a small frozen value.

A decision's clock is :class:`referee.match.TimeLimits`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """What the referee allows a bot connection.

    ``max_message_bytes`` caps every gRPC message both ways: a bot's larger message is an
    ``oversized`` fault and ends its stream. ``max_outstanding`` caps the decision
    requests in flight to one bot (the bot's own ``max_batch`` may lower it), and so the
    answers one message may hold. ``fault_limit`` is the number of faults in one session
    after which a bot is disqualified from it (0: never). ``reconnect_grace_s`` is how long
    a bot that lost its connection may take to come back and take its seats again.
    ``batch_window_s`` is how long a new request may wait for the bot to answer what it
    already holds, so that the two travel in one batch (0: send at once); for a bot that
    holds many, the window is wider (:func:`referee.server.connection.batch_window`).
    ``hello_timeout_s`` is how long a new stream may take to say Hello.
    ``max_unknown_answers`` is how many answers to requests it does not hold one
    connection may send before the referee cuts it off (0: no limit).
    """

    max_message_bytes: int = 4 * 1024 * 1024
    max_outstanding: int = 256
    fault_limit: int = 10
    reconnect_grace_s: float = 5.0
    batch_window_s: float = 0.005
    hello_timeout_s: float = 10.0
    max_unknown_answers: int = 64

    def __post_init__(self) -> None:
        if self.max_message_bytes < 1024 or self.max_outstanding < 1:
            msg = "max_message_bytes must be at least 1024 and max_outstanding at least 1"
            raise ValueError(msg)
        if min(self.fault_limit, self.reconnect_grace_s, self.batch_window_s, self.max_unknown_answers) < 0:
            msg = "fault_limit, reconnect_grace_s, batch_window_s, max_unknown_answers must not be negative"
            raise ValueError(msg)
        if self.hello_timeout_s <= 0:
            msg = "hello_timeout_s must be positive"
            raise ValueError(msg)
