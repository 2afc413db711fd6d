"""The supervisor's rules with fake processes: the restart budget, giving up, the stop sequence.

No process is started: a fake process exits when the test (or a signal it heeds) says
so, and the restart delay is zero. The real processes are in test_runner.py (bot
processes) and test_any_language.py (the stdio bridge's program).
"""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING

import pytest

from clients.supervisor import StopSequence, Supervisor, stop_process

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

FOREVER = 3600.0
"""A wait no fake process makes the test sit through (it is over long before)."""
NO_WAIT = StopSequence(grace_s=FOREVER)


class FakeProcess:
    """A process that exits when told to, or on the signals it heeds (status ``-signal``)."""

    def __init__(
        self, pid: int, *, heeds: frozenset[int] = frozenset({signal.SIGTERM, signal.SIGKILL})
    ) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.signals: list[int] = []
        self.heeds = heeds
        self.hold_pipes = False
        """When True, an exit sets the status but wait() never returns (a child holds its pipes)."""
        self._over = asyncio.Event()

    def exit(self, status: int) -> None:
        self.returncode = status
        if not self.hold_pipes:
            self._over.set()

    async def wait(self) -> int:
        await self._over.wait()
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, signal: int) -> None:
        self.signals.append(signal)
        if signal in self.heeds:
            self.exit(-signal)


class Launcher:
    """A launch function of fake processes; each new one is made by ``make`` (exits at once by default)."""

    def __init__(self, make: Callable[[FakeProcess], None] | None = None) -> None:
        self.launched: list[FakeProcess] = []
        self.make = make or (lambda process: process.exit(3))
        self.fail_from: int | None = None
        """Launch number (0: the first) from which launching raises."""

    async def __call__(self) -> FakeProcess:
        if self.fail_from is not None and len(self.launched) >= self.fail_from:
            msg = "bot ghost: command not found: ghost"
            raise RuntimeError(msg)
        process = FakeProcess(100 + len(self.launched))
        self.launched.append(process)
        self.make(process)
        return process


def run(coroutine: Coroutine[object, object, None]) -> None:
    asyncio.run(asyncio.wait_for(coroutine, 60))


async def settle(supervisor: Supervisor[FakeProcess]) -> None:
    """Wait until the watcher has nothing left to do on its own (it gave up)."""
    watcher = supervisor._watcher  # noqa: SLF001 - the test's own view
    assert watcher is not None
    await watcher


class TestRestartBudget:
    def test_exits_are_restarted_up_to_the_budget_then_it_gives_up(self) -> None:
        """Each exit is recorded and told with the restart to come; the last with None, then give-up."""
        launch = Launcher()
        told: list[tuple[int, int | None]] = []
        gave_up: list[Exception | None] = []

        async def scenario() -> None:
            supervisor = Supervisor(
                launch,
                max_restarts=2,
                stop=NO_WAIT,
                on_exit=lambda status, restart: told.append((status, restart)),
                on_give_up=gave_up.append,
                restart_delay_s=0,
            )
            await supervisor.start()
            await settle(supervisor)
            assert supervisor.exits == [3, 3, 3]
            assert supervisor.restarts == 2
            assert supervisor.gave_up
            assert supervisor.pid is None

        run(scenario())
        assert len(launch.launched) == 3
        assert told == [(3, 1), (3, 2), (3, None)]
        assert gave_up == [None]

    def test_no_budget_means_the_first_exit_gives_up(self) -> None:
        launch = Launcher()
        told: list[tuple[int, int | None]] = []

        async def scenario() -> None:
            supervisor = Supervisor(
                launch,
                max_restarts=0,
                stop=NO_WAIT,
                on_exit=lambda status, restart: told.append((status, restart)),
                restart_delay_s=0,
            )
            await supervisor.start()
            await settle(supervisor)
            assert supervisor.gave_up

        run(scenario())
        assert told == [(3, None)]
        assert len(launch.launched) == 1

    def test_a_failed_restart_gives_up_with_its_error_and_no_made_up_exit(self) -> None:
        """The launch that fails is no exit: the one exit recorded is the process's own."""
        launch = Launcher()
        launch.fail_from = 1
        gave_up: list[Exception | None] = []

        async def scenario() -> None:
            supervisor = Supervisor(
                launch, max_restarts=3, stop=NO_WAIT, on_give_up=gave_up.append, restart_delay_s=0
            )
            await supervisor.start()
            await settle(supervisor)
            assert supervisor.exits == [3]
            assert supervisor.restarts == 1
            assert supervisor.gave_up

        run(scenario())
        assert [str(error) for error in gave_up] == ["bot ghost: command not found: ghost"]

    def test_an_exit_after_a_stop_is_no_news(self) -> None:
        """Stopping is asked for: the exit is not recorded and nothing is restarted."""
        launch = Launcher(make=lambda _process: None)  # runs until signalled

        async def scenario() -> None:
            supervisor = Supervisor(launch, max_restarts=3, stop=NO_WAIT, restart_delay_s=0)
            await supervisor.start()
            await supervisor.stop()
            assert supervisor.exits == []
            assert supervisor.restarts == 0
            assert not supervisor.gave_up

        run(scenario())
        assert len(launch.launched) == 1
        assert launch.launched[0].signals == [signal.SIGTERM]


class TestReady:
    def test_a_first_process_that_is_not_ready_is_stopped_and_the_error_raised(self) -> None:
        launch = Launcher(make=lambda _process: None)

        async def not_ready(_process: FakeProcess) -> None:
            msg = "bot slow did not connect to the referee within 30 s"
            raise RuntimeError(msg)

        async def scenario() -> None:
            supervisor = Supervisor(launch, max_restarts=3, stop=NO_WAIT, ready=not_ready)
            with pytest.raises(RuntimeError, match="did not connect"):
                await supervisor.start()
            assert supervisor.exits == []

        run(scenario())
        assert launch.launched[0].signals == [signal.SIGTERM]

    def test_a_restart_not_ready_while_running_is_stopped_and_given_up(self) -> None:
        launch = Launcher(make=lambda _process: None)  # each runs until told or signalled
        gave_up: list[Exception | None] = []

        async def ready(process: FakeProcess) -> None:
            if process.pid == 101:  # the restart
                msg = "bot slow did not connect to the referee within 30 s"
                raise RuntimeError(msg)

        async def scenario() -> None:
            supervisor = Supervisor(
                launch,
                max_restarts=3,
                stop=NO_WAIT,
                ready=ready,
                on_give_up=gave_up.append,
                restart_delay_s=0,
            )
            await supervisor.start()
            launch.launched[0].exit(3)
            await settle(supervisor)
            assert supervisor.exits == [3]
            assert supervisor.restarts == 1
            assert supervisor.gave_up

        run(scenario())
        assert launch.launched[1].signals == [signal.SIGTERM]
        assert [str(error) for error in gave_up] == ["bot slow did not connect to the referee within 30 s"]

    def test_a_restart_that_dies_before_it_is_ready_is_an_exit_like_any_other(self) -> None:
        launch = Launcher()
        told: list[tuple[int, int | None]] = []

        async def ready(process: FakeProcess) -> None:
            if process.returncode is not None:
                msg = "bot dying exited with status 3 before connecting"
                raise RuntimeError(msg)

        async def scenario() -> None:
            launch.make = lambda _process: None  # the first one comes up
            supervisor = Supervisor(
                launch,
                max_restarts=1,
                stop=NO_WAIT,
                ready=ready,
                on_exit=lambda status, restart: told.append((status, restart)),
                restart_delay_s=0,
            )
            await supervisor.start()
            launch.make = lambda process: process.exit(3)  # the restarts die at once
            launch.launched[0].exit(3)
            await settle(supervisor)
            assert supervisor.exits == [3, 3]
            assert supervisor.gave_up

        run(scenario())
        assert told == [(3, 1), (3, None)]


class TestStopSequence:
    def test_a_process_that_heeds_sigterm_is_not_killed(self) -> None:
        process = FakeProcess(7)
        killed: list[float] = []

        async def scenario() -> None:
            await stop_process(process, StopSequence(grace_s=FOREVER), on_kill=killed.append)

        run(scenario())
        assert process.signals == [signal.SIGTERM]
        assert process.returncode == -signal.SIGTERM
        assert killed == []

    def test_a_process_that_ignores_sigterm_is_killed_after_the_grace(self) -> None:
        process = FakeProcess(7, heeds=frozenset({signal.SIGKILL}))
        killed: list[float] = []

        async def scenario() -> None:
            await stop_process(process, StopSequence(grace_s=0.01), on_kill=killed.append)

        run(scenario())
        assert process.signals == [signal.SIGTERM, signal.SIGKILL]
        assert killed == [0.01]

    def test_a_process_given_time_to_leave_is_not_signalled_when_it_leaves(self) -> None:
        process = FakeProcess(7)

        async def scenario() -> None:
            stopping = asyncio.ensure_future(
                stop_process(process, StopSequence(grace_s=1.0, leave_s=FOREVER))
            )
            await asyncio.sleep(0)
            process.exit(0)  # its stdin was closed: it leaves
            await stopping

        run(scenario())
        assert process.signals == []

    def test_a_lone_process_that_exited_is_not_signalled_again(self) -> None:
        """Its status is known though a child holds its pipes: SIGKILL would reach nobody."""
        process = FakeProcess(7, heeds=frozenset({signal.SIGTERM}))
        process.hold_pipes = True

        async def scenario() -> None:
            await stop_process(process, StopSequence(grace_s=0.01, kill_wait_s=0.01))

        run(scenario())
        assert process.signals == [signal.SIGTERM]

    def test_an_exited_process_is_left_alone(self) -> None:
        process = FakeProcess(7)
        process.exit(1)
        run(stop_process(process, StopSequence(grace_s=FOREVER)))
        assert process.signals == []
