"""Where a tournament's blocks are played: on this machine, or on a Ray cluster.

- :class:`LocalExecutor` (the default): worker processes on this machine, one per two cores,
  or the runner's own process when one is enough (:mod:`tournaments.play.executors.local`).
- :class:`RayExecutor` (``--executor ray``): Ray workers on a cluster, or on a local Ray
  instance started for the run (:mod:`tournaments.play.executors.ray`; Ray is an optional
  dependency, ``nap-arena[ray]``, imported only when a run uses it).

Both play the same unit of work, a block on a referee with its own bot processes, and
hand each finished session back to the runner, which alone commits it, its log written
first (:mod:`tournaments.play.executors.base`).
"""

from tournaments.play.executors.base import Executor, PlayContext, Usage
from tournaments.play.executors.local import LocalExecutor, default_workers
from tournaments.play.executors.ray import INSTALL_RAY, RayExecutor, ray_installed
from tournaments.play.executors.record import record_usage, recorded_usage

__all__ = [
    "INSTALL_RAY",
    "Executor",
    "LocalExecutor",
    "PlayContext",
    "RayExecutor",
    "Usage",
    "default_workers",
    "ray_installed",
    "record_usage",
    "recorded_usage",
]
