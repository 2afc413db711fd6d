"""Blocks played in worker processes, each with its own referee and bot processes.

One referee is one Python interpreter, so it runs on one core while a tournament on a
bigger machine has more. A :class:`WorkerPool` starts ``workers`` processes (``python
-m tournaments.play.executors.workers``); each is a :class:`~tournaments.play.host.BlockHost` (a referee on
a Unix-domain socket and, per bot entry, one process per rotation) that plays the blocks the runner hands it,
with :meth:`~tournaments.play.host.BlockHost.play_block`: the same self-contained unit of work that a
Ray worker runs (:mod:`tournaments.play.executors.ray`). A worker sends each finished
session's result with its log, encoded; the runner alone writes to the store, committing
both in one transaction, so a killed tournament resumes exactly as with one process.

A spectator's questions (which tables are in play, a table's public events since a
point: :class:`PoolTables`) go over the same pipes, only when someone asks; a worker
answers from its host (:class:`~tournaments.play.tables.TableFollower`), with public
events only, never a record.

The runner keeps up to ``per_worker`` blocks in flight on each worker (fewer when there
are not enough blocks to go round evenly) and hands a worker its next block when one of
its blocks ends. A worker whose runner goes
away (its stdin closes: the runner was killed) stops its bots and exits.

Messages are length-prefixed pickles over the worker's stdin and stdout: both ends are
this program, started by the runner itself. Anything else a worker prints goes to its
stderr (the runner's).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
import pickle
import signal
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import structlog

from referee.server import tune_collector
from tournaments.errors import RunnerError
from tournaments.play.host import BlockHost, WorkerSetup, first_failure
from tournaments.play.tables import TableEvents, TableInPlay, merged

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from tournaments.play.blocks import BlockRun
    from tournaments.results import SessionResult

__all__ = ["WorkerPool", "WorkerSetup", "main"]

_HEADER = struct.Struct(">I")
_ROOT = Path(__file__).resolve().parents[3]
"""The folder that holds the ``tournaments`` package."""
_STOP_WAIT_S = 15.0
"""How long a stopping worker may take to stop its bots before it is killed."""
_ANSWER_WAIT_S = 5.0
"""How long a spectator's question may wait for a worker's answer (then: no answer)."""


def _frame(*message: object) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


async def _receive(reader: asyncio.StreamReader) -> tuple[Any, ...] | None:
    """The next message, or None once the other end has closed the pipe."""
    try:
        header = await reader.readexactly(_HEADER.size)
        (size,) = _HEADER.unpack(header)
        message = pickle.loads(await reader.readexactly(size))  # noqa: S301 - our own child/parent
    except asyncio.IncompleteReadError:
        return None
    return tuple(message)


# ---------------------------------------------------------------------------- the runner's side


class WorkerPool:
    """``workers`` worker processes playing one tournament's blocks for the runner."""

    def __init__(self, setup: WorkerSetup, *, workers: int) -> None:
        self._setup = setup
        self._count = workers
        self._processes: list[asyncio.subprocess.Process] = []
        self._questions: dict[int, asyncio.Future[Any]] = {}
        self._question_ids = itertools.count(1)
        self._playing: set[int] = set()
        """The workers (numbered from 1) whose answers are read now: those playing blocks."""

    def tables(self) -> PoolTables:
        """The tables in play on the workers, for a spectator."""
        return PoolTables(self)

    async def ask(self, number: int, *question: object) -> Any:  # noqa: ANN401 - the answer's kind is the question's
        """Ask worker ``number`` a spectator's question; its answer, or None when it gives none in time."""
        if number not in self._playing or number > len(self._processes):
            return None
        process = self._processes[number - 1]
        if process.stdin is None or process.returncode is not None:
            return None
        key = next(self._question_ids)
        answer = self._questions[key] = asyncio.get_running_loop().create_future()
        try:
            process.stdin.write(_frame(question[0], key, *question[1:]))
            return await asyncio.wait_for(answer, _ANSWER_WAIT_S)
        except (TimeoutError, OSError, RuntimeError):
            return None
        finally:
            self._questions.pop(key, None)

    @property
    def playing(self) -> tuple[int, ...]:
        """The workers playing blocks now."""
        return tuple(sorted(self._playing))

    async def play(
        self, runs: Sequence[BlockRun], deliver: Callable[[SessionResult, bytes], None], *, per_worker: int
    ) -> None:
        """Play ``runs`` with at most ``per_worker`` blocks in flight on each; deliver each session.

        Raises RunnerError when a worker cannot start its bots or stops unexpectedly, and
        whatever ``deliver`` raises (a StoreError: the database is full) as it is; the
        workers are stopped in every case before this returns.
        """
        workers = min(self._count, len(runs))
        if not workers:
            return
        try:
            for number in range(1, workers + 1):
                self._processes.append(await self._spawn(number))
            async with asyncio.TaskGroup() as group:  # the first to fail stops the wait
                for number, process in enumerate(self._processes, start=1):
                    group.create_task(self._ready(number, process))
            queue = iter(runs)
            share = max(1, min(per_worker, math.ceil(len(runs) / workers)))
            async with asyncio.TaskGroup() as group:
                for number, process in enumerate(self._processes, start=1):
                    group.create_task(self._drive(number, process, queue, share, deliver))
        except* Exception as failed:  # noqa: BLE001 - raised again, as itself
            raise first_failure(failed) from None
        finally:
            await self._close()

    async def _spawn(self, number: int) -> asyncio.subprocess.Process:
        # the worker imports this very code, wherever it is installed or checked out
        path = [str(_ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tournaments.play.executors.workers",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
            start_new_session=True,  # a Ctrl-C reaches the runner, which stops the workers
        )
        assert process.stdin is not None  # noqa: S101 - asked for above
        # worker 1's bots log where a single process's would; the others' get a suffix
        process.stdin.write(_frame("start", self._setup, f"-w{number}" if number > 1 else ""))
        return process

    async def _ready(self, number: int, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None  # noqa: S101 - asked for in _spawn
        message = await _receive(process.stdout)
        if message is None:
            raise RunnerError(await self._died(number, process))
        if message[0] == "failed":
            raise RunnerError(message[1])

    async def _drive(
        self,
        number: int,
        process: asyncio.subprocess.Process,
        queue: Iterator[BlockRun],
        share: int,
        deliver: Callable[[SessionResult, bytes], None],
    ) -> None:
        """Keep ``share`` blocks in flight on one worker until the shared queue is empty.

        Meanwhile the worker's answers to a spectator's questions are read here too.
        """
        self._playing.add(number)
        try:
            await self._drive_blocks(number, process, queue, share, deliver)
        finally:
            self._playing.discard(number)

    async def _drive_blocks(
        self,
        number: int,
        process: asyncio.subprocess.Process,
        queue: Iterator[BlockRun],
        share: int,
        deliver: Callable[[SessionResult, bytes], None],
    ) -> None:
        stdin, stdout = process.stdin, process.stdout
        assert stdin is not None  # noqa: S101 - asked for in _spawn
        assert stdout is not None  # noqa: S101 - asked for in _spawn
        in_flight = 0
        for run in queue:
            stdin.write(_frame("block", run))
            in_flight += 1
            if in_flight == share:
                break
        while in_flight:
            message = await _receive(stdout)
            if message is None:
                raise RunnerError(await self._died(number, process))
            kind = message[0]
            if kind == "session":
                deliver(message[1], message[2])
            elif kind == "block-done":
                in_flight -= 1
                following = next(queue, None)
                if following is not None:
                    stdin.write(_frame("block", following))
                    in_flight += 1
            elif kind == "answer":
                self._answered(message[1], message[2])
            elif kind == "failed":
                raise RunnerError(message[1])
        await stdin.drain()

    def _answered(self, key: int, answer: object) -> None:
        """A worker's answer to the spectator's question ``key`` (dropped if nobody waits any longer)."""
        waiting = self._questions.get(key)
        if waiting is not None and not waiting.done():
            waiting.set_result(answer)

    async def _died(self, number: int, process: asyncio.subprocess.Process) -> str:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), timeout=5)
        return f"worker {number} stopped unexpectedly (exit status {process.returncode})"

    async def _close(self) -> None:
        """Ask every worker to stop (its bots first), wait, and kill any that does not."""
        for process in self._processes:
            if process.returncode is None and process.stdin is not None:
                with contextlib.suppress(OSError, RuntimeError):
                    process.stdin.write(_frame("stop"))
                    process.stdin.close()

        async def wait(process: asyncio.subprocess.Process) -> None:
            try:
                await asyncio.wait_for(process.wait(), timeout=_STOP_WAIT_S)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()

        await asyncio.gather(*(wait(p) for p in self._processes), return_exceptions=True)
        self._processes.clear()


class PoolTables:
    """The tables in play on a pool's workers: each question goes to the workers over their pipes."""

    def __init__(self, pool: WorkerPool) -> None:
        self._pool = pool
        self._where: dict[str, int] = {}
        """The worker each table was last seen on."""

    @property
    def unavailable(self) -> str | None:
        """None: every worker's tables can be watched."""
        return None

    async def tables(self) -> tuple[TableInPlay, ...]:
        """The tables in play on every worker now."""
        pool = self._pool
        numbers = pool.playing
        answers = await asyncio.gather(*(pool.ask(number, "tables") for number in numbers))
        where: dict[str, int] = {}
        found: list[tuple[TableInPlay, ...]] = []
        for number, tables in zip(numbers, answers, strict=True):
            if tables is None:
                continue
            found.append(tables)
            where.update((table.table, number) for table in tables)
        self._where = where
        return merged(found)

    async def events(self, table: str, since: int) -> TableEvents | None:
        """``table``'s public events from ``since``, from the worker that plays it."""
        number = self._where.get(table)
        if number is None:
            await self.tables()
            number = self._where.get(table)
        if number is None:
            return None
        answer = await self._pool.ask(number, "events", table, since)
        return answer if isinstance(answer, TableEvents) else None


# ---------------------------------------------------------------------------- the worker's side


async def _serve(output: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def send(*message: object) -> None:
        with contextlib.suppress(OSError):  # the runner is gone: reading stdin will say so
            output.write(_frame(*message))
            output.flush()

    host = await _start(reader, send)
    if host is None:
        return

    def delivered(result: SessionResult, log: bytes) -> None:
        send("session", result, log)

    async def play(run: BlockRun) -> None:
        await host.play(run, delivered)
        send("block-done", run.index)

    send("ready")
    playing: set[asyncio.Task[None]] = set()
    try:
        async with asyncio.TaskGroup() as group:
            while (message := await _receive(reader)) is not None:
                kind = message[0]
                if kind == "block":
                    task = group.create_task(play(message[1]))
                    playing.add(task)
                    task.add_done_callback(playing.discard)
                elif kind in _QUESTIONS:
                    send("answer", message[1], _answer(host, message))
                else:
                    break
            for task in playing:  # told to stop, or the runner is gone
                task.cancel()
    except* Exception as errors:  # noqa: BLE001 - any failure is reported to the runner
        first = first_failure(errors)
        send("failed", str(first).splitlines()[0] if str(first) else type(first).__name__)
    finally:
        await host.stop()


async def _start(reader: asyncio.StreamReader, send: Callable[..., None]) -> BlockHost | None:
    """The host the runner's start message asks for, started; None if it cannot be (the runner is told)."""
    start = await _receive(reader)
    if start is None:
        return None
    _, setup, suffix = start
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(setup.log_level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )
    host = BlockHost(
        setup.config,
        tournament=setup.tournament,
        logs_root=setup.logs_root,
        limits=setup.limits,
        bot_log_suffix=suffix,
        sandbox=setup.sandbox,
    )
    try:
        await host.start()
    except RunnerError as exc:
        send("failed", str(exc))
        return None
    return host


_QUESTIONS = frozenset({"tables", "events"})
"""What a spectator asks a worker, through the runner."""


def _answer(host: BlockHost, question: tuple[Any, ...]) -> object:
    """The answer to a spectator's question: the tables in play, or a table's public events."""
    follower = host.follower
    if question[0] == "tables":
        return follower.tables()
    table, since = question[2], question[3]
    return follower.events(table, since, live=host.referee.arbiter.record(table))


def main() -> None:
    """A worker process: serve one runner over stdin and stdout until it says stop or goes away."""
    if sys.stdin.isatty():
        sys.exit(
            "python -m tournaments.play.executors.workers is started by the tournament runner "
            "(nap tournament run --workers N), not by hand"
        )
    output = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not break the protocol
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the runner decides when to stop
    tune_collector()
    asyncio.run(_serve(output))


if __name__ == "__main__":
    main()
