"""Errors by layer: what the user caused is one line, a bug keeps its traceback.

The command line shows in one line only the library's own errors (``ArenaError``, into which a
file or an address the user gave is mapped where it fails) and the rules engine's
(``RulesError``); a plain ValueError, KeyError or OSError is a bug, raised as it is.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import tournaments.cli.rules
from referee.rules import (
    Bid,
    IllegalActionError,
    ProfileError,
    RecordError,
    RulesError,
    Session,
    get_profile,
    parse_action,
    parse_card,
)
from tests.inprocess_helpers import CONFIG, InProcess
from tournaments.cli import main
from tournaments.errors import ArenaError, OutputError, RunnerError, mapped, writing
from tournaments.play.runner import RunOptions, run_tournament
from tournaments.report.standings_files import StandingsWriter
from tournaments.store.database import Store


def _broken(bug: Exception) -> object:
    def raising(*_: object, **__: object) -> str:
        raise bug

    return raising


class TestABug:
    @pytest.mark.parametrize("bug", [ValueError("planted"), KeyError("planted"), OSError(5, "planted")])
    def test_escapes_the_command_as_it_is(self, monkeypatch: pytest.MonkeyPatch, bug: Exception) -> None:
        """Not turned into one line: click's runner sees the planted exception itself."""
        monkeypatch.setattr(tournaments.cli.rules, "description", _broken(bug))
        with pytest.raises(type(bug)) as raised:
            CliRunner().invoke(main, ["rules", "show", "heather"], catch_exceptions=False)
        assert raised.value is bug
        result = CliRunner().invoke(main, ["rules", "show", "heather"])
        assert result.exception is bug
        assert "Error: " not in result.output

    @pytest.mark.slow
    def test_prints_its_traceback(self) -> None:
        """As a user sees it: the traceback on stderr, ending with the exception, and no one-line error."""
        script = (
            "import tournaments.cli.rules as rules\n"
            "def broken(profile): raise ValueError('planted')\n"
            "rules.description = broken\n"
            "from tournaments.cli import main\n"
            "main(['rules', 'show', 'heather'])\n"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
        assert done.returncode == 1
        assert done.stderr.startswith("Traceback (most recent call last):")
        assert done.stderr.rstrip().endswith("ValueError: planted")
        assert not any(line.startswith("Error:") for line in done.stderr.splitlines())


class TestTheUsersErrors:
    def test_a_misspelled_profile_or_bot_is_one_line_naming_the_near_one(self, tmp_path: Path) -> None:
        """--profile and --bot alike: exit status 1, one line, the name meant (not click's usage block)."""
        db = str(tmp_path / "nap.db")
        profile = CliRunner().invoke(main, ["tournament", "run", "-p", "heathr", "--db", db])
        bot = CliRunner().invoke(main, ["tournament", "run", "-b", "peal", "-b", "random", "--db", db])
        for result, near in ((profile, "heather"), (bot, "peel")):
            assert result.exit_code == 1, result.output
            assert len(result.stderr.splitlines()) == 1, result.stderr
            assert result.stderr.startswith("Error: unknown ")
            assert result.stderr.rstrip().endswith(f"; did you mean {near}?")
        far = CliRunner().invoke(main, ["tournament", "run", "-p", "poker", "--db", db])
        assert "did you mean" not in far.stderr

    def test_a_rules_error_is_one_line(self) -> None:
        result = CliRunner().invoke(main, ["rules", "show", "poker"])
        assert result.exit_code == 1
        assert result.stderr.startswith("Error: unknown rules profile 'poker'")
        assert len(result.stderr.splitlines()) == 1

    def test_a_folder_that_cannot_be_made_is_named(self, tmp_path: Path) -> None:
        in_the_way = tmp_path / "notes.txt"
        in_the_way.write_text("not a folder", encoding="utf-8")
        result = CliRunner().invoke(main, ["bot", "new", "mybot", "--dir", str(in_the_way / "bots")])
        assert result.exit_code == 1
        assert result.stderr == f"Error: cannot write {in_the_way / 'bots' / 'mybot'}: Not a directory\n"

    def test_a_played_session_with_a_seat_or_a_file_that_cannot_be(self, tmp_path: Path) -> None:
        db = tmp_path / "nap.db"
        with Store.open(db) as store:
            run_tournament(CONFIG, store=store, logs_root=tmp_path, options=RunOptions(executor=InProcess()))
        in_the_way = tmp_path / "notes.txt"
        in_the_way.write_text("not a folder", encoding="utf-8")
        cases = {
            ("log", "show", "1", "--seat", "3"): "--seat must be 0 to 2 at a table of 3, not 3",
            ("log", "html", "1", "-o", str(in_the_way / "s.html")): f"cannot write {in_the_way}: File exists",
            ("standings", "1", "--out", str(in_the_way / "out")): (
                f"cannot write {in_the_way / 'out' / 't1'}: Not a directory"
            ),
        }
        for args, message in cases.items():
            result = CliRunner().invoke(main, [*args, "--db", str(db)])
            assert (result.exit_code, result.stderr) == (1, f"Error: {message}\n"), args


class TestTheRulesErrors:
    @pytest.mark.parametrize(
        ("make", "kind"),
        [
            (lambda: get_profile("poker"), ProfileError),
            (lambda: parse_card("ZZ"), RulesError),
            (lambda: parse_action("exchange:QH,"), RulesError),
            (lambda: Bid("grand"), RulesError),
            (lambda: Session(get_profile("heather"), table_size=9, seed=1), RulesError),
            (
                lambda: Session(get_profile("heather"), table_size=4, seed=1).apply(Bid("blucher")),
                IllegalActionError,
            ),
        ],
    )
    def test_what_the_user_asked_is_a_rules_error(self, make: object, kind: type[Exception]) -> None:
        assert callable(make)
        with pytest.raises(kind) as raised:
            make()
        assert isinstance(raised.value, RulesError)
        assert isinstance(raised.value, ValueError)  # what callers caught before still catches it

    def test_profile_record_and_action_errors_share_the_base(self) -> None:
        assert issubclass(ProfileError, RulesError)
        assert issubclass(RecordError, RulesError)
        assert issubclass(IllegalActionError, RulesError)


class TestMappingAtTheBoundary:
    def test_mapped_keeps_the_message_and_the_cause(self) -> None:
        cause = ValueError("table size 9 is not allowed")
        with pytest.raises(RunnerError, match=r"^table size 9 is not allowed$") as raised, mapped(ValueError):
            raise cause
        assert raised.value.__cause__ is cause

    def test_mapped_leaves_other_kinds_alone(self) -> None:
        bug = KeyError("a bug")
        with pytest.raises(KeyError), mapped(ValueError):
            raise bug

    @pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here to stand for a full disk")
    def test_standings_on_a_full_disk_name_their_file_and_what_is_kept(self, tmp_path: Path) -> None:
        """A file that cannot be written (a write on a full disk names none) is named, with the promise."""
        out = tmp_path / "out"
        (out / "t1").mkdir(parents=True)
        (out / "t1" / "standings.md").symlink_to("/dev/full")  # every write there: No space left on device
        writer = StandingsWriter(store=Store.open(tmp_path / "nap.db"), out=out)
        with writer.store as store, pytest.raises(OutputError) as raised:
            run_tournament(
                CONFIG,
                store=store,
                logs_root=out,
                options=RunOptions(observers=(writer,), executor=InProcess()),
            )
        again = shlex.join(["nap", "standings", "1", "--db", str(tmp_path / "nap.db"), "--out", str(out)])
        assert str(raised.value) == (
            f"cannot write {out / 't1' / 'standings.md'}: No space left on device; tournament 1's 6 sessions "
            f"are kept in {tmp_path / 'nap.db'}: once there is room, {again} writes its standings"
        )

    def test_writing_names_the_file(self, tmp_path: Path) -> None:
        in_the_way = tmp_path / "notes.txt"
        in_the_way.write_text("", encoding="utf-8")
        written = r"^cannot write .*notes\.txt/page\.html: Not a directory$"
        with pytest.raises(OutputError, match=written), writing(tmp_path):
            (in_the_way / "page.html").write_text("x", encoding="utf-8")
        with (
            pytest.raises(OutputError, match=r"^cannot write .*there: disk full$"),
            writing(tmp_path / "there"),
        ):
            raise OSError(28, "disk full")
        assert issubclass(OutputError, ArenaError)
