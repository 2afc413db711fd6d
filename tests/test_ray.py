"""Tournaments on Ray workers: a real local Ray instance (2 CPUs, no dashboard) and real bots.

Each test that plays starts its own Ray instance (a few seconds), with its session files
in a short folder of its own, and the executor shuts it down when the run ends. They are
skipped where Ray is not installed (``pip install 'nap-arena[ray]'``; tox installs it).
The tests of the command line's refusals need no Ray.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest
import structlog
from click.testing import CliRunner

from referee.match import TimeLimits
from referee.rules import SessionRecord, get_profile, verify
from tournaments.cli import main
from tournaments.errors import RunnerError, TournamentInterrupted
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import BotEntry, example_bot
from tournaments.plan.manifest import read_manifest
from tournaments.play.blocks import BlockRun
from tournaments.play.entrants import entry_from_manifest
from tournaments.play.executors import ray as ray_executor
from tournaments.play.executors.local import LocalExecutor
from tournaments.play.executors.ray import LOCAL_STARTS, RayExecutor, _Blocks, _Job, start_local_ray
from tournaments.play.executors.record import recorded_usage
from tournaments.play.executors.shipping import portable_bots, shipped_proto
from tournaments.play.runner import RunOptions, resume_tournament, run_tournament, run_tournament_async
from tournaments.stats.standings import compute_standings, standings_of
from tournaments.store.database import Store
from tournaments.store.logs import decode_log

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator, MutableMapping, Sequence

    from tournaments.play.executors.base import Deliver, Executor, PlayContext, Players
    from tournaments.play.tables import TableSource

# One pytest-xdist worker plays every test of this module, so that two Ray instances never
# start at once on the same machine (tox runs the suite on two workers).
pytestmark = pytest.mark.xdist_group("ray")

ROOT = Path(__file__).resolve().parent.parent
FOUR = tuple(
    example_bot(kind, name=name)
    for kind, name in (("peel", "peel"), ("random", "random"), ("peel", "peel-2"), ("random", "random-2"))
)


UNHURRIED = TimeLimits(decision_ms=120_000)
"""A decision clock no bot here comes near, however busy the machine: the tests compare what the
bots decide (on Ray and locally), and count faults, which a late answer would change."""


def config(
    bots: tuple[BotEntry, ...], *, sessions: int, seed: int, table_size: int = 4, sandbox: str = "auto"
) -> TournamentConfig:
    return TournamentConfig(
        name="ray",
        bots=bots,
        table_size=table_size,
        sessions=sessions,
        seed=seed,
        sandbox=sandbox,
        time_limits=UNHURRIED,
    )


@pytest.fixture
def ray_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder for one Ray instance's session files; checks that the run shut its instance down.

    Under the test's own folder when its path is short enough: Ray's sockets live there,
    and a socket's path may not be longer than 107 bytes.
    """
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'nap-arena[ray]'")
    folder = tmp_path / "ray"
    if len(str(folder)) > 40:
        folder = Path(tempfile.mkdtemp(prefix="nap-ray-"))
    try:
        yield folder
        assert not ray.is_initialized(), "the executor left its Ray instance running"
    finally:
        if ray.is_initialized():
            ray.shutdown()
        if not folder.is_relative_to(tmp_path):
            shutil.rmtree(folder, ignore_errors=True)


def on_ray(folder: Path) -> RayExecutor:
    return RayExecutor(num_cpus=2, temp_dir=folder)


def play(executor: Executor, tournament: TournamentConfig, root: Path) -> Store:
    """A store (open) holding ``tournament`` as ``executor`` played it, logs under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    store = Store.open(root / "nap.db")
    run_tournament(tournament, store=store, logs_root=root / "logs", options=RunOptions(executor=executor))
    return store


def _bot_pids(logs: Path) -> list[int]:
    """The pids of every bot process the Ray workers started (their logs name them)."""
    return [
        int(line.rsplit("(pid ", 1)[1].rstrip(")"))
        for log in logs.glob("t*/bots/*-ray*.log")
        for line in log.read_text(errors="replace").splitlines()
        if line.startswith("--- ") and "(pid " in line
    ]


def _ray_worker_pids(logs: Path) -> set[int]:
    """The Ray workers hosting this tournament's bots now: the parents of its live bot processes."""
    parents = set()
    for pid in _bot_pids(logs):
        with contextlib.suppress(OSError, ValueError, IndexError):
            parents.add(int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]))
    return parents - {1, os.getpid()}


def _kill_orphaned_bots(logs: Path) -> None:
    """Stop the bot processes a killed Ray worker left, which would otherwise wait for it a while."""
    for pid in _bot_pids(logs):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


@pytest.mark.slow
class TestSameResults:
    def test_ray_workers_play_what_local_workers_play(self, tmp_path: Path, ray_folder: Path) -> None:
        """Seeded bots: the same sessions, chips, faults, records and standings on Ray as locally."""
        tournament = config(FOUR, sessions=32, seed=3)
        with play(LocalExecutor(), tournament, tmp_path / "local") as local:
            expected = {(r.block, r.rotation): r for r in local.session_results(1)}
            expected_logs = {
                (s.block, s.rotation): decode_log(local.log(s.id), name="log")
                for s in local.find_sessions(tournament=1)
            }
        with play(on_ray(ray_folder), tournament, tmp_path / "ray") as store:
            assert store.tournament(1).status == "finished"
            results = store.session_results(1)
            played = {(r.block, r.rotation): r for r in results}
            logs = {(s.block, s.rotation): store.log(s.id) for s in store.find_sessions(tournament=1)}
            tally = store.tally([1])
        assert len(results) == 32
        assert played == expected
        assert compute_standings(results) == compute_standings(list(expected.values())) == standings_of(tally)
        assert len(logs) == 32
        for key, data in logs.items():
            log = decode_log(data, name="log")
            assert log["record"] == expected_logs[key]["record"]
            assert verify(SessionRecord.from_json(log["record"])) == []  # type: ignore[arg-type]
        usage = recorded_usage(tmp_path / "ray" / "nap.db", 1)
        assert usage is not None
        # 8 blocks for 2 places, but on a busy machine the first worker may play them all before
        # the second is ready: the usage counts the workers that were, each with its bots' logs
        workers = usage.workers
        assert workers in (1, 2)
        assert (
            str(usage)
            == f"ray, {workers} Ray worker{'s' * (workers > 1)} on a local Ray instance with 2 CPUs"
        )
        bots = tmp_path / "ray" / "logs" / "t1" / "bots"
        logs_of = {
            place: {
                f"{bot}-ray{place}-r{rotation}.log" for bot in ("peel", "peel-2") for rotation in range(4)
            }
            for place in (1, 2)
        }
        found = {p.name for p in bots.glob("peel*.log")}
        assert len([place for place, logs in logs_of.items() if logs <= found]) >= workers
        assert found <= logs_of[1] | logs_of[2]


@pytest.mark.slow
class TestLostWorkers:
    def test_a_killed_ray_worker_s_blocks_are_played_by_the_others(
        self, tmp_path: Path, ray_folder: Path
    ) -> None:
        """kill -9 of a Ray worker mid-tournament: it finishes, every session once, the logs verify."""
        sessions = 200
        killed: list[tuple[int, int]] = []

        async def kill_a_worker(store: Store, said: list[MutableMapping[str, Any]]) -> None:
            # polls another party's store, then the bots' logs for the Ray workers hosting them;
            # a worker that said it is ready plays blocks (on a loaded machine, another may still
            # be starting, its bots connecting, and it would lose no block)
            def playing() -> set[int]:
                ready = {event["pid"] for event in said if event["event"] == "Ray worker ready"}
                return _ray_worker_pids(tmp_path / "logs") & ready

            while len(store.finished_keys(1)) < 8 or not (hosts := playing()):  # noqa: ASYNC110
                await asyncio.sleep(0.05)
            pid = min(hosts)
            os.kill(pid, signal.SIGKILL)
            killed.append((pid, len(store.finished_keys(1))))

        async def scenario(store: Store, said: list[MutableMapping[str, Any]]) -> None:
            killer = asyncio.create_task(kill_a_worker(store, said))
            try:
                await run_tournament_async(
                    config(FOUR, sessions=sessions, seed=4),
                    store=store,
                    logs_root=tmp_path / "logs",
                    options=RunOptions(executor=on_ray(ray_folder)),
                )
            finally:
                killer.cancel()

        level = structlog.get_config()["wrapper_class"]  # `nap` run in this process may have set WARNING
        structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
        try:
            with Store.open(tmp_path / "nap.db") as store, structlog.testing.capture_logs() as said:
                asyncio.run(scenario(store, said))
                assert store.tournament(1).status == "finished"
                keys = [(r.block, r.rotation) for r in store.session_results(1)]
        finally:
            structlog.configure(wrapper_class=level)
            _kill_orphaned_bots(tmp_path / "logs")
        assert len(killed) == 1
        [lost] = [event for event in said if event["event"].startswith("Ray worker lost")]
        assert f"pid {killed[0][0]}" in lost["worker"]
        assert lost["blocks"] >= 1  # it was playing blocks: others played their rest
        assert len(keys) == len(set(keys)) == sessions
        usage = recorded_usage(tmp_path / "nap.db", 1)
        assert usage is not None
        assert usage.lost == 1
        verified = CliRunner().invoke(main, ["log", "verify", "--db", str(tmp_path / "nap.db")])
        assert verified.exit_code == 0, verified.output
        assert f"{sessions} match, 0 mismatch" in verified.output


class TestBotFolders:
    @pytest.mark.slow
    def test_bot_folders_are_shipped_and_built_once_per_node(self, tmp_path: Path, ray_folder: Path) -> None:
        """The C and Node.js examples, copied out of the checkout and never built here, play on Ray.

        Each folder is built on the node once (the C bot's build counts itself, in a file
        beside its folder: so its build runs unsandboxed, which would hide that file) and
        plays on both workers; the Node.js bot, away from the checkout's proto/, loads the
        nap.proto shipped with it.
        """
        for tool in ("cc", "node", "npm"):
            if shutil.which(tool) is None:
                pytest.skip(f"{tool!r} is not on PATH: the C and Node.js examples cannot be built or run")
        folder = tmp_path / "c-bot"
        folder.mkdir()
        shutil.copy2(ROOT / "clients" / "c" / "bot.c", folder / "bot.c")
        builds = tmp_path / "builds.txt"
        manifest = (ROOT / "clients" / "c" / "nap-bot.toml").read_text(encoding="utf-8")
        build = f'build = ["sh", "-c", "echo $$ >> {builds} && cc -O2 -o bot bot.c"]'
        (folder / "nap-bot.toml").write_text(
            "\n".join(build if line.startswith("build") else line for line in manifest.splitlines()),
            encoding="utf-8",
        )
        node = tmp_path / "node"
        shutil.copytree(ROOT / "clients" / "node", node, ignore=shutil.ignore_patterns("node_modules"))
        bots = (
            entry_from_manifest(read_manifest(folder)),
            entry_from_manifest(read_manifest(node)),
            example_bot("random"),
        )
        setup = config(bots, sessions=12, seed=2, table_size=3, sandbox="off")
        with play(on_ray(ray_folder), setup, tmp_path) as store:
            assert store.tournament(1).status == "finished"
            results = store.session_results(1)
        assert len(results) == 12
        assert not [fault for result in results for fault in result.faults]
        # both places' workers, but on a busy machine the first may play every block before the
        # second is ready: the usage counts the workers that were, each with its bots' logs
        usage = recorded_usage(tmp_path / "nap.db", 1)
        assert usage is not None
        assert usage.workers in (1, 2)
        assert not (folder / "bot").exists()  # the runner's copies were never built
        assert not (node / "node_modules").exists()
        assert len(builds.read_text().split()) == 1  # two Ray workers on one node, one build
        logs = tmp_path / "logs" / "t1" / "bots"
        bridged = "clients.stdio.bridge --decisions exchange,peep,widow -- ./bot"
        hosts = [
            place
            for place in (1, 2)
            if (logs / f"node-ray{place}-r0.log").is_file()
            and (logs / f"c-bot-ray{place}-r0.log").is_file()
            and bridged in (logs / f"c-bot-ray{place}-r0.log").read_text()
        ]
        assert len(hosts) >= usage.workers


class TestShipping:
    def test_the_protocol_travels_with_bot_folders(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A staged bot folder takes this checkout's nap.proto along; built-in bots alone take nothing."""
        monkeypatch.delenv("NAP_PROTO", raising=False)  # else the one it names travels
        stage = tmp_path / "stage"
        stage.mkdir()
        portable_bots((example_bot("random"),), stage)
        assert shipped_proto(stage) is None
        folder = tmp_path / "mybot"
        folder.mkdir()
        (folder / "bot.js").write_text("// plays\n", encoding="utf-8")
        mine = BotEntry(name="mine", version="1", command=("node", "bot.js"), cwd=folder)
        [entry] = portable_bots((mine,), stage)
        assert entry.cwd is not None
        assert (stage / entry.cwd / "bot.js").is_file()
        proto = shipped_proto(stage)
        assert proto is not None
        assert proto.read_bytes() == (ROOT / "proto" / "nap" / "v1" / "nap.proto").read_bytes()


@dataclass(frozen=True)
class _LosingExecutor:
    """Local workers that leave the last block unplayed and return as if all was done (a bug)."""

    name = "losing"

    def resume_flags(self) -> tuple[str, ...]:
        return ()

    @contextlib.asynccontextmanager
    async def open(self, context: PlayContext, *, blocks: int | None) -> AsyncIterator[Players]:
        async with LocalExecutor().open(context, blocks=blocks) as players:
            yield _Losing(players, last=(blocks or 1) - 1)


@dataclass
class _Losing:
    """Players that skip the block they are handed ``last``-th, as if they had played it."""

    players: Players
    last: int
    handed: int = 0

    @property
    def capacity(self) -> int:
        return 1

    def tables(self) -> TableSource:
        return self.players.tables()

    async def play(self, run: BlockRun, deliver: Deliver, *, entries: Sequence[BotEntry] = ()) -> None:
        self.handed += 1
        if self.handed <= self.last:
            await self.players.play(run, deliver, entries=entries)

    async def retire(self, names: Sequence[str]) -> None:
        await self.players.retire(names)


class TestExecutorContract:
    @pytest.mark.slow
    def test_an_executor_that_leaves_sessions_unplayed_stops_the_run_resumable(self, tmp_path: Path) -> None:
        """Not `finished` with sessions missing: a one-line stop, and the resume plays the rest."""
        tournament = config(FOUR, sessions=12, seed=5)
        with Store.open(tmp_path / "nap.db") as store:
            with pytest.raises(TournamentInterrupted) as stopped:
                run_tournament(
                    tournament,
                    store=store,
                    logs_root=tmp_path / "logs",
                    options=RunOptions(executor=_LosingExecutor()),
                )
            assert str(stopped.value).startswith(
                "the losing executor returned with 4 sessions unplayed; tournament 1 stopped after 8 of 12"
            )
            assert store.tournament(1).status == "interrupted"
            resume_tournament(1, store=store, logs_root=tmp_path / "logs")
            assert store.tournament(1).status == "finished"
            assert len(store.session_results(1)) == 12


def block(index: int, rotations: tuple[int, ...] = (0, 1, 2, 3)) -> BlockRun:
    return BlockRun(
        tournament=1,
        index=index,
        board_seed=index,
        bots=("a", "b", "c", "d"),
        profile=get_profile("heather"),
        time_limits=TimeLimits(),
        rotations=rotations,
    )


SLOW_NODE = "The current node timed out during startup. This could happen because some of the raylet failed"
"""What Ray raises (a bare Exception) when a new node does not register within its 30 s."""


class _SlowRay(ModuleType):
    """A stand-in for the ray module whose local node is slow to start ``slow`` times, then starts."""

    def __init__(self, slow: int, *, error: str = SLOW_NODE) -> None:
        super().__init__("ray")
        self.slow, self.error = slow, error
        self.inits = 0
        self.killed: list[dict[str, bool]] = []

    def init(self, **_: object) -> None:
        self.inits += 1
        if self.inits <= self.slow:
            _unregistered_node(self.killed).start(self.error)


def _unregistered_node(killed: list[dict[str, bool]]) -> Any:
    """A Ray node whose start raises as Ray's does, from its own method (``self`` in the frame)."""
    from ray._private.node import Node  # noqa: PLC0415 - Ray is optional

    class Unregistered(Node):
        def __init__(self) -> None:  # Ray's constructor starts processes: none here
            pass

        def start(self, error: str) -> None:
            raise Exception(error)  # noqa: TRY002 - what Ray raises

        def kill_all_processes(
            self,
            check_alive: bool = True,  # noqa: FBT001, FBT002 - Ray's own signature, overridden
            allow_graceful: bool = False,  # noqa: FBT001, FBT002 - likewise
            wait: bool = False,  # noqa: FBT001, FBT002 - likewise
        ) -> None:
            killed.append({"check_alive": check_alive, "allow_graceful": allow_graceful, "wait": wait})

    return Unregistered()


class TestLocalStart:
    """A local Ray node slow to register is started again (Ray gives it 30 s), its processes stopped."""

    def test_a_slow_node_is_started_again_and_its_processes_stopped(self) -> None:
        pytest.importorskip("ray", reason="Ray is not installed: pip install 'nap-arena[ray]'")
        ray = _SlowRay(LOCAL_STARTS - 1)
        start_local_ray(ray, cpus=2, temp_dir=None, runtime_env=None, log_level=logging.WARNING)
        assert ray.inits == LOCAL_STARTS
        stopped = {"check_alive": False, "allow_graceful": False, "wait": True}
        assert ray.killed == [stopped] * (LOCAL_STARTS - 1)

    def test_a_node_slow_every_time_is_one_line(self) -> None:
        pytest.importorskip("ray", reason="Ray is not installed: pip install 'nap-arena[ray]'")
        ray = _SlowRay(LOCAL_STARTS)
        with pytest.raises(RuntimeError) as raised:
            start_local_ray(ray, cpus=2, temp_dir=None, runtime_env=None, log_level=logging.WARNING)
        assert str(raised.value) == f"{SLOW_NODE} ({LOCAL_STARTS} tries)"
        assert len(ray.killed) == LOCAL_STARTS

    @pytest.mark.slow
    def test_a_local_instance_runs_its_workers_at_the_runs_priority(self, ray_folder: Path) -> None:
        """Not at Ray's niceness 15, which starved the workers' bots and builds beside any other job."""
        ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'nap-arena[ray]'")

        def niceness() -> int:  # defined here: Ray ships it by value to a worker, which has no tests module
            return os.nice(0)

        start_local_ray(ray, cpus=1, temp_dir=ray_folder, runtime_env=None, log_level=logging.WARNING)
        try:
            worker = ray.get(ray.remote(niceness).remote())
        finally:
            ray.shutdown()
        assert worker == os.nice(0)

    def test_another_error_is_not_tried_again(self) -> None:
        ray = _SlowRay(1, error="something else")
        with pytest.raises(Exception, match=r"^something else$"):
            start_local_ray(ray, cpus=2, temp_dir=None, runtime_env=None, log_level=logging.WARNING)
        assert ray.inits == 1


class _StartingRay(ModuleType):
    """A stand-in for the ray module whose start takes until ``go`` is set (at most 10 s), then fails."""

    def __init__(self) -> None:
        super().__init__("ray")
        self.starting, self.go = threading.Event(), threading.Event()

    def is_initialized(self) -> bool:
        return False

    def init(self, **_: object) -> None:
        self.starting.set()
        self.go.wait(10)
        msg = "no Ray here"
        raise ConnectionError(msg)


def test_the_event_loop_goes_on_while_ray_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A start takes seconds (a minute on a busy machine): an arena's pages answer meanwhile."""
    fake = _StartingRay()
    monkeypatch.setattr(ray_executor, "_import_ray", lambda: fake)

    async def run() -> bool:
        with Store.open(tmp_path / "nap.db") as store:
            options = RunOptions(executor=RayExecutor(num_cpus=1), signals=False)
            run = run_tournament_async(
                config(FOUR, sessions=4, seed=1, sandbox="off"),
                store=store,
                logs_root=tmp_path,
                options=options,
            )
            playing = asyncio.create_task(run)
            await asyncio.to_thread(fake.starting.wait, 30)
            free = not playing.done()  # this coroutine ran while Ray was starting
            fake.go.set()
            with pytest.raises(RunnerError, match="cannot start a local Ray instance: no Ray here"):
                await playing
            return free

    assert asyncio.run(run())


class TestBlockQueue:
    """What the Ray executor does with the blocks of a lost worker (no Ray needed)."""

    @staticmethod
    def job(index: int) -> _Job:
        return _Job(block(index), lambda _result, _log: None, (), asyncio.get_running_loop().create_future())

    def test_a_lost_block_goes_back_first_without_the_sessions_received(self) -> None:
        async def scenario() -> None:
            blocks = _Blocks()
            zero, one = self.job(0), self.job(1)
            blocks.put(zero)
            blocks.put(one)
            first = await blocks.take()
            blocks.settle(first, [0, 1], lost="the actor died")
            again = await blocks.take()
            assert again is zero
            assert again.run == block(0, (2, 3))  # first in line; rotations 0 and 1 are not played again
            assert not zero.done.done()
            blocks.settle(again, [2, 3], lost=None)
            assert zero.done.done()
            last = await blocks.take()
            assert last is one
            blocks.settle(last, [0, 1, 2, 3], lost=None)
            await asyncio.gather(zero.done, one.done)

        asyncio.run(scenario())

    def test_a_taker_waits_for_a_block_handed_over_or_given_back(self) -> None:
        async def scenario() -> None:
            blocks = _Blocks()
            zero = self.job(0)
            blocks.put(zero)
            playing = await blocks.take()
            waiting = asyncio.create_task(blocks.take())
            await asyncio.sleep(0)
            assert not waiting.done()  # nothing to take, but block 0 is not played yet
            blocks.settle(playing, [0], lost="the node died")
            assert (await waiting).run == block(0, (1, 2, 3))

        asyncio.run(scenario())

    def test_a_block_in_play_on_three_lost_workers_fails_alone(self) -> None:
        async def scenario() -> None:
            blocks = _Blocks()
            seven, eight = self.job(7), self.job(8)
            blocks.put(seven)
            blocks.put(eight)
            for _ in range(3):
                playing = await blocks.take()
                assert playing is seven
                blocks.settle(playing, [], lost="the actor died")
            with pytest.raises(RunnerError) as raised:
                await seven.done
            assert str(raised.value) == (
                "block 7 was in play on 3 Ray workers that were lost (last: the actor died)"
            )
            assert await blocks.take() is eight

        asyncio.run(scenario())

    def test_once_the_players_fail_every_block_waiting_or_handed_later_fails(self) -> None:
        async def scenario() -> None:
            blocks = _Blocks()
            waiting = self.job(1)
            blocks.put(waiting)
            blocks.fail(RunnerError("every Ray worker was lost"))
            with pytest.raises(RunnerError, match="every Ray worker was lost"):
                await waiting.done
            with pytest.raises(RunnerError, match="every Ray worker was lost"):
                blocks.put(self.job(2))
            with pytest.raises(RunnerError, match="every Ray worker was lost"):
                await blocks.take()

        asyncio.run(scenario())


class TestCommandLine:
    def test_the_ray_executor_without_ray_is_a_one_line_error(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """--executor ray where Ray is not installed: how to install it, in one line; nothing stored."""
        monkeypatch.setattr("tournaments.cli.tournament.ray_installed", lambda: False)
        db = tmp_path / "nap.db"
        for command in (["run", "-n", "4"], ["resume", "1"]):
            result = CliRunner().invoke(main, ["tournament", *command, "--executor", "ray", "--db", str(db)])
            assert result.exit_code == 1
            assert result.output == (
                "Error: the Ray executor needs Ray, which is not installed: pip install 'nap-arena[ray]'\n"
            )
        assert not db.exists()

    def test_a_ray_address_needs_the_ray_executor(self, tmp_path: Path) -> None:
        """--ray-address without --executor ray is refused before anything is stored."""
        db = tmp_path / "nap.db"
        result = CliRunner().invoke(
            main, ["tournament", "run", "-n", "4", "--ray-address", "10.0.0.1:6379", "--db", str(db)]
        )
        assert result.exit_code == 2
        assert "--ray-address is for --executor ray" in result.output
        assert not db.exists()

    @pytest.mark.slow
    def test_run_and_status_on_ray(
        self, tmp_path: Path, ray_folder: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`nap tournament run --executor ray` plays on a local Ray instance; status names the executor."""
        monkeypatch.setenv("RAY_TMPDIR", str(ray_folder))  # where the local instance keeps its files
        db, out = tmp_path / "nap.db", tmp_path / "out"
        result = CliRunner().invoke(
            main, ["tournament", "run", "-n", "8", "--executor", "ray", "--db", str(db), "--out", str(out)]
        )
        assert result.exit_code == 0, result.output
        assert f"nap tournament resume 1 --db {db} --out {out} --executor ray" in result.output
        with Store.open(db) as store:
            assert len(store.session_results(1)) == 8
        status = CliRunner().invoke(main, ["tournament", "status", "--db", str(db)])
        assert status.exit_code == 0, status.output
        cpus = os.cpu_count() or 1
        usage = recorded_usage(db, 1)
        assert usage is not None
        # 8 sessions at 4 seats are 2 blocks: at most 2 workers, and on a busy machine the
        # first may play both before the second is ready (the count is the workers that were)
        assert 1 <= usage.workers <= min(2, cpus)
        workers = usage.workers
        said = " ".join(status.output.split())  # however the line is wrapped
        assert "executor" in said
        assert (
            f"ray, {workers} Ray worker{'s' * (workers > 1)} on a local Ray instance "
            f"with {cpus} CPU{'s' * (cpus > 1)} (latest run)"
        ) in said
