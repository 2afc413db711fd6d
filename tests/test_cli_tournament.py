"""The `nap` command end to end: tournaments, bot check/submit, logs, and their errors.

Real bot processes and a real referee; the tournaments are small so the file runs fast.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tournaments.cli import main


def nap(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


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
    standings = json.loads((out / "standings.json").read_text(encoding="utf-8"))
    names = {bot["bot"] for bot in standings["bots"]}
    assert names == {"peel", "random", "peel-2", "random-2"}
    assert (out / "standings.html").read_text(encoding="utf-8").count("<svg") == 1
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
    assert (tmp_path / "again" / "standings.md").exists()
    code, out = nap("log", "list", "--db", str(db), "--bot", "peel")
    assert code == 0
    assert "12 of 12 sessions" in out
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
def test_log_verify_catches_a_tampered_database(played: tuple[Path, Path], tmp_path: Path) -> None:
    """Changing a stored result makes `nap log verify` report the mismatch and exit 1."""
    db, _ = played
    copy = tmp_path / "copy.db"
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    with sqlite3.connect(copy) as conn:
        conn.execute("update seat_results set chips = chips + 1 where session_id = 1 and seat = 0")
    code, out = nap("log", "verify", "--db", str(copy))
    assert code == 1
    assert "session 1: database chips" in out


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
    code, out = nap("bot", "submit", str(folder), "-n", "3", "--db", db)
    assert code == 0, out
    assert "registered as bot 1" in out
    code, out = nap("bot", "submit", str(folder), "-n", "3", "--db", db)
    assert "already registered as bot 1" in out
    (folder / "bot.py").write_text(
        (folder / "bot.py").read_text(encoding="utf-8") + "\n# v2\n", encoding="utf-8"
    )
    code, out = nap("bot", "submit", str(folder), "-n", "3", "--db", db)
    assert "registered as bot 2" in out
    code, out = nap("bot", "list", "--db", db)
    assert out.count("scaffolded") == 2
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


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_serve_plays_a_tournament_with_a_remote_bot(tmp_path: Path) -> None:
    """`nap serve` listens on a port; a bot started elsewhere with its token joins and plays."""
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
            "60",
            "--db",
            str(db),
            "--out",
            str(tmp_path / "out"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    env = {**os.environ, "NAP_REFEREE": f"127.0.0.1:{port}", "NAP_TOKEN": "secret-token"}
    remote = subprocess.Popen([sys.executable, "-m", "clients.bots.random_bot"], env=env)
    try:
        output, _ = server.communicate(timeout=120)
    finally:
        remote.wait(timeout=30)
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
