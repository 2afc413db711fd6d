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
import signal
import tempfile
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from tournaments.errors import RunnerError
from tournaments.play.executors.base import PlayContext, Usage
from tournaments.play.executors.block_worker import BlockWorker
from tournaments.play.executors.shipping import portable_bots
from tournaments.play.executors.worker_messages import (
    PlayBlock,
    Ready,
    SessionPlayed,
    Start,
    UnexpectedMessage,
    WorkerInfo,
    expected,
)
from tournaments.play.host import WorkerSetup, first_failure
from tournaments.play.tables import NoTables

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType

    from tournaments.play.blocks import BlockRun
    from tournaments.results import SessionResult

__all__ = ["INSTALL_RAY", "RayExecutor", "ray_installed"]

INSTALL_RAY = "the Ray executor needs Ray, which is not installed: pip install 'nap-arena[ray]'"
_BLOCK_LOSSES = 3
"""Lost workers a block may be in play on before the run stops (a block that kills its workers)."""
_PLACE_LOSSES = 3
"""Workers lost in a row, none having sent a session, before a place is given up."""
_STOP_WAIT_S = 15.0
"""How long a Ray worker may take to stop its bots before it is killed."""
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

    async def play(
        self,
        runs: Sequence[BlockRun],
        deliver: Callable[[SessionResult, bytes], None],
        *,
        context: PlayContext,
    ) -> None:
        """Play ``runs`` on Ray workers; see the module's docstring."""
        if not runs:
            return
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
            joined, where = self._connect(
                ray, runtime_env={"working_dir": stage} if shipped else None, log_level=setup.log_level
            )
            try:
                cpus = int(ray.cluster_resources().get("CPU", 0))
                await _RayRun(
                    ray,
                    setup,
                    runs,
                    deliver,
                    report=lambda workers, lost: context.report(
                        Usage(
                            executor=self.name,
                            workers=workers,
                            description=f"{workers} Ray worker{'' if workers == 1 else 's'} on {where}",
                            lost=lost,
                            resume_flags=self.resume_flags(),
                        )
                    ),
                    workers=min(setup.config.workers or max(1, cpus), len(runs)),
                ).play()
            finally:
                if joined:
                    ray.shutdown()

    def _connect(
        self, ray: ModuleType, *, runtime_env: dict[str, Any] | None, log_level: int
    ) -> tuple[bool, str]:
        """Start or join Ray: whether this run must leave it at the end, and where the workers run.

        ``runtime_env`` (the bot folders) goes with the connection: Ray uploads a local
        folder only for the whole job.
        """
        if ray.is_initialized():  # the caller's own connection, left as it is
            if runtime_env is not None:
                msg = "bot folders travel to Ray workers only when the run connects to Ray itself"
                raise RunnerError(msg)
            return False, "the Ray instance this process had joined"
        quiet = logging.INFO if log_level == logging.INFO else logging.WARNING
        previous = signal.getsignal(signal.SIGTERM)
        try:
            if self.address is None:
                cpus = self.num_cpus or os.cpu_count() or 1
                ray.init(
                    address="local",
                    num_cpus=cpus,
                    include_dashboard=False,
                    logging_level=quiet,
                    runtime_env=runtime_env,
                    _temp_dir=None if self.temp_dir is None else str(self.temp_dir),
                )
                return True, f"a local Ray instance with {_count(cpus, 'CPU')}"
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
        finally:
            # ray.init makes SIGTERM exit the process; the runner's own handling stops it cleanly
            if previous is not None and threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, previous)
        return True, f"the Ray cluster at {self.address} ({_count(nodes, 'node')}, {_count(cpus, 'CPU')})"


# ---------------------------------------------------------------------------- the queue of blocks


class _Blocks:
    """The blocks still to play: taken by workers, given back (less what was played) when one is lost."""

    def __init__(self, runs: Sequence[BlockRun]) -> None:
        self._queue = deque(runs)
        self._in_flight = 0
        self._losses: dict[int, int] = {}
        self._changed = asyncio.Event()
        self._failure: RunnerError | None = None

    @property
    def done(self) -> bool:
        """Whether every block is played (none waiting, none in play)."""
        return not self._queue and not self._in_flight

    async def take(self) -> BlockRun | None:
        """The next block to play, or None once all are played; waits while blocks in play may come back.

        Raises RunnerError once a block has been in play on too many lost workers.
        """
        while True:
            if self._failure is not None:
                raise self._failure
            if self._queue:
                self._in_flight += 1
                return self._queue.popleft()
            if not self._in_flight:
                return None
            await self._change()

    async def wait_done(self) -> None:
        """Return once every block is played."""
        while not self.done:
            await self._change()

    async def _change(self) -> None:
        self._changed.clear()  # nothing runs between the caller's check and this wait
        await self._changed.wait()

    def settle(self, run: BlockRun, received: Sequence[int], *, lost: str | None) -> None:
        """A block taken is over: the rotations not ``received`` go back, first in line.

        ``lost`` says why the worker that played it was lost, if it was: that counts
        against the block, which stops the run at :data:`_BLOCK_LOSSES`.
        """
        self._in_flight -= 1
        left = tuple(rotation for rotation in run.rotations if rotation not in received)
        if left:
            self._queue.appendleft(dataclasses.replace(run, rotations=left))
            if lost is not None:
                losses = self._losses[run.index] = self._losses.get(run.index, 0) + 1
                if losses >= _BLOCK_LOSSES:
                    msg = (
                        f"block {run.index} was in play on {losses} Ray workers that were lost (last: {lost})"
                    )
                    self._failure = RunnerError(msg)
        self._changed.set()


# ---------------------------------------------------------------------------- one run


@dataclass(slots=True)
class _Worker:
    """One Ray worker (an actor) in one of the run's places."""

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


class _RayRun:
    """One run's Ray workers, the blocks they play and the sessions coming back (Ray is connected).

    There are ``workers`` places, each holding one Ray worker at a time (a new one when
    one is lost) with ``lanes`` blocks in play on it; a lane takes its next block when
    one ends. Sessions are queued for the committer as they come back.
    """

    def __init__(  # noqa: PLR0913 - the pieces of one run
        self,
        ray: ModuleType,
        setup: WorkerSetup,
        runs: Sequence[BlockRun],
        deliver: Callable[[SessionResult, bytes], None],
        *,
        report: Callable[[int, int], None],
        workers: int,
    ) -> None:
        from ray import exceptions  # noqa: PLC0415 - optional

        self._ray = ray
        self._setup = setup
        self._blocks = _Blocks(runs)
        self._deliver = deliver
        self._report = report
        self._places = workers
        self._lanes = max(1, min(setup.config.concurrency, math.ceil(len(runs) / workers)))
        self._actor = ray.remote(BlockWorker).options(
            num_cpus=1, max_concurrency=self._lanes + 2, max_restarts=0
        )
        self._sessions: asyncio.Queue[SessionPlayed | None] = asyncio.Queue()
        self._ready = 0
        self._lost = 0
        self._given_up = 0
        self._starting: set[asyncio.Task[Any]] = set()
        self._task_error: type[BaseException] = exceptions.RayTaskError
        self._setup_error: type[BaseException] = exceptions.RuntimeEnvSetupError
        self._lost_errors: tuple[type[BaseException], ...] = (
            exceptions.RayActorError,  # died (ActorDiedError) or unreachable (ActorUnavailableError)
            exceptions.ObjectLostError,
            exceptions.NodeDiedError,
            exceptions.WorkerCrashedError,
            exceptions.OutOfMemoryError,
        )

    async def play(self) -> None:
        """Play every block; commit each session as it comes back. The first failure stops the rest."""
        self._report(0, 0)
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self._commit())
                group.create_task(self._play_all())
        except* Exception as failed:  # noqa: BLE001 - raised again, as itself
            raise first_failure(failed) from None

    async def _play_all(self) -> None:
        try:
            async with asyncio.TaskGroup() as group:
                for place in range(1, self._places + 1):
                    group.create_task(self._place(place))
                group.create_task(self._stop_waiting_once_done())
        finally:
            self._sessions.put_nowait(None)  # the committer ends once it has what came before

    async def _stop_waiting_once_done(self) -> None:
        """Once every block is played, stop waiting for workers the cluster has not started."""
        await self._blocks.wait_done()
        for task in self._starting:
            task.cancel()

    async def _commit(self) -> None:
        """Commit the sessions that came back, with their logs: the runner's part."""
        while (played := await self._sessions.get()) is not None:
            self._deliver(played.result, played.log)

    async def _place(self, place: int) -> None:
        """Keep a Ray worker playing in this place until every block is played, replacing lost ones."""
        in_a_row = 0
        while not self._blocks.done:
            worker = _Worker(place, self._actor.remote())
            try:
                if await self._start(worker):
                    async with asyncio.TaskGroup() as lanes:
                        for _ in range(self._lanes):
                            lanes.create_task(self._lane(worker))
            finally:
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
        task = asyncio.current_task()
        if task is not None:
            self._starting.add(task)
        try:
            start = Start(setup=self._setup, bot_log_suffix=f"-ray{worker.place}", portable_bots=True)
            worker.info = expected(await worker.actor.start.remote(start), Ready).where
        except Exception as exc:  # noqa: BLE001 - sorted by _failed
            self._failed(worker, exc)
            return False
        finally:
            self._starting.discard(task)
        self._ready += 1
        self._report(self._ready, self._lost)
        info = worker.info
        _log.info(
            "Ray worker ready", worker=worker.place, host=info.host, pid=info.pid, bot_logs=info.bot_logs
        )
        return True

    async def _lane(self, worker: _Worker) -> None:
        """Play blocks on the worker, one at a time, until none is left or the worker is lost."""
        while worker.lost is None and (run := await self._blocks.take()) is not None:
            received: list[int] = []
            played = worker.lost is None  # else it was lost while this lane waited: the block goes back
            try:
                if played:
                    async for reference in worker.actor.play.remote(PlayBlock(run=run)):
                        session = expected(await reference, SessionPlayed)
                        received.append(session.result.rotation)
                        worker.sent = True
                        self._sessions.put_nowait(session)
            except Exception as exc:  # noqa: BLE001 - sorted by _failed
                if worker.lost is None:
                    self._failed(worker, exc)
            finally:
                lost = worker.lost if played else None
                if lost is not None and len(received) < len(run.rotations):
                    worker.given_back += 1
                    worker.kept += len(received)
                self._blocks.settle(run, received, lost=lost)

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


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}{'' if number == 1 else 's'}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
