"""The Ray executor: blocks played by Ray workers, each a referee with its own bot processes.

``nap tournament run --executor ray [--ray-address ADDRESS]``. Without an address, a local
Ray instance is started for the run (one CPU per core) and stopped after it; with one, the
run joins that cluster (``ray start --head`` on one machine, ``ray start --address=...``
on the others) and leaves it running. There is one Ray worker per CPU of the cluster
(``--workers`` to choose), each an actor of the
:class:`~tournaments.play.executors.block_worker.BlockWorker` a local worker process is:
it hosts a referee and one process per bot entry and plays up to ``concurrency`` blocks
at once, taking and giving back the messages of :mod:`~tournaments.play.executors.worker_messages`.

What travels: each block out (a :class:`~tournaments.play.blocks.BlockRun`, a few hundred
bytes), and back each session as it ends, its result and its log (gzip JSON, encoded on
the worker). The runner commits the session with its log in one transaction: one process
writes the store, as with local workers. Bot folders travel in Ray's runtime environment
(:mod:`~tournaments.play.executors.shipping`).

A Ray worker that dies or cannot be reached (its process killed, its node lost) costs
only the sessions it had not yet sent back: its blocks go back on the queue without the
rotations already received, other workers play them, and a new Ray worker takes its
place. A block in play on three lost workers, or a place whose workers are lost three
times in a row before sending a session, stops the run with one line (resumable like any
stop). A failure that is not a lost worker (a bot that cannot start) stops the run as it
would locally.

Ray workers do not forward the tables they play to a spectator (``--watch`` shows the
standings, not the tables: :data:`NOT_WATCHED`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib.util
import logging
import math
import os
import tempfile
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self

import structlog

from tournaments.errors import EntryStartError, RunnerError
from tournaments.play.executors.base import Usage
from tournaments.play.executors.block_worker import BlockWorker
from tournaments.play.executors.shipping import portable_bots
from tournaments.play.executors.worker_messages import (
    EntryFailed,
    PlayBlock,
    Ready,
    Retire,
    SessionPlayed,
    Start,
    UnexpectedMessage,
    WorkerInfo,
    expected,
)
from tournaments.play.tables import NoTables
from tournaments.words import count

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator, Sequence
    from types import ModuleType

    from tournaments.plan.entries import BotEntry
    from tournaments.play.blocks import BlockRun
    from tournaments.play.executors.base import Deliver, PlayContext, Players
    from tournaments.play.host import WorkerSetup

__all__ = ["INSTALL_RAY", "LOCAL_STARTS", "RayExecutor", "RayPlayers", "ray_installed", "start_local_ray"]

INSTALL_RAY = "the Ray executor needs Ray, which is not installed: pip install 'nap-arena[ray]'"
_BLOCK_LOSSES = 3
"""Lost workers a block may be in play on before the run stops (a block that kills its workers)."""
_PLACE_LOSSES = 3
"""Workers lost in a row, none having sent a session, before a place is given up."""
_STOP_WAIT_S = 15.0
"""How long a Ray worker may take to stop its bots before it is killed."""
LOCAL_STARTS = 3
"""Tries at starting a local Ray instance. Ray gives a new node 30 s to register (a constant
of Ray's own, ``ray._private.node``) and then gives up; a busy machine may need more, and
a second try finds the files the first one read in the page cache."""
LOCAL_SYSTEM_CONFIG: Final = {"worker_niceness": 0}
"""Ray runs its workers at niceness 15, so that a cluster's workers yield to its other work;
a local instance started for one run is that run's alone, as local worker processes are,
and its workers (their referee, bots and builds) keep the run's own priority: niced, they
starved beside any other job on the machine (a Node.js bot's build took over 10 minutes
beside six busy processes on two cores) and their bots were the first late."""
_NODE_SLOW = "timed out during startup"
_NOT_MAIN_THREAD = "SIGTERM handler is not set"
"""Ray's warning when it starts outside the main thread, as it does here on purpose."""
"""What Ray's error (a bare Exception) says of a node that did not register in time."""
NOT_WATCHED = "the Ray executor does not forward the tables in play: only the standings are watched"

_log = structlog.get_logger("nap.runner")


def ray_installed() -> bool:
    """Whether Ray can be imported here (it is an optional dependency: ``nap-arena[ray]``)."""
    return importlib.util.find_spec("ray") is not None


def _import_ray() -> ModuleType:
    try:
        import ray  # noqa: PLC0415 - optional: imported only when a run uses it
    except ImportError:
        raise RunnerError(INSTALL_RAY) from None
    return ray


@dataclass(frozen=True, slots=True, kw_only=True)
class RayExecutor:
    """Ray workers on a cluster at ``address``, or on a local Ray instance started for the run.

    ``num_cpus`` and ``temp_dir`` concern that local instance only: its CPUs (default:
    this machine's cores) and the folder of its session files (default: Ray's own,
    ``/tmp/ray``). The instance runs without its dashboard.
    """

    address: str | None = None
    num_cpus: int | None = None
    temp_dir: Path | None = None

    @property
    def name(self) -> str:
        """``ray``."""
        return "ray"

    def resume_flags(self) -> tuple[str, ...]:
        """``--executor ray``, and the cluster's address when one was given."""
        return ("--executor", "ray", *(("--ray-address", self.address) if self.address else ()))

    @contextlib.asynccontextmanager
    async def open(self, context: PlayContext, *, blocks: int | None) -> AsyncIterator[Players]:
        """Ray workers, one per CPU of the cluster (``--workers`` to choose); see the module's docstring."""
        if any(not bot.command for bot in context.setup.config.bots):
            msg = "remote bots connect to one referee: they cannot play on Ray workers"
            raise RunnerError(msg)
        ray = _import_ray()
        if context.tables is not None:
            context.tables(NoTables(NOT_WATCHED))
        setup = context.setup
        with tempfile.TemporaryDirectory(prefix="nap-ray-bots-") as stage:
            bots = portable_bots(setup.config.bots, Path(stage))
            setup = dataclasses.replace(setup, config=dataclasses.replace(setup.config, bots=bots))
            shipped = any(bot.cwd is not None for bot in bots)
            with _unsaid(_NOT_MAIN_THREAD):
                joined, where = await asyncio.to_thread(
                    self._connect,
                    ray,
                    runtime_env={"working_dir": stage} if shipped else None,
                    log_level=setup.log_level,
                )
            try:
                cpus = int(ray.cluster_resources().get("CPU", 0))
                workers = setup.config.workers or max(1, cpus)
                if blocks is not None:
                    workers = min(workers, blocks)

                def report(ready: int, lost: int) -> None:
                    context.report(
                        Usage(
                            executor=self.name,
                            workers=ready,
                            description=f"{ready} Ray worker{'' if ready == 1 else 's'} on {where}",
                            lost=lost,
                            resume_flags=self.resume_flags(),
                        )
                    )

                async with RayPlayers(ray, setup, workers=workers, blocks=blocks, report=report) as players:
                    yield players
            finally:
                if joined:
                    ray.shutdown()

    def _connect(
        self, ray: ModuleType, *, runtime_env: dict[str, Any] | None, log_level: int
    ) -> tuple[bool, str]:
        """Start or join Ray: whether this run must leave it at the end, and where the workers run.

        ``runtime_env`` (the bot folders) goes with the connection: Ray uploads a local
        folder only for the whole job. Called in a thread of its own (a start takes seconds,
        during which an arena keeps serving its pages), where ``ray.init`` leaves SIGTERM to
        the runner rather than make it exit the process.
        """
        if ray.is_initialized():  # the caller's own connection, left as it is
            if runtime_env is not None:
                msg = "bot folders travel to Ray workers only when the run connects to Ray itself"
                raise RunnerError(msg)
            return False, "the Ray instance this process had joined"
        quiet = logging.INFO if log_level == logging.INFO else logging.WARNING
        try:
            if self.address is None:
                cpus = self.num_cpus or os.cpu_count() or 1
                start_local_ray(
                    ray, cpus=cpus, temp_dir=self.temp_dir, runtime_env=runtime_env, log_level=quiet
                )
                return True, f"a local Ray instance with {count(cpus, 'CPU')}"
            _send_token_if_any()
            ray.init(address=self.address, logging_level=quiet, runtime_env=runtime_env)
            nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
            cpus = int(ray.cluster_resources().get("CPU", 0))
        except (ConnectionError, RuntimeError, ValueError, OSError) as exc:
            if ray.is_initialized():
                ray.shutdown()
            what = "start a local Ray instance" if self.address is None else f"join Ray at {self.address}"
            msg = f"cannot {what}: {_first_line(exc)}"
            raise RunnerError(msg) from exc
        return True, f"the Ray cluster at {self.address} ({count(nodes, 'node')}, {count(cpus, 'CPU')})"


# ---------------------------------------------------------------------------- the blocks handed over


@dataclass(slots=True)
class _Job:
    """A block handed over: the rotations still to play, where its sessions go, what its player awaits."""

    run: BlockRun
    deliver: Deliver
    entries: tuple[BotEntry, ...]
    done: asyncio.Future[None]
    losses: int = 0
    """Lost workers it was in play on."""


class _Blocks:
    """The blocks waiting for a Ray worker: taken by its lanes, given back (less what was played) if lost."""

    def __init__(self) -> None:
        self._queue: deque[_Job] = deque()
        self._changed = asyncio.Event()
        self._failure: BaseException | None = None

    def put(self, job: _Job) -> None:
        """Hand a block to the workers (last in line); refused once the players have failed."""
        if self._failure is not None:
            raise self._failure
        self._queue.append(job)
        self._changed.set()

    async def take(self) -> _Job:
        """The next block to play, waiting for one; raises the players' failure once there is one."""
        while True:
            if self._failure is not None:
                raise self._failure
            if self._queue:
                return self._queue.popleft()
            self._changed.clear()  # nothing runs between the check above and this wait
            await self._changed.wait()

    def settle(self, job: _Job, received: Sequence[int], *, lost: str | None) -> None:
        """A block taken is over: done when every rotation came back, else the rest go back first in line.

        ``lost`` says why the worker that played it was lost, if it was: that counts
        against the block, which fails at :data:`_BLOCK_LOSSES`.
        """
        if job.done.done():
            return
        left = tuple(rotation for rotation in job.run.rotations if rotation not in received)
        if not left:
            job.done.set_result(None)
            return
        job.run = dataclasses.replace(job.run, rotations=left)
        if lost is not None:
            job.losses += 1
            if job.losses >= _BLOCK_LOSSES:
                msg = f"block {job.run.index} was in play on {job.losses} Ray workers that were lost"
                msg += f" (last: {lost})"
                job.done.set_exception(RunnerError(msg))
                return
        self._queue.appendleft(job)
        self._changed.set()

    def fail(self, failure: BaseException) -> None:
        """The players cannot go on: every block waiting, and every one handed later, fails so."""
        self._failure = failure
        for job in self._queue:
            if not job.done.done():
                job.done.set_exception(failure)
        self._queue.clear()
        self._changed.set()


# ---------------------------------------------------------------------------- the players


@dataclass(slots=True)
class _Worker:
    """One Ray worker (an actor) in one of the places."""

    place: int
    actor: Any
    info: WorkerInfo | None = None
    lost: str | None = None
    """Why it was lost, once it is."""
    sent: bool = False
    """Whether it sent back a session."""
    given_back: int = 0
    """Blocks it was playing when it was lost, given back to the queue."""
    kept: int = 0
    """Sessions of those blocks that it had sent back: kept, not played again."""

    def __str__(self) -> str:
        where = "" if self.info is None else f" on {self.info.host} (pid {self.info.pid})"
        return f"Ray worker {self.place}{where}"


class RayPlayers:
    """Ray workers in ``workers`` places, playing the blocks handed to them (Ray is connected).

    Used as an async context: entering starts the places, leaving stops every worker. Each
    place holds one Ray worker at a time (a new one when one is lost) with ``lanes`` blocks
    in play on it; a lane takes its next block when one ends.
    """

    def __init__(
        self,
        ray: ModuleType,
        setup: WorkerSetup,
        *,
        workers: int,
        blocks: int | None,
        report: Callable[[int, int], None],
    ) -> None:
        from ray import exceptions  # noqa: PLC0415 - optional

        concurrency = setup.config.concurrency
        self._ray = ray
        self._setup = setup
        self._blocks = _Blocks()
        self._report = report
        self._places = workers
        self._lanes = concurrency if blocks is None else max(1, min(concurrency, math.ceil(blocks / workers)))
        self._actor = ray.remote(BlockWorker).options(
            num_cpus=1, max_concurrency=self._lanes + 3, max_restarts=0
        )
        self._ready = 0
        self._lost = 0
        self._given_up = 0
        self._workers: dict[int, _Worker] = {}
        """The worker in each place now."""
        self._running: list[asyncio.Task[None]] = []
        self._task_error: type[BaseException] = exceptions.RayTaskError
        self._setup_error: type[BaseException] = exceptions.RuntimeEnvSetupError
        self._lost_errors: tuple[type[BaseException], ...] = (
            exceptions.RayActorError,  # died (ActorDiedError) or unreachable (ActorUnavailableError)
            exceptions.ObjectLostError,
            exceptions.NodeDiedError,
            exceptions.WorkerCrashedError,
            exceptions.OutOfMemoryError,
        )

    @property
    def capacity(self) -> int:
        """Blocks in play at once: ``lanes`` on each place's worker."""
        return self._places * self._lanes

    def tables(self) -> NoTables:
        """None: Ray workers do not forward the tables they play."""
        return NoTables(NOT_WATCHED)

    async def __aenter__(self) -> Self:
        self._report(0, 0)
        self._running = [asyncio.create_task(self._place(place)) for place in range(1, self._places + 1)]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for task in self._running:
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
        self._running.clear()

    async def play(self, run: BlockRun, deliver: Deliver, *, entries: Sequence[BotEntry] = ()) -> None:
        """Hand the block to the workers; return once its last session is delivered (see :class:`Players`)."""
        job = _Job(run, deliver, tuple(entries), asyncio.get_running_loop().create_future())
        self._blocks.put(job)
        await job.done

    async def retire(self, names: Sequence[str]) -> None:
        """Stop those entries' processes on every live worker."""
        for worker in list(self._workers.values()):
            if worker.lost is None and worker.info is not None:
                with contextlib.suppress(Exception):
                    await worker.actor.retire.remote(Retire(entries=tuple(names)))

    async def _place(self, place: int) -> None:
        """Keep a Ray worker playing in this place, replacing lost ones; a failure fails every block."""
        try:
            await self._keep_playing(place)
        except Exception as exc:  # noqa: BLE001 - every block waiting gets it
            self._blocks.fail(exc)

    async def _keep_playing(self, place: int) -> None:
        in_a_row = 0
        while True:
            worker = _Worker(place, self._actor.remote())
            self._workers[place] = worker
            try:
                if await self._start(worker):
                    async with asyncio.TaskGroup() as lanes:
                        for _ in range(self._lanes):
                            lanes.create_task(self._lane(worker))
            finally:
                self._workers.pop(place, None)
                await self._retire(worker)
            if worker.lost is None:
                return
            _log.warning(
                "Ray worker lost; others play the rest of its blocks",
                worker=str(worker),
                reason=worker.lost,
                blocks=worker.given_back,
                sessions_kept=worker.kept,
            )
            in_a_row = 0 if worker.sent else in_a_row + 1
            if in_a_row >= _PLACE_LOSSES:
                self._given_up += 1
                if self._given_up == self._places:
                    msg = f"every Ray worker was lost (last: {worker}: {worker.lost})"
                    raise RunnerError(msg)
                return

    async def _start(self, worker: _Worker) -> bool:
        """Wait for the cluster to start the worker and for its bots to connect; False if it was lost."""
        try:
            start = Start(setup=self._setup, bot_log_suffix=f"-ray{worker.place}", portable_bots=True)
            worker.info = expected(await worker.actor.start.remote(start), Ready).where
        except Exception as exc:  # noqa: BLE001 - sorted by _failed
            self._failed(worker, exc)
            return False
        self._ready += 1
        self._report(self._ready, self._lost)
        info = worker.info
        _log.info(
            "Ray worker ready", worker=worker.place, host=info.host, pid=info.pid, bot_logs=info.bot_logs
        )
        return True

    async def _lane(self, worker: _Worker) -> None:
        """Play blocks on the worker, one at a time, until it is lost."""
        while worker.lost is None:
            job = await self._blocks.take()
            received: list[int] = []
            played = worker.lost is None  # else it was lost while this lane waited: the block goes back
            try:
                if played:
                    await self._play(worker, job, received)
            except Exception as exc:  # noqa: BLE001 - sorted by _failed
                if worker.lost is None:
                    try:
                        self._failed(worker, exc)
                    except Exception as failure:  # noqa: BLE001 - the block's, not the place's
                        if not job.done.done():
                            job.done.set_exception(failure)
            finally:
                lost = worker.lost if played else None
                if lost is not None and len(received) < len(job.run.rotations):
                    worker.given_back += 1
                    worker.kept += len(received)
                self._blocks.settle(job, received, lost=lost)

    async def _play(self, worker: _Worker, job: _Job, received: list[int]) -> None:
        """Play one block on the worker, delivering its sessions as they come back."""
        async for reference in worker.actor.play.remote(PlayBlock(run=job.run, entries=job.entries)):
            played = await reference
            if isinstance(played, EntryFailed):
                job.done.set_exception(EntryStartError(played.reason, entry=played.entry))
                return
            session = expected(played, SessionPlayed)
            received.append(session.result.rotation)
            worker.sent = True
            try:
                job.deliver(session.result, session.log)
            except Exception as exc:  # noqa: BLE001 - the block's player raises it
                job.done.set_exception(exc)
                return

    def _failed(self, worker: _Worker, exc: Exception) -> None:
        """Mark the worker lost (its actor killed) if ``exc`` says so; else raise what ``exc`` means."""
        if isinstance(exc, UnexpectedMessage):  # as a local worker's (workers.WorkerLink)
            msg = f"{worker} sent an unexpected message ({exc.kind})"
            raise RunnerError(msg) from None
        if isinstance(exc, self._setup_error):
            msg = f"Ray could not set up the bots' runtime environment: {_first_line(exc)}"
            raise RunnerError(msg) from None
        if isinstance(exc, self._task_error):  # raised in the worker: a bot, a log, a bug
            cause = getattr(exc, "cause", None)
            msg = f"{worker}: {_first_line(cause if isinstance(cause, BaseException) else exc)}"
            raise RunnerError(msg) from None
        if not isinstance(exc, self._lost_errors):
            raise exc
        worker.lost = _first_line(exc)
        with contextlib.suppress(Exception):
            self._ray.kill(worker.actor, no_restart=True)  # whatever it still plays ends now

    async def _retire(self, worker: _Worker) -> None:
        """Stop a worker: its bots first when it is alive, then the actor.

        Only a lost worker changes the count reported: at the end of a run, the record says
        how many workers played.
        """
        if worker.lost is not None:
            self._lost += 1
            if worker.info is not None:
                self._ready -= 1
            self._report(self._ready, self._lost)
        try:
            if worker.lost is None and worker.info is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(worker.actor.stop.remote(), _STOP_WAIT_S)
        finally:
            with contextlib.suppress(Exception):
                self._ray.kill(worker.actor, no_restart=True)


def _send_token_if_any() -> None:
    """Authenticate to the cluster with this machine's Ray token, when there is one.

    A cluster started where a token exists (``ray start --head`` after any local Ray
    instance, nap's included, made ``~/.ray/auth_token``) requires it, but Ray sends it on
    a connection to a given address only under ``RAY_AUTH_MODE=token``. This does what
    Ray does for a cluster it finds on this machine: the token mode when ``RAY_AUTH_MODE``
    is unset and a token is found (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH``, or
    ``~/.ray/auth_token``). A cluster without authentication ignores the token.
    """
    from ray._private.authentication import (  # noqa: PLC0415 - optional; Ray is pinned (pyproject)
        authentication_token_setup,
    )

    authentication_token_setup.maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


def start_local_ray(
    ray: ModuleType, *, cpus: int, temp_dir: Path | None, runtime_env: dict[str, Any] | None, log_level: int
) -> None:
    """Start a local Ray instance (no dashboard), up to :data:`LOCAL_STARTS` times while its node is slow.

    ``temp_dir`` holds its session files (None: Ray's own). A node that did not register in
    time has its processes stopped before the next try; RuntimeError (one line) when the
    last try's node is slow too. Any other error is raised as it is.
    """
    for attempt in range(1, LOCAL_STARTS + 1):
        try:
            ray.init(
                address="local",
                num_cpus=cpus,
                include_dashboard=False,
                logging_level=log_level,
                runtime_env=runtime_env,
                _temp_dir=None if temp_dir is None else str(temp_dir),
                _system_config=LOCAL_SYSTEM_CONFIG,
            )
        except Exception as exc:
            if _NODE_SLOW not in str(exc):
                raise
            _stop_unregistered_node(exc)
            if attempt == LOCAL_STARTS:
                msg = f"{_first_line(exc)} ({LOCAL_STARTS} tries)"
                raise RuntimeError(msg) from exc
            _log.info("local Ray node slow to start; trying again", attempt=attempt)
        else:
            return


def _stop_unregistered_node(exc: BaseException) -> None:
    """Stop the processes of the node whose start raised ``exc`` (Ray leaves them running).

    Ray gives up on a node that did not register in time without stopping what it started
    (its control store, raylet, log monitor, reaper...), and ``ray.shutdown`` knows nothing
    of a node that never finished starting: the node is found in the traceback, where its
    constructor raised, and its processes are killed and reaped.
    """
    from ray._private.node import Node  # noqa: PLC0415 - Ray is optional; its node, to stop what it left

    traceback = exc.__traceback__
    while traceback is not None:
        node = traceback.tb_frame.f_locals.get("self")
        if isinstance(node, Node):
            with contextlib.suppress(Exception):
                node.kill_all_processes(check_alive=False, allow_graceful=False, wait=True)
            return
        traceback = traceback.tb_next


@contextlib.contextmanager
def _unsaid(words: str) -> Iterator[None]:
    """Ray's driver log without its lines that contain ``words``, while the body runs."""

    def said(record: logging.LogRecord) -> bool:
        return words not in record.getMessage()

    logger = logging.getLogger("ray._private.worker")
    logger.addFilter(said)
    try:
        yield
    finally:
        logger.removeFilter(said)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
