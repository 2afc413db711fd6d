"""The `nap` command end to end: tournaments, bot check/submit, logs, and their errors.

Real bot processes and a real referee; the tournaments are small so the file runs fast.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner, Result

from tournaments.cli import main
from tournaments.cli.serve import serve
from tournaments.cli.tournament import tournament_run
from tournaments.errors import StoreError
from tournaments.play.executors.base import Usage
from tournaments.play.executors.record import record_usage
from tournaments.store.database import Store
from tournaments.store.logs import decode_log, read_log

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tournaments.results import SessionResult


def nap(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def invoke(*args: str | Path) -> Result:
    """Run `nap` in this process: stdout and stderr apart, exceptions caught by click's runner."""
    return CliRunner().invoke(main, [str(arg) for arg in args])


def nap_process(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run `nap` as another process, as a second terminal would."""
    return subprocess.run(
        [sys.executable, "-m", "tournaments.cli", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def copy_database(source: Path, target: Path) -> None:
    with closing(sqlite3.connect(source)) as reading, closing(sqlite3.connect(target)) as writing:
        reading.backup(writing)


def stored(db: Path, query: str) -> object:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(query).fetchone()[0]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One small tournament of the built-in bots, shared by the read-only tests below."""
    root = tmp_path_factory.mktemp("played")
    db, out = root / "nap.db", root / "out"
    code, output = nap("tournament", "run", "-n", "12", "--db", str(db), "--out", str(out), "--seed", "5")
    assert code == 0, output
    return db, out


@pytest.mark.slow
def test_tournament_run_with_no_bot_flags_plays_the_built_in_bots(played: tuple[Path, Path]) -> None:
    """`nap tournament run` needs no configuration: it plays, persists and publishes standings."""
    db, out = played
    standings = json.loads((out / "t1" / "standings.json").read_text(encoding="utf-8"))
    names = {bot["bot"] for bot in standings["bots"]}
    assert names == {"peel", "random", "peel-2", "random-2"}
    assert (out / "t1" / "standings.html").read_text(encoding="utf-8").count("<svg") == 1
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from sessions").fetchone()[0] == 12


@pytest.mark.slow
def test_list_status_standings_and_log_commands(played: tuple[Path, Path], tmp_path: Path) -> None:
    """The read commands work on a finished tournament: list, status, standings, log list/show/verify/html."""
    db, _ = played
    code, out = nap("tournament", "list", "--db", str(db))
    assert code == 0
    assert "12/12" in out
    code, out = nap("tournament", "status", "1", "--db", str(db))
    assert code == 0
    assert "finished" in out
    code, out = nap("standings", "1", "--db", str(db), "--out", str(tmp_path / "again"))
    assert code == 0
    assert (tmp_path / "again" / "t1" / "standings.md").exists()
    code, out = nap("log", "list", "--db", str(db), "--bot", "peel")
    assert code == 0
    assert "sessions 1-12 of those matching" in out
    code, out = nap("log", "list", "--db", str(db), "--bot", "peel", "--fault", "late")
    assert code == 0
    assert out.strip() == "no session matches"
    code, out = nap("log", "show", "1", "--db", str(db), "--seat", "2")
    assert code == 0
    assert "as seat 2" in out
    assert "hidden" in out
    code, out = nap("log", "verify", "--db", str(db))
    assert code == 0
    assert "12 match, 0 mismatch" in out
    page = tmp_path / "replay.html"
    code, out = nap("log", "html", "1", "--db", str(db), "-o", str(page))
    assert code == 0
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.slow
def test_a_moved_or_copied_database_verifies_alone(played: tuple[Path, Path], tmp_path: Path) -> None:
    """The database holds its logs: copied, then moved, it verifies with nothing else beside it.

    ``nap log export`` writes the logs out as plain files, byte for byte the stored ones.
    """
    db, _ = played
    copied, moved = tmp_path / "copied" / db.name, tmp_path / "moved" / db.name
    copied.parent.mkdir()
    shutil.copy(db, copied)  # a closed database is one file
    moved.parent.mkdir()
    copied.rename(moved)
    for database in (db, moved):
        code, out = nap("log", "verify", "--db", str(database))
        assert code == 0, out
        assert "12 match, 0 mismatch" in out
    assert sorted(p.name for p in moved.parent.iterdir() if not p.name.startswith(f"{db.name}-")) == [db.name]
    exported = tmp_path / "exported"
    code, out = nap("log", "export", "--db", str(moved), "--to", str(exported))
    assert code == 0, out
    assert f"exported 12 session logs to {exported}/" in out
    files = sorted(exported.glob("t1/b*-r*.json.gz"))
    assert len(files) == 12
    with Store.open(moved) as store:
        for row in store.find_sessions():
            file = exported / "t1" / f"b{row.block}-r{row.rotation}.json.gz"
            assert file.read_bytes() == store.log(row.id)
            assert read_log(file)["rotation"] == row.rotation


@pytest.mark.slow
def test_log_verify_catches_a_tampered_database(played: tuple[Path, Path], tmp_path: Path) -> None:
    """Changing a stored result makes `nap log verify` report the mismatch and exit 1."""
    db, _ = played
    shutil.copytree(db.parent, tmp_path / "copy")  # the database with its logs
    copy = tmp_path / "copy" / db.name
    with sqlite3.connect(copy) as conn:
        conn.execute("update seat_results set chips = chips + 1 where session_id = 1 and seat = 0")
    code, out = nap("log", "verify", "--db", str(copy))
    assert code == 1
    assert "session 1: database chips" in out


@pytest.mark.slow
def test_a_log_lost_before_the_upgrade_is_reported_and_the_others_still_verify_and_export(
    played: tuple[Path, Path], tmp_path: Path
) -> None:
    """A session without its log (gone before the upgrade): one line for it, and the rest go on."""
    db, _ = played
    copy = tmp_path / db.name
    copy_database(db, copy)
    with closing(sqlite3.connect(copy)) as conn, conn:
        conn.execute("DELETE FROM session_logs WHERE session_id = 3")
    result = invoke("log", "verify", "--db", copy)
    assert result.exit_code == 1
    assert "session 3: session 3 has no log in" in result.stdout
    assert "verified 12 sessions: 11 match, 1 mismatch" in result.stdout
    exported = tmp_path / "exported"
    result = invoke("log", "export", "--db", copy, "--to", exported)
    assert result.exit_code == 1
    assert result.stderr.startswith("session 3 has no log in ")
    assert "exported 11 session logs" in result.stdout
    assert len(list(exported.glob("t1/*.json.gz"))) == 11


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("log", "show", "999"), "unknown session: 999"),
        (("tournament", "status", "42"), "unknown tournament: 42"),
        (("tournament", "resume", "42"), "unknown tournament: 42"),
        (("tournament", "run", "--bot", "nobody", "-n", "3"), "unknown bot 'nobody'"),
    ],
)
@pytest.mark.slow
def test_unknown_ids_and_bots_are_one_line_errors(
    played: tuple[Path, Path], args: tuple[str, ...], message: str
) -> None:
    """An unknown session, tournament or bot: one line, exit status 1."""
    db, _ = played
    code, out = nap(*args, "--db", str(db))
    assert code == 1
    assert message in out
    assert len(out.strip().splitlines()) == 1


def _bot_folder(root: Path, name: str, command: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "nap-bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\ncommand = {command}\n', encoding="utf-8"
    )
    return folder


@pytest.mark.slow
def test_a_bot_command_that_does_not_start_is_a_clear_error(tmp_path: Path) -> None:
    """A manifest whose command does not exist: one line naming the bot, nothing stored as played."""
    folder = _bot_folder(tmp_path, "ghost", '["no-such-program-here"]')
    code, out = nap(
        "tournament",
        "run",
        "--bot",
        str(folder),
        "--bot",
        "peel",
        "--bot",
        "random",
        "-n",
        "3",
        "--db",
        str(tmp_path / "t.db"),
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 1
    assert "ghost" in out
    assert "not found" in out


@pytest.mark.slow
def test_a_bot_that_never_connects_is_a_clear_error(tmp_path: Path) -> None:
    """A bot process that runs but never connects fails the start within the connect timeout."""
    folder = _bot_folder(tmp_path, "mute", f'["{sys.executable}", "-c", "import time; time.sleep(30)"]')
    code, out = nap(
        "tournament",
        "run",
        "--bot",
        str(folder),
        "--bot",
        "peel",
        "--bot",
        "random",
        "-n",
        "3",
        "--connect-timeout",
        "2",
        "--db",
        str(tmp_path / "t.db"),
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 1
    assert "mute" in out
    assert "did not connect" in out


@pytest.mark.slow
def test_bot_new_check_submit_list(tmp_path: Path) -> None:
    """A scaffolded bot passes its check, registers once per content hash, and shows in the list."""
    db = str(tmp_path / "nap.db")
    code, out = nap("bot", "new", "scaffolded", "--dir", str(tmp_path))
    assert code == 0, out
    folder = tmp_path / "scaffolded"
    code, out = nap("bot", "check", str(folder), "-n", "3")
    assert code == 0, out
    assert "verdict: PASS" in out
    assert "p50" in out
    assert "; its own CPU: p50 " in out  # where it spends its time, on the clock it is judged by
    code, out = nap("bot", "submit", str(folder), "-n", "3", "--db", db)
    assert code == 0, out
    assert "submitted as bot 1" in out
    code, out = nap("bot", "submit", str(folder), "-n", "3", "--db", db)
    assert "already submitted as bot 1" in out
    (folder / "bot.py").write_text(
        (folder / "bot.py").read_text(encoding="utf-8") + "\n# v2\n", encoding="utf-8"
    )
    code, out = nap("bot", "submit", str(folder), "-n", "3", "--db", db)
    assert "submitted as bot 2" in out
    code, out = nap("bot", "list", "--db", db)
    rows = [line.split("\t") for line in out.splitlines() if "\t" in line]  # no terminal: tab-separated
    names = [cells[1] for cells in rows[1:]]
    assert names.count("scaffolded") == 2
    code, out = nap(
        "tournament",
        "run",
        "--bot",
        "scaffolded",
        "--bot",
        "peel",
        "--bot",
        "random",
        "-n",
        "3",
        "--db",
        db,
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 0, out


@pytest.mark.slow
def test_bot_check_fails_a_bot_that_answers_illegally(tmp_path: Path) -> None:
    """A bot whose every answer is illegal gets a FAIL verdict with its faults counted, exit status 1."""
    script = Path(__file__).parent / "bots" / "illegal_bot.py"
    folder = _bot_folder(tmp_path, "cheat", f'["{sys.executable}", "{script}"]')
    code, out = nap("bot", "check", str(folder), "-n", "3")
    assert code == 1
    assert "illegal" in out
    assert "verdict: FAIL" in out


@pytest.mark.slow
def test_nap_tournament_run_help_is_useful() -> None:
    """`--help` names every flag a user needs: bots, table size, sessions, seed, profile, db, out."""
    done = subprocess.run(
        [sys.executable, "-m", "tournaments.cli", "tournament", "run", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    for flag in (
        "--bot",
        "--table-size",
        "--sessions",
        "--seed",
        "--profile",
        "--concurrency",
        "--db",
        "--out",
    ):
        assert flag in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("folder", "tool"), [("clients/c", "cc"), ("clients/node", "npm")])
def test_bot_check_accepts_the_other_language_examples_as_they_are(folder: str, tool: str) -> None:
    """`nap bot check` builds and passes the C (stdio bridge) and Node.js (gRPC) example bots."""
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed here")
    code, out = nap("bot", "check", str(Path(__file__).parent.parent / folder), "-n", "3")
    assert code == 0, out
    assert "faults: none" in out
    assert "verdict: PASS" in out


def _until_listening(lines: Iterator[str] | None) -> str:
    """What the command printed up to the line saying its referee listens (its readiness signal)."""
    assert lines is not None
    said = []
    for line in lines:
        said.append(line)
        if "referee listening on" in line:
            return "".join(said)
    pytest.fail(f"the referee never said it listens: {''.join(said)}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_serve_plays_a_tournament_with_a_remote_bot(tmp_path: Path) -> None:
    """`nap serve` listens on a port; a bot started elsewhere with its token joins and plays.

    The bot starts once the command says it listens (a bot tries to connect for 15 s, which
    a busy machine may need just to start the command), and the command waits for it long.
    """
    port = _free_port()
    db = tmp_path / "served.db"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tournaments.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--remote",
            "faraway=secret-token",
            "--bot",
            "peel",
            "--bot",
            "random",
            "-k",
            "3",
            "-n",
            "3",
            "--wait",
            "600",
            "--db",
            str(db),
            "--out",
            str(tmp_path / "out"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        said = _until_listening(server.stdout)
        env = {**os.environ, "NAP_REFEREE": f"127.0.0.1:{port}", "NAP_TOKEN": "secret-token"}
        remote = subprocess.Popen([sys.executable, "-m", "clients.bots.random_bot"], env=env)
        rest, _ = server.communicate(timeout=900)
        remote.wait(timeout=120)
    finally:
        server.kill()
    output = said + rest
    assert server.returncode == 0, output
    assert "faraway" in output
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from sessions").fetchone()[0] == 3


def test_serve_on_a_port_in_use_is_a_one_line_error(tmp_path: Path) -> None:
    """A port already taken: one line, exit status 1, no tournament stored."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out = nap(
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--remote",
            "x",
            "--db",
            str(tmp_path / "t.db"),
        )
    assert code == 1
    assert out.strip() == f"Error: cannot listen on 127.0.0.1:{port}: the port is in use"
    assert not (tmp_path / "t.db").exists()


@pytest.mark.slow
def test_a_locked_database_is_a_one_line_error_and_keeps_its_data(
    played: tuple[Path, Path], tmp_path: Path
) -> None:
    """Another process holding the database: `nap tournament run` says so in one line; nothing is lost."""
    db, _ = played
    copy = tmp_path / "locked.db"
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    holder = sqlite3.connect(copy, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "tournaments.cli",
                "tournament",
                "run",
                "-n",
                "3",
                "--db",
                str(copy),
                "--out",
                str(tmp_path / "o"),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
    finally:
        holder.rollback()
        holder.close()
    assert done.returncode == 1
    assert done.stderr.strip() == f"Error: {copy} is locked by another process"
    with sqlite3.connect(copy) as conn:
        assert conn.execute("select count(*) from sessions").fetchone()[0] == 12


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_a_full_disk_mid_run_is_one_line_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """The database fills up mid-run (SQLITE_FULL, from its page limit as from a full disk):
    one line ending with the command that resumes; every session committed before it is kept,
    the tournament is marked interrupted, and that command plays the rest.

    Past the limit, the first session that needs a new page fails (200 sessions need many);
    the status is updated in place, which a full database still allows."""
    db, out = tmp_path / "nap.db", tmp_path / "out"
    real_record = Store.record_session
    committed: list[tuple[int, int]] = []

    def record(self: Store, result: SessionResult, *, log: bytes) -> int:
        if len(committed) == 4:  # from now on, no page more: the disk is full
            pages = self._conn.execute("PRAGMA page_count").fetchone()[0]
            self._conn.execute(f"PRAGMA max_page_count = {pages}")
        session = real_record(self, result, log=log)
        committed.append((result.block, result.rotation))
        return session

    monkeypatch.setattr(Store, "record_session", record)
    result = invoke("tournament", "run", "-n", "200", "--workers", str(workers), "--db", db, "--out", out)
    monkeypatch.undo()
    assert result.exit_code == 1, result.output
    resume = f"nap tournament resume 1 --db {db} --out {out.resolve()}"
    assert result.stderr.splitlines() == [
        (
            f"Error: {db}: database or disk is full (free some space); tournament 1 stopped after "
            f"{len(committed)} of 200 sessions; to play the rest: {resume}"
        )
    ]
    assert 4 <= len(committed) < 200
    with Store.open(db) as store:
        assert store.finished_keys(1) == set(committed)
        assert store.tournament(1).status == "interrupted"
    result = invoke(*resume.split()[1:])
    assert result.exit_code == 0, result.output
    with Store.open(db) as store:
        assert store.tournament(1).status == "finished"
        assert set(committed) < store.finished_keys(1)
        assert len(store.session_results(1)) == 200


@pytest.mark.slow
def test_a_damaged_database_is_refused_before_anything_goes_into_it(
    played: tuple[Path, Path], tmp_path: Path
) -> None:
    """A damaged page: `run` and `resume` each say so in one line and write nothing to the file."""
    copy = tmp_path / "damaged.db"
    copy_database(played[0], copy)
    page_size = int(stored(copy, "PRAGMA page_size"))  # type: ignore[call-overload]
    root = int(stored(copy, "SELECT rootpage FROM sqlite_master WHERE name = 'seat_results'"))  # type: ignore[call-overload]
    data = bytearray(copy.read_bytes())
    data[(root - 1) * page_size] = 0xFF  # no such b-tree page type: a bad sector
    copy.write_bytes(bytes(data))
    for command in (("tournament", "run", "-n", "3"), ("tournament", "resume", "1")):
        result = invoke(*command, "--db", copy, "--out", tmp_path / "out")
        assert result.exit_code == 1, command
        [line] = result.stderr.splitlines()
        assert re.fullmatch(
            rf"Error: {re.escape(str(copy))} is damaged \(.+\): "
            r"restore it from a backup, or choose another file with --db",
            line,
        ), line
        assert copy.read_bytes() == bytes(data), command
    assert not (tmp_path / "out").exists()


HOLD_THE_LOCK = """
import sys
from pathlib import Path
from tournaments.play.locks import tournament_lock

with tournament_lock(Path(sys.argv[1]), int(sys.argv[2])):
    print("locked", flush=True)
    sys.stdin.read()
"""


@pytest.mark.slow
def test_resume_is_refused_while_another_process_plays_and_allowed_once_it_is_killed(
    played: tuple[Path, Path], tmp_path: Path
) -> None:
    """Another process holds the tournament: resume touches nothing; after its kill -9, resume plays."""
    db, out = tmp_path / "copy.db", tmp_path / "out"
    copy_database(played[0], db)
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE tournaments SET status = 'interrupted' WHERE id = 1")
    with subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(db), "1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline() == "locked\n"
            result = invoke("tournament", "resume", "1", "--db", db, "--out", out)
            assert result.exit_code == 1
            assert result.stderr.splitlines() == [
                (
                    f"Error: tournament 1 is being played by another process (pid {holder.pid}): "
                    "wait for it to finish, or stop that process before resuming"
                )
            ]
            assert stored(db, "SELECT status FROM tournaments WHERE id = 1") == "interrupted"
        finally:
            holder.kill()
    result = invoke("tournament", "resume", "1", "--db", db, "--out", out)
    assert result.exit_code == 0, result.output
    assert stored(db, "SELECT status FROM tournaments WHERE id = 1") == "finished"


@pytest.mark.slow
def test_a_second_resume_of_a_running_tournament_is_refused_and_a_new_run_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a run plays tournament 1, `resume 1` elsewhere is refused; another `run` plays its own."""
    db, out = tmp_path / "nap.db", tmp_path / "out"
    real_record = Store.record_session
    elsewhere: list[subprocess.CompletedProcess[str]] = []

    def record(self: Store, result: SessionResult, *, log: bytes) -> int:
        if not elsewhere:  # tournament 1 is being played here, right now
            elsewhere.append(nap_process("tournament", "resume", "1", "--db", db, "--out", out))
            elsewhere.append(
                nap_process("tournament", "run", "-n", "4", "-w", "1", "--db", db, "--out", tmp_path / "b")
            )
        return real_record(self, result, log=log)

    monkeypatch.setattr(Store, "record_session", record)
    result = invoke("tournament", "run", "-n", "8", "--workers", "1", "--db", db, "--out", out)
    monkeypatch.undo()
    assert result.exit_code == 0, result.output
    refused, other = elsewhere
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [
        (
            f"Error: tournament 1 is being played by another process (pid {os.getpid()}): "
            "wait for it to finish, or stop that process before resuming"
        )
    ]
    assert other.returncode == 0, other.stderr
    with Store.open(db) as store:
        assert [(row.id, row.status) for row in store.tournaments()] == [(1, "finished"), (2, "finished")]
        assert len(store.session_results(1)) == 8
        assert len(store.session_results(2)) == 4


@pytest.mark.slow
def test_run_names_its_tournament_first_and_last_and_keeps_margin_and_bank(tmp_path: Path) -> None:
    """The first line gives the id and the resume command, the last the id; limits are stored and shown."""
    db, out = tmp_path / "nap.db", tmp_path / "out"
    result = invoke(
        "tournament", "run", "-n", "4", "-w", "1", "--margin-ms", "250", "--bank-ms", "2000", "--db", db,
        "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "tournament 1: heather, 4 seats, peel, random, peel-2, random-2, 4 sessions "
        f"(if it stops: nap tournament resume 1 --db {db} --out {out.resolve()})"
    )
    assert lines[-1] == (
        f"tournament 1 finished, 4 sessions: standings.md, .json and .html written to {out / 't1'}/"
    )
    limits = json.loads(str(stored(db, "SELECT config FROM tournaments WHERE id = 1")))["time_limits"]
    assert limits == {"decision_ms": 1000, "session_bank_ms": 2000, "margin_ms": 250}
    result = invoke("tournament", "status", "1", "--db", db)
    assert (
        "  time limits: 1000 ms per decision, bank 2000 ms per seat and session, margin 250 ms"
        in result.stdout.splitlines()
    )


def test_margin_and_bank_options_say_what_they_do() -> None:
    """`run` and `serve` take --margin-ms and --bank-ms, each with a one-line help."""
    for command in (tournament_run, serve):
        helps = {param.name: getattr(param, "help", None) or "" for param in command.params}
        assert "late" in helps["margin_ms"]
        assert "not told" in helps["margin_ms"]
        assert "bank" in helps["bank_ms"]
        assert "\n" not in helps["margin_ms"] + helps["bank_ms"]


@pytest.mark.slow
def test_serve_stores_margin_and_bank_and_says_how_to_resume(tmp_path: Path) -> None:
    """Remote bots that never come: one line ending with the resume command; the limits were stored."""
    db, out = tmp_path / "served.db", tmp_path / "out"
    result = invoke(
        "serve", "--host", "127.0.0.1", "--port", "0", "--remote", "a", "--remote", "b", "--remote", "c",
        "-k", "3", "-n", "3", "--wait", "0.2", "--margin-ms", "40", "--bank-ms", "900", "--db", db,
        "--out", out,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [
        (
            "Error: remote bot a did not connect within 0.2 s; tournament 1 stopped after 0 of 3 sessions; "
            f"to play the rest: nap tournament resume 1 --db {db} --out {out.resolve()}"
        )
    ]
    assert re.match(
        r"tournament 1: served on port [1-9]\d*: a, b, c, 3 sessions \(if it stops: ", result.stdout
    )
    limits = json.loads(str(stored(db, "SELECT config FROM tournaments WHERE id = 1")))["time_limits"]
    assert limits == {"decision_ms": 1000, "session_bank_ms": 900, "margin_ms": 40}
    assert stored(db, "SELECT status FROM tournaments WHERE id = 1") == "interrupted"


# ---------------------------------------------------------------------------- table variations


SEVEN_SEATS = (
    "peel",
    "random",
    "peel-2=peel",
    "random-2=random",
    "peel-3=peel",
    "random-3=random",
    "peel-4=peel",
)


@pytest.mark.slow
def test_a_seven_card_tournament_at_seven_seats(tmp_path: Path) -> None:
    """`--profile seven-card -k 7`: seven-card sessions stored, shown, verified and ranked.

    The random bots bid Six and Seven (any legal bid is as likely as another), so the
    declarer records of the standings hold them.
    """
    db, out = tmp_path / "nap.db", tmp_path / "out"
    bots = [arg for name in SEVEN_SEATS for arg in ("--bot", name)]
    result = invoke(
        "tournament", "run", "--profile", "seven-card", "-k", "7", "-n", "7", "-w", "1", *bots,
        "--db", db, "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith("tournament 1: seven-card, 7 seats, peel, random")
    standings = json.loads((out / "t1" / "standings.json").read_text(encoding="utf-8"))
    assert len(standings["bots"]) == 7
    declared = {record["contract"] for bot in standings["bots"] for record in bot["declarer"]}
    assert {"six", "seven"} <= declared
    assert declared <= {"three", "misere", "four", "nap", "six", "seven"}
    markdown = (out / "t1" / "standings.md").read_text(encoding="utf-8")
    assert re.search(r"seven \d+/\d+", markdown)
    assert re.search(r"six \d+/\d+", markdown)
    code, text = nap("log", "show", "1", "--db", str(db), "--seat", "0")
    assert code == 0, text
    assert "Nap session: seven-card, 7 seats" in text
    assert "7 cards, hidden" in text  # the others' hands (fewer seats once a random bot is out of chips)
    assert "5 cards" not in text
    code, text = nap("log", "verify", "--db", str(db))
    assert code == 0, text
    assert "7 match, 0 mismatch" in text
    code, text = nap("log", "html", "1", "--db", str(db), "-o", str(tmp_path / "replay.html"))
    assert code == 0, text
    assert '"hand_size":7' in (tmp_path / "replay.html").read_text(encoding="utf-8")


def _house_rules(folder: Path, text: str) -> Path:
    path = folder / "pub.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_table_size_the_profile_does_not_allow_is_one_line_and_stores_nothing(tmp_path: Path) -> None:
    """A 32-card pack deals five cards to at most six: `-k 7` is refused before the database is made."""
    rules = _house_rules(tmp_path, 'name = "pub"\nbase = "full-ladder"\npack_size = 32\nmax_players = 6\n')
    db = tmp_path / "nap.db"
    bots = [arg for name in SEVEN_SEATS for arg in ("--bot", name)]
    code, out = nap(
        "tournament", "run", "--profile", str(rules), "-k", "7", "-n", "7", *bots, "--db", str(db)
    )
    assert code == 1
    assert out.strip() == (
        "Error: table size 7 is not allowed by the rules profile pub: 3 to 6 players "
        "(its 32-card pack deals 5 cards to at most 6)"
    )
    assert not db.exists()
    code, out = nap("tournament", "run", "--profile", "two-to-five", "-k", "7", *bots, "--db", str(db))
    assert code == 1
    assert (
        out.strip() == "Error: table size 7 is not allowed by the rules profile two-to-five: 3 to 6 players"
    )
    assert not db.exists()


@pytest.mark.slow
def test_rules_from_a_relative_file_are_stored_whole(  # noqa: PLR0915 - one story, step by step
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--profile pub.toml` typed in one folder stores the rules themselves, not the file's name.

    With the file deleted, and from another folder, `status`, `resume`, `log verify` and
    `standings` all work and play the house rules (four deals a session). A resume that
    cannot start leaves the stored status as it was, and one with nothing left to play
    leaves a finished tournament's status and time alone.
    """
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    _house_rules(here, 'name = "pub"\nbase = "heather"\ndeals_per_session = 4\n')
    db, out = tmp_path / "nap.db", tmp_path / "out"
    real_record = Store.record_session

    def record(self: Store, result: SessionResult, *, log: bytes) -> int:
        if len(self.finished_keys(result.tournament)) == 3:
            msg = "disk full (a test's)"
            raise StoreError(msg)
        return real_record(self, result, log=log)

    monkeypatch.chdir(here)
    monkeypatch.setattr(Store, "record_session", record)
    flags = ("-n", "8", "-k", "4", "-w", "1", "--seed", "3", "--db", db, "--out", out)
    result = invoke("tournament", "run", "--profile", "pub.toml", *flags)
    monkeypatch.undo()
    assert result.exit_code == 1, result.output
    (here / "pub.toml").unlink()
    monkeypatch.chdir(elsewhere)
    status = invoke("tournament", "status", "1", "--db", db)
    assert status.exit_code == 0, (status.output, status.exception)
    text = status.output
    assert "status interrupted, 3 of 8 sessions" in text
    assert "rules pub: house rules from pub.toml over heather" in text

    monkeypatch.setenv("PATH", "")  # no bubblewrap: `--sandbox on` is refused before the run starts
    result = invoke("tournament", "resume", "1", "--sandbox", "on", "--db", db, "--out", out)
    monkeypatch.undo()
    monkeypatch.chdir(elsewhere)
    assert result.exit_code == 1, result.output
    assert stored(db, "SELECT status FROM tournaments") == "interrupted"

    result = invoke("tournament", "resume", "1", "--db", db, "--out", out)
    assert result.exit_code == 0, result.output
    finished_at = stored(db, "SELECT finished_at FROM tournaments")
    assert stored(db, "SELECT status FROM tournaments") == "finished"
    with Store.open(db) as store:
        assert len(store.session_results(1)) == 8
        logs = [decode_log(store.log(row.id), name="log") for row in store.find_sessions(tournament=1)]
    records = [log["record"] for log in logs]
    assert {len(record["deals"]) for record in records} == {4}  # type: ignore[index]
    code, text = nap("log", "verify", "--db", str(db))
    assert code == 0, text
    assert "8 match, 0 mismatch" in text
    code, text = nap("standings", "1", "--db", str(db), "--out", str(elsewhere / "out"))
    assert code == 0, text
    about = json.loads((elsewhere / "out" / "t1" / "standings.json").read_text(encoding="utf-8"))[
        "tournament"
    ]
    assert about["profile"]["name"] == "pub"
    assert about["profile"]["parameters"]["deals_per_session"] == 4

    result = invoke("tournament", "resume", "1", "--db", db, "--out", out)  # nothing left to play
    assert result.exit_code == 0, result.output
    assert stored(db, "SELECT status FROM tournaments") == "finished"
    assert stored(db, "SELECT finished_at FROM tournaments") == finished_at


@pytest.mark.slow
def test_a_tournament_of_four_deal_sessions_with_a_short_pack(tmp_path: Path) -> None:
    """House rules with `deals_per_session = 4` and a 32-card pack: every session has four deals.

    The logs hold four 32-card decks a session, replay and show; the standings count
    the sessions and their blocks as usual.
    """
    rules = _house_rules(
        tmp_path,
        'name = "pub"\nbase = "heather"\npack_size = 32\nmax_players = 6\ndeals_per_session = 4\n',
    )
    db, out = tmp_path / "nap.db", tmp_path / "out"
    result = invoke(
        "tournament", "run", "--profile", rules, "-k", "3", "-n", "6", "-w", "1",
        "--bot", "peel", "--bot", "random", "--bot", "peel-2=peel", "--db", db, "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    from tournaments.store.logs import decode_log  # noqa: PLC0415

    with Store.open(db) as store:
        rows = store.find_sessions(tournament=1)
        results = store.session_results(1)
        records = [decode_log(store.log(row.id), name="log")["record"] for row in rows]
    assert len(rows) == len(results) == 6
    for record in records:
        assert record["profile"] == "pub"  # type: ignore[index]
        assert record["rules"]["deals_per_session"] == 4  # type: ignore[index]
        decks = [deal["deck"].split() for deal in record["deals"]]  # type: ignore[index]
        assert [len(deck) for deck in decks] == [32] * 4
    standings = json.loads((out / "t1" / "standings.json").read_text(encoding="utf-8"))
    assert {bot["bot"]: bot["sessions"] for bot in standings["bots"]} == {"peel": 6, "random": 6, "peel-2": 6}
    code, text = nap("log", "show", "2", "--db", str(db))
    assert code == 0, text
    assert "Nap session: pub, 3 seats" in text
    assert ", 4 deals" in text
    assert text.count("\nDeal ") == 4
    code, text = nap("log", "verify", "--db", str(db))
    assert code == 0, text
    assert "6 match, 0 mismatch" in text


@pytest.mark.slow
def test_a_pool_tournament_with_rebuys_plays_every_session(tmp_path: Path) -> None:
    """The issue's house rules (Purchase Nap, 10 chips, rebuys) and bots: seed 5 once stopped after 6 of 12.

    A seat far below zero now buys back in with chips; every decline it is offered is
    accepted, live and in the pool summary's replay, and every log verifies.
    """
    rules = _house_rules(tmp_path, 'name = "pub"\nbase = "purchase"\nstarting_chips = 10\nrebuy = true\n')
    db, out = tmp_path / "nap.db", tmp_path / "out"
    result = invoke(
        "tournament", "run", "-p", rules, "-b", "random", "-b", "peel", "-b", "p2=peel", "-k", "3",
        "-n", "12", "--seed", "5", "--db", db, "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "tournament 1 finished, 12 sessions" in result.output
    code, text = nap("log", "verify", "--db", str(db))
    assert code == 0, text
    assert "12 match, 0 mismatch" in text


@pytest.mark.slow
def test_packs_sized_by_the_table_in_tournaments_of_three_and_five_seats(tmp_path: Path) -> None:
    """One house-rules file, `pack_size = "by-table"`: 28-card decks at 3 seats, 32 at 5; logs verify."""
    rules = _house_rules(
        tmp_path, 'name = "pub"\nbase = "peep"\npack_size = "by-table"\ndeals_per_session = 3\n'
    )
    db, out = tmp_path / "nap.db", tmp_path / "out"
    bots = ("--bot", "peel", "--bot", "random", "--bot", "peel-2=peel", "--bot", "random-2=random")
    for seats, sessions in (("3", "3"), ("5", "5")):
        result = invoke(
            "tournament", "run", "--profile", rules, "-k", seats, "-n", sessions, "-w", "1",
            *bots, "--bot", "peel-3=peel", "--db", db, "--out", out,
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    from tournaments.store.logs import decode_log  # noqa: PLC0415

    with Store.open(db) as store:
        records: list[dict[str, Any]] = [
            decode_log(store.log(row.id), name="log")["record"]  # type: ignore[misc]
            for tournament in (1, 2)
            for row in store.find_sessions(tournament=tournament)
        ]
    decks = {
        (record["table_size"], len(deal["deck"].split())) for record in records for deal in record["deals"]
    }
    assert decks == {(3, 28), (5, 32)}
    assert all(record["rules"]["pack_sizes"]["5"] == 32 for record in records)
    code, text = nap("log", "verify", "--db", str(db))
    assert code == 0, text
    assert "8 match, 0 mismatch" in text


@pytest.mark.slow
def test_status_of_an_interrupted_ray_run_resumes_on_ray(played: tuple[Path, Path], tmp_path: Path) -> None:
    """The resume command in `status` carries the flags of the executor that played last."""
    db = tmp_path / "copy.db"
    copy_database(played[0], db)
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE tournaments SET status = 'interrupted' WHERE id = 1")
    plain = invoke("tournament", "status", "1", "--db", db)
    assert plain.exit_code == 0, plain.output
    assert f"resume with: nap tournament resume 1 --db {db}\n" in plain.output
    [started] = [line for line in plain.output.splitlines() if line.startswith("  started ")]
    assert ", stopped " in started, "an interrupted tournament is not said to have finished"
    assert "finished" not in started
    usage = Usage(
        executor="ray",
        workers=2,
        description="2 Ray workers on the Ray cluster at 10.0.0.5:6379",
        resume_flags=("--executor", "ray", "--ray-address", "10.0.0.5:6379"),
    )
    record_usage(db, 1, usage)
    text = invoke("tournament", "status", "1", "--db", db).output
    flags = "--executor ray --ray-address 10.0.0.5:6379"
    assert f"resume with: nap tournament resume 1 --db {db} {flags}" in text
    document = json.loads(invoke("tournament", "status", "1", "--db", db, "--json").stdout)
    assert document["resume"].endswith("--executor ray --ray-address 10.0.0.5:6379")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here to stand for a full disk")
def test_a_bot_log_on_a_full_disk_is_named_and_stops_the_run_resumable(tmp_path: Path) -> None:
    """The line names the log that cannot be written, keeps the stop's promise, and leaves no bot running."""
    db, out = tmp_path / "nap.db", tmp_path / "out"
    (out / "t1" / "bots").mkdir(parents=True)
    (out / "t1" / "bots" / "peel-r0.log").symlink_to("/dev/full")  # No space left on device
    done = subprocess.run(
        [
            sys.executable, "-m", "tournaments.cli", "tournament", "run", "-b", "peel", "-b", "random",
            "-b", "r2=random", "-k", "3", "-n", "3", "-w", "1", "--sandbox", "off",
            "--db", str(db), "--out", str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    resume = f"nap tournament resume 1 --db {db} --out {out}"
    said = (
        f"Error: cannot write {out / 't1' / 'bots' / 'peel-r0.log'}: No space left on device; "
        f"tournament 1 stopped after 0 of 3 sessions; to play the rest: {resume}"
    )
    assert done.stderr.splitlines() == [said], "one line, and no warning of a bot process left behind"
