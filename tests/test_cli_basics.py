"""The `nap` command's rules, bot-folder and error paths, driven in process through click."""

from __future__ import annotations

import configparser
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from referee.match import FaultKind, TimeLimits
from referee.rules import PROFILES
from tournaments.cli import main
from tournaments.cli.app import field_default
from tournaments.cli.logs import log_list
from tournaments.cli.match import match_command
from tournaments.cli.play import play
from tournaments.cli.reports import seats_for
from tournaments.cli.tournament import tournament_run
from tournaments.errors import ManifestError, RunnerError
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import BUILTIN_BOTS
from tournaments.plan.manifest import content_hash, read_manifest
from tournaments.play.commands import resume_command
from tournaments.play.practice import BaselineScore, CheckReport
from tournaments.results import SeatResult, SessionResult
from tournaments.stats.estimates import Estimate
from tournaments.stats.sprt import Sprt
from tournaments.store.database import Store
from tournaments.web.play import TableSpec


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_rules_list_names_every_profile() -> None:
    """`nap rules list` shows every built-in profile, seven-card Nap with its seven cards."""
    code, out = run("rules", "list")
    assert code == 0
    names = ("heather", "full-ladder", "two-to-five", "seven-card", "purchase", "ecarte", "peep")
    for name in names:
        assert name in out
    seven = next(line for line in out.splitlines() if "seven-card" in line)
    assert "7 of 52" in seven
    assert out.count("5 of 52") == len(names) - 1


def test_rules_show_seven_card_has_six_and_seven() -> None:
    """`nap rules show seven-card`: seven cards dealt 4 then 3, Six 18/9 and Seven 24/12 of seven tricks."""
    code, out = run("rules", "show", "seven-card")
    assert code == 0
    assert "7 cards each (dealt 4 then 3) from a pack of 52 cards" in out
    rows = {
        line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:5]]
        for line in out.splitlines()
        if line.startswith("│")
    }
    assert rows["Six"] == [">= 6 of 7", "18", "9"]
    assert rows["Seven"] == [">= 7 of 7", "24", "12"]
    assert rows["Nap"] == [">= 5 of 7", "10", "5"]
    assert "Wellington" not in rows


def test_rules_show_a_house_rules_file_with_a_short_pack(tmp_path: Path) -> None:
    """A 32-card pack and four deals a session: said in words, and in the parameters."""
    path = tmp_path / "pub.toml"
    path.write_text(
        'name = "pub"\nbase = "full-ladder"\npack_size = 32\nmax_players = 6\ndeals_per_session = 4\n',
        encoding="utf-8",
    )
    code, out = run("rules", "show", str(path))
    assert code == 0
    assert "3-6 seats; 5 cards each (dealt 3 then 2) from a pack of 32 cards (Ace down to 7); 4 deals" in out
    assert "pack_size = 32" in out
    assert "deals_per_session = 4" in out


def test_rules_show_a_pack_sized_by_the_table(tmp_path: Path) -> None:
    """`pack_size = "by-table"`: each pack with the table sizes that play it, and the table of sizes."""
    path = tmp_path / "pub.toml"
    path.write_text('name = "pub"\nbase = "purchase"\npack_size = "by-table"\n', encoding="utf-8")
    code, out = run("rules", "show", str(path))
    assert code == 0, out
    assert (
        "3-7 seats; 5 cards each (dealt 3 then 2) from a pack of 28 cards (Ace down to 8) for 3-4 seats, "
        "32 cards (Ace down to 7) for 5 seats, 36 cards (Ace down to 6) for 6 seats, "
        "40 cards (Ace down to 5) for 7 seats; 8 deals a session"
    ) in " ".join(out.split())
    assert "a pack sized by the table (pack_sizes)" in " ".join(out.split())
    assert "pack_sizes = {3 = 28, 4 = 28, 5 = 32, 6 = 36, 7 = 40}" in out


def test_rules_show_prints_stakes_of_the_ladder() -> None:
    """`nap rules show full-ladder` shows Blücher's 30/15 and the revoke policy."""
    code, out = run("rules", "show", "full-ladder")
    assert code == 0
    assert "Blücher" in out
    assert "30" in out
    assert "15" in out
    assert "fault_policy = revoke" in out


def test_rules_show_a_bad_house_rules_file_is_one_line(tmp_path: Path) -> None:
    """A house-rules file with a bad field: one line naming the field, exit status 1."""
    path = tmp_path / "house.toml"
    path.write_text('name = "h"\nbase = "heather"\ndeals = 3\n', encoding="utf-8")
    code, out = run("rules", "show", str(path))
    assert code == 1
    assert out.strip() == "Error: house.toml: unknown field 'deals'"


def test_unknown_profile_is_a_clear_error() -> None:
    """An unknown profile name lists the built-in ones."""
    code, out = run("rules", "show", "poker")
    assert code == 1
    assert "unknown rules profile 'poker'" in out


@pytest.mark.slow
def test_bot_new_scaffolds_a_valid_manifest(tmp_path: Path) -> None:
    """`nap bot new` writes a manifest that validates and a bot that compiles; refuses to overwrite."""
    code, out = run("bot", "new", "my-bot", "--dir", str(tmp_path))
    assert code == 0, out
    manifest = read_manifest(tmp_path / "my-bot")
    assert manifest.name == "my-bot"
    assert manifest.argv()[0] == sys.executable
    compiled = subprocess.run(
        [sys.executable, "-m", "py_compile", str(tmp_path / "my-bot" / "bot.py")], check=False
    )
    assert compiled.returncode == 0
    code, out = run("bot", "new", "my-bot", "--dir", str(tmp_path))
    assert code == 1
    assert "already exists" in out


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_a_scaffolded_bot_passes_the_projects_lint(tmp_path: Path) -> None:
    """The bot `nap bot new` writes passes ruff under the project's own config, lint and format."""
    code, out = run("bot", "new", "mybot", "--dir", str(tmp_path))
    assert code == 0, out
    config = ["--no-cache", "--config", str(ROOT / "pyproject.toml")]
    for command in (["check", *config], ["format", "--check", "--diff", *config]):
        ruff = subprocess.run(
            [sys.executable, "-m", "ruff", *command, str(tmp_path / "mybot")],
            capture_output=True,
            text=True,
            check=False,
        )
        assert ruff.returncode == 0, ruff.stdout + ruff.stderr


@pytest.mark.slow
def test_the_lint_env_covers_the_paths_the_type_env_checks() -> None:
    """tox's lint runs on the project's paths (not `.`, which takes in a user's bot folder), all of them."""
    tox = configparser.ConfigParser()
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    typed = tox["testenv:type"]["commands"].split()[1:]
    lint = [line.split() for line in tox["testenv:lint"]["commands"].strip().splitlines()]
    assert lint == [
        ["ruff", "check", "pyproject.toml", *typed],
        ["ruff", "format", "--check", "--diff", *typed],
    ]
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert {Path(path).parts[0] for path in tracked} <= set(typed)


def test_standings_of_a_latest_tournament_without_sessions_is_one_line(tmp_path: Path) -> None:
    """`nap standings` when the newest tournament stopped before its first session: exit status 1.

    The line says so and names the latest one with sessions, whose standings it does not
    print in its place (a script would take them for the new run's).
    """
    db = tmp_path / "nap.db"
    bots = ("peel", "random", "pimc")
    config = TournamentConfig(
        name="cup", bots=tuple(BUILTIN_BOTS[bot] for bot in bots), table_size=3, sessions=3, seed=1
    ).to_json()
    with Store.open(db) as store:
        played = store.create_tournament(name="cup", config=config, seed=1, blocks=[(0, 1000, bots)])
        seats = tuple(SeatResult(n, bot, (2, -1, -1)[n], float(n == 0)) for n, bot in enumerate(bots))
        store.record_session(SessionResult(played, 0, 0, 1000, seats), log=b"a log")
        store.set_status(played, "finished")
        code, out = run("standings", "--db", str(db))
        assert code == 0, out
        empty = store.create_tournament(name="cup", config=config, seed=2, blocks=[(0, 1001, bots)])
        store.set_status(empty, "interrupted")
    code, out = run("standings", "--db", str(db))
    assert code == 1
    assert out == (
        "Error: tournament 2, the latest, has no finished session (interrupted); "
        "tournament 1 is the latest with sessions: nap standings 1\n"
    )
    code, out = run("standings", "1", "--db", str(db))
    assert code == 0, out
    assert "peel" in out
    alone = tmp_path / "alone.db"
    with Store.open(alone) as store:
        store.create_tournament(name="cup", config=config, seed=2, blocks=[(0, 1001, bots)])
    code, out = run("standings", "--db", str(alone))
    assert (code, out) == (
        1,
        "Error: tournament 1, the latest, has no finished session (running); no tournament has any yet\n",
    )


def test_bot_check_help_says_what_its_verdict_rests_on() -> None:
    """The verdict looks at faults, exits and errors only: the help says so, not that it compares scores."""
    code, out = run("bot", "check", "--help")
    assert code == 0
    shown = " ".join(out.split())
    assert (
        "The verdict is PASS when the bot played every session without a fault and its process never "
        "exited on its own; exit status 1 on FAIL." in shown
    )
    assert "the difference is shown, but does not count in the verdict" in shown
    assert "verdict compares" not in shown
    worse = BaselineScore("peel", chips_per_session=9.0, difference=Estimate(-9.0, 1.0, n=8, sd=1.2))
    assert CheckReport("mybot", sessions=6, decisions=90, chips_per_session=-9.0, baseline=worse).passed


def test_content_hash_changes_with_any_file(tmp_path: Path) -> None:
    """The content hash covers every file, so an edited bot is a new version."""
    run("bot", "new", "hashed", "--dir", str(tmp_path))
    folder = tmp_path / "hashed"
    before = content_hash(folder)
    assert content_hash(folder) == before
    (folder / "notes.txt").write_text("x", encoding="utf-8")
    assert content_hash(folder) != before


def test_manifest_errors_name_the_problem(tmp_path: Path) -> None:
    """A folder without a manifest, a missing field, an unknown field: each a clear one-line error."""
    cases = {
        "empty": None,
        "no-command": 'name = "a"\nversion = "1"\n',
        "extra": 'name = "a"\nversion = "1"\ncommand = ["x"]\ncolour = "red"\n',
        "badname": 'name = "a b"\nversion = "1"\ncommand = ["x"]\n',
    }
    messages = {}
    for folder_name, text in cases.items():
        folder = tmp_path / folder_name
        folder.mkdir()
        if text is not None:
            (folder / "nap-bot.toml").write_text(text, encoding="utf-8")
        try:
            read_manifest(folder)
        except ManifestError as exc:
            messages[folder_name] = str(exc)
    assert "no nap-bot.toml" in messages["empty"]
    assert "missing field 'command'" in messages["no-command"]
    assert "unknown field 'colour'" in messages["extra"]
    assert "field 'name'" in messages["badname"]
    assert all("\n" not in m for m in messages.values())


def test_read_commands_refuse_a_missing_database(tmp_path: Path) -> None:
    """Listing from a database that does not exist says so instead of creating an empty one."""
    db = tmp_path / "none.db"
    code, out = run("log", "list", "--db", str(db))
    assert code == 1
    assert "no such database" in out
    assert not db.exists()


def test_a_file_that_is_not_our_database_is_refused(tmp_path: Path) -> None:
    """A database that is not Nap Arena's is a one-line error, and the file is left alone."""
    db = tmp_path / "other.db"
    db.write_bytes(b"this is not sqlite at all" * 100)
    code, out = run("bot", "list", "--db", str(db))
    assert code == 1
    assert len(out.strip().splitlines()) == 1
    assert db.read_bytes() == b"this is not sqlite at all" * 100


@pytest.mark.slow
def test_nap_help_runs_as_a_real_process() -> None:
    """The installed entry point answers --help as a subprocess."""
    done = subprocess.run(
        [sys.executable, "-m", "tournaments.cli", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert "tournament" in done.stdout or "rules" in done.stdout


@pytest.mark.slow
def test_the_read_commands_start_without_the_referee_or_the_runner() -> None:
    """`nap log list` imports its own command only: not gRPC, the referee's server or the runner."""
    heavy = ("grpc", "referee.server", "tournaments.play.runner", "tournaments.cli.tournament")
    code = (
        "import sys; from tournaments.cli import main; main.get_command(None, 'log'); "
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_resume_refuses_a_missing_database(tmp_path: Path) -> None:
    """Resuming from a database that does not exist says so and creates nothing."""
    db = tmp_path / "none.db"
    code, out = run("tournament", "resume", "1", "--db", str(db))
    assert code == 1
    assert "no such database" in out
    assert not db.exists()


def test_log_list_offers_every_fault_kind_and_no_other() -> None:
    """`nap log list --fault` takes exactly the referee's fault kinds: oversized yes, crash no."""
    [fault] = [param for param in log_list.params if param.name == "fault_kind"]
    assert isinstance(fault.type, click.Choice)
    assert list(fault.type.choices) == [kind.value for kind in FaultKind]
    assert "oversized" in fault.type.choices
    code, out = run("log", "list", "--fault", "crash", "--db", "none.db")
    assert code == 2
    assert "'crash' is not one of" in out


def test_the_resume_command_names_only_what_is_not_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`nap tournament resume N`, with --db and --out only where the defaults would not find them."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NAP_DB", raising=False)
    default_logs = Path("nap-out").resolve()
    assert resume_command(7, db=Path("nap.db"), logs_root=default_logs) == "nap tournament resume 7"
    assert resume_command(7, db=tmp_path / "nap.db") == "nap tournament resume 7"
    assert (
        resume_command(7, db=Path("cup.db"), logs_root=tmp_path / "my out")
        == f"nap tournament resume 7 --db cup.db --out '{tmp_path / 'my out'}'"
    )
    monkeypatch.setenv("NAP_DB", "cup.db")
    assert resume_command(7, db=Path("cup.db")) == "nap tournament resume 7"
    assert resume_command(7, db=Path("nap.db")) == "nap tournament resume 7 --db nap.db"


def test_a_run_into_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    """`nap tournament run --db notes.txt`: one line on stderr, exit 1, the file untouched.

    ``--sandbox off``: where bubblewrap is installed, ``auto`` would start it to see whether it
    works (a process) before the database is opened.
    """
    db = tmp_path / "notes.txt"
    db.write_bytes(b"shopping: eggs, milk\n" * 200)
    args = ["tournament", "run", "--sandbox", "off", "--db", str(db), "--out", str(tmp_path / "o")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"Error: {db} is not a SQLite database: choose a Nap Arena database, or a new file, with --db"
    ]
    assert db.read_bytes() == b"shopping: eggs, milk\n" * 200


def test_the_default_table_size_keeps_within_the_profile() -> None:
    """Four seats by default, more when the profile's least is more; a size it refuses is an error."""
    eight = [BUILTIN_BOTS["peel"].renamed(f"peel-{n}") for n in range(8)]
    assert seats_for(eight, None, PROFILES["two-to-five"]) == 4
    five_up = replace(PROFILES["seven-card"], name="five-up", source="tests", min_players=5)
    assert seats_for(eight, None, five_up) == 5
    assert seats_for(eight, 7, PROFILES["seven-card"]) == 7
    with pytest.raises(RunnerError, match="table size 7 is not allowed by the rules profile two-to-five"):
        seats_for(eight, 7, PROFILES["two-to-five"])


def test_option_defaults_are_read_from_the_values_they_describe() -> None:
    """--decision-ms, --connect-timeout, --alpha, --wait and the like: the defaults of what they fill."""

    def defaults(command: click.Command) -> dict[str | None, object]:
        return {param.name: param.default for param in command.params}

    limits, config = TimeLimits(), TournamentConfig(name="t", bots=(), table_size=4, sessions=1, seed=1)
    run_options = defaults(tournament_run)
    assert (run_options["decision_ms"], run_options["bank_ms"], run_options["margin_ms"]) == (
        limits.decision_ms,
        limits.session_bank_ms,
        limits.margin_ms,
    )
    assert run_options["connect_timeout"] == config.connect_timeout_s
    test = Sprt(d0=0, d1=3)
    match_options = defaults(match_command)
    assert (match_options["alpha"], match_options["beta"], match_options["min_blocks"]) == (
        test.alpha,
        test.beta,
        test.min_blocks,
    )
    assert defaults(play)["wait"] == field_default(TableSpec, "wait_s")
    with pytest.raises(LookupError, match="TournamentConfig has no field 'seed' with a default"):
        field_default(TournamentConfig, "seed")
