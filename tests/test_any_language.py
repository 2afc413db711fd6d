"""Bots in any language: the Node.js bot over gRPC, the C bot and the docs' jq bot through the stdio bridge.

Real processes against a real referee on 127.0.0.1:0. The Node.js bot needs ``node`` and
``npm`` (``npm ci`` runs here, from the committed lockfile); the C bot needs a C compiler
(``cc``). Where one is missing, the tests that need it are skipped with the reason.
The bridge's fault handling is driven by the small Python programs in tests/bots_stdio/.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from clients.stdio.child import ChildBot, ChildError, StderrTail
from clients.stdio.jsonlines import MAX_FORWARDED_CHARS, decode_reply, encode_request
from referee.rules import DEFAULT_PROFILE, Card, Profile, SessionRecord, get_profile, parse_action, verify
from referee.rules import Session as RulesSession
from referee.server import FaultKind, Referee, ServerLimits, SessionOutcome, SessionSpec, TimeLimits
from referee.wire import nap_pb2
from referee.wire.codec import request_to_proto
from tournaments.cli import main
from tournaments.plan.entries import BotEntry, example_bot
from tournaments.plan.manifest import read_manifest
from tournaments.play.bots import BotProcess

if TYPE_CHECKING:
    from collections.abc import Sequence

ROOT = Path(__file__).resolve().parent.parent
STDIO_BOTS = Path(__file__).resolve().parent / "bots_stdio"
BRIDGE = (sys.executable, "-m", "clients.stdio.bridge")

pytestmark = pytest.mark.slow


def _skip(reason: str) -> None:
    print(f"SKIPPED: {reason}", file=sys.stderr)  # noqa: T201 - say why in CI's log too
    pytest.skip(reason)


# ---------------------------------------------------------------------------- the bots


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> BotEntry:
    """The C bot, built by its manifest's build command in a copy of clients/c."""
    manifest = read_manifest(ROOT / "clients" / "c")
    build = manifest.build_argv()
    assert build is not None
    if shutil.which(build[0]) is None:
        _skip(f"no C compiler: {build[0]!r} is not on PATH (the C bot cannot be built)")
    folder = tmp_path_factory.mktemp("c-bot")
    folder.chmod(0o755)  # pytest makes it 0700: a sandbox run by root starts bots as another user
    shutil.copy2(manifest.folder / "bot.c", folder / "bot.c")
    done = subprocess.run(build, cwd=folder, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, f"{' '.join(build)} failed:\n{done.stdout}{done.stderr}"
    return BotEntry(name=manifest.name, version=manifest.version, command=manifest.argv(), cwd=folder)


@pytest.fixture(scope="module")
def node_bot(tmp_path_factory: pytest.TempPathFactory) -> BotEntry:
    """The Node.js bot, its dependencies installed by its manifest's build (``npm ci``), in a copy.

    A copy of clients/node for each pytest worker (two ``npm ci`` in one folder at once
    trip over each other's node_modules), with the .proto beside it, where the bot looks.
    """
    manifest = read_manifest(ROOT / "clients" / "node")
    build = manifest.build_argv()
    assert build is not None
    for tool in ("node", build[0]):
        if shutil.which(tool) is None:
            _skip(f"{tool!r} is not on PATH: the Node.js bot cannot be installed or run")
    folder = tmp_path_factory.mktemp("node-bot") / "node"
    shutil.copytree(manifest.folder, folder, ignore=shutil.ignore_patterns("node_modules"))
    shutil.copy2(ROOT / "proto" / "nap" / "v1" / "nap.proto", folder / "nap.proto")  # as a bot's own copy
    for made in (folder, folder.parent):
        made.chmod(0o755)  # pytest makes it 0700: a sandbox run by root starts bots as another user
    done = subprocess.run(build, cwd=folder, capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, f"{' '.join(build)} failed:\n{done.stdout}{done.stderr}"
    return BotEntry(name=manifest.name, version=manifest.version, command=manifest.argv(), cwd=folder)


def _stdio_bot(name: str, script: str, *bridge_options: str) -> BotEntry:
    """A test program from tests/bots_stdio behind the bridge."""
    command = (*BRIDGE, *bridge_options, "--", sys.executable, str(STDIO_BOTS / script))
    return BotEntry(name=name, version="test", command=command, cwd=ROOT)


# ---------------------------------------------------------------------------- a referee and its bots


async def _play(
    entries: Sequence[BotEntry],
    specs: Sequence[tuple[str, int, tuple[str, ...]]],
    *,
    logs: Path,
    time_limits: TimeLimits = TimeLimits(decision_ms=3000),  # noqa: B008 - frozen
    limits: ServerLimits = ServerLimits(reconnect_grace_s=0.5),  # noqa: B008 - frozen
    max_restarts: int = 0,
    profile: Profile = DEFAULT_PROFILE,
) -> tuple[list[SessionOutcome], list[BotProcess]]:
    """Start a referee and one process per entry; play ``(profile, seed, seats)`` sessions at once.

    The referee announces ``profile`` (its hello check judges the bots by it).
    """
    referee = Referee(limits=limits, time_limits=time_limits, profile=profile)
    port = await referee.start(host="127.0.0.1", port=0)
    processes = []
    try:
        for entry in entries:
            token = f"token-{entry.name}"
            referee.add_bot(name=entry.name, token=token)
            processes.append(
                BotProcess(
                    entry,
                    address=f"127.0.0.1:{port}",
                    token=token,
                    log_path=logs / f"{entry.name}.log",
                    max_restarts=max_restarts,
                )
            )
        await asyncio.gather(*(process.start(referee, connect_timeout=60) for process in processes))
        outcomes = await asyncio.wait_for(
            asyncio.gather(
                *(
                    referee.play_session(
                        SessionSpec(
                            table=f"table-{number}",
                            profile=get_profile(profile),
                            seed=seed,
                            seats=seats,
                            time_limits=time_limits,
                        )
                    )
                    for number, (profile, seed, seats) in enumerate(specs)
                )
            ),
            timeout=120,
        )
    finally:
        await asyncio.gather(*(process.stop() for process in processes), return_exceptions=True)
        await referee.stop()
    return list(outcomes), processes


def _check_complete(outcome: SessionOutcome, profile: str) -> None:
    """The session was played to its end and its record replays exactly."""
    record = outcome.record
    rules = get_profile(profile)
    if rules.starting_chips is None:  # finite chips may end early or add a tie-break deal
        assert len(record.deals) == rules.deals_per_session
    assert record.winners
    assert sum(record.balances) == 0
    assert verify(SessionRecord.from_json(json.loads(json.dumps(record.to_json())))) == []


# ---------------------------------------------------------------------------- three languages


class TestThreeLanguages:
    def test_python_node_and_c_play_sessions_without_a_fault(
        self, tmp_path: Path, node_bot: BotEntry, c_bot: BotEntry
    ) -> None:
        """The random bot (Python SDK), the Node.js bot and the C bot (bridge) share tables.

        Every seat order of one board set, a four-seat table where the Node.js bot holds
        two seats, the other profiles, and seven-card Nap at five and seven seats (seven
        cards each, Six and Seven on the ladder): every session ends with no fault at all,
        its record replays, and no bot process exited before it was stopped.
        """
        random_bot = example_bot("random")
        trio = (random_bot.name, node_bot.name, c_bot.name)
        rotations = [trio[i:] + trio[:i] for i in range(3)]
        specs = [("heather", 11, seats) for seats in rotations]
        specs += [
            ("heather", 12, (node_bot.name, c_bot.name, random_bot.name, node_bot.name)),
            ("full-ladder", 13, (c_bot.name, random_bot.name, node_bot.name, c_bot.name, random_bot.name)),
            ("two-to-five", 14, (random_bot.name, c_bot.name, node_bot.name)),
            ("seven-card", 15, (node_bot.name, c_bot.name, random_bot.name, c_bot.name, node_bot.name)),
            ("seven-card", 16, (c_bot.name, node_bot.name, random_bot.name) * 2 + (c_bot.name,)),
        ]
        outcomes, processes = asyncio.run(_play([random_bot, node_bot, c_bot], specs, logs=tmp_path))
        for (profile, _seed, seats), outcome in zip(specs, outcomes, strict=True):
            assert outcome.faults == (), outcome.faults
            assert outcome.disqualified == ()
            _check_complete(outcome, profile)
            hand_size = get_profile(profile).hand_size
            played = [sum(isinstance(a, Card) for a in deal.actions) for deal in outcome.record.deals]
            assert hand_size * len(seats) in played  # a deal played to its last trick
        for process in processes:
            assert process.exits == [], (process.name, (tmp_path / f"{process.name}.log").read_text())
        bridge_log = (tmp_path / f"{c_bot.name}.log").read_text()
        assert "0 left unanswered, 0 restarts" in bridge_log

    def test_a_tiny_tournament_through_the_runner(
        self, tmp_path: Path, node_bot: BotEntry, c_bot: BotEntry
    ) -> None:
        """The tournament runner starts all three from their entries and records faultless sessions."""
        from tournaments.plan.config import TournamentConfig  # noqa: PLC0415
        from tournaments.play.runner import run_tournament_async  # noqa: PLC0415
        from tournaments.store.database import Store  # noqa: PLC0415

        config = TournamentConfig(
            name="any-language",
            bots=(example_bot("random"), node_bot, c_bot),
            table_size=3,
            sessions=3,
            seed=5,
            concurrency=2,
            time_limits=TimeLimits(decision_ms=3000),
            max_restarts=0,
        )
        from tournaments.store.logs import decode_log  # noqa: PLC0415

        with Store.open(tmp_path / "nap.db") as store:
            tournament = asyncio.run(run_tournament_async(config, store=store, logs_root=tmp_path / "logs"))
            results = store.session_results(tournament)
            logs = [
                decode_log(store.log(row.id), name="log")
                for row in store.find_sessions(tournament=tournament)
            ]
        assert len(results) == 3
        assert all(result.faults == () for result in results)
        assert {bot for result in results for bot in result.bots} == {"random", "node", "c-bot"}

        for log in logs:
            record = log["record"]
            assert verify(SessionRecord.from_json(record)) == []  # type: ignore[arg-type]


class TestPoolVariants:
    @pytest.mark.parametrize("profile", ["purchase", "ecarte", "peep"])
    def test_node_and_c_play_the_pool_variants_without_a_fault(
        self, tmp_path: Path, node_bot: BotEntry, c_bot: BotEntry, profile: str
    ) -> None:
        """Both declare the new decisions in their Hello and answer each of them, declining.

        A session at four seats (the Node.js bot holds two) and one at three, on a referee
        that announces the profile, so that its hello check is passed: no fault at all, the
        records replay, and every exchange or widow decision of theirs was a decline.
        """
        random_bot = example_bot("random")
        specs = [
            (profile, 31, (node_bot.name, c_bot.name, random_bot.name, node_bot.name)),
            (profile, 32, (c_bot.name, random_bot.name, node_bot.name)),
        ]
        outcomes, processes = asyncio.run(
            _play([random_bot, node_bot, c_bot], specs, logs=tmp_path, profile=get_profile(profile))
        )
        declined = 0
        for (_, _seed, seats), outcome in zip(specs, outcomes, strict=True):
            assert outcome.faults == (), outcome.faults
            _check_complete(outcome, profile)
            for deal in outcome.decisions:
                for decision in deal:
                    if seats[decision.seat] == random_bot.name:
                        continue
                    assert decision.action != "peep"
                    if decision.action.startswith(("exchange:", "widow:")):
                        assert decision.action in {"exchange:none", "widow:none"}
                        declined += 1
        assert declined > 0
        for process in processes:
            assert process.exits == [], (process.name, (tmp_path / f"{process.name}.log").read_text())


# ---------------------------------------------------------------------------- faults through the bridge


FAST = TimeLimits(decision_ms=300)
"""For the late-answer test: a program that sleeps 0.5 s is late."""
ROOMY = TimeLimits(decision_ms=1500)
"""For the other fault tests: no answer is late by accident on a loaded machine."""


def _faults_of(outcome: SessionOutcome, bot: str) -> set[FaultKind]:
    return {fault.kind for fault in outcome.faults if fault.bot == bot}


class TestBridgeFaults:
    """A misbehaving program is faulted by the referee like any bot; the session goes on."""

    def _play_one(self, tmp_path: Path, bot: BotEntry, time_limits: TimeLimits = ROOMY) -> SessionOutcome:
        others = [example_bot("random"), example_bot("random", name="random-2")]
        seats = (bot.name, others[0].name, others[1].name)
        outcomes, _ = asyncio.run(
            _play([bot, *others], [("heather", 21, seats)], logs=tmp_path, time_limits=time_limits)
        )
        outcome = outcomes[0]
        _check_complete(outcome, "heather")
        assert all(fault.bot == bot.name for fault in outcome.faults)
        return outcome

    def test_a_well_behaved_program_has_no_fault(self, tmp_path: Path) -> None:
        outcome = self._play_one(tmp_path, _stdio_bot("lowest", "lowest_bot.py"))
        assert outcome.faults == ()

    def test_garbage_is_forwarded_and_recorded_as_malformed(self, tmp_path: Path) -> None:
        outcome = self._play_one(tmp_path, _stdio_bot("garbage", "nonsense_bot.py"))
        assert _faults_of(outcome, "garbage") == {FaultKind.MALFORMED}
        assert "I think, therefore I bid" in outcome.faults[0].detail

    def test_a_slow_answer_is_left_to_the_referee_as_late(self, tmp_path: Path) -> None:
        outcome = self._play_one(tmp_path, _stdio_bot("sleepy", "sleepy_bot.py"), FAST)
        assert _faults_of(outcome, "sleepy") == {FaultKind.LATE}
        answered = [d for deal in outcome.decisions for d in deal if d.seat == 0 and d.fault is None]
        assert answered, "the answers in time after a late one must still count"

    def test_a_program_that_exits_is_restarted_then_the_bridge_leaves(self, tmp_path: Path) -> None:
        stderr_log = tmp_path / "exiting.stderr"
        bot = _stdio_bot("exiting", "exiting_bot.py", "--max-restarts", "1", "--stderr-log", str(stderr_log))
        outcome = self._play_one(tmp_path, bot)
        kinds = _faults_of(outcome, "exiting")
        assert kinds <= {FaultKind.LATE, FaultKind.DISCONNECT}
        assert FaultKind.DISCONNECT in kinds
        log = (tmp_path / "exiting.log").read_text()
        assert "restart 1 of 1" in log
        assert "no restart left" in log
        assert "exiting on purpose" in stderr_log.read_text()


# ---------------------------------------------------------------------------- the parts


def _request(seed: int = 3) -> bytes:
    session = RulesSession(get_profile("heather"), table_size=4, seed=seed)
    for _ in range(6):  # into the play phase, or through a passed deal
        session.apply(session.view(session.to_act).legal_actions[-1])  # type: ignore[arg-type]
    view = session.view(session.to_act)  # type: ignore[arg-type]
    return encode_request(
        request_to_proto(view, table="t1", request_id=2**40 + 7, deadline_ms=900, time_bank_ms=100)
    )


class TestJsonLines:
    def test_a_request_line_of_the_pool_variants(self) -> None:
        """The exchange and widow phases by name; a seat's drawn and given-up cards, the widow it took."""
        session = RulesSession(get_profile("ecarte"), table_size=3, seed=4)
        session.apply(session.legal_actions()[-1])  # the eldest exchanges its whole hand
        seat = session.to_act
        assert seat is not None
        line = json.loads(
            encode_request(
                request_to_proto(session.view(seat), table="t", request_id=1, deadline_ms=9, time_bank_ms=0)
            )
        )
        assert line["view"]["phase"] == "exchange"
        assert line["legal_actions"][0] == "exchange:none"
        assert line["view"]["drawn"] == line["view"]["discarded"] == []  # the eldest's, not this seat's
        assert sorted(line["view"]["exchanged"]) == [0, 0, 5]
        assert line["view"]["pool"] == 5
        eldest = (seat - 1) % 3
        own = session.view(eldest)
        mine = json.loads(
            encode_request(request_to_proto(own, table="t", request_id=2, deadline_ms=9, time_bank_ms=0))
        )
        assert mine["view"]["drawn"] == [card.text for card in own.drawn]
        assert len(mine["view"]["discarded"]) == 5
        peep = RulesSession(get_profile("peep"), table_size=3, seed=1)
        while peep.deal.phase.value != "widow":
            legal = peep.legal_actions()
            peep.apply(parse_action("nap") if parse_action("nap") in legal else legal[0])
        declarer = peep.to_act
        assert declarer is not None
        peep.apply(peep.legal_actions()[1])  # takes the widow
        line = json.loads(
            encode_request(
                request_to_proto(peep.view(declarer), table="t", request_id=3, deadline_ms=9, time_bank_ms=0)
            )
        )
        assert line["view"]["widow"] == str(peep.deal.widow)
        assert line["view"]["widow_taken"] is True
        assert line["view"]["phase"] == "play"

    def test_a_request_line_holds_the_whole_view(self) -> None:
        line = _request()
        assert line.endswith(b"\n")
        assert line.count(b"\n") == 1
        request = json.loads(line)
        assert request["request_id"] == 2**40 + 7
        assert set(request) == {
            "version",
            "request_id",
            "table",
            "seat",
            "deadline_ms",
            "time_bank_ms",
            "view",
            "legal_actions",
        }
        assert set(request["view"]) >= {
            "table",
            "seat",
            "number_of_seats",
            "profile",
            "deal_number",
            "deals_in_session",
            "dealer",
            "phase",
            "to_act",
            "hand",
            "bids",
            "declarer",
            "contract",
            "trump",
            "current_trick",
            "completed_tricks",
            "tricks_won",
            "balances",
            "active",
            "pool",
            "exchanged",
            "peeked",
            "widow",
            "drawn",
            "discarded",
            "widow_taken",
        }
        # and nothing but nap.v1 SeatView's fields, in its order (a field added there is in the line)
        assert list(request["view"]) == [field.name for field in nap_pb2.SeatView.DESCRIPTOR.fields]
        assert request["view"]["phase"] in {"bidding", "play"}
        assert request["view"]["exchanged"] == [0, 0, 0, 0]  # one count per seat, though none on the wire
        assert request["view"]["widow_taken"] is None
        assert all(parse_action(action) for action in request["legal_actions"])

    @pytest.mark.parametrize(
        ("line", "action"),
        [
            (b'{"action": "QH"}\n', "QH"),
            (b'{"request_id": 9, "action": "10S"}', "10S"),
            (b'{"request_id": "9", "action": "pass"}', "pass"),
            (b'"nap"\r\n', "nap"),
            (b"  three  \n", "three"),
            (b"hello world", "hello world"),
            (b'{"act": "QH"}', '{"act": "QH"}'),
            (b'{"action": 7}', '{"action": 7}'),
            (b"{not json", "{not json"),
        ],
    )
    def test_a_reply_gives_the_action_to_forward(self, line: bytes, action: str) -> None:
        assert decode_reply(line, request_id=9) == action

    def test_a_reply_to_another_request_is_forwarded_as_no_action(self) -> None:
        text = decode_reply(b'{"request_id": 8, "action": "QH"}', request_id=9)
        with pytest.raises(ValueError, match="not an action"):
            parse_action(text)

    def test_a_long_reply_is_cut(self) -> None:
        assert len(decode_reply(b"x" * 10_000, request_id=1)) == MAX_FORWARDED_CHARS


class TestBridgeOptions:
    def test_the_bridge_hello_lists_what_its_program_answers(self) -> None:
        """``--decisions`` goes into the Hello; by default none (a program of bids and cards)."""
        from clients.stdio.bridge import parse_arguments  # noqa: PLC0415

        common = ["--address", "127.0.0.1:1", "--token", "t"]
        _, options = parse_arguments([*common, "--decisions", "exchange,peep,widow", "--", "./bot"])
        assert options.decisions == ("exchange", "peep", "widow")
        _, options = parse_arguments([*common, "--", "./bot"])
        assert options.decisions == ()
        with pytest.raises(SystemExit):
            parse_arguments([*common, "--decisions", "swap", "--", "./bot"])


class TestChild:
    def test_replies_match_requests_in_order_and_late_ones_are_dropped(self) -> None:
        """A reply that comes after its deadline is thrown away; the next one still matches."""
        program = (
            "import sys, time\n"
            "for n, line in enumerate(sys.stdin):\n"
            "    time.sleep(0.4 if n == 0 else 0)\n"
            "    print('reply', n, flush=True)\n"
        )

        async def run() -> tuple[list[bytes | None], int]:
            child = ChildBot(
                [sys.executable, "-c", program],
                log=lambda _line: None,
                stderr=StderrTail(log=lambda _line: None),
            )
            await child.start()
            loop = asyncio.get_running_loop()
            replies = [await child.ask(b"{}\n", table="t", expires_at=loop.time() + 0.2)]
            replies += [await child.ask(b"{}\n", table="t", expires_at=loop.time() + 5) for _ in range(2)]
            await child.close()
            return replies, child.stale_replies

        replies, stale = asyncio.run(run())
        assert replies == [None, b"reply 1", b"reply 2"]
        assert stale == 1

    def test_a_hung_program_is_killed_and_restarted(self) -> None:
        program = (
            "import sys, time\n"
            "for line in sys.stdin:\n"
            "    time.sleep(60 if 'hang' in line else 0)\n"
            "    print('ok', flush=True)\n"
        )
        logged: list[str] = []

        async def run() -> tuple[bytes | None, int]:
            child = ChildBot(
                [sys.executable, "-c", program],
                log=logged.append,
                stderr=StderrTail(log=logged.append),
                hang_timeout_s=0.3,
            )
            await child.start()
            loop = asyncio.get_running_loop()
            assert await child.ask(b'{"hang": 1}\n', table="t", expires_at=loop.time() + 0.1) is None
            for _ in range(100):  # killed 0.3 s past the deadline, restarted 0.2 s later
                if child.restarts and child.pid is not None:
                    break
                await asyncio.sleep(0.1)
            reply = await child.ask(b"{}\n", table="t", expires_at=loop.time() + 5)
            await child.close()
            return reply, child.restarts

        assert asyncio.run(run()) == (b"ok", 1)
        assert any("killing it" in line for line in logged)

    def test_a_missing_program_is_one_clear_error(self) -> None:
        async def run() -> None:
            child = ChildBot(
                ["./no-such-bot"], log=lambda _line: None, stderr=StderrTail(log=lambda _line: None)
            )
            await child.start()

        with pytest.raises(ChildError, match=r"bot program not found: \./no-such-bot"):
            asyncio.run(run())

    def test_the_bridge_exits_1_when_its_program_cannot_start(self) -> None:
        done = subprocess.run(
            [*BRIDGE, "--address", "127.0.0.1:1", "--token", "x", "--", "./no-such-bot"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            cwd=ROOT,
        )
        assert done.returncode == 1
        assert "bot program not found" in done.stderr


def _block(markdown: str, fence: str, first_line: str) -> str:
    """The fenced ``fence`` block of ``markdown`` whose text starts with ``first_line`` (fences cut)."""
    for part in markdown.split(f"```{fence}\n")[1:]:
        text = part.split("```", 1)[0]
        if text.startswith(first_line):
            return text
    pytest.fail(f"no {fence} block starting {first_line!r} in the doc")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed: apt-get install jq")
def test_the_jq_bot_of_the_docs_passes_its_check(tmp_path: Path) -> None:
    """docs/stdio-protocol.md's shell-script bot, its files as the doc shows them, passes `nap bot check`."""
    doc = (ROOT / "docs" / "stdio-protocol.md").read_text(encoding="utf-8")
    folder = tmp_path / "jqbot"
    folder.mkdir()
    folder.chmod(0o755)  # a sandbox run by root starts bots as another user
    (folder / "bot.sh").write_text(_block(doc, "sh", "#!/bin/sh\n# jqbot/bot.sh"), encoding="utf-8")
    (folder / "nap-bot.toml").write_text(_block(doc, "toml", "# jqbot/nap-bot.toml"), encoding="utf-8")
    checked = CliRunner().invoke(main, ["bot", "check", str(folder), "-n", "3"])
    assert checked.exit_code == 0, checked.output
    assert "faults: none" in checked.output
    assert "verdict: PASS" in checked.output
