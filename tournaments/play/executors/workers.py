"""Blocks played in worker processes, each with its own referee and bot processes.

One referee is one Python interpreter, so it runs on one core while a tournament on a
bigger machine has more. A :class:`WorkerPool` starts ``workers`` processes (``python
-m tournaments.play.executors.workers``); each is a
:class:`~tournaments.play.executors.block_worker.BlockWorker` (a referee on a Unix-domain
socket and, per bot entry, one process per rotation) that plays the blocks the runner
hands it: the very worker a Ray actor is (:mod:`tournaments.play.executors.ray`). A worker
sends each finished session's result with its log, encoded; the runner alone writes to
the store, committing both in one transaction, so a killed tournament resumes exactly as
with one process.

A spectator's questions (which tables are in play, a table's public events since a
point: :class:`PoolTables`) go over the same pipes, only when someone asks; a worker
answers from its host (:class:`~tournaments.play.tables.TableFollower`), with public
events only, never a record.

The runner keeps up to ``per_worker`` blocks in flight on each worker (fewer when there
are not enough blocks to go round evenly) and hands a worker its next block when one of
its blocks ends. A worker whose runner goes away (its stdin closes: the runner was
killed) stops its bots and exits.

The messages (:mod:`~tournaments.play.executors.worker_messages`) are length-prefixed
pickles over the worker's stdin and stdout: both ends are this program, started by the
runner itself. :class:`WorkerLink` is the runner's end of one worker's pipes, :func:`serve`
the worker's; each takes its streams as given, so the conversation also runs over a
socket pair in one process (tests/test_worker_messages.py). Anything else a worker prints
goes to its stderr (the runner's).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Self, assert_never

from tournaments.errors import EntryStartError, RunnerError
from tournaments.play.executors.block_worker import BlockWorker
from tournaments.play.executors.worker_messages import (
    Answered,
    Asked,
    BlockPlayed,
    EntryFailed,
    EventsAnswer,
    EventsQuestion,
    Failed,
    PlayBlock,
    Ready,
    Retire,
    SessionPlayed,
    Start,
    Stop,
    TablesAnswer,
    TablesQuestion,
    UnexpectedMessage,
    framed,
    runner_receives,
    worker_receives,
)
from tournaments.play.host import WorkerSetup, first_failure
from tournaments.play.tables import TableEvents, TableInPlay, merged

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from tournaments.plan.entries import BotEntry
    from tournaments.play.blocks import BlockRun
    from tournaments.play.executors.base import Deliver
    from tournaments.play.executors.worker_messages import Answer, Question, ToRunner, ToWorker

__all__ = ["WorkerLink", "WorkerPool", "WorkerSetup", "main", "serve"]

_ROOT = Path(__file__).resolve().parents[3]
"""The folder that holds the ``tournaments`` package."""
_STOP_WAIT_S = 15.0
"""How long a stopping worker may take to stop its bots before it is killed."""
_ANSWER_WAIT_S = 5.0
"""How long a spectator's question may wait for a worker's answer (then: no answer)."""


# ---------------------------------------------------------------------------- the runner's side


@dataclass(slots=True)
class _Pending:
    """A block in play on a worker: where its sessions go, and what its player awaits."""

    deliver: Deliver
    done: asyncio.Future[None]


class WorkerLink:
    """The runner's end of one worker's conversation: what it sends to ``writer`` and reads from ``reader``.

    ``gone()`` says, in one line, why the worker's end closed (``worker 2 stopped
    unexpectedly (exit status -9)``). Blocks go out with :meth:`play`; :meth:`listen`
    reads what comes back and routes each session to its block's ``deliver``.
    """

    def __init__(
        self,
        number: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        gone: Callable[[], Awaitable[str]],
    ) -> None:
        self.number = number
        self._reader = reader
        self._writer = writer
        self._gone = gone
        self._blocks: dict[int, _Pending] = {}
        self._questions: dict[int, asyncio.Future[Answer]] = {}
        self._keys = itertools.count(1)
        self.failure: RunnerError | None = None
        """Why the worker cannot play any more (None: it can)."""
        self.playing = False
        """Whether its messages are read now (it plays blocks): only then is it asked questions."""

    @property
    def in_flight(self) -> int:
        """Blocks in play on the worker now."""
        return len(self._blocks)

    def send(self, message: ToWorker) -> None:
        """Write the message to the worker (buffered: :meth:`drain` flushes it)."""
        self._writer.write(framed(message))

    async def drain(self) -> None:
        """Wait until what was sent is on its way (the pipe's buffer below its limit)."""
        await self._writer.drain()

    async def ready(self) -> None:
        """Wait until the worker's bots are connected; raises RunnerError when they cannot be."""
        message = await self._receive()
        match message:
            case Ready():
                return
            case Failed(reason=reason):
                raise RunnerError(reason)
            case SessionPlayed() | BlockPlayed() | EntryFailed() | Answered():
                raise self._unexpected(UnexpectedMessage.of(message))
            case _:
                assert_never(message)

    def play(self, run: BlockRun, deliver: Deliver, entries: Sequence[BotEntry]) -> asyncio.Future[None]:
        """Send the block to the worker; the future is done once its last session is delivered.

        The future's error is the block's: :class:`~tournaments.errors.EntryStartError`,
        ``deliver``'s own, or the worker's failure.
        """
        if self.failure is not None:
            raise self.failure
        done = asyncio.get_running_loop().create_future()
        self._blocks[run.index] = _Pending(deliver, done)
        self.send(PlayBlock(run=run, entries=tuple(entries)))
        return done

    async def listen(self) -> None:
        """Read the worker's messages until it closes: sessions to their blocks, answers to their askers.

        Raises RunnerError when the worker fails, stops or says what it should not; every
        block still in play on it then ends with that error.
        """
        self.playing = True
        try:
            while True:
                self._route(await self._receive())
        except RunnerError as exc:
            self.failure = exc
            raise
        finally:
            self.playing = False
            failure = self.failure
            for pending in self._blocks.values():
                if not pending.done.done():
                    if failure is None:
                        pending.done.cancel()
                    else:
                        pending.done.set_exception(failure)
            self._blocks.clear()

    def _route(self, message: ToRunner) -> None:
        match message:
            case SessionPlayed(result=result, log=log):
                pending = self._blocks.get(result.block)
                if pending is not None:
                    try:
                        pending.deliver(result, log)
                    except Exception as exc:  # noqa: BLE001 - the block's player raises it
                        self._ended(result.block, exc)
            case BlockPlayed(block=block):
                self._ended(block, None)
            case EntryFailed(block=block, entry=entry, reason=reason):
                self._ended(block, EntryStartError(reason, entry=entry))
            case Answered(key=key, answer=answer):
                self._answered(key, answer)
            case Failed(reason=reason):
                raise RunnerError(reason)
            case Ready():
                raise self._unexpected(UnexpectedMessage.of(message))
            case _:
                assert_never(message)

    def _ended(self, block: int, error: Exception | None) -> None:
        """Block ``block`` is over: its player returns or raises ``error``; its later sessions are dropped."""
        pending = self._blocks.pop(block, None)
        if pending is None or pending.done.done():
            return
        if error is None:
            pending.done.set_result(None)
        else:
            pending.done.set_exception(error)

    async def ask(self, question: Question) -> Answer | None:
        """The worker's answer to a spectator's question, or None when it gives none in time."""
        if not self.playing or self._writer.is_closing():
            return None
        key = next(self._keys)
        answer = self._questions[key] = asyncio.get_running_loop().create_future()
        try:
            self.send(Asked(key=key, question=question))
            return await asyncio.wait_for(answer, _ANSWER_WAIT_S)
        except (TimeoutError, OSError, RuntimeError):
            return None
        finally:
            self._questions.pop(key, None)

    def stop(self) -> None:
        """Tell the worker to stop and close its end (it stops its bots, then exits)."""
        with contextlib.suppress(OSError, RuntimeError):
            self.send(Stop())
            self._writer.close()

    async def _receive(self) -> ToRunner:
        try:
            message = await runner_receives(self._reader)
        except UnexpectedMessage as unexpected:
            raise self._unexpected(unexpected) from None
        if message is None:
            raise RunnerError(await self._gone())
        return message

    def _unexpected(self, unexpected: UnexpectedMessage) -> RunnerError:
        return RunnerError(f"worker {self.number} sent an unexpected message ({unexpected.kind})")

    def _answered(self, key: int, answer: Answer) -> None:
        """A worker's answer to the spectator's question ``key`` (dropped if nobody waits any longer)."""
        waiting = self._questions.get(key)
        if waiting is not None and not waiting.done():
            waiting.set_result(answer)


class WorkerPool:
    """``workers`` worker processes playing blocks for the runner: the local executor's :class:`Players`.

    Used as an async context: entering starts the workers and waits until every one's bots
    are connected (RunnerError, one line, when one cannot); leaving stops them. Each plays
    up to ``per_worker`` blocks at once; a block goes to the worker with the fewest in play.
    """

    def __init__(self, setup: WorkerSetup, *, workers: int, per_worker: int) -> None:
        self._setup = setup
        self._count = workers
        self._per_worker = per_worker
        self._processes: list[asyncio.subprocess.Process] = []
        self._links: list[WorkerLink] = []
        """Each worker's conversation; worker ``n`` (numbered from 1) is ``_links[n - 1]``."""
        self._listening: list[asyncio.Task[None]] = []

    @property
    def capacity(self) -> int:
        """Blocks in play at once: ``per_worker`` on each worker."""
        return self._per_worker * len(self._links)

    def tables(self) -> PoolTables:
        """The tables in play on the workers, for a spectator."""
        return PoolTables(self)

    async def ask(self, number: int, question: Question) -> Answer | None:
        """Ask worker ``number`` a spectator's question; its answer, or None when it gives none in time."""
        if not 0 < number <= len(self._links):
            return None
        return await self._links[number - 1].ask(question)

    @property
    def playing(self) -> tuple[int, ...]:
        """The workers playing blocks now."""
        return tuple(link.number for link in self._links if link.playing)

    async def __aenter__(self) -> Self:
        try:
            for number in range(1, self._count + 1):
                await self._spawn(number)
            async with asyncio.TaskGroup() as group:  # the first to fail stops the wait
                for link in self._links:
                    group.create_task(link.ready())
        except* Exception as failed:  # noqa: BLE001 - raised again, as itself
            await self._close()
            raise first_failure(failed) from None
        self._listening = [asyncio.create_task(link.listen()) for link in self._links]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for task in self._listening:
            task.cancel()
        await asyncio.gather(*self._listening, return_exceptions=True)
        self._listening.clear()
        await self._close()

    async def play(self, run: BlockRun, deliver: Deliver, *, entries: Sequence[BotEntry] = ()) -> None:
        """Play ``run`` on the worker with the fewest blocks in play; see :class:`Players`."""
        failed = next((link.failure for link in self._links if link.failure is not None), None)
        if failed is not None:
            raise failed
        link = min(self._links, key=lambda link: link.in_flight)
        done = link.play(run, deliver, entries)
        await link.drain()
        await done

    async def retire(self, names: Sequence[str]) -> None:
        """Stop those entries' processes on every worker."""
        for link in self._links:
            if link.failure is None:
                link.send(Retire(entries=tuple(names)))
                await link.drain()

    async def _spawn(self, number: int) -> None:
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
        self._processes.append(process)
        assert process.stdin is not None  # noqa: S101 - asked for above
        assert process.stdout is not None  # noqa: S101 - asked for above
        link = WorkerLink(number, process.stdout, process.stdin, gone=lambda: _died(number, process))
        self._links.append(link)
        # worker 1's bots log where a single process's would; the others' get a suffix
        link.send(Start(setup=self._setup, bot_log_suffix=f"-w{number}" if number > 1 else ""))

    async def _close(self) -> None:
        """Ask every worker to stop (its bots first), wait, and kill any that does not."""
        for link, process in zip(self._links, self._processes, strict=True):
            if process.returncode is None:
                link.stop()

        async def wait(process: asyncio.subprocess.Process) -> None:
            try:
                await asyncio.wait_for(process.wait(), timeout=_STOP_WAIT_S)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()

        await asyncio.gather(*(wait(p) for p in self._processes), return_exceptions=True)
        self._processes.clear()
        self._links.clear()


async def _died(number: int, process: asyncio.subprocess.Process) -> str:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), timeout=5)
    return f"worker {number} stopped unexpectedly (exit status {process.returncode})"


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
        answers = await asyncio.gather(*(pool.ask(number, TablesQuestion()) for number in numbers))
        where: dict[str, int] = {}
        found: list[tuple[TableInPlay, ...]] = []
        for number, answer in zip(numbers, answers, strict=True):
            if not isinstance(answer, TablesAnswer):
                continue
            found.append(answer.tables)
            where.update((table.table, number) for table in answer.tables)
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
        answer = await self._pool.ask(number, EventsQuestion(table=table, since=since))
        return answer.events if isinstance(answer, EventsAnswer) else None


# ---------------------------------------------------------------------------- the worker's side


async def serve(reader: asyncio.StreamReader, send: Callable[[ToRunner], None], worker: BlockWorker) -> None:
    """Be ``worker`` for the runner at the other end of ``reader``, until it says stop or goes away.

    The first message must be :class:`Start`. A message this end does not expect, or an
    error while playing, is told to the runner (:class:`Failed`, one line); either way the
    blocks in play, the bots and the referee are stopped before this returns.
    """
    try:
        start = await worker_receives(reader)
        if start is None:
            return
        if not isinstance(start, Start):
            raise UnexpectedMessage.of(start)
        send(await worker.start(start))
        await _play(reader, send, worker)
    except (RunnerError, UnexpectedMessage) as exc:  # a bot that cannot start; the runner out of step
        send(_failure(exc))
    finally:
        await worker.stop()


async def _play_block(message: PlayBlock, send: Callable[[ToRunner], None], worker: BlockWorker) -> None:
    """Play one block, sending each session, then that the block is played (or why it was not)."""
    async for played in worker.play(message):
        send(played)
        if isinstance(played, EntryFailed):
            return
    send(BlockPlayed(block=message.run.index))


async def _play(reader: asyncio.StreamReader, send: Callable[[ToRunner], None], worker: BlockWorker) -> None:
    playing: set[asyncio.Task[None]] = set()
    try:
        async with asyncio.TaskGroup() as group:
            while (message := await worker_receives(reader)) is not None:
                match message:
                    case PlayBlock():
                        task = group.create_task(_play_block(message, send, worker))
                        playing.add(task)
                        task.add_done_callback(playing.discard)
                    case Retire():
                        await worker.retire(message)
                    case Asked(key=key, question=question):
                        send(Answered(key=key, answer=await worker.answer(question)))
                    case Stop():
                        break
                    case Start():
                        send(_failure(UnexpectedMessage.of(message)))
                        break
                    case _:
                        assert_never(message)
            for task in playing:  # told to stop, the runner is gone, or out of step
                task.cancel()
    except* Exception as errors:  # noqa: BLE001 - any failure is reported to the runner
        send(_failure(first_failure(errors)))


def _failure(exc: BaseException) -> Failed:
    """What a worker tells the runner of the error that stops it, in one line."""
    if isinstance(exc, UnexpectedMessage):
        return Failed(reason=f"a worker was sent an unexpected message ({exc.kind})")
    text = str(exc)
    return Failed(reason=text.splitlines()[0] if text else type(exc).__name__)


async def _serve_runner(output: BinaryIO) -> None:
    """Serve the runner at the other end of stdin, answering to ``output``."""
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
    )

    def send(message: ToRunner) -> None:
        with contextlib.suppress(OSError):  # the runner is gone: reading stdin will say so
            output.write(framed(message))
            output.flush()

    await serve(reader, send, BlockWorker())


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
    asyncio.run(_serve_runner(output))


if __name__ == "__main__":
    main()
