"""What a finished session leaves behind: the values that storage, standings and logs share.

These are plain frozen values with no behaviour beyond small derived figures, so the
scheduler, the runner, the store and the standings can all speak about one session
without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.match.faults import Fault


@dataclass(frozen=True, slots=True)
class Declaration:
    """One deal in which a seat was the declarer.

    ``contract`` is the contract's name in the rules profile (``"three"``, ``"misere"``,
    ``"nap"``, ...); ``made`` says whether the declarer fulfilled it. The pool variants
    add what the declarer did with them that deal: ``pool_chips`` it took from the pool
    (0: none, or no pool), ``widow_taken`` whether it took the widow (None: the profile
    has no widow), ``peeked`` whether it had paid to look at the widow (None: the
    profile has no widow), ``exchanged`` how many cards it exchanged with the stock before the
    auction (0: declined, or no exchange round).
    """

    contract: str
    made: bool
    pool_chips: int = 0
    widow_taken: bool | None = None
    peeked: bool | None = None
    exchanged: int = 0


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat's outcome of one session.

    ``chips`` is the seat's net balance for the session (the sum of its payments over all
    deals, so the seats of a session always sum to zero). ``win_share`` is 1/w when the
    seat is one of w co-winners (the highest balance), else 0.
    """

    seat: int
    bot: str
    chips: int
    win_share: float
    declarations: tuple[Declaration, ...] = ()
    faults: int = 0
    asked: int = 0
    """Decisions the referee asked of the seat (its forced moves, played without asking, apart)."""
    substituted: int = 0
    """Of those, the ones the referee played for it: a fault's substitute or penalty, or a
    decision after it was disqualified. ``asked`` and ``substituted`` are 0 in sessions
    stored before they were counted."""
    cpu_us: int = field(default=0, compare=False)
    """The CPU its asked decisions were charged on the CPU clock, in microseconds (0: none
    was on it, or the session was stored before it was counted). A measure of the
    machine's, not of the session: two results that differ only in it are equal."""
    clocked: int = field(default=0, compare=False)
    """Of the asked decisions, those on the CPU clock (:attr:`cpu_us` is theirs)."""


@dataclass(frozen=True, slots=True)
class SessionResult:
    """One session (the profile's deals, 8 by default): where it sits in the tournament and how each seat did.

    ``block`` numbers the duplicate block (one board set played ``table_size`` times with
    the bots rotated); ``rotation`` says which of those plays this was (0..table_size-1).
    ``seats`` is ordered by seat number; ``faults`` are every fault of the session in the
    order made, each at a seat (a fault of a bot's connection at the bot's seat).
    """

    tournament: int
    block: int
    rotation: int
    board_seed: int
    seats: tuple[SeatResult, ...]
    faults: tuple[Fault, ...] = ()

    @property
    def table_size(self) -> int:
        """Number of seats at the table."""
        return len(self.seats)

    @property
    def bots(self) -> tuple[str, ...]:
        """The bot at each seat, by seat number."""
        return tuple(seat.bot for seat in self.seats)
