"""The referee server: bot connections over gRPC, tables, deadlines, faults and auth.

The facade for the tournament runner is :class:`Referee` with :class:`SessionSpec` in and
:class:`SessionOutcome` out; ``python -m referee.server`` runs it standalone.
"""

from referee.server.app import Referee, configure_logging, tune_collector
from referee.server.faults import Fault, FaultKind
from referee.server.limits import ServerLimits, TimeLimits
from referee.server.table import Decision, SessionOutcome, SessionSpec

__all__ = [
    "Decision", "Fault", "FaultKind", "Referee", "ServerLimits", "SessionOutcome",
    "SessionSpec", "TimeLimits", "configure_logging", "tune_collector",
]
