"""A supervised child process: launch it, restart it when it exits on its own, stop it.

Both process owners of the project use it: the tournament's bot processes
(:class:`tournaments.play.bots.BotProcess`) and the stdio bridge's bot program
(:class:`clients.stdio.child.ChildBot`). They say how to launch a process and what it
means for it to be up and over; the :class:`Supervisor` holds the rules they share:

- an exit nobody asked for is recorded (:attr:`Supervisor.exits`) and answered with a
  restart after :data:`RESTART_DELAY_S`, while ``max_restarts`` are left; past that, or
  when a restart fails, the supervisor gives up for good (:attr:`Supervisor.gave_up`);
- stopping (:meth:`Supervisor.stop`) is asked for: nothing is restarted any more, and the
  process is ended by a :class:`StopSequence` (SIGTERM, a grace, SIGKILL).

It knows asyncio and signals only: no gRPC, no tournament, no log format (the owners'
hooks write their own lines).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["RESTART_DELAY_S", "Child", "StopSequence", "Supervisor", "stop_process"]

RESTART_DELAY_S: Final = 0.2
"""Pause before restarting an exited process, so one that dies at once cannot spin."""


class Child(Protocol):
    """What the supervisor needs of a process (:class:`asyncio.subprocess.Process` is one)."""

    @property
    def pid(self) -> int:
        """Its process id (the leader's, for a process group)."""

    @property
    def returncode(self) -> int | None:
        """Its exit status once it has exited, None before."""

    async def wait(self) -> int:
        """Wait until it has exited (and its pipes are closed); its exit status."""

    def send_signal(self, signal: int) -> None:
        """Send it ``signal``; ProcessLookupError when it is gone."""


P = TypeVar("P", bound=Child)


@dataclass(frozen=True, slots=True)
class StopSequence:
    """How a process is stopped: a wait for it to leave by itself, SIGTERM, a grace, SIGKILL.

    Each wait ends early when the process is over. With ``group`` the signals go to its
    process group (it and whatever it started), and a process that has exited but whose
    pipes are still held (by a child) is signalled all the same; otherwise signals stop
    once the process itself has exited.
    """

    grace_s: float
    """Seconds between SIGTERM and SIGKILL."""
    leave_s: float = 0.0
    """Seconds given before SIGTERM to leave on its own (its owner has closed its stdin); 0: none."""
    kill_wait_s: float | None = None
    """Seconds waited after SIGKILL; None: until it is gone."""
    group: bool = False
    """Signal the process group led by the process, not just the process."""


async def stop_process(
    process: Child, sequence: StopSequence, *, on_kill: Callable[[float], None] | None = None
) -> None:
    """Stop ``process`` by ``sequence``; ``on_kill(grace_s)`` is called just before SIGKILL."""
    if process.returncode is not None:
        return
    if sequence.leave_s > 0 and await _over_within(process, sequence.leave_s, group=sequence.group):
        return
    _signal(process, signal.SIGTERM, group=sequence.group)
    if await _over_within(process, sequence.grace_s, group=sequence.group):
        return
    if on_kill is not None:
        on_kill(sequence.grace_s)
    _signal(process, signal.SIGKILL, group=sequence.group)
    if sequence.kill_wait_s is None:
        await process.wait()
    else:
        await _over_within(process, sequence.kill_wait_s, group=sequence.group)


async def _over_within(process: Child, seconds: float, *, group: bool) -> bool:
    """Whether ``process`` is over within ``seconds``: waited for, or (alone) exited."""
    try:
        await asyncio.wait_for(process.wait(), seconds)
    except TimeoutError:
        return not group and process.returncode is not None
    return True


def _signal(process: Child, signum: signal.Signals, *, group: bool) -> None:
    if not group:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signum)
        return
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass
    except PermissionError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signum)


class Supervisor(Generic[P]):
    """One process at a time, restarted after an exit nobody asked for, at most ``max_restarts`` times.

    The owner's functions:

    - ``launch()`` starts a process and returns it; it raises the owner's one-line error
      when it cannot.
    - ``ready(process)`` returns once a new process is up (connected, say) and raises when
      it does not come up. At :meth:`start` the process is then stopped and the error
      raised; on a restart, a process that died before it was up has exited like any
      other, and one still running is stopped and the supervisor gives up.
    - ``ended(process)`` returns the exit status once the process is over, its output
      read (by default ``process.wait()``); it is awaited for every process, and the
      supervisor stops waiting when it is asked to stop.
    - ``on_exit(status, restart)`` is called for each exit nobody asked for, after
      :attr:`exits` has it: ``restart`` is the number of the restart to come, None when
      none is left.
    - ``on_give_up(error)`` is called once the supervisor has given up: ``error`` is what
      the failed restart raised, None when the restarts are spent.
    - ``on_kill(grace_s)`` is called when a process ignored SIGTERM for ``grace_s`` seconds
      and is about to be killed.
    """

    def __init__(  # noqa: PLR0913 - the owner's functions, one keyword each
        self,
        launch: Callable[[], Awaitable[P]],
        *,
        max_restarts: int,
        stop: StopSequence,
        ready: Callable[[P], Awaitable[None]] | None = None,
        ended: Callable[[P], Awaitable[int]] | None = None,
        on_exit: Callable[[int, int | None], None] | None = None,
        on_give_up: Callable[[Exception | None], None] | None = None,
        on_kill: Callable[[float], None] | None = None,
        restart_delay_s: float = RESTART_DELAY_S,
    ) -> None:
        self.max_restarts = max_restarts
        self.restart_delay_s = restart_delay_s
        self.restarts = 0
        """How many times a process was restarted after an exit."""
        self.exits: list[int] = []
        """The exit status of every exit nobody asked for."""
        self.gave_up = False
        """True once the process is down for good (no restart left, or a restart failed)."""
        self.stopping = False
        """True once a stop was asked for: an exit from then on is no news."""
        self.process: P | None = None
        """The latest process launched (running or not), None before the first."""
        self._launch = launch
        self._stop = stop
        self._ready = ready
        self._ended = ended
        self._on_exit = on_exit
        self._on_give_up = on_give_up
        self._on_kill = on_kill
        self._watcher: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        """The running process's id, or None when none is running."""
        process = self.process
        return None if process is None or process.returncode is not None else process.pid

    async def start(self) -> None:
        """Launch the first process and wait until it is ready; then watch it.

        Raises what ``launch`` or ``ready`` raise (a process that is not ready is stopped first).
        """
        self.process = process = await self._launch()
        if self._ready is not None:
            try:
                await self._ready(process)
            except BaseException:
                await stop_process(process, self._stop, on_kill=self._on_kill)
                raise
        self._watcher = asyncio.create_task(self._watch())

    def begin_stop(self) -> None:
        """From now on nothing is restarted, and an exit is no news."""
        self.stopping = True

    async def stop(self, sequence: StopSequence | None = None) -> None:
        """Stop for good: no more restarts, the process ended by ``sequence`` (by default the one given)."""
        self.begin_stop()
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        if self.process is not None:
            await stop_process(self.process, sequence or self._stop, on_kill=self._on_kill)

    async def _watch(self) -> None:
        """Restart the process whenever it exits on its own, while restarts are left."""
        while True:
            process = self.process
            assert process is not None  # noqa: S101 - started before the watcher
            status = await (process.wait() if self._ended is None else self._ended(process))
            if self.stopping:
                return
            self.exits.append(status)
            if self.restarts >= self.max_restarts:
                self._exited(status, None)
                self._give_up(None)
                return
            self.restarts += 1
            self._exited(status, self.restarts)
            await asyncio.sleep(self.restart_delay_s)
            if self.stopping:
                return
            if not await self._restart():
                return

    async def _restart(self) -> bool:
        """Launch a new process; False when that failed and the supervisor gave up."""
        try:
            self.process = process = await self._launch()
        except Exception as error:  # noqa: BLE001 - whatever launch raises is its one-line error
            self._give_up(error)
            return False
        if self._ready is None:
            return True
        try:
            await self._ready(process)
        except Exception as error:  # noqa: BLE001 - whatever ready raises is its one-line error
            if process.returncode is not None:
                return True  # it died before it was up: an exit like any other
            await stop_process(process, self._stop, on_kill=self._on_kill)
            self._give_up(error)
            return False
        return True

    def _exited(self, status: int, restart: int | None) -> None:
        if self._on_exit is not None:
            self._on_exit(status, restart)

    def _give_up(self, error: Exception | None) -> None:
        self.gave_up = True
        if self._on_give_up is not None:
            self._on_give_up(error)
