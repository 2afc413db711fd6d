"""The clocks of a session's seats, as values: no clock is read here, elapsed times come in."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TimeLimits:
    """The clocks a decision runs under, in milliseconds.

    Each decision has ``decision_ms``; time spent beyond it is drawn from the seat's
    ``session_bank_ms`` (per seat, per session; 0 means no bank). The deadline a bot is
    told is ``decision_ms`` plus what is left of its bank; it is late only once it outruns
    that deadline by more than ``margin_ms``, a tolerance for the jitter of the machines
    and the network that no bot is told about (cutechess's and fastchess's time margin).
    """

    decision_ms: int = 1000
    session_bank_ms: int = 0
    margin_ms: int = 0

    def __post_init__(self) -> None:
        if self.decision_ms < 1 or self.session_bank_ms < 0 or self.margin_ms < 0:
            msg = "decision_ms must be at least 1, and session_bank_ms and margin_ms at least 0"
            raise ValueError(msg)


class SeatClocks:
    """Each seat's time bank through one session, under one :class:`TimeLimits`.

    A seat asked now has :meth:`deadline_ms` to answer: the decision's own limit plus
    what is left of its bank (and is late past it by more than the margin);
    :meth:`charge` draws what a decision took beyond its limit (whole milliseconds,
    rounded up) from the bank, which never goes below zero.
    """

    __slots__ = ("_banks", "decision_ms", "margin_ms")

    def __init__(self, limits: TimeLimits, seats: int) -> None:
        self.decision_ms = limits.decision_ms
        self.margin_ms = limits.margin_ms
        self._banks = [limits.session_bank_ms] * seats

    def bank_ms(self, seat: int) -> int:
        """What is left of ``seat``'s bank."""
        return self._banks[seat]

    def deadline_ms(self, seat: int) -> int:
        """How long ``seat`` has for the decision it is asked now."""
        return self.decision_ms + self._banks[seat]

    def charge(self, seat: int, elapsed_ms: float) -> None:
        """``seat`` took ``elapsed_ms`` for a decision: draw the excess from its bank."""
        over = elapsed_ms - self.decision_ms
        if over > 0:
            self._banks[seat] = max(0, self._banks[seat] - int(over + 0.999))
