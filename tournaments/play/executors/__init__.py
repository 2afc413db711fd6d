"""Where a tournament's blocks are played: on this machine, or on a Ray cluster.

- ``local.LocalExecutor`` (the default): worker processes on this machine, one per two
  cores, or the runner's own process when one is enough;
- ``ray.RayExecutor`` (``--executor ray``): Ray workers on a cluster, or on a local Ray
  instance started for the run (Ray is an optional dependency, ``nap-arena[ray]``,
  imported only when a run uses it).

Both play the same unit of work, a block on a referee with its own bot processes, and
hand each finished session back to the runner, which alone commits it, its log written
first (``base``). Their workers are one class (``block_worker.BlockWorker``), and the runner
speaks to either in the same messages (``worker_messages``).

Nothing is imported here: a worker process starts as ``python -m
tournaments.play.executors.workers``, which must not be imported before it runs.
"""
