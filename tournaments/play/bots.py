"""Bot processes: launch, watch, restart after a crash, stop cleanly.

A :class:`~tournaments.plan.entries.BotEntry` says how to start a bot (an argv and a
folder); a :class:`BotProcess` runs one entry for the length of a tournament (a host runs
several per entry, one per rotation: :mod:`tournaments.play.host`), as a plain process or
in a sandbox
(:mod:`tournaments.play.sandbox`). The process finds the referee through the environment
(``NAP_REFEREE``, a gRPC target such as ``unix:/run/nap/referee.sock``; ``NAP_TOKEN``, its
secret), serves every table it is seated at over one stream, and has its stdout and
stderr captured to a bounded log file.

A process that exits while the tournament still needs it is restarted, up to
``max_restarts`` times; after that it stays down and the referee records its seats'
decisions as faults (the tournament goes on). Stopping sends SIGTERM to the process group
(the SDK answers with a Goodbye), then SIGKILL after a grace period. Those rules are
:class:`clients.supervisor.Supervisor`'s; a bot process adds its command (sandboxed or
not), its log file with an exit mark at each exit, and the wait for its connection.

With a cgroup (:class:`~tournaments.play.containment.BotCgroup`) the process and
everything it starts run in it, whatever restarts it takes: the host's limits hold for the
whole tree, its CPU is read from the group (:meth:`BotProcess.cpu_ms`, the referee's CPU
clock; from ``/proc`` without one), what an earlier process left running is killed
before the next starts, and stopping kills the whole tree. A limit the tree reached (the
kernel's counts say so) is said once in the bot's log and as a warning, and explains an
exit.

Every failure to start (no such command, an exit before connecting, no connection within
the timeout) is a :class:`RunnerError` whose ``str()`` is one line naming the bot, and the
referee's reason when it refused the bot. Each exit is a :class:`BotExit`: its status and
why, the referee's refusal included (the referee records it before it sends it, so it is
there when the process exits over it, whatever the bot printed and however busy the
machine).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

import structlog

from clients.supervisor import StopSequence, Supervisor, stop_process
from tournaments.errors import OutputError, RunnerError, writing
from tournaments.play.containment import ENTER_FAILED, ProcessTreeCpu, cpu_from_proc, terminate_below
from tournaments.play.sandbox import (
    ADDRESS_ENV,
    TOKEN_ENV,
    explain_exit,
    limit_reached,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from referee.wire.stream import RefusalReason
    from tournaments.plan.entries import BotEntry
    from tournaments.plan.isolation import BotLimits
    from tournaments.play.containment import BotCgroup
    from tournaments.play.sandbox import Sandbox

__all__ = [
    "EXIT_MARK",
    "BotExit",
    "BotProcess",
    "new_token",
]


_LOG_LIMIT_BYTES = 1 << 20
"""Each bot's captured output is cut off past this many bytes (the pipe is still drained)."""
_TAIL_LINES = 5
"""Last output lines kept in memory, to explain an exit in one line."""
EXIT_MARK = "--- exited with status "
"""Starts the line a bot's log gets when its process exits on its own (the status follows)."""
_STOP_GRACE_S = 3.0
"""Seconds between SIGTERM and SIGKILL when stopping a bot."""

_log = structlog.get_logger("nap.runner")


def new_token() -> str:
    """A fresh secret token for one entry in one tournament."""
    return secrets.token_urlsafe(24)


class Referee(Protocol):
    """What a bot process needs of the referee: whether its bot is connected, and why it was refused."""

    def is_connected(self, name: str) -> bool:
        """Whether bot ``name`` has a stream attached now."""

    def take_refusal(self, name: str) -> tuple[RefusalReason, str] | None:
        """Why the referee refused a Hello of bot ``name`` since it last connected (once; then None)."""


@dataclass(frozen=True, slots=True)
class BotExit:
    """How a bot process ended on its own: its exit status, and why where something says.

    ``refusal`` is the referee's reason for refusing the process (``(UNSUPPORTED_DECISIONS):
    profile ...``: the Refusal's reason and message), None when it did not refuse it;
    ``why`` is what the status or the last lines say otherwise (a limit reached, the signal
    that killed it; "" when they say nothing).
    """

    status: int
    why: str = ""
    refusal: str | None = None

    def __str__(self) -> str:
        """The status and why: ``2: refused by the referee (NO_TABLES): ...``, ``-9: killed by SIGKILL``."""
        why = self.why if self.refusal is None else f"refused by the referee {self.refusal}"
        return f"{self.status}: {why}" if why else str(self.status)

    def before_connecting(self, bot: str, last_output: str) -> str:
        """The one line that says why ``bot`` did not start: the refusal, or the exit and its last line."""
        if self.refusal is not None:
            return f"bot {bot} was refused by the referee {self.refusal}"
        said = f": {last_output}" if last_output else ""
        return f"bot {bot} exited with status {self} before connecting{said}"


class BotProcess:
    """One process of a bot entry for the length of a tournament.

    Use :meth:`start` (which waits until the bot connects), then :meth:`stop`. In between,
    a watcher restarts the process whenever it exits, at most ``max_restarts`` times.
    ``identity`` is its name at the referee (the entry's name by default); ``address``
    the referee's gRPC target. With ``sandbox`` the process runs isolated and ``address``
    must be a Unix-domain socket (``unix:PATH``), which the sandbox shows it. With
    ``cgroup`` it runs contained, under ``limits`` (the host's ``--bot-*`` limits).
    """

    def __init__(  # noqa: PLR0913 - one keyword per setting, all needed
        self,
        entry: BotEntry,
        *,
        address: str,
        token: str,
        log_path: Path,
        max_restarts: int = 3,
        log_limit_bytes: int = _LOG_LIMIT_BYTES,
        identity: str | None = None,
        sandbox: Sandbox | None = None,
        cgroup: BotCgroup | None = None,
        limits: BotLimits | None = None,
    ) -> None:
        self.entry = entry
        self.identity = identity or entry.name
        self.sandbox = sandbox
        self.cgroup = cgroup
        self.limits = limits if limits is not None else None if sandbox is None else sandbox.limits
        self._tree = ProcessTreeCpu(lambda: self.pid) if cgroup is None else None
        self._counts = (0, 0)
        """The group's counts of limits reached when last said (or when the process started)."""
        self.address = address
        self.token = token
        self.log_path = log_path
        self.log_limit_bytes = log_limit_bytes
        self._supervisor = Supervisor(
            self._launch,
            max_restarts=max_restarts,
            stop=StopSequence(grace_s=_STOP_GRACE_S, group=True),  # the group: stop reaches its children
            ready=self._connected,
            ended=self._ended,
            on_exit=self._exited,
            on_give_up=self._gave_up,
            on_kill=self._killing,
        )
        self._referee: Referee | None = None
        self._connect_timeout = 30.0
        self._pump: asyncio.Task[None] | None = None
        self._written = 0
        self._tail: deque[str] = deque(maxlen=_TAIL_LINES)
        self._limit_said = False
        self._last_exit: tuple[asyncio.subprocess.Process, BotExit] | None = None
        self._log = _log.bind(bot=self.identity)

    @property
    def name(self) -> str:
        """The entry's name."""
        return self.entry.name

    @property
    def max_restarts(self) -> int:
        """Restarts allowed after an exit nobody asked for."""
        return self._supervisor.max_restarts

    @property
    def restarts(self) -> int:
        """How many times the process was restarted after an exit."""
        return self._supervisor.restarts

    @property
    def exits(self) -> list[int]:
        """The exit status of every exit the runner did not ask for."""
        return self._supervisor.exits

    @property
    def pid(self) -> int | None:
        """The current process id, or None when none is running."""
        return self._supervisor.pid

    @property
    def running(self) -> bool:
        """Whether a process is running now."""
        return self.pid is not None

    @property
    def gave_up(self) -> bool:
        """Whether the process is down for good (it exited with no restart left)."""
        return self._supervisor.gave_up and not self._supervisor.stopping

    def last_output(self) -> str:
        """The last line the bot wrote (stdout or stderr), or an empty string."""
        return self._tail[-1] if self._tail else ""

    @property
    def cpu_meter(self) -> Callable[[], float | None] | None:
        """How the referee reads its CPU (:meth:`cpu_ms`); None where it cannot (no cgroup, no ``/proc``)."""
        return self.cpu_ms if self.cgroup is not None or cpu_from_proc() else None

    def cpu_ms(self) -> float | None:
        """The CPU its process tree has spent so far (ms), for the referee's CPU clock; None if unreadable.

        Its cgroup's count (every process it ran, restarts too), else ``/proc``'s for the
        process running now and its descendants (:class:`~tournaments.play.containment.ProcessTreeCpu`).
        """
        if self.cgroup is not None:
            return self.cgroup.cpu_ms()
        assert self._tree is not None  # noqa: S101 - made where there is no cgroup
        return self._tree()

    def _reached(self) -> str:
        """The limit its group reached since it was last said (""), and say it from now on."""
        cgroup, limits = self.cgroup, self.limits
        if cgroup is None or limits is None:
            return ""
        counts = cgroup.counts()
        reached = cgroup.reached(limits, counts, self._counts)
        self._counts = counts
        return reached

    async def start(self, referee: Referee, *, connect_timeout: float = 30.0) -> None:
        """Launch the process and wait until it connects to ``referee``.

        Raises RunnerError when the command cannot be started, when the process exits
        before connecting, or when it does not connect within ``connect_timeout`` seconds
        (the process is then stopped).
        """
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._referee, self._connect_timeout = referee, connect_timeout
        try:
            await self._supervisor.start()
        except BaseException:
            await self._close_pump()
            raise

    def _command(self) -> tuple[tuple[str, ...], dict[str, str], Path | None]:
        """The argv, environment and working folder that start the bot (in its sandbox, if any)."""
        entry = self.entry
        cgroup = self.cgroup
        if self.sandbox is None:
            env = dict(os.environ)
            env[ADDRESS_ENV] = self.address
            env[TOKEN_ENV] = self.token
            env.setdefault("PYTHONUNBUFFERED", "1")
            command = entry.command if cgroup is None else tuple(cgroup.command(entry.command))
            return command, env, entry.cwd
        argv, env = self.sandbox.bot(
            entry.command,
            name=entry.name,
            folder=entry.cwd,
            socket=Path(self.address.removeprefix("unix:")),
            token=self.token,
        )
        return tuple(argv if cgroup is None else cgroup.command(argv)), env, None

    def _exit(self, process: asyncio.subprocess.Process) -> BotExit:
        """The exit of ``process`` (once it has exited) as a value, worked out once per process.

        The referee's refusal is taken here, so a later process never reports an earlier one's.
        """
        status = process.returncode
        assert status is not None  # noqa: S101 - asked only once it has exited
        if self._last_exit is not None and self._last_exit[0] is process:
            return self._last_exit[1]
        refused = None if self._referee is None else self._referee.take_refusal(self.identity)
        if refused is not None:
            reason, message = refused
            value = BotExit(status, refusal=f"({reason.name}): {message}")
        elif self.cgroup is not None and status == ENTER_FAILED and not self._tail:
            value = BotExit(status, why=f"it could not enter its {self.cgroup.kind} group")
        else:
            reached = self._reached()
            limits = None if self.sandbox is None else self.sandbox.limits
            why = reached or explain_exit(status, self._tail, limits)
            if reached and status < 0:
                why = f"{explain_exit(status, (), None)}: {reached}"
            value = BotExit(status, why=why)
        self._last_exit = (process, value)
        return value

    async def _launch(self) -> asyncio.subprocess.Process:
        entry = self.entry
        argv, env, cwd = self._command()
        if self.cgroup is not None:  # what an earlier process of its left running goes first
            await asyncio.to_thread(self.cgroup.kill)
            self._counts = self.cgroup.counts()
        if self._referee is not None:
            self._referee.take_refusal(self.identity)  # an earlier process's: not the new one's to report
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,  # its own process group, which the supervisor signals
            )
        except FileNotFoundError as exc:
            missing = exc.filename or (entry.command[0] if entry.command else "")
            where = "" if entry.cwd is None else f" (in {entry.cwd})"
            msg = f"bot {entry.name}: command not found: {missing}{where}"
            raise RunnerError(msg) from None
        except (PermissionError, NotADirectoryError, IndexError, OSError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            msg = f"bot {entry.name}: cannot start {' '.join(entry.command)!r}: {reason}"
            raise RunnerError(msg) from None
        self._limit_said = False
        try:
            with writing(self.log_path), self.log_path.open("ab") as file:
                where = "" if self.sandbox is None else "in a sandbox: "
                if self.cgroup is not None:
                    where += f"in a {self.cgroup.kind} group: "
                file.write(f"--- {where}{' '.join(entry.command)} (pid {process.pid})\n".encode())
        except OutputError:  # its log cannot be kept (a full disk): the process is not left running
            await stop_process(process, StopSequence(grace_s=0.0, group=True))
            raise
        self._pump = asyncio.create_task(self._capture(process), name=f"log {self.name}")
        self._log.info("bot started", pid=process.pid)
        return process

    async def _capture(self, process: asyncio.subprocess.Process) -> None:
        """Copy the process's output to the log file, up to the limit; always drain the pipe.

        A log that cannot be written (a full disk) is warned of once and no longer kept: the
        pipe is still drained, or the bot would block on its next line.
        """
        stream = process.stdout
        if stream is None:
            return
        with self.log_path.open("ab") as file:
            while True:
                line = await stream.readline()
                if not line:
                    break
                text = line.decode(errors="replace").rstrip()
                if text:
                    self._tail.append(text)
                if self._written < self.log_limit_bytes:
                    try:
                        self._keep(file, line, text)
                    except OSError as exc:
                        self._written = self.log_limit_bytes
                        why = f"cannot write {self.log_path}: {exc.strerror or exc}"
                        self._log.warning(f"bot {self.name}: its output is no longer kept: {why}")

    def _keep(self, file: BinaryIO, line: bytes, text: str) -> None:
        """Write ``line`` to the log, cut at the limit (which there is room left under)."""
        if text:
            self._watch_limits(text, file)
        room = self.log_limit_bytes - self._written
        if len(line) > room:
            line = line[:room] + b"\n[log cut off: limit reached]\n"
        file.write(line)
        file.flush()
        self._written += len(line)

    def _watch_limits(self, text: str, file: BinaryIO) -> None:
        """Say once, in the log and as a warning, when a sandboxed bot's output shows it reached a limit.

        The bot may live on (a Python bot's ``MemoryError`` in a decision is caught by the
        SDK, which answers for it); the line says why it then played badly or died.
        """
        if self.sandbox is None or self._limit_said:
            return
        reached = limit_reached((text,), self.sandbox.limits)
        if reached:
            self._limit_said = True
            self._log.warning(f"bot {self.name}: {reached}", last_output=text)
            file.write(f"--- {reached}\n".encode())

    async def _connected(self, process: asyncio.subprocess.Process) -> None:
        """Wait until ``process`` has connected to the referee; RunnerError when it exits or times out."""
        referee, within_s = self._referee, self._connect_timeout
        assert referee is not None  # noqa: S101 - set by start
        loop = asyncio.get_running_loop()
        give_up = loop.time() + within_s
        while not referee.is_connected(self.identity):
            if process.returncode is not None:
                await self._drained()  # its last lines, for why it exited (a refusal needs none)
                raise RunnerError(self._exit(process).before_connecting(self.name, self.last_output()))
            if loop.time() >= give_up:
                msg = (
                    f"bot {self.name} did not connect to the referee within {within_s:g} s "
                    f"(output in {self.log_path})"
                )
                raise RunnerError(msg)
            await asyncio.sleep(0.02)

    async def _drained(self) -> None:
        if self._pump is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._pump), 1.0)

    async def _ended(self, process: asyncio.subprocess.Process) -> int:
        """The exit status of ``process``, once its output is in the log (or a second has passed)."""
        status = await process.wait()
        await self._drained()
        return status

    def _exited(self, status: int, restart: int | None) -> None:
        """An exit nobody asked for: the exit mark in the log; a warning (an error with no restart left)."""
        process = self._supervisor.process
        assert process is not None  # noqa: S101 - the process that exited (restarts come after this)
        del status  # the process's own, in its exit
        ended = str(self._exit(process))
        with contextlib.suppress(OSError), self.log_path.open("ab") as file:
            file.write(f"{EXIT_MARK}{ended}\n".encode())
        if restart is None:
            self._log.error(
                "bot exited; no restart left",
                status=ended,
                restarts=self.restarts,
                last_output=self.last_output(),
            )
            return
        self._log.warning(
            "bot exited; restarting",
            status=ended,
            restart=restart,
            last_output=self.last_output(),
        )

    def _gave_up(self, error: Exception | None) -> None:
        if error is not None:
            self._log.error("bot restart failed", error=str(error))

    def _killing(self, grace_s: float) -> None:
        self._log.warning("bot ignored SIGTERM; killing it", grace_s=grace_s)

    async def stop(self, grace: float = _STOP_GRACE_S) -> None:
        """Stop the process for good: SIGTERM to its group, SIGKILL after ``grace`` seconds.

        In a sandbox the SIGTERM goes to the processes inside, with ``grace`` to leave, as
        bubblewrap does not pass it on (its own exit would kill them at once: a bot's
        Goodbye and last lines lost). With a cgroup, whatever is left in it is killed and
        the group removed; a limit it reached since it was last said is said now.
        """
        self._supervisor.begin_stop()  # no restart of a bot told to leave
        process = self._supervisor.process
        sequence = StopSequence(grace_s=grace, group=True)
        if self.sandbox is not None and process is not None and process.returncode is None:
            terminate_below(process.pid)
            sequence = StopSequence(grace_s=grace, leave_s=grace, group=True)
        await self._supervisor.stop(sequence)
        await self._close_pump()
        if self.cgroup is not None:
            reached = self._reached()
            if reached:
                self._say_limit(reached)
            await asyncio.to_thread(self.cgroup.remove)

    def _say_limit(self, reached: str) -> None:
        """Say in the bot's log and as a warning that it reached a limit (a process of it may live on)."""
        self._log.warning(f"bot {self.name}: {reached}")
        with contextlib.suppress(OSError), self.log_path.open("ab") as file:
            file.write(f"--- {reached}\n".encode())

    async def _close_pump(self) -> None:
        if self._pump is not None:
            await self._drained()
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
