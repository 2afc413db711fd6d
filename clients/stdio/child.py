"""The bot program behind the bridge: a child process that answers one line per line.

:class:`ChildBot` writes request lines to the program's stdin and matches the lines it
prints on stdout to them in order (first in, first out). It knows nothing of JSON or
gRPC: :meth:`ChildBot.ask` takes a line and returns the reply line, or None when there is
none in time. A request given up on stays in the queue until its (late) reply arrives,
which is then thrown away, so the order never slips.

Failures are data, never hangs: a program that exits (or closes its stdout) fails every
request in flight and is restarted after a short pause, at most ``max_restarts`` times;
one that owes a reply for ``hang_timeout_s`` past a deadline is killed, which counts the
same. Past the budget the child gives up: every later request fails at once and
``on_give_up`` is called. The restart and stop rules are
:class:`clients.supervisor.Supervisor`'s; the child adds the pipes, the hang kill and the
requests failed at each exit. The program's stderr is forwarded to the bridge's log (up to a
budget) and its last bytes are kept (:class:`StderrTail`), for the log and for
``--stderr-log``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from clients.supervisor import StopSequence, Supervisor

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence

LINE_LIMIT_BYTES: Final = 1 << 20
"""A reply line longer than this is replaced by a marker (and the rest of it skipped)."""
TOO_LONG: Final = b"<reply line longer than 1 MiB>"
STDERR_TAIL_BYTES: Final = 64 * 1024
"""How much of the program's stderr is kept (the last bytes)."""
STDERR_LIVE_BYTES: Final = 64 * 1024
"""How much of the program's stderr is copied live to the bridge's log, per program start."""
_STRAY_LOGGED: Final = 5
"""Output lines with no request waiting that are logged (the rest are only counted)."""
_CLOSE_GRACE_S: Final = 2.0
"""Seconds a closing program is given to leave after the end of its stdin, before SIGTERM."""


def _stop_sequence(grace_s: float) -> StopSequence:
    """``grace_s`` to leave once its stdin is closed, 1 s after SIGTERM, 5 s after SIGKILL."""
    return StopSequence(leave_s=grace_s, grace_s=1.0, kill_wait_s=5.0)


class ChildError(Exception):
    """The bot program cannot be run; ``str()`` is one line naming it."""


class StderrTail:
    """The last ``limit`` bytes of a program's stderr, and a live copy of its first lines."""

    def __init__(
        self,
        *,
        log: Callable[[str], None],
        path: Path | None = None,
        limit: int = STDERR_TAIL_BYTES,
        live_limit: int = STDERR_LIVE_BYTES,
    ) -> None:
        self.path = path
        self.limit = limit
        self.live_limit = live_limit
        self._log = log
        self._tail = bytearray()
        self._partial = bytearray()
        self._live = 0

    def restart(self) -> None:
        """A new program start: the live budget is renewed (the tail goes on)."""
        self._live = 0
        self._partial.clear()

    def feed(self, data: bytes) -> None:
        """Keep ``data`` in the tail and copy its complete lines to the log while the budget lasts."""
        self._tail += data
        if len(self._tail) > self.limit:
            del self._tail[: len(self._tail) - self.limit]
        if self._live >= self.live_limit:
            return
        self._partial += data
        *lines, rest = self._partial.split(b"\n")
        self._partial = bytearray(rest)
        for line in lines:
            self._live += len(line) + 1
            self._log("bot stderr: " + line.decode("utf-8", errors="replace").rstrip())
            if self._live >= self.live_limit:
                self._log(
                    f"bot stderr: [more than {self.live_limit} bytes; only the last "
                    f"{self.limit} are kept{'' if self.path is None else f' in {self.path}'}]"
                )
                break

    def text(self) -> str:
        """The kept tail, decoded."""
        return self._tail.decode("utf-8", errors="replace")

    def last_line(self) -> str:
        """The last non-blank line of the tail, or an empty string."""
        lines = [line for line in self.text().splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""

    def save(self) -> None:
        """Write the tail to ``path`` (when there is one); a failure is logged, not raised."""
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(bytes(self._tail))
        except OSError as exc:
            self._log(f"cannot write the bot's stderr to {self.path}: {exc}")


@dataclass(slots=True, eq=False)
class _Ask:
    """One request line written to the program, waiting for its reply line."""

    table: str
    future: asyncio.Future[bytes | None]
    abandoned: bool = False


T = TypeVar("T")


class ChildBot:
    """One bot program, restarted when it exits; requests answered one line each, in order."""

    def __init__(  # noqa: PLR0913 - one keyword per setting
        self,
        argv: Sequence[str],
        *,
        log: Callable[[str], None],
        stderr: StderrTail,
        max_restarts: int = 3,
        hang_timeout_s: float = 10.0,
        env: dict[str, str] | None = None,
        on_give_up: Callable[[], None] | None = None,
    ) -> None:
        if not argv:
            msg = "no bot program given (python -m clients.stdio.bridge -- PROGRAM ARGS...)"
            raise ChildError(msg)
        self.argv = tuple(argv)
        self.hang_timeout_s = hang_timeout_s
        self.stderr = stderr
        self.on_give_up = on_give_up
        self.stale_replies = 0
        """Replies that came after their request was given up on (thrown away)."""
        self.stray_lines = 0
        """Output lines that came with no request waiting (thrown away)."""
        self._log = log
        self._env = env
        self._supervisor = Supervisor(
            self._launch,
            max_restarts=max_restarts,
            stop=_stop_sequence(_CLOSE_GRACE_S),
            ended=self._ended,
            on_exit=self._exited,
            on_give_up=self._gave_up,
        )
        self._pending: deque[_Ask] = deque()
        self._ready = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._watching: tuple[asyncio.subprocess.Process, asyncio.Task[int]] | None = None
        """The current program's output reader: its exit status once it is over."""

    @property
    def max_restarts(self) -> int:
        """Restarts allowed after an exit nobody asked for."""
        return self._supervisor.max_restarts

    @property
    def restarts(self) -> int:
        """How many times the program was restarted."""
        return self._supervisor.restarts

    @property
    def exits(self) -> list[int]:
        """The exit status of every exit the bridge did not ask for."""
        return self._supervisor.exits

    @property
    def gave_up(self) -> bool:
        """True once the program is down for good (restart budget spent, or a restart failed)."""
        return self._supervisor.gave_up

    @property
    def pid(self) -> int | None:
        """The running program's process id, or None."""
        return self._supervisor.pid

    async def start(self) -> None:
        """Start the program; ChildError when it cannot be started."""
        await self._supervisor.start()

    async def _launch(self) -> asyncio.subprocess.Process:
        try:
            process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._env,
            )
        except FileNotFoundError:
            msg = f"bot program not found: {self.argv[0]} (in {Path.cwd()})"
            raise ChildError(msg) from None
        except OSError as exc:
            msg = f"cannot start the bot program {' '.join(self.argv)!r}: {exc.strerror or exc}"
            raise ChildError(msg) from None
        self.stderr.restart()
        self._watching = process, self._spawn(self._watch(process))
        self._ready.set()
        return process

    def _spawn(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- requests --------------------------------------------------------------------------

    async def ask(self, line: bytes, *, table: str, expires_at: float) -> bytes | None:
        """Write ``line``; the program's reply line, or None if none came by ``expires_at``.

        ``expires_at`` is on the event loop's clock. None also when the program exited
        meanwhile or has been given up on.
        """
        loop = asyncio.get_running_loop()
        if not self._ready.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), max(0.0, expires_at - loop.time()))
        process = self._supervisor.process
        if self.gave_up or self._supervisor.stopping or process is None or process.returncode is not None:
            return None
        stdin = process.stdin
        assert stdin is not None  # noqa: S101 - started with a pipe
        ask = _Ask(table, loop.create_future())
        try:
            stdin.write(line)
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            return None  # the program is gone; the watcher will notice
        self._pending.append(ask)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await stdin.drain()
        try:
            return await asyncio.wait_for(asyncio.shield(ask.future), max(0.0, expires_at - loop.time()))
        except TimeoutError:
            self._abandon(ask)
            loop.call_later(self.hang_timeout_s, self._check_hang, ask, process)
            return None

    @staticmethod
    def _abandon(ask: _Ask) -> None:
        ask.abandoned = True
        if not ask.future.done():
            ask.future.set_result(None)

    def withdraw(self, table: str) -> None:
        """Requests of ``table`` will not be answered (it closed): fail them now."""
        for ask in self._pending:
            if ask.table == table:
                self._abandon(ask)

    def _check_hang(self, ask: _Ask, process: asyncio.subprocess.Process) -> None:
        """Kill the program if it still owes the reply to ``ask``, given up on a while ago."""
        if ask in self._pending and process is self._supervisor.process and process.returncode is None:
            self._log(f"bot program gave no answer {self.hang_timeout_s:g} s past a deadline; killing it")
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    # -- the program's output --------------------------------------------------------------

    async def _watch(self, process: asyncio.subprocess.Process) -> int:
        """Read the program's replies until it is over; its exit status, every request in flight failed."""
        stderr_task = asyncio.ensure_future(self._drain_stderr(process))
        try:
            await self._read_replies(process)
            code = await process.wait()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(stderr_task), 1.0)
        finally:
            stderr_task.cancel()
        if process is self._supervisor.process:
            self._ready.clear()
        while self._pending:
            self._abandon(self._pending.popleft())
        self.stderr.save()
        return code

    async def _ended(self, process: asyncio.subprocess.Process) -> int:
        """The exit status of ``process`` (the one launched last), once its output is read."""
        watching = self._watching
        assert watching is not None  # noqa: S101 - launched with its reader
        assert watching[0] is process  # noqa: S101 - the supervisor watches the latest
        return await asyncio.shield(watching[1])  # a stop leaves the reader to finish its work

    async def _read_replies(self, process: asyncio.subprocess.Process) -> None:
        stdout = process.stdout
        assert stdout is not None  # noqa: S101 - started with a pipe
        buffer = bytearray()
        skipping = False
        while True:
            chunk = await stdout.read(65536)
            if not chunk:
                return
            buffer += chunk
            while (end := buffer.find(b"\n")) >= 0:
                line = bytes(buffer[:end])
                del buffer[: end + 1]
                if skipping:
                    skipping = False
                    continue
                self._reply(line)
            if len(buffer) > LINE_LIMIT_BYTES:
                buffer.clear()
                if not skipping:
                    self._reply(TOO_LONG)
                    skipping = True

    def _reply(self, line: bytes) -> None:
        if not line.strip():
            return  # blank lines are not answers
        if not self._pending:
            self.stray_lines += 1
            if self.stray_lines <= _STRAY_LOGGED:
                self._log(
                    "bot printed a line with no request waiting (ignored): "
                    + line[:200].decode("utf-8", errors="replace")
                )
            return
        ask = self._pending.popleft()
        if ask.abandoned:
            self.stale_replies += 1
            return
        if not ask.future.done():
            ask.future.set_result(line)

    async def _drain_stderr(self, process: asyncio.subprocess.Process) -> None:
        stream = process.stderr
        assert stream is not None  # noqa: S101 - started with a pipe
        while chunk := await stream.read(65536):
            self.stderr.feed(chunk)

    def _exited(self, status: int, restart: int | None) -> None:
        said = self.stderr.last_line()
        detail = f"; its last stderr line: {said}" if said else ""
        if restart is None:
            self._log(
                f"bot program exited with status {status}, no restart left ({self.restarts} used){detail}"
            )
        else:
            self._log(
                f"bot program exited with status {status}; restart {restart} of {self.max_restarts}{detail}"
            )

    def _gave_up(self, error: Exception | None) -> None:
        if error is not None:
            self._log(str(error))
        self._ready.set()  # waiting requests fail at once
        if self.on_give_up is not None:
            self.on_give_up()

    # -- the end ---------------------------------------------------------------------------

    def begin_close(self) -> None:
        """From now on nothing is restarted and every request fails at once."""
        self._supervisor.begin_stop()
        self._ready.set()

    async def close(self, grace_s: float = _CLOSE_GRACE_S) -> None:
        """Stop the program: end of its stdin, then SIGTERM after ``grace_s``, SIGKILL after 1 s."""
        self.begin_close()
        process = self._supervisor.process
        if process is not None and process.returncode is None and process.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError, RuntimeError):
                process.stdin.close()
        await self._supervisor.stop(_stop_sequence(grace_s))
        for task in list(self._tasks):
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(task, 2.0)
        self.stderr.save()
