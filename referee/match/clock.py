"""The clocks of a session's seats, as values: no clock is read here, elapsed times come in."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

BACKSTOP_FACTOR: Final = 10
"""The wall-clock backstop of a CPU-clocked decision is this many times its decision limit..."""
BACKSTOP_LEAST_MS: Final = 10_000
"""... and at least this long (:attr:`TimeLimits.backstop`)."""


class Clock(StrEnum):
    """What a bot's decisions are timed in (each bot has one, whatever its tables).

    A local bot's process is clocked in its own CPU, read from outside it (its cgroup, or
    ``/proc``), with a wall-clock backstop; a bot the referee cannot measure (a remote
    one, or where no CPU can be read) is clocked on the wall.
    """

    WALL = "wall"
    """From the request's sending to its answer, on the referee's clock."""
    CPU = "cpu"
    """The CPU of the bot's process tree while it held the request, shared among the requests
    it held (:mod:`referee.match.cpu`); the wall clock only as a backstop."""


@dataclass(frozen=True, slots=True)
class TimeLimits:
    """The clocks a decision runs under, in milliseconds.

    Each decision has ``decision_ms``; time spent beyond it is drawn from the seat's
    ``session_bank_ms`` (per seat, per session; 0 means no bank). The deadline a bot is
    told is ``decision_ms`` plus what is left of its bank; it is late only once it outruns
    that deadline by more than ``margin_ms``, a tolerance for the jitter of the machines
    and the network that no bot is told about (cutechess's and fastchess's time margin).

    On the wall clock (:attr:`Clock.WALL`) that time runs from the request's sending to its
    answer. On the CPU clock it is the CPU the bot's process spent on it, and the wall clock
    is only a backstop against a bot that sleeps, blocks or hangs: ``backstop_ms`` for a
    decision, plus what is left of the bank and the margin (0: :attr:`backstop`'s default).
    """

    decision_ms: int = 1000
    session_bank_ms: int = 0
    margin_ms: int = 0
    backstop_ms: int = 0

    def __post_init__(self) -> None:
        if min(self.session_bank_ms, self.margin_ms, self.backstop_ms) < 0 or self.decision_ms < 1:
            msg = "decision_ms must be at least 1, and session_bank_ms, margin_ms and backstop_ms at least 0"
            raise ValueError(msg)

    @property
    def backstop(self) -> int:
        """The wall-clock backstop of a CPU-clocked decision (ms).

        ``backstop_ms``, or by default :data:`BACKSTOP_FACTOR` times ``decision_ms`` and at
        least :data:`BACKSTOP_LEAST_MS`.
        """
        return self.backstop_ms or max(BACKSTOP_FACTOR * self.decision_ms, BACKSTOP_LEAST_MS)


class SeatClocks:
    """Each seat's time bank through one session, under one :class:`TimeLimits`.

    A seat asked now has :meth:`deadline_ms` to answer: the decision's own limit plus
    what is left of its bank (and is late past it by more than the margin);
    :meth:`charge` draws what a decision took beyond its limit (whole milliseconds,
    rounded up) from the bank, which never goes below zero.
    """

    __slots__ = ("_banks", "backstop_ms", "decision_ms", "margin_ms")

    def __init__(self, limits: TimeLimits, seats: int) -> None:
        self.decision_ms = limits.decision_ms
        self.margin_ms = limits.margin_ms
        self.backstop_ms = limits.backstop
        self._banks = [limits.session_bank_ms] * seats

    def bank_ms(self, seat: int) -> int:
        """What is left of ``seat``'s bank."""
        return self._banks[seat]

    def deadline_ms(self, seat: int) -> int:
        """How long ``seat`` has for the decision it is asked now."""
        return self.decision_ms + self._banks[seat]

    def backstop_at_ms(self, seat: int) -> int:
        """How long on the wall clock a CPU-clocked ``seat`` may hold the decision it is asked now."""
        return self.backstop_ms + self._banks[seat] + self.margin_ms

    def charge(self, seat: int, elapsed_ms: float) -> None:
        """``seat`` took ``elapsed_ms`` for a decision (on its clock): draw the excess from its bank."""
        over = elapsed_ms - self.decision_ms
        if over > 0:
            self._banks[seat] = max(0, self._banks[seat] - int(over + 0.999))
