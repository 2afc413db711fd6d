"""The referee server: the gRPC transport over the match core (streams, batching, timers, auth).

The facade for the tournament runner is :class:`Referee` with :class:`SessionSpec` in and
:class:`SessionOutcome` out (both from :mod:`referee.match`, as are the fault values);
``python -m referee.server`` runs it standalone.
"""

from referee.match import Decision, Fault, FaultKind, SessionOutcome, SessionSpec, TimeLimits
from referee.server.app import Referee
from referee.server.limits import ServerLimits
from referee.server.setup import configure_logging, port_in_use, tune_collector

__all__ = [
    "Decision",
    "Fault",
    "FaultKind",
    "Referee",
    "ServerLimits",
    "SessionOutcome",
    "SessionSpec",
    "TimeLimits",
    "configure_logging",
    "port_in_use",
    "tune_collector",
]
