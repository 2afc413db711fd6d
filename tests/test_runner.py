"""The tournament runner with a real referee on 127.0.0.1:0 and real bot processes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from referee.match import TimeLimits
from referee.rules import PROFILES, SessionRecord, verify
from tournaments.errors import RunnerError
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import BotEntry, example_bot
from tournaments.play.blocks import BlockRun, play_block_in_process
from tournaments.play.host import SOCKET_FOLDER, remove_orphan_socket_folders, socket_folder
from tournaments.play.locks import lock_path
from tournaments.play.runner import resume_tournament, run_tournament
from tournaments.stats.standings import compute_standings, standings_of
from tournaments.store.database import Store
from tournaments.store.logs import decode_log

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent / "bots_runner"
PYTHON = sys.executable


def entrants(*pairs: tuple[str, str]) -> tuple[BotEntry, ...]:
    return tuple(example_bot(kind, name=name) for kind, name in pairs)


FOUR = entrants(("peel", "peel"), ("random", "random"), ("peel", "peel-2"), ("random", "random-2"))


UNHURRIED = TimeLimits(decision_ms=120_000)
"""A decision clock no bot here comes near, however busy the machine: what these tests compare
(results, records, zero sums) is what the bots decide, which a late fault would change."""


def config(
    bots: tuple[BotEntry, ...], *, sessions: int, seed: int = 7, table_size: int = 4, **options: object
) -> TournamentConfig:
    options.setdefault("time_limits", UNHURRIED)
    return TournamentConfig(
        name="test",
        bots=bots,
        table_size=table_size,
        sessions=sessions,
        seed=seed,
        **options,  # type: ignore[arg-type]
    )


def key_set(store: Store, tournament: int) -> set[tuple[int, int, int, tuple[str, ...]]]:
    return {(r.block, r.rotation, r.board_seed, r.bots) for r in store.session_results(tournament)}


class TestTournament:
    def test_peel_beats_random_and_everything_is_persisted(self, tmp_path: Path) -> None:
        """A finished tournament has every session committed with a log that replays."""
        with Store.open(tmp_path / "nap.db") as store:
            tournament = run_tournament(config(FOUR, sessions=48), store=store, logs_root=tmp_path / "logs")
            assert store.tournament(tournament).status == "finished"
            results = store.session_results(tournament)
            assert len(results) == 48
            assert len(store.finished_keys(tournament)) == 48
            standings = compute_standings(results)
            assert standings_of(store.tally([tournament])) == standings
            ranked = [line.bot for line in standings.bots]
            assert set(ranked[:2]) == {"peel", "peel-2"}, ranked
            worst_peel = min(standings.bot(b).chips.low or 0 for b in ("peel", "peel-2"))
            best_random = max(standings.bot(b).chips.high or 0 for b in ("random", "random-2"))
            assert worst_peel > best_random
            for result in results:
                assert sum(seat.chips for seat in result.seats) == 0
            session = store.find_sessions(tournament=tournament)[5]
            log = decode_log(store.log(session.id), name="log")
            assert log["bots"] == [{"seat": i, "bot": b} for i, b in enumerate(session.bots)]
            record = SessionRecord.from_json(log["record"])  # type: ignore[arg-type]
            assert verify(record) == []
            decisions = log["decisions"]
            assert isinstance(decisions, list)
            assert sum(len(deal) for deal in decisions) == sum(len(d.actions) for d in record.deals)
            assert (tmp_path / "logs" / f"t{tournament}" / "bots" / "peel-r0.log").exists()

    def test_identical_deterministic_bots_total_zero_over_each_block(self, tmp_path: Path) -> None:
        """Duplicate: four copies of peel hold every hand once, so each nets exactly zero."""
        bots = entrants(*((("peel", f"peel-{i}")) for i in range(4)))
        with Store.open(tmp_path / "nap.db") as store:
            tournament = run_tournament(
                config(bots, sessions=12, seed=3), store=store, logs_root=tmp_path / "logs"
            )
            totals: dict[tuple[int, str], int] = defaultdict(int)
            results = store.session_results(tournament)
            assert len(results) == 12
            assert any(seat.chips for r in results for seat in r.seats)  # not all dull deals
            for result in results:
                assert not result.faults
                for seat in result.seats:
                    totals[result.block, seat.bot] += seat.chips
            assert set(totals.values()) == {0}


class TestResume:
    def test_killed_tournament_resumes_to_the_same_sessions(self, tmp_path: Path) -> None:
        """kill -9 mid-tournament, then resume: same sessions as an uninterrupted run, none twice."""
        script = str(HERE / "killable.py")
        db, logs = tmp_path / "killed.db", tmp_path / "killed-logs"
        sessions, seed = 40, 11
        process = subprocess.Popen(
            [PYTHON, script, str(db), str(logs), str(seed), str(sessions)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 600  # generous: a busy machine starts 16 bot processes first
            done = 0
            while time.monotonic() < deadline and process.poll() is None:
                time.sleep(0.1)
                if db.exists():
                    with Store.open(db) as store:
                        done = len(store.finished_keys(1)) if store.tournaments() else 0
                if done >= 8:
                    break
            assert process.poll() is None, "the tournament ended before it could be killed"
            assert 8 <= done < sessions
            process.send_signal(signal.SIGKILL)
            process.wait()
        finally:
            if process.poll() is None:
                process.kill()
            _kill_orphaned_bots(logs)
        assert lock_path(db, 1).exists()  # left by the killed run, but no longer locked
        with Store.open(db) as store:
            assert store.tournament(1).status == "running"  # killed: nobody could say otherwise
            before = key_set(store, 1)
            assert len(before) < sessions
            resume_tournament(1, store=store, logs_root=logs)
            assert store.tournament(1).status == "finished"
            resumed = store.session_results(1)
            after = key_set(store, 1)
        left = Path(tempfile.gettempdir()).glob(f"nap-referee-{process.pid}-*")
        assert not list(left), "the killed run's socket folder is removed by the next run"
        assert not lock_path(db, 1).exists()
        assert before <= after
        assert len(resumed) == len(after) == sessions
        with Store.open(tmp_path / "straight.db") as store:
            from killable import config as killable_config  # noqa: PLC0415

            run_tournament(killable_config(seed, sessions), store=store, logs_root=tmp_path / "straight-logs")
            straight = store.session_results(1)
            straight_played = played_sessions(store, 1)
        assert key_set_of(straight) == after
        with Store.open(db) as store:
            resumed_played = played_sessions(store, 1)
        assert resumed_played.keys() == straight_played.keys()
        for (
            key,
            played,
        ) in resumed_played.items():  # the CPU clock: no late answer, however loaded the machine
            assert played == straight_played[key], key
            assert played[0].faults == (), key


def key_set_of(results: list) -> set[tuple[int, int, int, tuple[str, ...]]]:  # type: ignore[type-arg]
    return {(r.block, r.rotation, r.board_seed, r.bots) for r in results}


Played = tuple[Any, object, list[list[tuple[object, object]]]]
"""A session's result (a SessionResult), its record (as JSON) and decisions (action, seat), as logged."""


def played_sessions(store: Store, tournament: int) -> dict[tuple[int, int], Played]:
    """Each stored session of ``tournament`` by (block, rotation): what a replay of it must give again.

    The decisions leave out how long each bot took, the one thing a replay may change.
    """
    results = {(r.block, r.rotation): r for r in store.session_results(tournament)}
    played: dict[tuple[int, int], Played] = {}
    for row in store.find_sessions(tournament=tournament):
        log = decode_log(store.log(row.id), name="log")
        played[row.block, row.rotation] = (
            results[row.block, row.rotation],
            log["record"],
            _choices(log["decisions"]),
        )
    return played


def _choices(decisions: object) -> list[list[tuple[object, object]]]:
    """Each deal's decisions as (action, seat), without their latency."""
    assert isinstance(decisions, list)
    return [[(d["action"], d["seat"]) for d in deal] for deal in decisions]


def _kill_orphaned_bots(logs: Path) -> None:
    """Stop any bot process the killed runner left (their logs name their pids).

    Worker processes stop their bots when the runner goes away; this is for what a
    killed worker or a runner playing in its own process leaves behind.
    """
    for log in logs.glob("t*/bots/*.log"):
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("--- ") and "(pid " in line:
                pid = int(line.rsplit("(pid ", 1)[1].rstrip(")"))
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)


class TestBotProcesses:
    def test_missing_command_is_a_clear_error(self, tmp_path: Path) -> None:
        """A bot whose program does not exist fails at once, naming the bot and the program."""
        ghost = BotEntry(name="ghost", version="1", command=("no-such-nap-bot", "--fast"))
        bots = (*entrants(("peel", "peel"), ("random", "random")), ghost)
        with Store.open(tmp_path / "nap.db") as store, pytest.raises(RunnerError) as raised:
            run_tournament(config(bots, sessions=3, table_size=3), store=store, logs_root=tmp_path / "logs")
        assert str(raised.value) == "bot ghost: command not found: no-such-nap-bot"

    def test_bot_that_exits_at_once_is_a_clear_error(self, tmp_path: Path) -> None:
        """A bot process that dies before connecting: one line with its status and last words."""
        dying = BotEntry(
            name="dying",
            version="1",
            command=(PYTHON, "-c", "import sys; print('no luck today', file=sys.stderr); sys.exit(3)"),
        )
        bots = (*entrants(("peel", "peel"), ("random", "random")), dying)
        with Store.open(tmp_path / "nap.db") as store:
            with pytest.raises(RunnerError) as raised:
                run_tournament(
                    config(bots, sessions=3, table_size=3), store=store, logs_root=tmp_path / "logs"
                )
            assert store.tournaments()[0].status == "interrupted"
        assert str(raised.value) == (
            "bot dying exited with status 3 before connecting: no luck today; tournament 1 stopped after "
            f"0 of 3 sessions; to play the rest: nap tournament resume 1 --db {tmp_path / 'nap.db'} "
            f"--out {tmp_path / 'logs'}"
        )

    def test_a_refused_bot_is_one_line_with_the_refusals_reason(self, tmp_path: Path) -> None:
        """A bot refused for the decisions it declares: the line says why, not the exit status.

        The stdio bridge without --decisions in a Purchase Nap tournament: it prints the
        Refusal, then its tally, and exits with status 2; the line quotes the Refusal.
        """
        program = (PYTHON, str(Path(__file__).parent / "bots_stdio" / "lowest_bot.py"))
        bridged = BotEntry(
            name="bridged", version="1", command=(PYTHON, "-m", "clients.stdio.bridge", "--", *program)
        )
        bots = (*entrants(("peel", "peel"), ("random", "random")), bridged)
        plan = config(bots, sessions=3, table_size=3, profile=PROFILES["purchase"], sandbox="off")
        with Store.open(tmp_path / "nap.db") as store, pytest.raises(RunnerError) as raised:
            run_tournament(plan, store=store, logs_root=tmp_path / "logs")
        assert str(raised.value).startswith(
            "bot bridged was refused by the referee (UNSUPPORTED_DECISIONS): profile 'purchase' asks "
            "exchange decisions, which this bot's Hello does not list (Hello.decisions: none); "
            "tournament 1 stopped after 0 of 3 sessions"
        )

    def test_a_refused_bot_that_says_nothing_is_one_line_with_the_refusals_reason(
        self, tmp_path: Path
    ) -> None:
        """The reason is the referee's, not the bot's output: none of it reaches the log here.

        On a busy machine the Refusal the bot prints may not be read before the runner
        reports the exit; the line is the same whatever the bot printed, and whenever.
        """
        program = (PYTHON, str(Path(__file__).parent / "bots_stdio" / "lowest_bot.py"))
        mute = 'exec "$0" -m clients.stdio.bridge -- "$@" >/dev/null 2>&1'
        muted = BotEntry(name="muted", version="1", command=("sh", "-c", mute, PYTHON, *program))
        bots = (*entrants(("peel", "peel"), ("random", "random")), muted)
        plan = config(bots, sessions=3, table_size=3, profile=PROFILES["purchase"], sandbox="off")
        with Store.open(tmp_path / "nap.db") as store, pytest.raises(RunnerError) as raised:
            run_tournament(plan, store=store, logs_root=tmp_path / "logs")
        assert str(raised.value).startswith(
            "bot muted was refused by the referee (UNSUPPORTED_DECISIONS): profile 'purchase' asks "
            "exchange decisions, which this bot's Hello does not list (Hello.decisions: none); "
            "tournament 1 stopped after 0 of 3 sessions"
        )

    def test_crashed_bot_is_restarted_and_the_tournament_goes_on(self, tmp_path: Path) -> None:
        """A bot that exits mid-tournament is relaunched; its later sessions play cleanly.

        Its processes (one per rotation) share a marker file, so the bot runs unsandboxed:
        the first to start crashes, once.
        """
        marker = tmp_path / "crashed"
        os.environ["CRASH_MARKER"] = str(marker)
        os.environ["CRASH_AFTER"] = "60"
        try:
            crashy = BotEntry(name="crashy", version="1", command=(PYTHON, str(HERE / "crashy.py")))
            bots = (*entrants(("peel", "peel"), ("random", "random")), crashy)
            with Store.open(tmp_path / "nap.db") as store:
                tournament = run_tournament(  # one worker: one crashy process to count
                    config(bots, sessions=24, table_size=3, concurrency=2, workers=1, sandbox="off"),
                    store=store,
                    logs_root=tmp_path / "logs",
                )
                assert store.tournament(tournament).status == "finished"
                results = store.session_results(tournament)
        finally:
            del os.environ["CRASH_MARKER"], os.environ["CRASH_AFTER"]
        assert marker.exists()
        assert (
            len(marker.with_suffix(".starts").read_text().split()) == 3 + 1
        )  # a process per rotation, a restart
        assert len(results) == 24
        faulty = [r for r in results if r.faults]
        assert len(faulty) <= 4  # only the sessions in flight when it crashed
        assert all(f.bot == "crashy" for r in faulty for f in r.faults)
        assert not results[-1].faults


def _worker_pids() -> list[int]:
    """The pids of this process's worker processes (python -m tournaments.play.executors.workers)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes().split(b"\0")
            if parent == os.getpid() and b"tournaments.play.executors.workers" in command:
                pids.append(int(stat.parent.name))
    return sorted(pids)


class TestWorkers:
    def test_workers_play_the_sessions_one_process_plays(self, tmp_path: Path) -> None:
        """Blocks spread over two worker processes give the very sessions of one process."""
        results = {}
        for workers in (1, 2):
            with Store.open(tmp_path / f"w{workers}.db") as store:
                tournament = run_tournament(
                    config(FOUR, sessions=32, seed=3, workers=workers),
                    store=store,
                    logs_root=tmp_path / f"logs{workers}",
                )
                results[workers] = {(r.block, r.rotation): r for r in store.session_results(tournament)}
        assert len(results[1]) == 32
        assert results[1] == results[2]
        bots = tmp_path / "logs2" / "t1" / "bots"
        assert {p.name for p in bots.glob("peel*.log")} == {
            f"{bot}{worker}-r{rotation}.log"
            for bot in ("peel", "peel-2")
            for worker in ("", "-w2")
            for rotation in range(4)
        }

    def test_a_killed_worker_stops_the_tournament_with_its_sessions_kept(self, tmp_path: Path) -> None:
        """kill -9 of a worker: a one-line error, the finished sessions stay, resume finishes."""
        import asyncio  # noqa: PLC0415 - only this test drives the runner from a loop

        from tournaments.play.runner import run_tournament_async  # noqa: PLC0415

        async def kill_a_worker(store: Store) -> None:
            while len(store.finished_keys(1)) < 8:  # noqa: ASYNC110 - polls another party's store
                await asyncio.sleep(0.05)
            os.kill(_worker_pids()[-1], signal.SIGKILL)

        async def scenario(store: Store) -> None:
            killer = asyncio.create_task(kill_a_worker(store))
            try:
                await run_tournament_async(
                    config(FOUR, sessions=200, seed=4, workers=2), store=store, logs_root=tmp_path / "logs"
                )
            finally:
                killer.cancel()

        with Store.open(tmp_path / "nap.db") as store:
            with pytest.raises(RunnerError) as raised:
                asyncio.run(scenario(store))
            resume = f"nap tournament resume 1 --db {tmp_path / 'nap.db'} --out {tmp_path / 'logs'}"
            said = re.fullmatch(
                r"worker [12] stopped unexpectedly \(exit status -9\); tournament 1 stopped after "
                rf"(\d+) of 200 sessions; to play the rest: {re.escape(resume)}",
                str(raised.value),
            )
            assert said is not None, str(raised.value)
            assert store.tournament(1).status == "interrupted"
            kept = key_set(store, 1)
            assert 8 <= len(kept) < 200
            assert int(said.group(1)) == len(kept)
            assert not _worker_pids()
            resume_tournament(1, store=store, logs_root=tmp_path / "logs")
            assert kept <= key_set(store, 1)
            assert len(store.session_results(1)) == 200


class TestInProcess:
    def test_in_process_block_matches_the_referee(self, tmp_path: Path) -> None:
        """The same seeded bots choose the same actions with or without gRPC."""
        with Store.open(tmp_path / "nap.db") as store:
            tournament = run_tournament(
                config(FOUR, sessions=8, seed=5), store=store, logs_root=tmp_path / "logs"
            )
            over_grpc = played_sessions(store, tournament)
            blocks = store.blocks(tournament)
        from referee.rules import get_profile  # noqa: PLC0415

        factories = {bot.name: bot.make_bot() for bot in FOUR}
        compared = 0
        for block in blocks:
            spec = BlockRun(
                tournament=tournament,
                index=block.index,
                board_seed=block.board_seed,
                bots=block.bots,
                profile=get_profile("heather"),
                time_limits=TimeLimits(),
                rotations=(0, 1, 2, 3),
            )
            for finished in play_block_in_process(spec, factories):
                key = finished.result.block, finished.result.rotation
                remote, record, decisions = over_grpc.pop(key)
                if remote.faults:
                    continue  # a late answer on a loaded machine: the referee played for the bot
                assert finished.result == remote, key
                assert json.loads(json.dumps(finished.log["record"])) == record, key
                assert _choices(finished.log["decisions"]) == decisions, key
                compared += 1
        assert not over_grpc  # every session played over gRPC was played in process too
        assert compared >= 4, f"only {compared} of 8 sessions played over gRPC without a fault"


class TestWorkerProcess:
    def test_the_worker_logs_at_the_runners_level(self, tmp_path: Path) -> None:
        """`nap tournament run` without -v shows no info lines, from the runner or its workers."""
        command = [
            PYTHON,
            "-m",
            "tournaments.cli",
            "tournament",
            "run",
            "-n",
            "8",
            "--workers",
            "2",
            "--db",
            str(tmp_path / "nap.db"),
            "--out",
            str(tmp_path / "out"),
        ]
        quiet = subprocess.run(command, capture_output=True, text=True, check=True, timeout=120)
        assert "bot started" not in quiet.stderr
        loud = subprocess.run(
            [*command[:3], "-v", *command[3:]], capture_output=True, text=True, check=True, timeout=120
        )
        assert (
            loud.stderr.count("bot started") == 32
        )  # 4 bots, one process per rotation, in each of 2 workers

    def test_a_worker_started_by_hand_says_who_starts_it(self) -> None:
        """`python -m tournaments.play.executors.workers` at a terminal: one line of error, not a wait."""
        import pty  # noqa: PLC0415 - a terminal only for this test

        leader, follower = pty.openpty()
        try:
            done = subprocess.run(
                [PYTHON, "-m", "tournaments.play.executors.workers"],
                stdin=follower,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        finally:
            os.close(leader)
            os.close(follower)
        assert done.returncode == 1
        assert done.stderr.strip() == (
            "python -m tournaments.play.executors.workers is started by the tournament "
            "runner (nap tournament run --workers N), not by hand"
        )


def test_the_socket_folders_of_processes_that_are_gone_are_removed(tmp_path: Path) -> None:
    """A ``kill -9`` leaves its referee's socket folder; the next run removes it, and no live one."""
    gone = tmp_path / f"nap-referee-{2**22 + 7}-abc123"  # past the largest pid Linux gives
    mine = tmp_path / f"nap-referee-{os.getpid()}-def456"
    older = tmp_path / "nap-referee-ghi789"  # a name that says no process: left alone
    for folder in (gone, mine, older):
        folder.mkdir()
        (folder / "referee.sock").touch()
    assert remove_orphan_socket_folders(tmp_path) == [gone]
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([mine.name, older.name])
    made = socket_folder()
    try:
        assert SOCKET_FOLDER.fullmatch(made.name)
        assert made.name.startswith(f"nap-referee-{os.getpid()}-")
    finally:
        made.rmdir()
