"""What `nap` prints and writes for people, links and scripts (issue 16).

Failures that explain themselves (a failed build, a bot that dies, too few entrants),
one folder per tournament with what was measured, `--json` documents that parse, plain
progress where there is no terminal. Real bot processes where the subject needs them.
"""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from tournaments.cli import main, reports
from tournaments.cli.progress import PlainProgress, standings_printer
from tournaments.play.practice import CheckReport
from tournaments.report.check import check_lines
from tournaments.results import SeatResult, SessionResult
from tournaments.stats.standings import compute_standings
from tournaments.store.database import Store
from tournaments.words import count

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

DYING_BOT = '''"""Passes every bid, then dies at its first card, saying why on stderr."""

import os
import sys

from clients.sdk import Bot, run
from referee.rules import PASS, Bid, Card, SeatView


class Dying(Bot):
    def bid(self, view: SeatView) -> Bid:
        return PASS

    def play(self, view: SeatView) -> Card:
        print("about to give up: out of ideas", file=sys.stderr, flush=True)
        os._exit(7)


if __name__ == "__main__":
    run(Dying, name="dying", version="1")
'''


def invoke(*args: str | Path) -> Result:
    """Run `nap` in this process; ``stdout`` and ``stderr`` apart."""
    return CliRunner().invoke(main, [str(arg) for arg in args])


def dying_bot(root: Path) -> Path:
    folder = root / "dying"
    folder.mkdir()
    (folder / "bot.py").write_text(DYING_BOT, encoding="utf-8")
    (folder / "nap-bot.toml").write_text(
        'name = "dying"\nversion = "1"\ncommand = ["{python}", "bot.py"]\n', encoding="utf-8"
    )
    return folder


class Played(NamedTuple):
    db: Path
    out: Path
    printed: str
    """What the run printed on stdout."""


@pytest.fixture(scope="module")
def with_faults(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """A small tournament in which one bot dies at its first card: faults, exits, a stderr line."""
    root = tmp_path_factory.mktemp("faults")
    db, out = root / "nap.db", root / "out"
    folder = dying_bot(root)
    result = invoke(
        "tournament", "run", "-b", folder, "-b", "random", "-b", "r2=random", "-n", "3",
        "--decision-ms", "200", "--db", db, "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return Played(db, out, result.stdout)


def _seed(db: Path) -> int:
    """The seed the tournament drew for itself (no --seed given) and stored."""
    with Store.open(db) as store:
        return store.tournament(1).seed


# ---------------------------------------------------------------------------- messages


def test_the_help_keeps_its_quick_start_lines_apart() -> None:
    """`nap --help` shows the quick start one command a line, with no `\\b` marker left in it."""
    text = invoke("--help").output
    assert "\\b" not in text
    lines = [line.strip() for line in text.splitlines()]
    assert "Quick start:" in lines
    assert any(line.startswith("nap bot new mybot") for line in lines)


def test_too_few_entrants_says_how_to_enter_a_bot_twice(tmp_path: Path) -> None:
    """`--bot peel` alone: a tournament needs three entrants, and ALIAS=BOT is how to add them."""
    result = invoke("tournament", "run", "--bot", "peel", "-n", "4", "--db", tmp_path / "t.db")
    assert result.exit_code == 1
    assert "a tournament needs at least 3 entrants, got 1 (peel)" in result.output
    assert "ALIAS=BOT" in result.output
    assert "--bot peel2=peel --bot peel3=peel" in result.output


def test_rules_show_describes_house_rules_by_what_they_change(tmp_path: Path) -> None:
    """A file that drops Blücher and sets Misère 10/5 is not described by its base's words."""
    rules = tmp_path / "pub.toml"
    rules.write_text(
        'name = "pub"\nbase = "full-ladder"\nremove = ["blucher"]\n[contracts.misere]\nwin = 10\nlose = 5\n',
        encoding="utf-8",
    )
    result = invoke("rules", "show", rules)
    assert result.exit_code == 0, result.output
    assert "Misère 3/3" not in result.output
    assert "Blücher 30/15" not in result.output
    assert "House rules over full-ladder" in result.output
    assert "no Blücher" in result.output
    assert "Misère won 10, lost 5 (was 3/3)" in result.output
    assert "Blücher 30/15" in invoke("rules", "show", "full-ladder").output  # the base keeps its own


@pytest.mark.slow
def test_a_failed_build_shows_everything_it_wrote(tmp_path: Path) -> None:
    """The compiler's message, not only its caret line: in bot check (with -v as without) and in a run."""
    folder = tmp_path / "broken"
    folder.mkdir()
    build = (
        "import sys; print('bot.c:3:5: error: expected semicolon', file=sys.stderr); "
        "print('    | ^', file=sys.stderr); sys.exit(1)"
    )
    (folder / "nap-bot.toml").write_text(
        f'name = "broken"\nversion = "1"\ncommand = ["./bot"]\n'
        f'build = ["{sys.executable}", "-c", "{build}"]\n',
        encoding="utf-8",
    )
    run = ("tournament", "run", "-b", folder, "-b", "random", "-b", "r2=random", "--db", tmp_path / "t.db")
    for args in (("bot", "check", folder), ("-v", "bot", "check", folder), run):
        result = invoke(*args)
        assert result.exit_code == 1
        assert "build failed with status 1" in result.output
        assert "error: expected semicolon" in result.output
        assert "| ^" in result.output


# ---------------------------------------------------------------------------- bot check


@pytest.mark.slow
def test_bot_check_on_a_dying_bot_gives_its_exit_status_and_last_words(tmp_path: Path) -> None:
    """The verdict says the process exited with status 7, quotes its stderr, and names the opponents."""
    folder = dying_bot(tmp_path)
    result = invoke("bot", "check", folder, "-n", "3", "--decision-ms", "200", "--no-baseline")
    assert result.exit_code == 1
    assert "dying: 3 sessions against peel, random" in result.stdout
    assert "its process exited on its own, with status 7" in result.stdout
    assert "| about to give up: out of ideas" in result.stdout
    assert "verdict: FAIL (its process exited with status 7" in result.stdout
    result = invoke("bot", "check", folder, "-n", "3", "--decision-ms", "200", "--no-baseline", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["passed"] is False
    assert report["exits"][0] == 7
    assert "about to give up: out of ideas" in report["last_output"]
    assert report["opponents"] == ["peel", "random"]
    assert report["baseline"] is None


@pytest.mark.slow
def test_bot_check_scores_the_bot_against_peel_on_the_same_deals(tmp_path: Path) -> None:
    """Both scores and their paired difference, with its interval; the JSON's numbers agree."""
    assert invoke("bot", "new", "mine", "--dir", tmp_path).exit_code == 0
    # seeded: on secret deals, two blocks may give the same difference, and then no interval
    result = invoke("bot", "check", tmp_path / "mine", "-n", "6", "--seed", "3", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    baseline = report["baseline"]
    assert baseline["bot"] == "peel"
    difference = baseline["difference"]
    assert difference["n"] == 2  # 6 sessions at 3 seats: two blocks, each its own pair
    # equal blocks: the mean of the per-block differences is the difference of the means
    assert difference["mean"] == pytest.approx(report["chips_per_session"] - baseline["chips_per_session"])
    text = invoke("bot", "check", tmp_path / "mine", "-n", "6", "--seed", "3").stdout
    assert "baseline: peel in its seat on the same deals: " in text
    assert re.search(
        r"difference \(mine minus peel\): [+-]\d+\.\d ± \d+\.\d chips/session \(95% interval", text
    )
    assert "verdict: PASS" in text


# ---------------------------------------------------------------------------- tournaments


@pytest.mark.slow
def test_each_tournament_has_its_own_folder_and_latest_points_to_the_newest(tmp_path: Path) -> None:
    """A second tournament leaves the first one's standings and logs alone; `latest` and the index follow."""
    db, out = tmp_path / "nap.db", tmp_path / "out"
    for seed in ("3", "4"):
        result = invoke(
            "tournament", "run", "-b", "random", "-b", "r2=random", "-b", "r3=random", "-n", "3",
            "--seed", seed, "--db", db, "--out", out,
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        if seed == "3":
            first = (out / "t1" / "standings.json").read_text(encoding="utf-8")
    assert (out / "t1" / "standings.json").read_text(encoding="utf-8") == first
    assert not list(out.glob("**/*.json.gz"))  # the logs are in the database
    assert (out / "t2" / "standings.md").exists()
    assert (out / "t2" / "standings.html").exists()
    assert (out / "latest").resolve() == (out / "t2").resolve()
    older = invoke("standings", "1", "--db", db, "--out", out)  # as a run of t1 ending after t2's would
    assert older.exit_code == 0, older.output
    assert (out / "latest").resolve() == (out / "t2").resolve(), "latest stays the newest"
    assert invoke("standings", "--db", db).stdout.startswith("Tournament 2: "), "as nap standings says"
    index = (out / "index.html").read_text(encoding="utf-8")
    assert index.index('href="t2/standings.html"') < index.index('href="t1/standings.html"')  # newest first
    assert not (out / "standings.json").exists()
    assert "written to" in result.output
    assert str(out / "t2") in result.output
    verified = invoke("log", "verify", "--db", db)
    assert verified.exit_code == 0, verified.output
    assert "6 match, 0 mismatch" in verified.output


@pytest.mark.slow
def test_standings_json_says_what_was_measured(with_faults: Played) -> None:
    """Profile, table size, seed, sessions and blocks, limits, executor, bots with hashes, times, version."""
    out = with_faults.out
    data = json.loads((out / "t1" / "standings.json").read_text(encoding="utf-8"))
    about = data["tournament"]
    assert about["format"] == "nap-arena-tournament/2"
    assert about["profile"]["name"] == "heather"
    assert about["profile"]["parameters"]["contracts"]["nap"]["win"] == 5
    assert (about["table_size"], about["seed"], about["blocks"]) == (3, _seed(with_faults.db), 1)
    assert about["sessions"] == {"played": 3, "planned": 3}
    assert about["time_limits"]["decision_ms"] == 200
    assert about["executor"]["executor"] == "local"
    assert about["workers_asked"] is None
    bots = {bot["name"]: bot for bot in about["bots"]}
    assert set(bots) == {"dying", "random", "r2"}
    assert bots["dying"]["version"] == "1"
    assert len(bots["dying"]["content_hash"]) >= 12
    assert about["started_at"].endswith("+00:00")
    assert about["finished_at"] >= about["started_at"]
    assert about["nap_arena_version"]
    assert about["faults"] > 0


@pytest.mark.slow
def test_standings_prints_the_same_table_as_the_run_and_explains_the_rating(
    with_faults: Played,
) -> None:
    """`nap standings` prints the run's standings (not Markdown), with a rating and the caption.

    Here there is no terminal: the plain lines, not the table (which is for a terminal).
    """
    result = invoke("standings", "--db", with_faults.db)
    assert result.exit_code == 0, result.output
    assert "| --- |" not in result.output
    assert "┏━" not in result.output
    assert result.stdout in with_faults.printed
    starts = [line[:3] for line in result.output.splitlines()]
    assert starts.count("1= ") == 2  # one block: rank shared
    assert starts.count("-  ") == 1  # the bot that died at its first card played few of its decisions
    assert "Not ranked: dying (" in " ".join(result.output.split())
    assert "rating" in result.output
    assert "Bradley-Terry" in result.output
    assert "not by how much, so it may order bots differently" in " ".join(result.output.split())


@pytest.mark.slow
def test_json_documents_parse_and_say_their_format(with_faults: Played, tmp_path: Path) -> None:
    """standings, tournament list/status and log list: one JSON document each on stdout."""
    db = with_faults.db
    documents: dict[str, Any] = {}
    for name, args in {
        "standings": ("standings",),
        "list": ("tournament", "list"),
        "status": ("tournament", "status", "1"),
        "sessions": ("log", "list", "--limit", "2"),
    }.items():
        result = invoke(*args, "--db", db, "--json")
        assert result.exit_code == 0, result.output
        documents[name] = json.loads(result.stdout)
    assert documents["standings"]["format"] == "nap-arena-standings/3"
    assert {bot["bot"] for bot in documents["standings"]["bots"]} == {"dying", "random", "r2"}
    assert documents["standings"]["tournament"]["id"] == 1
    assert documents["list"]["tournaments"][0]["sessions"] == {"played": 3, "planned": 3}
    assert documents["status"]["status"] == "finished"
    assert documents["status"]["time_limits"] == {
        "decision_ms": 200,
        "session_bank_ms": 0,
        "margin_ms": 0,
        "backstop_ms": 10_000,
    }
    assert documents["sessions"]["format"] == "nap-arena-sessions/2"
    assert documents["sessions"]["more"] is True
    assert [s["rotation"] for s in documents["sessions"]["sessions"]] == [0, 1]
    again = invoke("standings", "--db", db, "--json", "--out", tmp_path / "again")
    assert json.loads(again.stdout)["title"] == documents["standings"]["title"]
    assert (tmp_path / "again" / "t1" / "standings.json").exists()


@pytest.mark.slow
def test_status_reads_as_words(with_faults: Played) -> None:
    """No `None`, no Python dict: workers, limits and times in words, times in UTC."""
    db = with_faults.db
    text = invoke("tournament", "status", "--db", db).output
    assert "None" not in text
    assert "{" not in text
    assert "workers: one per two cores asked" in text
    assert "time limits: 200 ms per decision" in text
    assert re.search(r"started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, finished ", text)
    assert f"3 seats, seed {_seed(db)}, rules heather" in text  # finished: the secret seed is shown


@pytest.mark.slow
def test_log_show_lists_the_faults_and_the_bots_exit(with_faults: Played) -> None:
    """Each fault at its deal and decision, with what was played instead; the dead bot's exit, last words."""
    db = with_faults.db
    listed = json.loads(invoke("log", "list", "--db", db, "--fault", "disconnect", "--json").stdout)
    session = listed["sessions"][0]["id"]
    text = invoke("log", "show", str(session), "--db", db, "--out", with_faults.out).output
    faults = re.search(r"Faults \((\d+)\):", text)
    assert faults is not None
    assert int(faults.group(1)) > 0
    # its connection's fault took no time (it answered no request); its decisions' each took some
    assert re.search(r"deal \d+, decision \d+: seat \d \(dying\) disconnect: .*; played: \S+", text)
    assert re.search(r"deal \d+, decision \d+: seat \d \(dying\) late after [\d.]+ ms: .*; played: \S+", text)
    assert "dying: its process exited with status 7" in text
    assert "| about to give up: out of ideas" in text


@pytest.mark.slow
def test_log_show_of_a_clean_session_has_no_fault_section(tmp_path: Path) -> None:
    """No faults, no heading for them."""
    db = tmp_path / "nap.db"
    result = invoke(
        "tournament", "run", "-b", "random", "-b", "r2=random", "-b", "r3=random", "-n", "3",
        "--db", db, "--out", tmp_path / "out",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Faults" not in invoke("log", "show", "1", "--db", db).output


@pytest.mark.slow
def test_piped_progress_is_plain_lines_and_verbose_logs_are_utc(tmp_path: Path) -> None:
    """Without a terminal: `done/total sessions` lines, no bar; -v log lines carry ISO UTC stamps."""
    result = invoke(
        "-v", "tournament", "run", "-b", "random", "-b", "r2=random", "-b", "r3=random", "-n", "6",
        "-w", "1", "--db", tmp_path / "nap.db", "--out", tmp_path / "out",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    bars = [line for line in result.stdout.splitlines() if "━" in line and line.lstrip()[:1] not in "┏┡"]
    assert bars == []  # the standings table's rules, but no progress bar
    assert re.search(
        r"^heather, 3 seats, random, r2, r3: 6/6 sessions, [\d.,]+ sessions/s, done$",
        result.stdout,
        re.MULTILINE,
    )
    stamped = [line for line in result.stderr.splitlines() if line.strip()]
    assert stamped
    for line in stamped:
        assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z ", line), line


@pytest.mark.slow
def test_serve_on_port_zero_names_the_port_it_got(tmp_path: Path) -> None:
    """`--port 0` listens on a port the system picks, and the tournament is named after it."""
    db = tmp_path / "served.db"
    server = subprocess.Popen(
        [
            sys.executable, "-m", "tournaments.cli", "serve", "--host", "127.0.0.1", "--port", "0",
            "--remote", "faraway=secret-token", "--bot", "peel", "--bot", "random", "-k", "3", "-n", "3",
            "--wait", "600", "--db", str(db), "--out", str(tmp_path / "out"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        port = _announced_port(server.stdout)
        env = {**os.environ, "NAP_REFEREE": f"127.0.0.1:{port}", "NAP_TOKEN": "secret-token"}
        remote = subprocess.Popen([sys.executable, "-m", "clients.bots.random_bot"], env=env)
        output, _ = server.communicate(timeout=900)
        remote.wait(timeout=120)
    finally:
        server.kill()
    assert server.returncode == 0, output
    assert port != 0
    with sqlite3.connect(db) as conn:
        (name,) = conn.execute("select name from tournaments").fetchone()
    assert name.startswith(f"served on port {port}:")


def _announced_port(lines: Iterator[str] | None) -> int:
    assert lines is not None
    for line in lines:
        found = re.search(r"referee listening on 127\.0\.0\.1:(\d+)", line)
        if found:
            return int(found.group(1))
    pytest.fail("the referee never said where it listens")


# ---------------------------------------------------------------------------- displays


def _result(block: int, chips: tuple[int, int, int]) -> SessionResult:
    top = max(chips)
    return SessionResult(
        tournament=1,
        block=block,
        rotation=0,
        board_seed=block,
        seats=tuple(
            SeatResult(seat=s, bot=bot, chips=c, win_share=1.0 if c == top else 0.0)
            for s, (bot, c) in enumerate(zip(("a", "b", "c"), chips, strict=True))
        ),
    )


def test_live_standings_print_only_when_they_change() -> None:
    """The same standings looked at twice print once; new sessions print again."""
    console = Console(record=True, width=160)
    show = standings_printer(PlainProgress(console=console))
    first = compute_standings([_result(0, (4, -2, -2)), _result(1, (2, 0, -2))])
    show(first)
    show(compute_standings([_result(0, (4, -2, -2)), _result(1, (2, 0, -2))]))
    assert console.export_text(clear=False).count("Standings after 2 sessions") == 1
    show(compute_standings([_result(0, (4, -2, -2)), _result(1, (2, 0, -2)), _result(2, (0, 1, -1))]))
    assert console.export_text().count("Standings after") == 2


def test_standings_without_a_terminal_cut_no_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    """Printed to a pipe (80 columns, no terminal), the standings are plain lines: nothing cut to `+18.…`."""
    names = ("pimc-the-reference", "peel", "random")
    results = [
        SessionResult(
            tournament=1,
            block=block,
            rotation=0,
            board_seed=block,
            seats=tuple(
                SeatResult(seat=s, bot=bot, chips=c, win_share=1.0 if s == 0 else 0.0)
                for s, (bot, c) in enumerate(zip(names, (54 + block, -20 - block, -34), strict=True))
            ),
        )
        for block in range(3)
    ]
    standings = compute_standings(results, has_pool=True)
    pipe = Console(file=io.StringIO(), width=80)
    assert not pipe.is_terminal
    monkeypatch.setattr(reports, "console", pipe)
    reports.print_standings(standings, title="Tournament 12: a long title for a cup", match=None)
    standings_printer(PlainProgress(console=pipe))(standings)
    text = pipe.file.getvalue()  # type: ignore[attr-defined]
    assert "…" not in text
    assert text.count("pimc-the-reference  +55.00 chips/session ±2.48 (3 blocks), 3 sessions") == 2
    assert "win share 0.000 n/a (no variation), faults 0, rating" in text, "says why, as the files do"
    assert "as declarer: -" in text
    assert "not a stopping rule" in text


def test_plain_progress_prints_a_line_every_few_seconds_and_the_last_count() -> None:
    """On a fake clock: a line at the first session, one five seconds on, and the final count."""
    now = [0.0]
    console = Console(record=True, width=200)
    with PlainProgress(console=console, every_s=5.0, clock=lambda: now[0]) as progress:
        task = progress.add_task("cup", total=10)
        for _ in range(7):
            now[0] += 1.0
            progress.advance(task)
    lines = console.export_text().splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "cup: 1/10 sessions",
        "cup: 6/10 sessions",
        "cup: 7/10 sessions",
    ]
    assert lines[1] == "cup: 6/10 sessions, 1.0 sessions/s, 0:00:04 left"


def test_one_of_a_thing_is_said_as_one() -> None:
    """``1 session``, ``1 fault``, ``1 block``: never ``1 sessions``."""
    assert [count(n, "session") for n in (0, 1, 2)] == ["0 sessions", "1 session", "2 sessions"]
    assert count(1, "late fault") == "1 late fault"
    assert count(2, "analysis", "analyses") == "2 analyses"
    report = CheckReport(bot="mine", sessions=1, decisions=3, latency_ms={}, faults={"mine": 1})
    assert check_lines(report)[0] == "mine: 1 session against nobody"
    assert check_lines(report)[-1].endswith("(1 fault)")
