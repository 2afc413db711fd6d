"""Fair play: a bot process sees nothing it may not, whatever it tries.

The sandbox (bubblewrap) hides the database, the output folder, other bots' folders and
other processes, and gives no network; each rotation of a block is played by its own
process of each bot, so no process is dealt a board it has seen; the default seed is
secret and table ids say nothing. The command lines are checked here without running
them; the tests marked slow run real bots in real sandboxes (skipped where bubblewrap
cannot run: .ci/run installs it).
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE
from referee.server import Referee
from tournaments.cli import main
from tournaments.errors import RunnerError, StoreError
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import BotEntry, example_bot
from tournaments.plan.isolation import BotLimits
from tournaments.plan.scheduler import schedule
from tournaments.play import sandbox as sandboxing
from tournaments.play.blocks import BlockRun, play_block_in_process
from tournaments.play.containment import containment_problem
from tournaments.play.runner import run_tournament
from tournaments.play.sandbox import (
    REFEREE_SOCKET,
    Sandbox,
    SandboxSpec,
    choose_sandbox,
    explain_exit,
    sandbox_problem,
)
from tournaments.store.database import Store

if TYPE_CHECKING:
    from tournaments.results import SessionResult

HERE = Path(__file__).resolve().parent / "bots_sandbox"
PYTHON = sys.executable
TOKEN = "a-token"  # noqa: S105 - a test's token
needs_bwrap = pytest.mark.skipif(
    sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}"
)


@pytest.fixture
def no_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Command lines are built as if bubblewrap worked here (they are not run)."""
    monkeypatch.setattr(sandboxing, "sandbox_problem", lambda: None)


def _binds(argv: list[str]) -> list[tuple[str, str, str]]:
    """Every (option, source, destination) bind of a bubblewrap command line."""
    return [
        (argv[i], argv[i + 1], argv[i + 2])
        for i in range(len(argv) - 2)
        if argv[i] in {"--bind", "--ro-bind"} and "--" not in argv[:i]
    ]


# ---------------------------------------------------------------------------- command lines


@pytest.mark.usefixtures("no_probe")
def test_a_bot_sees_its_folder_read_only_the_referee_socket_and_no_network(tmp_path: Path) -> None:
    folder = tmp_path / "mybot"
    folder.mkdir()
    db = tmp_path / "nap.db"
    socket_path = tmp_path / "ref" / "referee.sock"
    argv, env = Sandbox(SandboxSpec(hidden=(db, tmp_path / "out"))).bot(
        (PYTHON, "bot.py"), name="mybot", folder=folder, socket=socket_path, token=TOKEN
    )
    sandboxed = argv[: argv.index("--")]
    assert "--share-net" not in sandboxed
    assert "--unshare-net" in sandboxed or "--unshare-all" in sandboxed
    assert "--unshare-pid" in sandboxed or "--unshare-all" in sandboxed
    binds = _binds(argv)
    assert ("--ro-bind", str(folder.resolve()), str(folder.resolve())) in binds
    assert ("--bind", str(socket_path), REFEREE_SOCKET) in binds
    writable = [destination for option, _, destination in binds if option == "--bind"]
    assert writable == [REFEREE_SOCKET]
    assert not any(Path(source) in (db, tmp_path, tmp_path / "out") for _, source, _ in binds)
    assert env["NAP_REFEREE"] == f"unix:{REFEREE_SOCKET}"
    assert env["NAP_TOKEN"] == TOKEN
    assert "NAP_DB" not in env
    assert argv[-2:] == [PYTHON, "bot.py"]


@pytest.mark.usefixtures("no_probe")
def test_a_bot_sees_none_of_natures_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAP_DB", str(tmp_path / "nap.db"))
    monkeypatch.setenv("OTHER_BOT_TOKEN", "theirs")
    _, env = Sandbox(SandboxSpec()).bot(
        (PYTHON, "-m", "clients.bots.peel"), name="peel", folder=None, socket=tmp_path / "s", token=TOKEN
    )
    assert "NAP_DB" not in env
    assert "OTHER_BOT_TOKEN" not in env
    assert env["HOME"].startswith("/tmp/")  # noqa: S108 - the sandbox's private /tmp


@pytest.mark.usefixtures("no_probe")
def test_a_bot_folder_that_holds_the_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "nap.db"
    with pytest.raises(
        RunnerError, match=r"bot mybot: its folder .* holds .*nap\.db, which bots must not see"
    ):
        Sandbox(SandboxSpec(hidden=(db,))).bot(
            (PYTHON, "bot.py"), name="mybot", folder=tmp_path, socket=tmp_path / "s", token=TOKEN
        )


@pytest.mark.usefixtures("no_probe")
def test_a_build_writes_its_folder_with_the_network(tmp_path: Path) -> None:
    folder = tmp_path / "mybot"
    folder.mkdir()
    argv, env = Sandbox(SandboxSpec(hidden=(tmp_path / "nap.db",))).build(
        ("cc", "-o", "bot", "bot.c"), name="mybot", folder=folder
    )
    sandboxed = argv[: argv.index("--")]
    assert "--unshare-net" not in sandboxed
    assert "--share-net" in sandboxed or "--unshare-all" not in sandboxed
    assert ("--bind", str(folder.resolve()), str(folder.resolve())) in _binds(argv)
    assert "NAP_TOKEN" not in env


def test_on_without_bubblewrap_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandboxing, "sandbox_problem", lambda: "bubblewrap (bwrap) is not installed")
    with pytest.raises(
        RunnerError, match=r"--sandbox on: .*not installed; install bubblewrap .*--sandbox off"
    ):
        choose_sandbox("on")
    assert choose_sandbox("auto") == "bubblewrap (bwrap) is not installed"
    assert choose_sandbox("off") == "--sandbox off"


@needs_bwrap
@pytest.mark.slow
def test_an_interpreter_under_tmp_still_sandboxes(tmp_path: Path) -> None:
    """A checkout (and its venv) under /tmp: the sandbox's private /tmp must not hide the interpreter."""
    venv = tmp_path / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    root = Path(sandboxing.__file__).resolve().parents[2]
    probe = f"import sys; sys.path.insert(0, {str(root)!r}); from tournaments.play import sandbox; "
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe + "print(sandbox.sandbox_problem())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "None", done.stdout + done.stderr


def test_an_exit_is_explained_by_the_limit_it_reached() -> None:
    limits = BotLimits(memory_mb=256, processes=64, open_files=64)
    assert "memory limit (256 MiB" in explain_exit(
        1, ["Traceback (most recent call last):", "MemoryError"], limits
    )
    assert "open files (64" in explain_exit(1, ["OSError: [Errno 24] Too many open files"], limits)
    assert "processes and threads (64" in explain_exit(1, ["RuntimeError: can't start new thread"], limits)
    assert explain_exit(-9, [], limits) == "killed by SIGKILL"
    assert explain_exit(1, ["MemoryError"], None) == ""  # no sandbox, no limit to reach
    assert explain_exit(1, ["ValueError: bad"], limits) == ""


# ---------------------------------------------------------------------------- ids and seeds


def test_table_ids_name_neither_the_block_nor_the_rotation() -> None:
    [block] = schedule(("a", "b", "c"), table_size=3, sessions=3, seed=7)
    run = BlockRun(
        tournament=3,
        index=block.index,
        board_seed=block.board_seed,
        bots=block.bots,
        profile=DEFAULT_PROFILE,
        time_limits=TimeLimits(),
        rotations=(0, 1, 2),
    )
    ids = [run.table(rotation) for rotation in block.rotations]
    assert all(re.fullmatch(r"[0-9a-f]{16}", table) for table in ids)
    assert len(set(ids)) == 3
    [other] = schedule(("a", "b", "c"), table_size=3, sessions=3, seed=8)
    assert run.table(0) != dataclasses.replace(run, board_seed=other.board_seed).table(0)
    assert run.table(0) == dataclasses.replace(run, tournament=4).table(0)  # the seed decides, not the id


def test_a_welcome_shows_the_bots_name_not_which_process_it_is() -> None:
    referee = Referee()
    referee.add_bot(name="peel#2", token=TOKEN, shown_as="peel")
    link = referee.link_of(TOKEN)
    assert link is not None
    from referee.wire import nap_pb2  # noqa: PLC0415

    message = nap_pb2.RefereeMessage.FromString(referee.welcome(link))
    assert message.welcome.bot_id == "peel"


# ---------------------------------------------------------------------------- real sandboxes


def _entry(name: str, script: str, *args: str, folder: Path = HERE) -> BotEntry:
    return BotEntry(name=name, version="1", command=(PYTHON, script, *args), cwd=folder)


def _play(tmp_path: Path, *bots: BotEntry, sandbox: str, sessions: int = 3, **options: object) -> Path:
    """Play a small tournament of ``bots`` (3 seats); return the bots' log folder."""
    config = TournamentConfig(
        name="fair play",
        bots=bots,
        table_size=3,
        sessions=sessions,
        seed=11,
        concurrency=2,
        workers=1,
        max_restarts=0,
        sandbox=sandbox,
        **options,  # type: ignore[arg-type]
    )
    logs = tmp_path / f"out-{sandbox}"
    with Store.open(tmp_path / f"{sandbox}.db") as store:
        run_tournament(config, store=store, logs_root=logs)
    return logs / "t1" / "bots"


def _lines(folder: Path, bot: str, prefix: str) -> list[str]:
    return [
        line
        for path in sorted(folder.glob(f"{bot}-r*.log"))
        for line in path.read_text().splitlines()
        if line.startswith(prefix)
    ]


@pytest.mark.slow
@needs_bwrap
def test_a_probing_bot_reaches_nothing_in_its_sandbox_and_everything_without(tmp_path: Path) -> None:
    other = tmp_path / "other-bot"
    other.mkdir()
    (other / "secret.txt").write_text("the other bot's code\n")
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    results = {}
    try:
        for mode in ("off", "on"):
            probe = _entry(
                "probe",
                "probe_bot.py",
                "--db",
                str(tmp_path / f"{mode}.db"),
                "--out",
                str(tmp_path / f"out-{mode}"),
                "--other",
                str(other),
                "--pid",
                str(_own_pid()),
                "--port",
                str(port),
            )
            logs = _play(tmp_path, probe, example_bot("random"), example_bot("peel"), sandbox=mode)
            results[mode] = {
                line.split(":")[0].removeprefix("probe "): line.split(": ", 1)[1].split()[0]
                for line in _lines(logs, "probe", "probe ")
            }
    finally:
        listener.close()
    channels = ("db", "out", "other", "proc", "procs", "tcp", "write-folder", "write-parent")
    assert {name: results["off"][name] for name in channels} == dict.fromkeys(channels, "reached")
    assert {name: results["on"][name] for name in channels} == dict.fromkeys(channels, "denied")
    assert results["on"]["tmp"] == "reached"  # its own scratch space


@pytest.mark.slow
@needs_bwrap
def test_a_sandboxed_bot_told_to_stop_leaves_cleanly_with_its_last_lines(tmp_path: Path) -> None:
    """bubblewrap passes no SIGTERM on: the bot inside is told itself, and its exit is its own."""
    for mode in ("off", "on"):
        bots = (_entry("leaving", "leaving_bot.py"), example_bot("random"), example_bot("peel"))
        logs = _play(tmp_path, *bots, sandbox=mode)
        said = _lines(logs, "leaving", "leaving: ")
        assert said, f"--sandbox {mode}: no last line in the bot's log"
        assert all(int(line.split()[1]) > 0 for line in said)  # it played, then left on its own


def _own_pid() -> int:
    import os  # noqa: PLC0415

    return os.getpid()


@pytest.mark.slow
@needs_bwrap
def test_no_bot_process_is_dealt_a_board_it_has_seen(tmp_path: Path) -> None:
    shutil.rmtree("/tmp/nap-memory-bot", ignore_errors=True)  # the bot's channel between processes  # noqa: S108
    try:
        seen = {}
        for mode in ("off", "on"):
            logs = _play(
                tmp_path,
                _entry("memory", "memory_bot.py"),
                example_bot("random"),
                example_bot("peel"),
                sandbox=mode,
                sessions=9,
            )
            seen[mode] = len(_lines(logs, "memory", "memory: board seen again"))
            assert _lines(logs, "memory", "memory: ") != []  # it played and said so
    finally:
        shutil.rmtree("/tmp/nap-memory-bot", ignore_errors=True)  # noqa: S108
    assert seen["off"] > 0  # its processes share /tmp without a sandbox: memory works there
    assert seen["on"] == 0


def test_a_bot_that_remembers_boards_sees_them_again_in_one_process() -> None:
    """The memory bot's detector works: one process (in process play) is dealt every board k times."""
    import memory_bot  # noqa: PLC0415 - tests/bots_sandbox is on sys.path for this test only

    [block] = schedule(("memory", "random", "peel"), table_size=3, sessions=3, seed=3)
    run = BlockRun(
        tournament=1,
        index=0,
        board_seed=block.board_seed,
        bots=block.bots,
        profile=DEFAULT_PROFILE,
        time_limits=TimeLimits(),
        rotations=(0, 1, 2),
    )
    before = memory_bot._seen_again  # noqa: SLF001
    factories = {
        "memory": memory_bot.MemoryBot,
        **{name: example_bot(name).make_bot() for name in ("random", "peel")},
    }
    play_block_in_process(run, factories)
    assert memory_bot._seen_again > before  # noqa: SLF001


@pytest.mark.slow
@needs_bwrap
def test_a_bot_over_its_memory_limit_is_stopped_with_the_reason(tmp_path: Path) -> None:
    hog = _entry("hog", "hog_bot.py", "memory")
    logs = _play(
        tmp_path,
        hog,
        example_bot("random"),
        example_bot("peel"),
        sandbox="on",
        bot_limits=BotLimits(memory_mb=256),
    )
    said = "\n".join(_lines(logs, "hog", "---"))
    assert "it reached its memory limit (256 MiB, --bot-memory)" in said


@pytest.mark.slow
def test_without_a_seed_each_run_deals_its_own_secret_cards_and_resumes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs with no --seed: different seeds and boards, hidden until finished; each resumes its own."""
    monkeypatch.delenv("NAP_SEED")  # the suite's seed (tests/conftest.py): the default is what is tested
    db, out = tmp_path / "nap.db", tmp_path / "out"
    real_record = Store.record_session
    recorded: list[int] = []

    def full_after_two(self: Store, result: SessionResult, *, log: bytes) -> int:
        if len(recorded) == 2:
            msg = "database or disk is full"
            raise StoreError(msg)
        recorded.append(result.tournament)
        return real_record(self, result, log=log)

    run = ("tournament", "run", "-n", "6", "-k", "3", "-w", "1", "--sandbox", "off", "--db", db, "--out", out)
    bots = ("--bot", "random", "--bot", "peel", "--bot", "random-2=random")
    monkeypatch.setattr(Store, "record_session", full_after_two)
    for _ in range(2):
        recorded.clear()
        result = CliRunner().invoke(main, [str(arg) for arg in (*run, *bots)])
        assert result.exit_code == 1
    for tournament in (1, 2):
        status = CliRunner().invoke(
            main, ["tournament", "status", str(tournament), "--db", str(db), "--json"]
        )
        assert json.loads(status.stdout)["seed"] is None  # interrupted: still secret
    with Store.open(db) as store:
        seeds = {t: store.tournament(t).seed for t in (1, 2)}
        boards = {t: [block.board_seed for block in store.blocks(t)] for t in (1, 2)}
    assert seeds[1] != seeds[2]
    assert set(boards[1]).isdisjoint(boards[2])
    monkeypatch.setattr(Store, "record_session", real_record)
    for tournament in (1, 2):
        resumed = CliRunner().invoke(
            main,
            ["tournament", "resume", str(tournament), "--sandbox", "off", "--db", str(db), "--out", str(out)],
        )
        assert resumed.exit_code == 0, resumed.output
        status = CliRunner().invoke(
            main, ["tournament", "status", str(tournament), "--db", str(db), "--json"]
        )
        assert json.loads(status.stdout)["seed"] == seeds[tournament]  # finished: shown
    with Store.open(db) as store:
        for tournament in (1, 2):
            played = {r.board_seed for r in store.session_results(tournament)}
            assert played == set(boards[tournament])
            assert len(store.session_results(tournament)) == 6


@pytest.mark.slow
def test_the_sandboxs_first_program_sets_the_limits_then_starts_the_bot() -> None:
    """sandbox_init.py: the limits it is given are the bot's; a command it cannot start is one line, 127."""
    init = str(Path(sandboxing.__file__).with_name("sandbox_init.py"))
    kinds = "r.RLIMIT_DATA, r.RLIMIT_NPROC, r.RLIMIT_NOFILE"
    report = f"import resource as r; print([r.getrlimit(k)[0] for k in ({kinds})])"
    done = subprocess.run(
        [PYTHON, init, str(512 << 20), "300", "100", "-1", "--", PYTHON, "-c", report],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, str([512 << 20, 300, 100]))
    missing = subprocess.run(
        [PYTHON, init, str(512 << 20), "300", "100", "-1", "--", "no-such-nap-bot"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 127
    assert missing.stderr == "nap sandbox: cannot start no-such-nap-bot: No such file or directory\n"


@pytest.mark.slow
def test_the_standings_say_whether_the_bots_ran_isolated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--sandbox off, or auto without bubblewrap (one warning line): standings.json and status say so."""
    bots = ("--bot", "random", "--bot", "peel", "--bot", "random-2=random")
    base = (
        "tournament",
        "run",
        "-n",
        "3",
        "-k",
        "3",
        "-w",
        "1",
        "--db",
        tmp_path / "nap.db",
        "--out",
        tmp_path / "out",
    )
    off = CliRunner().invoke(main, [str(arg) for arg in (*base, *bots, "--sandbox", "off")])
    assert off.exit_code == 0, off.output
    monkeypatch.setattr(sandboxing, "sandbox_problem", lambda: "bubblewrap (bwrap) is not installed")
    auto = CliRunner().invoke(main, [str(arg) for arg in (*base, *bots)])
    assert auto.exit_code == 0, auto.output
    assert "bots not isolated: bubblewrap (bwrap) is not installed; install bubblewrap" in auto.stderr
    for tournament, reason in ((1, "--sandbox off"), (2, "bubblewrap (bwrap) is not installed")):
        about = json.loads((tmp_path / "out" / f"t{tournament}" / "standings.json").read_text())["tournament"]
        assert (about["isolation"]["isolated"], about["isolation"]["reason"]) == (False, reason)
        status = CliRunner().invoke(
            main, ["tournament", "status", str(tournament), "--db", str(tmp_path / "nap.db")]
        )
        assert f"bots not isolated: {reason}" in status.output
        assert (
            f"Bots not isolated: {reason}"
            in (tmp_path / "out" / f"t{tournament}" / "standings.md").read_text()
        )


@pytest.mark.slow
@needs_bwrap
def test_an_isolated_tournament_says_so_with_its_limits(tmp_path: Path) -> None:
    args = ("tournament", "run", "-n", "3", "-k", "3", "-w", "1", "--sandbox", "on", "--bot-memory", "1024")
    bots = ("--bot", "random", "--bot", "peel", "--bot", "random-2=random")
    where = ("--db", tmp_path / "nap.db", "--out", tmp_path / "out")
    result = CliRunner().invoke(main, [str(arg) for arg in (*args, *bots, *where)])
    assert result.exit_code == 0, result.output
    about = json.loads((tmp_path / "out" / "t1" / "standings.json").read_text())["tournament"]
    isolation = about["isolation"]
    contained, containment = isolation.pop("contained"), isolation.pop("containment")
    assert contained is (containment_problem() is None)
    assert containment is None if contained else containment_problem() in containment
    assert isolation.pop("clocks") == dict.fromkeys(("random", "peel", "random-2"), "cpu")
    assert isolation == {
        "isolated": True,
        "reason": None,
        "sandbox": "on",
        "bot_limits": {"memory_mb": 1024, "processes": 256, "open_files": 256},
    }
