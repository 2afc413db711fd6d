"""A run's observers, on the real runner and store with the blocks played in this process (no process).

Every observer of a run is told, in order: its start, each session committed (with how far
the tournament is), the tables in play, the standings every so often when it asks, and its
end, with why it stopped if it did. The console, the watch page and the standings files
are each one observer.
"""

from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest
from rich.console import Console

from tests.inprocess_helpers import CONFIG, NOT_HERE, InProcess
from tournaments.cli.progress import BUSY_MARK, ConsoleObserver, PlainProgress, plain_line
from tournaments.errors import RunnerError, TournamentInterrupted
from tournaments.play.observers import RunEnd, RunObserver, RunProgress, RunStart
from tournaments.play.runner import RunOptions, resume_tournament, run_tournament, run_tournament_async
from tournaments.report.standings_files import StandingsWriter
from tournaments.results import SessionResult
from tournaments.store.database import Store

if TYPE_CHECKING:
    from pathlib import Path

    from tournaments.play.tables import TableSource
    from tournaments.stats.standings import Standings


@dataclass(eq=False)
class Recorder(RunObserver):
    """Keeps what it is told, in order."""

    told: list[tuple[str, object]] = field(default_factory=list)
    sessions: list[tuple[int, int]] = field(default_factory=list)

    def started(self, start: RunStart) -> None:
        self.told.append(("started", start))

    def committed(self, result: SessionResult, progress: RunProgress) -> None:
        self.told.append(("committed", progress))
        self.sessions.append((result.block, result.rotation))

    def tables(self, source: TableSource) -> None:
        self.told.append(("tables", source))

    def ended(self, end: RunEnd) -> None:
        self.told.append(("ended", end))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.told]


class TestWhatObserversAreTold:
    def test_start_each_session_the_tables_and_the_end_in_order(self, tmp_path: Path) -> None:
        first, second = Recorder(), Recorder()
        with Store.open(tmp_path / "nap.db") as store:
            options = RunOptions(observers=(first, second), executor=InProcess())
            tournament = run_tournament(CONFIG, store=store, logs_root=tmp_path, options=options)
        assert first.told == second.told
        assert first.kinds() == ["started", "tables", *["committed"] * 6, "ended"]
        start = first.told[0][1]
        assert isinstance(start, RunStart)
        assert (start.tournament, start.name) == (tournament, "observed")
        assert start.progress == RunProgress(recorded=0, sessions=6)
        assert start.resume.startswith(f"nap tournament resume {tournament}")
        assert first.told[1][1] is NOT_HERE
        counts = [progress.recorded for _, progress in first.told if isinstance(progress, RunProgress)]
        assert counts == [1, 2, 3, 4, 5, 6]
        assert sorted(first.sessions) == [(block, rotation) for block in (0, 1) for rotation in (0, 1, 2)]
        assert first.told[-1][1] == RunEnd(
            tournament=tournament, progress=RunProgress(recorded=6, sessions=6)
        )

    def test_a_stopped_run_says_why_and_its_resume_starts_where_it_stopped(self, tmp_path: Path) -> None:
        stopped, resumed = Recorder(), Recorder()
        failing = InProcess(fails=RunnerError("worker 1 died"), after=1)
        with Store.open(tmp_path / "nap.db") as store:
            with pytest.raises(TournamentInterrupted) as raised:
                run_tournament(
                    CONFIG,
                    store=store,
                    logs_root=tmp_path,
                    options=RunOptions(observers=(stopped,), executor=failing),
                )
            resume_tournament(
                1,
                store=store,
                logs_root=tmp_path,
                options=RunOptions(observers=(resumed,), executor=InProcess()),
            )
        end = stopped.told[-1][1]
        assert isinstance(end, RunEnd)
        assert end.stopped == str(raised.value)
        assert end.stopped.startswith("worker 1 died; tournament 1 stopped after 3 of 6 sessions")
        assert end.progress == RunProgress(recorded=3, sessions=6)
        start = resumed.told[0][1]
        assert isinstance(start, RunStart)
        assert start.progress == RunProgress(recorded=3, sessions=6)
        assert resumed.told[-1][1] == RunEnd(tournament=1, progress=RunProgress(recorded=6, sessions=6))

    def test_a_bug_is_raised_as_it_is_and_its_observers_told(self, tmp_path: Path) -> None:
        told = Recorder()
        buggy = InProcess(fails=KeyError("seat"), after=0)
        with Store.open(tmp_path / "nap.db") as store, pytest.raises(KeyError):
            run_tournament(
                CONFIG, store=store, logs_root=tmp_path, options=RunOptions(observers=(told,), executor=buggy)
            )
        end = told.told[-1][1]
        assert isinstance(end, RunEnd)
        assert end.stopped == "KeyError: 'seat'"

    def test_standings_go_to_the_observer_that_asks_for_them(self, tmp_path: Path) -> None:
        class Live(RunObserver):
            standings_every = 0.001

            def __init__(self) -> None:
                self.seen: list[Standings] = []
                self.arrived = asyncio.Event()

            def standings(self, standings: Standings) -> None:
                self.seen.append(standings)
                self.arrived.set()

        live, quiet = Live(), Recorder()

        async def first_standings() -> None:  # the run waits for them after its first block
            await asyncio.wait_for(live.arrived.wait(), timeout=60)

        executor = InProcess(between=first_standings)
        with Store.open(tmp_path / "nap.db") as store:
            run_tournament(
                CONFIG,
                store=store,
                logs_root=tmp_path,
                options=RunOptions(observers=(live, quiet), executor=executor),
            )
        assert live.seen
        assert live.seen[0].sessions >= 3
        assert {line.bot for line in live.seen[0].bots} == {"a", "b", "c"}
        assert "standings" not in quiet.kinds()


class TestARunInsideAnotherProcess:
    """A run that leaves the signals to its process (an arena's check) is cancelled as it is asked."""

    def test_cancelled_it_raises_the_cancellation_and_is_marked_interrupted(self, tmp_path: Path) -> None:
        with Store.open(tmp_path / "nap.db") as store:

            async def main() -> None:
                started = asyncio.Event()

                async def wait_after_the_first_block() -> None:
                    started.set()
                    await asyncio.Event().wait()  # until cancelled

                options = RunOptions(executor=InProcess(between=wait_after_the_first_block), signals=False)
                run = asyncio.ensure_future(
                    run_tournament_async(CONFIG, store=store, logs_root=tmp_path, options=options)
                )
                await started.wait()
                run.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await run

            asyncio.run(main())
            assert store.tournament(1).status == "interrupted"
            assert len(store.finished_keys(1)) == 3


class TestTheStandingsFiles:
    def test_written_when_the_run_finishes_and_not_when_it_stops(self, tmp_path: Path) -> None:
        out = tmp_path / "out"
        with Store.open(tmp_path / "nap.db") as store:
            writer = StandingsWriter(store=store, out=out)
            failing = InProcess(fails=RunnerError("worker 1 died"), after=1)
            with pytest.raises(TournamentInterrupted):
                run_tournament(
                    CONFIG,
                    store=store,
                    logs_root=tmp_path,
                    options=RunOptions(observers=(writer,), executor=failing),
                )
            assert not writer.written
            assert not (out / "t1" / "standings.md").exists()
            resume_tournament(
                1,
                store=store,
                logs_root=tmp_path,
                options=RunOptions(observers=(writer,), executor=InProcess()),
            )
        assert [path.name for path in writer.written] == ["standings.md", "standings.json", "standings.html"]
        assert writer.written[0].parent == out / "t1"
        assert writer.written[0].read_text(encoding="utf-8").startswith("# Tournament 1: observed")
        assert (out / "latest").resolve() == (out / "t1").resolve()


def _screen() -> tuple[Console, io.StringIO]:
    text = io.StringIO()
    return Console(file=text, width=200, force_terminal=False), text


class TestTheConsole:
    def test_a_run_on_a_console_that_is_no_terminal(self, tmp_path: Path) -> None:
        screen, text = _screen()
        with Store.open(tmp_path / "nap.db") as store, PlainProgress(console=screen, every_s=1e9) as progress:
            shown = ConsoleObserver(
                progress, announce=lambda start: f"starting {start.tournament}: {start.name}"
            )
            run_tournament(
                CONFIG,
                store=store,
                logs_root=tmp_path,
                options=RunOptions(observers=(shown,), executor=InProcess()),
            )
        lines = text.getvalue().splitlines()
        assert lines[0] == "starting 1: observed"
        assert lines[1] == "observed: 1/6 sessions"
        assert lines[-1].startswith("observed: 6/6 sessions")
        assert lines[-1].endswith(", done")

    def test_the_progress_line_says_a_matchs_test_and_a_busy_machine(self) -> None:
        screen, _ = _screen()
        progress = PlainProgress(console=screen)
        shown = ConsoleObserver(progress)
        shown.started(
            RunStart(tournament=1, name="m", resume="", progress=RunProgress(recorded=0, sessions=8))
        )
        [task] = progress.tasks
        assert task.description == "m"
        assert (task.completed, task.total) == (0, 8)
        result = SessionResult(tournament=1, block=0, rotation=0, board_seed=1, seats=())
        shown.committed(result, RunProgress(recorded=1, sessions=8, test="x: block 0, LLR n/a"))
        assert task.description == "x: block 0, LLR n/a"
        shown.committed(result, RunProgress(recorded=2, sessions=8, busy=True))
        assert task.description == "m" + BUSY_MARK
        assert task.completed == 2

    def test_once_a_matchs_test_decided_no_time_is_left_for_the_most_it_might_play(self) -> None:
        screen, _ = _screen()
        progress = PlainProgress(console=screen)
        shown = ConsoleObserver(progress)
        shown.started(
            RunStart(tournament=1, name="m", resume="", progress=RunProgress(recorded=0, sessions=20_000))
        )
        [task] = progress.tasks
        result = SessionResult(tournament=1, block=0, rotation=0, board_seed=1, seats=())
        shown.committed(result, RunProgress(recorded=1, sessions=20_000, test="x: block 0"))
        assert (task.completed, task.total, task.finished) == (1, 20_000, False)
        for recorded in (2, 3):  # the test decided; a session still in play finishes after it
            shown.committed(
                result, RunProgress(recorded=recorded, sessions=20_000, test="x: H1", decided=True)
            )
            assert (task.completed, task.total, task.finished) == (recorded, recorded, True)
        assert plain_line(task).endswith(", done")

    def test_a_run_ends_with_its_one_line_on_late_faults_if_it_had_any(self) -> None:
        screen, text = _screen()
        shown = ConsoleObserver(PlainProgress(console=screen))
        shown.ended(RunEnd(tournament=1, progress=RunProgress(recorded=8, sessions=8)))
        assert text.getvalue() == ""
        late = "3 late faults (a 3): the referee played those decisions (nap -v prints each one)"
        shown.ended(RunEnd(tournament=1, progress=RunProgress(recorded=8, sessions=8), late=late))
        assert text.getvalue() == late + "\n"
