"""The conversation between the runner and its workers, in one process: no worker, no bot.

Every message travels both ways through the framing (each end reads only its own kinds),
then through each end's dispatch: the runner's :class:`WorkerLink` and the worker's
:func:`serve` talk over a socket pair, the worker a :class:`BlockWorker` whose referee
is never started. A message an end does not expect (unknown, unreadable, or out of
place) ends the run with one line naming its kind, on either end.
"""

from __future__ import annotations

import asyncio
import pickle
import random
import socket
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, get_args

import pytest

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE, Card, CardPlayed, Session, SessionRecord, get_profile, record_of
from referee.server import ServerLimits
from tournaments.errors import EntryStartError, RunnerError
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import example_bot
from tournaments.play.blocks import BlockRun
from tournaments.play.executors.block_worker import BlockWorker
from tournaments.play.executors.worker_messages import (
    Answer,
    Answered,
    Asked,
    BlockPlayed,
    EntryFailed,
    EventsAnswer,
    EventsQuestion,
    Failed,
    PlayBlock,
    Question,
    Ready,
    Retire,
    SessionPlayed,
    Start,
    Stop,
    TablesAnswer,
    TablesQuestion,
    ToRunner,
    ToWorker,
    UnexpectedMessage,
    WorkerInfo,
    framed,
    runner_receives,
    worker_receives,
)
from tournaments.play.executors.workers import WorkerLink, serve
from tournaments.play.host import BlockHost, WorkerSetup
from tournaments.play.tables import TableEvents, TableInPlay, public_events
from tournaments.results import SeatResult, SessionResult

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

    from tournaments.play.executors.base import Deliver

CONFIG = TournamentConfig(
    name="talk", bots=tuple(example_bot("random", name=n) for n in "abc"), table_size=3, sessions=6, seed=1
)
SETUP = WorkerSetup(CONFIG, 1, Path("logs"), ServerLimits())
RUNS = tuple(
    BlockRun(
        tournament=1,
        index=index,
        board_seed=100 + index,
        bots=("a", "b", "c"),
        profile=get_profile("heather"),
        time_limits=TimeLimits(),
        rotations=(0, 1, 2),
    )
    for index in (0, 1)
)
TABLE = TableInPlay(table="t1", block=0, rotation=0, bots=("a", "b", "c"), deals=8)
READY = Ready(where=WorkerInfo(pid=12, host="node", bot_logs="logs/t1/bots"))
_TALK_LIMIT_S = 60.0
"""A conversation that hangs fails after this long (each takes milliseconds)."""


def result(run: BlockRun, rotation: int) -> SessionResult:
    seats = tuple(
        SeatResult(seat=s, bot=b, chips=(s - 1) * 3, win_share=float(s == 2)) for s, b in enumerate("abc")
    )
    return SessionResult(
        tournament=1, block=run.index, rotation=rotation, board_seed=run.board_seed, seats=seats
    )


def played(run: BlockRun, rotation: int) -> SessionPlayed:
    return SessionPlayed(result=result(run, rotation), log=f"log {run.index}/{rotation}".encode())


def played_record(seed: int) -> SessionRecord:
    session = Session(DEFAULT_PROFILE, table_size=3, seed=seed)
    chooser = random.Random(seed)
    while not session.over:
        session.apply(chooser.choice(session.legal_actions()))
    return record_of(session)


TO_WORKER: tuple[ToWorker, ...] = (
    Start(setup=SETUP, bot_log_suffix="-w2"),
    PlayBlock(run=RUNS[0]),
    PlayBlock(run=RUNS[1], entries=(example_bot("peel", name="newcomer"),)),
    Retire(entries=("newcomer",)),
    Asked(key=1, question=TablesQuestion()),
    Asked(key=2, question=EventsQuestion(table="t1", since=4)),
    Stop(),
)
TO_RUNNER: tuple[ToRunner, ...] = (
    READY,
    Failed(reason="bot a did not connect within 30 s"),
    played(RUNS[0], 1),
    BlockPlayed(block=0),
    EntryFailed(block=1, entry="newcomer", reason="bot newcomer did not connect within 30 s"),
    Answered(key=1, answer=TablesAnswer(tables=(TABLE,))),
    Answered(
        key=2,
        answer=EventsAnswer(
            events=TableEvents(table="t1", since=4, events=(CardPlayed(2, Card("QH")),), over=False)
        ),
    ),
    Answered(key=3, answer=EventsAnswer(events=None)),
)


def raw(value: object) -> bytes:
    """``value`` framed as a message is (its length, then its pickle), whatever it is."""
    data = pickle.dumps(value)
    return struct.pack(">I", len(data)) + data


def fed(*frames: bytes) -> asyncio.StreamReader:
    """A pipe that holds ``frames``, then ends (made in a running loop)."""
    reader = asyncio.StreamReader()
    for frame in frames:
        reader.feed_data(frame)
    reader.feed_eof()
    return reader


@dataclass(frozen=True, slots=True)
class Planted:
    """Something no end may be sent: not a message of this conversation."""

    kind: str


PLANTED = (
    pytest.param(raw(("block", 1)), "tuple", id="a tuple of old"),
    pytest.param(raw(Planted("x")), "Planted", id="a class of its own"),
    pytest.param(struct.pack(">I", 3) + b"\x80\x05X", "unreadable: UnpicklingError", id="not a pickle"),
)


class TestFraming:
    """Each message comes out of the pipe as it went in; each end reads its own kinds only."""

    def test_every_message_has_a_sample_here(self) -> None:
        assert {type(m) for m in TO_WORKER} == set(get_args(ToWorker))
        assert {type(m) for m in TO_RUNNER} == set(get_args(ToRunner))
        questions = {type(m.question) for m in TO_WORKER if isinstance(m, Asked)}
        answers = {type(m.answer) for m in TO_RUNNER if isinstance(m, Answered)}
        assert (questions, answers) == (set(get_args(Question)), set(get_args(Answer)))

    @pytest.mark.parametrize("message", TO_WORKER, ids=lambda m: type(m).__name__)
    def test_a_worker_reads_what_the_runner_sends(self, message: ToWorker) -> None:
        async def read() -> tuple[ToWorker | None, ToWorker | None]:
            reader = fed(framed(message))
            return await worker_receives(reader), await worker_receives(reader)

        assert asyncio.run(read()) == (message, None)

    @pytest.mark.parametrize("message", TO_RUNNER, ids=lambda m: type(m).__name__)
    def test_the_runner_reads_what_a_worker_sends(self, message: ToRunner) -> None:
        async def read() -> tuple[ToRunner | None, ToRunner | None]:
            reader = fed(framed(message))
            return await runner_receives(reader), await runner_receives(reader)

        assert asyncio.run(read()) == (message, None)

    @pytest.mark.parametrize("message", TO_WORKER, ids=lambda m: type(m).__name__)
    def test_the_runner_refuses_what_only_a_worker_reads(self, message: ToWorker) -> None:
        async def read() -> ToRunner | None:
            return await runner_receives(fed(framed(message)))

        with pytest.raises(UnexpectedMessage) as raised:
            asyncio.run(read())
        assert raised.value.kind == type(message).__name__

    @pytest.mark.parametrize("message", TO_RUNNER, ids=lambda m: type(m).__name__)
    def test_a_worker_refuses_what_only_the_runner_reads(self, message: ToRunner) -> None:
        async def read() -> ToWorker | None:
            return await worker_receives(fed(framed(message)))

        with pytest.raises(UnexpectedMessage) as raised:
            asyncio.run(read())
        assert raised.value.kind == type(message).__name__

    @pytest.mark.parametrize(("frame", "kind"), PLANTED)
    def test_neither_end_reads_a_planted_message(self, frame: bytes, kind: str) -> None:
        async def kinds() -> list[str]:
            found = []
            for receive in (worker_receives(fed(frame)), runner_receives(fed(frame))):
                with pytest.raises(UnexpectedMessage) as raised:
                    await receive
                found.append(raised.value.kind)
            return found

        assert asyncio.run(kinds()) == [kind, kind]

    def test_a_message_cut_short_is_the_end_of_the_pipe(self) -> None:
        async def read() -> ToRunner | None:
            return await runner_receives(fed(framed(BlockPlayed(block=3))[:-1]))

        assert asyncio.run(read()) is None


# ---------------------------------------------------------------------------- both ends talking


class TalkingWorker(BlockWorker):
    """A worker whose referee never starts and whose blocks play themselves.

    It answers a spectator's questions as any worker does, from its host (one table in
    play); its first block waits for ``release`` after its first session, so that the
    runner can ask while it plays. ``fail`` makes its start or its second block fail.
    """

    def __init__(self, *, fail: str = "") -> None:
        super().__init__()
        self.fail = fail
        self.received: list[ToWorker] = []
        self.asking = asyncio.Event()
        self.release = asyncio.Event()
        self.stopped = False
        self.host = BlockHost(CONFIG, tournament=1, logs_root=SETUP.logs_root, limits=SETUP.limits)

    async def start(self, message: Start) -> Ready:
        self.received.append(message)
        if self.fail == "start":
            msg = "bot a did not connect within 30 s"
            raise RunnerError(msg)
        self._host = self.host
        self.host.follower.started(TABLE)
        return READY

    async def play(self, message: PlayBlock) -> AsyncIterator[SessionPlayed | EntryFailed]:
        self.received.append(message)
        run = message.run
        broken = [entry.name for entry in message.entries if entry.name.startswith("broken")]
        if broken:
            yield EntryFailed(block=run.index, entry=broken[0], reason=f"bot {broken[0]} exited at once")
            return
        for rotation in run.rotations:
            yield played(run, rotation)
            if run.index == 0 and not self.release.is_set():
                self.asking.set()
                await self.release.wait()
            if run.index == 1 and self.fail == "play":
                msg = "the log could not be encoded\nmore lines"
                raise ValueError(msg)

    async def retire(self, message: Retire) -> None:
        self.received.append(message)

    async def stop(self) -> None:
        self.stopped = True


@dataclass(slots=True)
class Ends:
    """The runner's end (``link``) and the worker's (``serving``, ``worker``) over one socket pair."""

    link: WorkerLink
    worker: TalkingWorker
    serving: asyncio.Task[None]
    to_worker: asyncio.StreamWriter
    """The runner's side of the pair, to plant bytes."""
    to_runner: asyncio.StreamWriter
    """The worker's side of the pair, to plant bytes."""


async def gone() -> str:
    return "worker 1 stopped unexpectedly (exit status -9)"


async def play_through(link: WorkerLink, runs: Sequence[BlockRun], deliver: Deliver, *, at_once: int) -> None:
    """Play ``runs`` over the link, ``at_once`` at a time, its listener reading (as WorkerPool does)."""
    listening = asyncio.ensure_future(link.listen())
    queue = iter(runs)

    async def lane() -> None:
        for run in queue:
            done = link.play(run, deliver, ())
            await link.drain()
            await done

    try:
        await asyncio.gather(*(lane() for _ in range(at_once)))
    finally:
        listening.cancel()
        await asyncio.gather(listening, return_exceptions=True)


def talk(worker: TalkingWorker, scenario: Callable[[Ends], Awaitable[None]]) -> None:
    """Run ``scenario`` with the two ends connected; both are closed after it."""

    async def main() -> None:
        runner_side, worker_side = socket.socketpair()
        runner_reader, runner_writer = await asyncio.open_connection(sock=runner_side)
        worker_reader, worker_writer = await asyncio.open_connection(sock=worker_side)

        def send(message: ToRunner) -> None:
            worker_writer.write(framed(message))

        serving = asyncio.create_task(serve(worker_reader, send, worker))
        link = WorkerLink(1, runner_reader, runner_writer, gone=gone)
        try:
            ends = Ends(link, worker, serving, runner_writer, worker_writer)
            await asyncio.wait_for(scenario(ends), _TALK_LIMIT_S)
        finally:
            serving.cancel()
            await asyncio.gather(serving, return_exceptions=True)
            for writer in (runner_writer, worker_writer):
                writer.close()
                await writer.wait_closed()

    asyncio.run(main())


class TestConversation:
    """Each message goes through each end's dispatch: the runner's link and the worker's serve."""

    def test_a_worker_plays_and_answers_what_the_runner_sends(self) -> None:
        worker = TalkingWorker()
        delivered: list[tuple[SessionResult, bytes]] = []
        record = played_record(3)

        async def scenario(ends: Ends) -> None:
            link = ends.link
            link.send(Start(setup=SETUP, bot_log_suffix="-w2"))
            await link.ready()
            assert await link.ask(TablesQuestion()) is None  # asked only while it plays
            playing = asyncio.create_task(
                play_through(link, RUNS, lambda result, log: delivered.append((result, log)), at_once=1)
            )
            await worker.asking.wait()
            tables = await link.ask(TablesQuestion())
            worker.host.follower.ended("t1", record)  # watched now: its end is kept
            events = await link.ask(EventsQuestion(table="t1", since=3))
            unknown = await link.ask(EventsQuestion(table="t9", since=0))
            worker.release.set()
            await playing
            link.stop()
            await ends.serving
            assert tables == TablesAnswer(tables=(TABLE,))
            assert events == EventsAnswer(
                events=TableEvents(table="t1", since=3, events=public_events(record)[3:], over=True)
            )
            assert unknown == EventsAnswer(events=None)

        talk(worker, scenario)
        assert worker.received == [
            Start(setup=SETUP, bot_log_suffix="-w2"),
            *(PlayBlock(run=r) for r in RUNS),
        ]
        assert delivered == [
            (p.result, p.log) for run in RUNS for p in (played(run, n) for n in run.rotations)
        ]
        assert worker.stopped

    def test_a_block_whose_new_entry_cannot_start_fails_alone_and_an_entry_retires(self) -> None:
        worker = TalkingWorker()
        worker.release.set()
        delivered: list[int] = []

        async def scenario(ends: Ends) -> None:
            link = ends.link
            link.send(Start(setup=SETUP))
            await link.ready()
            listening = asyncio.ensure_future(link.listen())
            broken = link.play(
                RUNS[0], lambda r, _log: delivered.append(r.block), (example_bot("peel", name="broken"),)
            )
            fine = link.play(
                RUNS[1], lambda r, _log: delivered.append(r.block), (example_bot("peel", name="fine"),)
            )
            link.send(Retire(entries=("fine",)))
            await link.drain()
            with pytest.raises(EntryStartError, match=r"^bot broken exited at once$") as raised:
                await broken
            assert raised.value.entry == "broken"
            await fine
            listening.cancel()
            await asyncio.gather(listening, return_exceptions=True)

        talk(worker, scenario)
        assert delivered == [1] * len(RUNS[1].rotations)
        assert Retire(entries=("fine",)) in worker.received

    def test_a_worker_that_cannot_start_says_why(self) -> None:
        worker = TalkingWorker(fail="start")

        async def scenario(ends: Ends) -> None:
            ends.link.send(Start(setup=SETUP))
            with pytest.raises(RunnerError, match=r"^bot a did not connect within 30 s$"):
                await ends.link.ready()
            await ends.serving

        talk(worker, scenario)
        assert worker.stopped

    def test_a_worker_that_fails_while_playing_says_why_in_one_line(self) -> None:
        worker = TalkingWorker(fail="play")
        worker.release.set()

        async def scenario(ends: Ends) -> None:
            ends.link.send(Start(setup=SETUP))
            await ends.link.ready()
            with pytest.raises(RunnerError, match=r"^the log could not be encoded$"):
                await play_through(ends.link, RUNS, lambda _result, _log: None, at_once=2)
            await ends.serving

        talk(worker, scenario)
        assert worker.stopped

    def test_a_worker_that_goes_away_is_said_so(self) -> None:
        async def scenario(ends: Ends) -> None:
            ends.serving.cancel()
            ends.to_runner.close()
            with pytest.raises(RunnerError, match=r"^worker 1 stopped unexpectedly \(exit status -9\)$"):
                await ends.link.ready()

        talk(TalkingWorker(), scenario)


class TestUnexpectedMessages:
    """A message an end does not expect ends the run with one line naming its kind, on either end."""

    @pytest.mark.parametrize(("frame", "kind"), PLANTED)
    @pytest.mark.parametrize("when", ["first", "playing"])
    def test_a_worker_says_failed_and_stops(self, frame: bytes, kind: str, when: str) -> None:
        worker = TalkingWorker()

        async def scenario(ends: Ends) -> None:
            link = ends.link
            if when == "playing":
                link.send(Start(setup=SETUP))
                await link.ready()
            ends.to_worker.write(frame)
            with pytest.raises(RunnerError) as raised:
                await (
                    link.ready()
                    if when == "first"
                    else play_through(link, RUNS, lambda _r, _l: None, at_once=1)
                )
            assert str(raised.value) == f"a worker was sent an unexpected message ({kind})"
            await ends.serving

        talk(worker, scenario)
        assert worker.stopped

    def test_a_worker_sent_a_second_start_says_failed_and_stops(self) -> None:
        worker = TalkingWorker()

        async def scenario(ends: Ends) -> None:
            ends.link.send(Start(setup=SETUP))
            await ends.link.ready()
            ends.link.send(Start(setup=SETUP))
            with pytest.raises(RunnerError, match=r"^a worker was sent an unexpected message \(Start\)$"):
                await play_through(ends.link, RUNS, lambda _r, _l: None, at_once=1)
            await ends.serving

        talk(worker, scenario)
        assert worker.stopped

    @pytest.mark.parametrize(
        ("frame", "kind"), [*PLANTED, pytest.param(b"", "", id="a known message out of place")]
    )
    @pytest.mark.parametrize("when", ["starting", "playing"])
    def test_the_runner_ends_the_run_naming_the_kind(self, frame: bytes, kind: str, when: str) -> None:
        worker = TalkingWorker()
        if not frame:  # what is known to the runner, but not where it comes
            out_of_place = BlockPlayed(block=0) if when == "starting" else READY
            frame, kind = framed(out_of_place), type(out_of_place).__name__

        async def scenario(ends: Ends) -> None:
            link = ends.link
            if when == "starting":
                ends.to_runner.write(frame)
                reading = asyncio.ensure_future(link.ready())
            else:
                link.send(Start(setup=SETUP))
                await link.ready()
                reading = asyncio.ensure_future(play_through(link, RUNS, lambda _r, _l: None, at_once=1))
                await worker.asking.wait()
                ends.to_runner.write(frame)
            with pytest.raises(RunnerError) as raised:
                await reading
            assert str(raised.value) == f"worker 1 sent an unexpected message ({kind})"

        talk(worker, scenario)
