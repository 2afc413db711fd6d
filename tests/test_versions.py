"""A version is the code it names: submitted content is kept and played as it was; a changed bot is refused.

``nap bot submit`` keeps the folder's content in the database; ``--bot NAME`` plays the
latest version from that content whatever happened to the folder since (and says so in
one line when a folder of that name differs), ``NAME@VERSION`` and ``NAME@HASH`` an older
one, ``--bot ./NAME`` the folder; a resume whose bot's folder changed is refused in one
line. And the same seed gives the same sessions, whatever else the database holds.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from contextlib import closing
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result

from tests.old_schemas import create_old_database
from tournaments.cli import main
from tournaments.errors import RunnerError, StoreError
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import BUILTIN_BOTS, BotEntry
from tournaments.plan.manifest import content_hash
from tournaments.plan.versions import pack, parse_version, unpacked
from tournaments.play.entrants import resolve
from tournaments.play.host import remote_bot
from tournaments.play.runner import register_entries
from tournaments.store.database import Store

if TYPE_CHECKING:
    from pathlib import Path

    from tournaments.results import SessionResult

BOT = '''"""A bot that says which version it is once, then plays its lowest legal action."""

import sys

from clients.sdk import Bot, run

print("version {version} playing", file=sys.stderr, flush=True)
run(Bot, name="{name}", version="{version}")
'''


def nap(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(arg) for arg in args])


def _bot(folder: Path, version: str, *, name: str = "mybot") -> Path:
    folder.mkdir(exist_ok=True)
    folder.chmod(0o755)  # a sandbox run by root starts bots as another user
    (folder / "nap-bot.toml").write_text(
        f'name = "{name}"\nversion = "{version}"\ncommand = ["{{python}}", "bot.py"]\n', encoding="utf-8"
    )
    (folder / "bot.py").write_text(BOT.format(name=name, version=version), encoding="utf-8")
    return folder


def _played(out: Path, tournament: int) -> set[str]:
    """The versions the bot's processes said they were, in tournament ``tournament``."""
    return {
        line.split()[1]
        for log in (out / f"t{tournament}" / "bots").glob("mybot*.log")
        for line in log.read_text().splitlines()
        if line.startswith("version ")
    }


def _run(db: Path, out: Path, bot: str, *extra: str) -> Result:
    return nap(
        "tournament", "run", "--bot", bot, "--bot", "random", "--bot", "random-2=random",
        "-k", "3", "-n", "3", "-w", "1", "--db", db, "--out", out, *extra,
    )  # fmt: skip


# ---------------------------------------------------------------------------- packs


def test_a_pack_unpacks_to_the_same_content_and_packs_the_same_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "bot"
    (folder / "node_modules" / "lib").mkdir(parents=True)
    (folder / "node_modules" / "lib" / "index.js").write_text("module.exports = 1;\n")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"cache")
    (folder / "bot.py").write_text("print('hi')\n")
    program = folder / "bot"
    program.write_bytes(b"\x7fELF...")
    program.chmod(0o755)
    data = pack(folder)
    monkeypatch.setattr(time, "time", lambda: 2_000_000_000.0)  # packed again a while later
    assert pack(folder) == data
    copy = unpacked(data, name="bot", digest=content_hash(folder), root=tmp_path / "versions")
    assert content_hash(copy) == content_hash(folder)
    assert (copy / "node_modules" / "lib" / "index.js").is_file()  # the build's products travel
    assert not (copy / "__pycache__").exists()
    assert (copy / "bot").stat().st_mode & 0o111


def test_a_copy_changed_by_hand_is_unpacked_again_and_a_false_pack_is_refused(tmp_path: Path) -> None:
    folder = _bot(tmp_path / "bot", "1")
    digest = content_hash(folder)
    copy = unpacked(pack(folder), name="mybot", digest=digest, root=tmp_path / "versions")
    (copy / "bot.py").write_text("edited\n")
    again = unpacked(pack(folder), name="mybot", digest=digest, root=tmp_path / "versions")
    assert again == copy
    assert content_hash(again) == digest
    with pytest.raises(RunnerError, match=r"the stored pack of version .* holds"):
        unpacked(pack(folder), name="mybot", digest="0" * 64, root=tmp_path / "versions")


def test_a_version_is_named_by_number_or_hash() -> None:
    assert parse_version("mybot").which is None
    assert parse_version("mybot@0.2").which == "0.2"
    assert parse_version("mybot@755f51").by_hash
    assert not parse_version("mybot@0.2").by_hash
    with pytest.raises(RunnerError, match="give a version or a content hash after @"):
        parse_version("mybot@")


def test_only_submitted_versions_are_found_by_number_or_hash(tmp_path: Path) -> None:
    with Store.open(tmp_path / "nap.db") as store:
        kept = store.register_bot(
            name="b",
            version="0.1",
            command=("x",),
            language=None,
            folder=None,
            content_hash="a" * 64,
            pack=b"1",
        )
        store.register_bot(
            name="b", version="0.2", command=("x",), language=None, folder=None, content_hash="b" * 64
        )
        assert store.submitted("b") == kept
        assert store.submitted("b", "0.1") == kept
        assert store.submitted("b", "aaaaaa") == kept
        assert store.submitted("b", "aaaaa") is None  # too short to be a hash
        assert store.submitted("b", "0.2") is None  # registered by a run, never submitted
        assert store.bot_pack("a" * 64) == b"1"
        with pytest.raises(StoreError, match="no submitted content"):
            store.bot_pack("b" * 64)


# ---------------------------------------------------------------------------- played as submitted


@pytest.mark.slow
def test_a_submitted_bot_plays_as_submitted_and_an_older_version_by_name(tmp_path: Path) -> None:
    db, folder = tmp_path / "nap.db", _bot(tmp_path / "mybot", "0.1")
    submitted = nap("bot", "submit", folder, "-n", "3", "--db", db)
    assert submitted.exit_code == 0, submitted.output
    first = content_hash(folder)
    _bot(folder, "0.2")  # edited in place, not submitted
    result = _run(db, tmp_path / "a", "mybot")
    assert result.exit_code == 0, result.output
    assert _played(tmp_path / "a", 1) == {"0.1"}  # the stored version, not the edited folder
    about = json.loads((tmp_path / "a" / "t1" / "standings.json").read_text())["tournament"]
    assert {"name": "mybot", "version": "0.1", "content_hash": first, "remote": False} in about["bots"]
    assert nap("bot", "submit", folder, "-n", "3", "--db", db).exit_code == 0
    for bot, version in (("mybot", "0.2"), ("mybot@0.1", "0.1"), (f"mybot@{first[:8]}", "0.1")):
        out = tmp_path / bot.replace("@", "-")
        result = _run(db, out, bot)
        assert result.exit_code == 0, result.output
        with Store.open(db) as store:
            tournament = store.tournaments()[-1].id
        assert _played(out, tournament) == {version}
    unknown = _run(db, tmp_path / "x", "mybot@0.3")
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("Error: bot mybot has no submitted version '0.3'; its versions: 0.1 (")


@pytest.mark.slow
def test_which_version_a_name_plays_after_submit_and_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documented rule (WHICH_PLAYS), from the folder that holds the bot, as the Quick start does it.

    ``--bot mybot`` plays the submitted version, and says in one line that the edited folder
    was not played and how to play it; ``--bot ./mybot`` plays the folder, silently; once
    the folder is submitted again the two are the same and nothing is said.
    """
    monkeypatch.chdir(tmp_path)
    db, folder = tmp_path / "nap.db", _bot(tmp_path / "mybot", "0.1")
    assert nap("bot", "submit", "mybot", "-n", "3", "--db", db).exit_code == 0
    first = content_hash(folder)
    _bot(folder, "0.2")  # edited in place, not submitted
    by_name = _run(db, tmp_path / "a", "mybot")
    assert by_name.exit_code == 0, by_name.output
    assert _played(tmp_path / "a", 1) == {"0.1"}
    said = (
        f"--bot mybot plays the submitted mybot 0.1 ({first[:12]}), not the folder ./mybot, which differs "
        "(--bot ./mybot plays the folder; nap bot submit ./mybot keeps it as a new version)"
    )
    assert [line for line in by_name.stderr.splitlines() if "mybot" in line] == [said]
    by_path = _run(db, tmp_path / "b", "./mybot")
    assert by_path.exit_code == 0, by_path.output
    assert _played(tmp_path / "b", 2) == {"0.2"}
    assert "--bot" not in by_path.stderr
    assert nap("bot", "submit", "./mybot", "-n", "3", "--db", db).exit_code == 0
    again = _run(db, tmp_path / "c", "mybot")
    assert again.exit_code == 0, again.output
    assert _played(tmp_path / "c", 3) == {"0.2"}
    assert "--bot" not in again.stderr, "the folder is the version submitted: nothing to say"


def test_a_name_is_a_bot_and_a_path_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A built-in's name plays the built-in beside a folder of that name, and says so; a path, the folder.

    A bare name that no bot has plays the folder of that name; a path that is no folder is
    one line.
    """
    monkeypatch.chdir(tmp_path)
    _bot(tmp_path / "peel", "0.1", name="peel")
    _bot(tmp_path / "solo", "0.3", name="solo")
    said: list[str] = []
    with Store.open(tmp_path / "nap.db") as store:
        assert resolve("peel", store=store, say=said.append) == BUILTIN_BOTS["peel"]
        assert said == [
            (
                "--bot peel plays the built-in peel, not the folder ./peel, which differs "
                "(--bot ./peel plays the folder; nap bot submit ./peel keeps it as a new version)"
            )
        ]
        assert resolve("./peel", store=store, say=said.append).cwd == tmp_path / "peel"
        assert resolve("solo", store=store, say=said.append).version == "0.3"
        assert resolve("p2=./peel", store=store, say=said.append).alias_of == "peel"
        with pytest.raises(RunnerError, match=r"^\./nothing: no such folder"):
            resolve("./nothing", store=store, say=said.append)
    assert len(said) == 1


def test_nap_bot_list_lists_bots_not_aliases_nor_the_person(tmp_path: Path) -> None:
    """A tournament registers its entries' bots: an alias registers its bot, nap play's person none."""
    config = TournamentConfig(
        name="ann at the table",
        bots=(BUILTIN_BOTS["peel"], BUILTIN_BOTS["random"].renamed("r2"), remote_bot("ann")),
        table_size=3,
        sessions=1,
        seed=1,
        person="ann",
    )
    with Store.open(tmp_path / "nap.db") as store:
        register_entries(store, config)
        register_entries(store, dataclasses.replace(config, person=None, bots=config.bots[:2]))
        assert [(row.name, row.content_hash) for row in store.bots()] == [
            ("peel", BUILTIN_BOTS["peel"].content_hash),
            ("random", BUILTIN_BOTS["random"].content_hash),
        ]
    renamed = BUILTIN_BOTS["random"].renamed("r2").renamed("r3")
    assert (renamed.name, renamed.alias_of) == ("r3", "random")
    assert BotEntry.from_json(renamed.to_json()) == renamed
    assert "alias_of" not in BUILTIN_BOTS["peel"].to_json(), "an entry under its own name is stored as before"


@pytest.mark.slow
def test_a_resume_after_the_bots_folder_changed_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, out, folder = tmp_path / "nap.db", tmp_path / "out", _bot(tmp_path / "mybot", "0.1")
    real_record = Store.record_session
    recorded: list[SessionResult] = []

    def full_after_one(self: Store, result: SessionResult, *, log: bytes) -> int:
        if recorded:
            msg = "database or disk is full"
            raise StoreError(msg)
        recorded.append(result)
        return real_record(self, result, log=log)

    monkeypatch.setattr(Store, "record_session", full_after_one)
    assert _run(db, out, str(folder)).exit_code == 1
    monkeypatch.setattr(Store, "record_session", real_record)
    before = content_hash(folder)
    (folder / "bot.py").write_text((folder / "bot.py").read_text() + "# never bids\n")
    refused = nap("tournament", "resume", "1", "--db", db, "--out", out)
    assert refused.exit_code == 1
    now, where = content_hash(folder)[:12], folder.resolve()
    expected = (
        f"Error: bot mybot changed since tournament 1 started (its folder {where} now hashes {now}, "
        f"not {before[:12]}): undo the change to finish the tournament as it began, or start a new one "
        "(nap bot submit keeps each version)"
    )
    assert refused.stderr.splitlines() == [expected]
    with Store.open(db) as store:
        assert store.tournament(1).status == "interrupted"  # left as it was
    _bot(folder, "0.1")  # undone
    resumed = nap("tournament", "resume", "1", "--db", db, "--out", out)
    assert resumed.exit_code == 0, resumed.output


# ---------------------------------------------------------------------------- seeds


@pytest.mark.slow
def test_the_same_seed_gives_the_same_sessions_in_one_database(tmp_path: Path) -> None:
    """Bots seeded by their table ids (derived from the seed and the table's place) replay exactly."""
    db = tmp_path / "nap.db"
    for run in (1, 2):
        result = _run(db, tmp_path / f"out{run}", "random-3=random", "--seed", "9", "-n", "9")
        assert result.exit_code == 0, result.output
    with Store.open(db) as store:
        first, second = (
            {(r.block, r.rotation): (r.seats, r.faults) for r in store.session_results(t)} for t in (1, 2)
        )
    assert len(first) == 9
    assert first == second


def test_a_bot_registered_before_versions_were_kept_plays_only_while_its_folder_is_unchanged(
    tmp_path: Path,
) -> None:
    """A version 4 file's bots have no stored content: --bot NAME plays the folder while it holds the hash."""
    db, folder = tmp_path / "old.db", _bot(tmp_path / "mybot", "0.1")
    with closing(sqlite3.connect(db)) as conn:
        create_old_database(conn, 4)
        conn.execute(
            "INSERT INTO bots (name, version, command, language, folder, content_hash, registered_at)"
            " VALUES ('mybot', '0.1', ?, NULL, ?, ?, '2026-11-01T00:00:00')",
            (json.dumps(["{python}", "bot.py"]), str(folder), content_hash(folder)),
        )
        conn.commit()
    with Store.open(db) as store:
        entry = resolve("mybot", store=store, say=print)
        assert (entry.cwd, entry.content_hash) == (folder, content_hash(folder))
        (folder / "bot.py").write_text("# changed\n")
        with pytest.raises(RunnerError, match="was registered before versions were kept, and its folder"):
            resolve("mybot", store=store, say=print)
