"""How isolated a tournament's bot processes are: the ``--sandbox`` modes and each process's limits.

Plain values, stored with a tournament's config; :mod:`tournaments.play.sandbox` applies
them. docs/security.md says what isolation keeps from a bot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tournaments.errors import RunnerError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["LOCAL_ON_THE_WALL", "SANDBOX_MODES", "BotLimits"]

SANDBOX_MODES = ("auto", "on", "off")
"""``--sandbox``: ``auto`` isolates the bots where bubblewrap works (a warning otherwise),
``on`` refuses to start without it, ``off`` runs them as plain processes."""


LOCAL_ON_THE_WALL = "local bots clocked on the wall"
"""Said in a run's record of what it did not contain (``tournaments.uncontained``) when it could not
read its local bots' CPU either, so that they were on the wall clock."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BotLimits:
    """What each bot process may use (``--bot-memory``, ``--bot-processes``, ``--bot-files``).

    Where its host can make cgroups (:mod:`tournaments.play.containment`), ``memory_mb``
    and ``processes`` hold for the bot process and everything it starts together: its
    memory, its ``/tmp`` included, with no swap, and its processes and threads. Inside
    the sandbox each process also has them as its own limits (``RLIMIT_DATA``, the data
    segment and anonymous mappings, which Python, Node.js and C programs all respect, its
    ``/tmp`` at most as much again; ``RLIMIT_NPROC``), the only ones where there is no
    cgroup; ``open_files`` caps each process's file descriptors (``RLIMIT_NOFILE``). A bot
    that reaches one sees an allocation, a fork or an open fail (or, past the memory of
    its group, one of its processes killed); its exit is then explained in one line.
    """

    memory_mb: int = 2048
    processes: int = 256
    open_files: int = 256

    def __post_init__(self) -> None:
        for name, least in (("memory_mb", 64), ("processes", 8), ("open_files", 32)):
            if getattr(self, name) < least:
                msg = f"bot limit {name} must be at least {least}, got {getattr(self, name)}"
                raise RunnerError(msg)

    def to_json(self) -> dict[str, int]:
        """JSON-ready data, as the tournament's config stores it."""
        return {"memory_mb": self.memory_mb, "processes": self.processes, "open_files": self.open_files}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> BotLimits:
        """Read :meth:`to_json`'s data; a missing key takes the default."""
        return cls(**{key: int(value) for key, value in (data or {}).items()})
