"""The values that go into the match core and come out of it.

In: a :class:`SessionSpec` to play. Out, as each input is handled: an :class:`Ask` (a
decision to request of a seat's bot), a :class:`Tell` (what one seat is told of what just
happened), a :class:`Faulted` (a fault to record and to notify to its bot), a
:class:`Closed` (nothing more for this bot at this table), an :class:`Unseated` (a fault of
a bot that sits at no table) and, at the end, a :class:`Finished` with the
:class:`SessionOutcome` (what each deal's declarer did among it: :class:`Declared`). The
caller (the gRPC referee, the in-process player, a test driver) carries them out; nothing
here does IO or reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, NamedTuple, final

from referee.match.clock import TimeLimits

if TYPE_CHECKING:
    from referee.match.faults import Fault, FaultKind
    from referee.rules import Action, DealSettled, FaultPolicy, Profile, SeatEvent, SessionRecord, ViewFields

DISQUALIFIED = "disqualified"
"""``Decision.fault`` of a decision the referee made for a disqualified bot."""


@dataclass(frozen=True, slots=True)
class SessionSpec:
    """A session to play: the table id, rules, seed, bot name per seat and clocks.

    ``fault_policy`` None means the profile's own. ``ask_forced`` False: a seat whose only
    legal action is forced (exactly one legal action) is not asked; the referee plays it
    at once and the bot sees it in its next view (and in its events).
    """

    table: str
    profile: Profile
    seed: int
    seats: tuple[str, ...]
    time_limits: TimeLimits = TimeLimits()  # noqa: RUF009 - a frozen value
    fault_policy: FaultPolicy | None = None
    ask_forced: bool = True


class Decision(NamedTuple):
    """One action of a deal, as the referee decided it.

    ``action`` is its text; ``latency_ms`` how long the bot took, on the referee's clock
    (from the request's sending to its answer); ``fault`` the fault kind when the referee
    substituted or penalized it (or ``"disqualified"``), else None; ``forced`` True when it
    was the seat's only legal action and the referee played it without asking (latency 0);
    ``cpu_ms`` the CPU the bot's process was charged for it on the CPU clock
    (:mod:`referee.match.cpu`), None on the wall clock or when the referee played it.

    A named tuple rather than a frozen dataclass: a session makes one per decision, and
    ``tuple.__new__(Decision, fields)`` costs a fraction of a dataclass's ``__init__``.
    """

    seat: int
    action: str
    latency_ms: float
    fault: str | None
    forced: bool = False
    cpu_ms: float | None = None


@dataclass(frozen=True, slots=True)
class Declared:
    """What the declarer of one deal did, as the deal settled (what replaying the record gives).

    ``deal`` counts from 0 in the session; ``made`` says whether the declarer fulfilled
    ``contract``. The pool variants add ``pool_chips``, the chips it took from the pool
    (0: none, or no pool); ``widow_taken``, whether it took the widow (None: no widow
    decision that deal); ``peeked``, whether it had paid to look at the widow (None: the
    profile has no widow); ``exchanged``, the cards it exchanged with the stock before the
    auction (0: declined, or no exchange round).
    """

    deal: int
    seat: int
    contract: str
    made: bool
    pool_chips: int = 0
    widow_taken: bool | None = None
    peeked: bool | None = None
    exchanged: int = 0


@dataclass(frozen=True, slots=True)
class SessionOutcome:
    """A played session: its record, its decisions per deal in order, faults, disqualified seats.

    ``settlements`` are the deals' settlements in order and ``declared`` what the declarer
    of each deal that had one did, in order (both what replaying the record gives).
    """

    record: SessionRecord
    decisions: tuple[tuple[Decision, ...], ...]
    faults: tuple[Fault, ...]
    disqualified: tuple[int, ...]
    settlements: tuple[DealSettled, ...] = ()
    declared: tuple[Declared, ...] = ()


@final
class Ask(NamedTuple):
    """A decision asked of ``seat``'s bot at ``table``: its view (legal actions included) and clock.

    ``deadline_ms`` is what the bot is told; it is late past ``late_ms`` (the deadline
    plus the clock's margin) on its clock, and on the CPU clock also past ``backstop_ms``
    on the wall clock (:class:`~referee.match.clock.TimeLimits`). ``request_id`` numbers it
    among all the requests of the referee (the arbiter's count, which the match core draws
    from), so an answer to another bot's request is caught. A value: the arbiter keeps the
    request's clock beside it (:class:`~referee.match.bots.Request`), on the caller's time.

    A named tuple rather than a frozen dataclass, as :class:`Decision` is: one is made per
    decision asked, and ``tuple.__new__(Ask, fields)`` costs a fraction of a dataclass's
    ``__init__``.
    """

    table: str
    seat: int
    bot: str
    view: ViewFields
    deadline_ms: int
    bank_ms: int
    late_ms: int
    request_id: int
    backstop_ms: int = 0

    def __repr__(self) -> str:
        return (
            f"<Ask {self.request_id} {self.table} seat {self.seat} ({self.bot}) "
            f"deadline {self.deadline_ms} ms>"
        )


@dataclass(frozen=True, slots=True)
class SeatPenalized:
    """``seat``'s fault changed the game (told to every seat, like an event).

    The referee played ``substitute`` for it, or (``substitute`` None) stopped the deal
    under the revoke policy.
    """

    seat: int
    deal: int
    fault: FaultKind
    substitute: Action | None = None


@final
@dataclass(frozen=True, slots=True)
class Tell:
    """What ``seat`` (held by ``bot``) at ``table`` is told, in order."""

    table: str
    seat: int
    bot: str
    items: tuple[SeatEvent | SeatPenalized, ...]


@final
@dataclass(frozen=True, slots=True)
class Faulted:
    """A fault to record and to notify to its bot, the ``count``-th of ``limit`` (0: no limit).

    ``request_id`` is the request it concerns (or the id the bot sent), 0 if none;
    ``action`` is the action text the bot sent, verbatim, if any.
    """

    fault: Fault
    count: int
    limit: int
    request_id: int = 0
    action: str = ""


class CloseReason(Enum):
    """Why a table is closed to a bot."""

    SESSION_OVER = "session over"
    ABORTED = "aborted"
    DISQUALIFIED = "disqualified"


@final
@dataclass(frozen=True, slots=True)
class Closed:
    """Nothing more will come to ``bot`` from ``table``; its request there, if any, is withdrawn."""

    table: str
    bot: str
    reason: CloseReason
    message: str = ""


@final
@dataclass(frozen=True, slots=True)
class Unseated:
    """A fault of a bot that sits at no table: recorded by the referee, notified to nobody."""

    fault: Fault


@final
@dataclass(frozen=True, slots=True)
class Finished:
    """The table's session is over (or was aborted): what happened."""

    table: str
    outcome: SessionOutcome


Output = Ask | Tell | Faulted | Closed | Unseated | Finished
"""Anything the core hands out. Its classes are final: callers dispatch on ``type(item)``,
which costs less than match/case and which mypy narrows both ways (``assert_never``)."""
