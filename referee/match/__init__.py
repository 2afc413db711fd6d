r"""The match core: a table's game loop, clocks and fault policy, pure (sans-IO).

Data in, data out, and no asyncio, grpc, protobuf or clock reads: time comes in as a
value (milliseconds on the caller's clock). The gRPC referee (:mod:`referee.server`) is a
transport over it; in-process play and the fault tests drive it in simulated time
(:mod:`referee.match.simulation`). So both give the same records and faults for the
same choices of the same bots.

- :class:`SessionSpec` in; :class:`SessionOutcome` (record, :class:`Decision`\\ s,
  :class:`Fault`\\ s, disqualified seats, what each declarer did: :class:`Declared`) out
- :class:`Match`: one table's loop; :class:`Arbiter`: every table and bot of a referee
  (request ids, queues, deadlines, reconnect grace); :class:`BotState`: one bot's share
- outputs: :class:`Ask`, :class:`Tell`, :class:`Faulted`, :class:`Closed`,
  :class:`Unseated`, :class:`Finished`; :class:`SeatPenalized` (told with the events)
- :class:`TimeLimits` and :class:`SeatClocks`; a bot's :class:`Clock`, and its process's
  CPU shared among the requests it holds (:class:`CpuLedger`); :class:`FaultKind` and
  :class:`Fault`
- :class:`Simulation` with its bots' reactions :class:`Answer`, :class:`Leave`, :class:`Garble`
"""

from referee.match.arbiter import Arbiter
from referee.match.bots import BotState
from referee.match.clock import Clock, SeatClocks, TimeLimits
from referee.match.cpu import CpuLedger
from referee.match.faults import Fault, FaultKind
from referee.match.loop import Match
from referee.match.messages import (
    DISQUALIFIED,
    Ask,
    Closed,
    CloseReason,
    Decision,
    Declared,
    Faulted,
    Finished,
    Output,
    SeatPenalized,
    SessionOutcome,
    SessionSpec,
    Tell,
    Unseated,
)
from referee.match.simulation import GARBLED, Answer, Garble, Leave, Reaction, Simulation

__all__ = [
    "DISQUALIFIED",
    "GARBLED",
    "Answer",
    "Arbiter",
    "Ask",
    "BotState",
    "Clock",
    "CloseReason",
    "Closed",
    "CpuLedger",
    "Decision",
    "Declared",
    "Fault",
    "FaultKind",
    "Faulted",
    "Finished",
    "Garble",
    "Leave",
    "Match",
    "Output",
    "Reaction",
    "SeatClocks",
    "SeatPenalized",
    "SessionOutcome",
    "SessionSpec",
    "Simulation",
    "Tell",
    "TimeLimits",
    "Unseated",
]
