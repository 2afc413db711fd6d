"""Published standings: three files, a JSON that reads back, a page that needs no network."""

from __future__ import annotations

import html
import json
import random
import re
import shlex
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest
from rich.console import Console

from referee.match.faults import Fault, FaultKind
from referee.rules import PROFILES, Session, SessionRecord, record_of
from tests.rotation_helpers import synthetic
from tournaments.cli import reports
from tournaments.cli.progress import show_standings, standings_printer, standings_table
from tournaments.plan.candidate_match import MatchPlan, MatchSummary, summarize
from tournaments.report.outfolder import point_latest
from tournaments.report.publish import _cross_cell, from_json, publish, render_html, render_markdown, to_json
from tournaments.report.session_pages import (
    SessionLink,
    chosen_for_replay,
    render_sessions_html,
    replay_command,
    sessions_href,
    write_session_pages,
)
from tournaments.results import Declaration, SeatResult, SessionResult
from tournaments.stats.sprt import Sprt
from tournaments.stats.standings import Standings, compute_standings
from tournaments.store.logs import encode_log

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def seat(seat: int, bot: str, chips: int, *, win_share: float = 0.0) -> SeatResult:
    return SeatResult(
        seat=seat,
        bot=bot,
        chips=chips,
        win_share=win_share,
        declarations=(Declaration("nap", made=chips > 0),) if seat == 0 else (),
        faults=1 if bot == "late|bot" else 0,
    )


@pytest.fixture
def standings() -> Standings:
    """Three bots over two blocks, plus a fourth (with an awkward name) over one block."""
    results = [
        SessionResult(
            tournament=1,
            block=block,
            rotation=rotation,
            board_seed=block,
            seats=(
                seat(0, "alpha", 5 + block, win_share=1.0),
                seat(1, "<beta>", -2),
                seat(2, "gamma", -3 - block),
            ),
        )
        for block in range(2)
        for rotation in range(3)
    ]
    results.append(
        SessionResult(
            tournament=1,
            block=2,
            rotation=0,
            board_seed=2,
            seats=(
                seat(0, "alpha", 1, win_share=0.5),
                seat(1, "late|bot", 1, win_share=0.5),
                seat(2, "gamma", -2),
            ),
        )
    )
    return compute_standings(results)


class TestPublish:
    def test_writes_three_files(self, standings: Standings, tmp_path: Path) -> None:
        folder = tmp_path / "out" / "nested"
        paths = publish(standings, folder, title="Test cup")
        assert [p.name for p in paths] == ["standings.md", "standings.json", "standings.html"]
        assert all(p.parent == folder and p.stat().st_size > 0 for p in paths)

    def test_json_round_trips(self, standings: Standings, tmp_path: Path) -> None:
        """Reading the JSON file back gives exactly the standings that were written."""
        _, data, _ = publish(standings, tmp_path, title="Test cup")
        loaded = json.loads(data.read_text(encoding="utf-8"))
        assert from_json(loaded) == standings
        assert loaded["title"] == "Test cup"
        assert loaded == to_json(standings, title="Test cup")

    def test_json_keeps_undefined_intervals_as_null(self, standings: Standings) -> None:
        """late|bot played one block: its interval is null, not a number or Infinity."""
        data = json.loads(json.dumps(to_json(standings, title="t"), allow_nan=False))
        late = next(line for line in data["bots"] if line["bot"] == "late|bot")
        assert late["chips_per_session"]["half_width"] is None
        assert late["chips_per_session"]["low"] is None
        assert late["chips_per_session"]["warning"] == "a single block"
        assert [line["bot"] for line in data["bots"]] == [line.bot for line in standings.bots]
        assert [line["rank"] for line in data["bots"]] == [line.rank for line in standings.bots]

    def test_from_json_rejects_other_layouts(self) -> None:
        with pytest.raises(ValueError, match="not nap-arena-standings/3 data"):
            from_json({"format": "something-else"})


class TestHtml:
    def test_self_contained(self, standings: Standings) -> None:
        """No network references of any kind, no scripts, and an inline SVG chart."""
        page = render_html(standings, title="Test cup")
        assert not re.search(r"https?://", page)
        assert "<script" not in page
        assert "<link" not in page
        assert "<svg" in page
        assert "</svg>" in page

    def test_escapes_bot_names(self, standings: Standings) -> None:
        page = render_html(standings, title="Cup <1>")
        assert "<beta>" not in page
        assert "&lt;beta&gt;" in page
        assert "<title>Cup &lt;1&gt;</title>" in page

    def test_chart_draws_error_bars_only_where_defined(self, standings: Standings) -> None:
        """alpha and gamma vary over their blocks (a bar and two end ticks each); <beta> lost 2
        in both its blocks and late|bot played one: a dot and the reason, no bar."""
        page = render_html(standings, title="t")
        svg = page[page.index("<svg") : page.index("</svg>")]
        assert svg.count("<circle") == 4
        assert svg.count('stroke="#3366aa"') == 2 * 3
        assert "(a single block)" in svg
        assert "-2.00 (no variation over 2 blocks)" in svg


class TestMarkdown:
    def test_one_row_per_bot_in_rank_order(self, standings: Standings) -> None:
        text = render_markdown(standings, title="Test cup")
        assert text.startswith("# Test cup\n")
        rows = [line for line in text.splitlines() if re.match(r"\| [1-9]=? \|", line)]
        assert [row.split(" | ")[1] for row in rows] == [
            line.bot.replace("|", "\\|") for line in standings.bots
        ]

    def test_pipes_in_names_are_escaped(self, standings: Standings) -> None:
        """A "|" in a bot id must not add a column: every ranking row has the header's."""
        lines = render_markdown(standings).splitlines()
        table = lines[4 : 6 + len(standings.bots)]
        columns = {len(re.split(r"(?<!\\)\|", line)) for line in table}
        assert columns == {len(re.split(r"\|", lines[4]))}
        assert any("late\\|bot" in line for line in table)

    def test_shows_interval_or_na(self, standings: Standings) -> None:
        text = render_markdown(standings)
        alpha = standings.bot("alpha").chips
        assert alpha.half_width is not None
        assert f"{alpha.mean:+.2f} ± {alpha.half_width:.2f} (only 3 blocks)" in text
        assert "+1.00 (a single block)" in text
        assert "± n/a" not in text

    def test_crosstable_rows_read_row_minus_column(self, standings: Standings) -> None:
        text = render_markdown(standings)
        head = standings.versus("alpha", "gamma")
        assert head is not None
        cross = text[text.index("## Crosstable") :]
        alpha_row = next(line for line in cross.splitlines() if line.startswith("| alpha |"))
        assert f"{head.difference.mean:+.2f}" in alpha_row
        assert head.difference.mean > 0


class TestNoOverclaiming:
    """What the files show never claims more than the blocks do."""

    def clones(self) -> Standings:
        """Two clones that tie in every one of five blocks, and a weaker third bot."""
        return compute_standings(
            [
                SessionResult(
                    tournament=1,
                    block=block,
                    rotation=rotation,
                    board_seed=block,
                    seats=(
                        seat(0, "peel", 2 + block),
                        seat(1, "peel-2", 2 + block),
                        seat(2, "rnd", -4 - 2 * block),
                    ),
                )
                for block in range(5)
                for rotation in range(3)
            ]
        )

    def test_no_zero_width_interval_anywhere(self) -> None:
        """The issue's `peel - peel-2: +0.00 ± 0.00 (5)` is shown with the reason instead."""
        standings = self.clones()
        for text in (render_markdown(standings), render_html(standings)):
            assert "± 0.00" not in text
            assert "+0.00 (no variation over 5 blocks) (5)" in text
        data = to_json(standings, title="t")
        entry = next(e for e in data["crosstable"] if (e["bot"], e["opponent"]) == ("peel", "peel-2"))
        assert entry["difference"]["half_width"] is None
        assert entry["difference"]["warning"] == "no variation over 5 blocks"
        assert entry["los"] is None

    def test_clones_share_their_rank_and_the_rating_is_no_interval(self) -> None:
        standings = self.clones()
        text = render_markdown(standings)
        rows = [line for line in text.splitlines() if line.startswith("| 1= |")]
        assert {row.split(" | ")[1] for row in rows} == {"peel", "peel-2"}
        header = next(line for line in text.splitlines() if line.startswith("| # |"))
        assert "±" not in header
        assert "rating (Bradley-Terry)" in header
        assert [line["tied"] for line in to_json(standings, title="t")["bots"]] == [True, True, False]

    def test_ranks_shared_for_too_few_blocks_say_why(self) -> None:
        """Three blocks: the leader, far ahead, still shares rank 1, and every output says why."""
        few = compute_standings(synthetic(random.Random(1), blocks=3, cheater="gamma", gain=60))
        leader, second = few.bots[:2]
        versus = few.versus(leader.bot, second.bot)
        assert versus is not None
        assert (versus.difference.low or 0) > 0  # an interval above zero, from too few blocks
        assert (leader.rank, second.rank, few.too_few_blocks) == (1, 1, 3)
        why = "Ranks are shared because the blocks are too few"
        shared = "at least 5 blocks, and here bots side by side shared only 3 blocks."
        terminal = Console(record=True, width=400, force_terminal=True)
        show_standings(terminal, few, title="few")
        pipe = Console(record=True, width=80)
        show_standings(pipe, few, title="few")
        for text in (render_markdown(few), render_html(few), terminal.export_text(), pipe.export_text()):
            words = " ".join(text.split())  # a caption wraps
            assert words.count(why) == 1
            assert shared in words
        many = compute_standings(synthetic(random.Random(1), blocks=40, cheater="gamma", gain=60))
        assert many.too_few_blocks is None
        assert why not in render_markdown(many) + render_html(many)

    def test_live_standings_say_they_are_not_a_stopping_rule(self) -> None:
        console = Console(record=True, width=200)
        console.print(standings_table(self.clones(), live=True))
        console.print(standings_table(self.clones()))
        shown = console.export_text()
        assert shown.count("not a stopping rule") == 1
        assert "nap match --sprt" in shown
        assert "±0.00" not in shown
        assert "0.000 n/a (no variation)" in shown  # rnd never won: no interval, not ±0.000, and why
        assert "1=" in shown


class TestMatch:
    """A match's summary in every file: edge, interval, LOS, blocks and sessions, verdict."""

    def summary(self) -> MatchSummary:
        results = [
            SessionResult(
                tournament=1,
                block=block,
                rotation=rotation,
                board_seed=block,
                seats=(seat(0, "new", 4 + block % 3), seat(1, "old", -2 - block % 3), seat(2, "old-2", -2)),
            )
            for block in range(12)
            for rotation in range(3)
        ]
        return summarize(results, MatchPlan(candidate="new", sprt=Sprt(d0=0, d1=3, min_blocks=4)))

    def test_summary_in_markdown_html_and_json(self, standings: Standings, tmp_path: Path) -> None:
        match = self.summary()
        assert match.state is not None
        assert match.state.verdict == "H1"
        md, data, page = publish(standings, tmp_path, title="t", match=match)
        for text in (md.read_text(encoding="utf-8"), html.unescape(page.read_text(encoding="utf-8"))):
            assert (
                f"new against old, old-2 at 3 seats: {match.blocks} blocks, {match.sessions} sessions" in text
            )
            assert "edge (chips per session over the average opponent): +" in text
            assert "likelihood of superiority: 100.0%" in text
            assert "verdict: H1 accepted: new is stronger" in text
        loaded = json.loads(data.read_text(encoding="utf-8"))
        assert loaded["match"]["sprt"]["verdict"] == "H1"
        assert loaded["match"]["blocks"] == match.blocks
        assert from_json(loaded) == standings

    def test_no_match_no_section(self, standings: Standings) -> None:
        assert "## Match" not in render_markdown(standings)
        assert to_json(standings, title="t")["match"] is None


# -- pages linked to the sessions ------------------------------------------------------------


def random_record(seed: int) -> SessionRecord:
    """A whole heather session at three seats under a seeded random policy."""
    rng = random.Random(seed)
    session = Session(PROFILES["heather"], table_size=3, seed=seed)
    while not session.over:
        session.apply(rng.choice(session.legal_actions()))
    return record_of(session)


def late(seat: int, bot: str, *, deal: int = 1, decision: int = 4) -> Fault:
    return Fault(
        kind=FaultKind.LATE,
        bot=bot,
        table="t",
        seat=seat,
        deal=deal,
        decision=decision,
        elapsed_ms=1032.5,
        detail="answered after the deadline",
    )


def logged_sessions(root: Path, count: int, *, faulty: tuple[int, ...] = ()) -> list[SessionLink]:
    """``count`` sessions of alpha, <beta> and gamma, with real logs; ``faulty`` ones have a late <beta>.

    Session N's log, as the store would keep it, is written to ``root/sN.log`` (see :func:`reader`).
    """
    bots = ("alpha", "<beta>", "gamma")
    links = []
    for number in range(count):
        record = random_record(number)
        faults = (late(1, "<beta>"),) if number + 1 in faulty else ()
        payload = {
            "record": record.to_json(),
            "bots": [{"seat": seat, "bot": bot} for seat, bot in enumerate(bots)],
            "faults": [fault.to_json() for fault in faults],
        }
        root.mkdir(parents=True, exist_ok=True)
        (root / f"s{number + 1}.log").write_bytes(encode_log(payload, tournament=1, block=number, rotation=0))
        links.append(
            SessionLink(
                id=number + 1,
                tournament=1,
                block=number,
                rotation=0,
                bots=bots,
                chips=tuple(record.balances),
                winners=tuple(record.winners),
                faults=faults,
            )
        )
    return links


def reader(root: Path) -> Callable[[int], bytes]:
    """The logs :func:`logged_sessions` wrote under ``root``, by session id (as ``Store.log`` gives them)."""
    return lambda session_id: (root / f"s{session_id}.log").read_bytes()


def anchors(page: str) -> list[tuple[str, str]]:
    """Every link on a page as (href, text), both unescaped, tags stripped from the text."""
    found = re.findall(r'<a [^>]*href="([^"]*)"[^>]*>(.*?)</a>', page, re.DOTALL)
    return [(html.unescape(href), html.unescape(re.sub(r"<[^>]+>", "", text))) for href, text in found]


class TestLinkedPages:
    """standings.html links bots, crosstable cells and faulty sessions to sessions.html and replays."""

    def test_standings_without_sessions_link_nothing(self, standings: Standings) -> None:
        assert "<a " not in render_html(standings, title="t")

    def test_each_bot_and_cell_links_its_sessions(self, standings: Standings, tmp_path: Path) -> None:
        """A bot's name: its sessions; a cell: the sessions of its row and column bots; names quoted."""
        page = render_html(standings, title="t", sessions=logged_sessions(tmp_path, 1))
        links = anchors(page)
        for name in ("alpha", "<beta>", "gamma", "late|bot"):
            href = sessions_href(bot=name)
            assert (href, name) in links
            assert href.endswith("=" + quote(name, safe=""))
        assert ("sessions.html#bot=%3Cbeta%3E", "<beta>") in links
        cell = _cross_cell(standings, "alpha", "gamma")
        assert ("sessions.html#bot=alpha&opponent=gamma", cell) in links
        assert not [href for href, _ in links if "opponent=alpha" in href and "bot=alpha" in href]
        assert ("sessions.html#bot=late%7Cbot&faults=1", "1") in links, "a fault count links its sessions"

    def test_faulty_sessions_open_their_replay_at_the_first_fault(
        self, standings: Standings, tmp_path: Path
    ) -> None:
        """A faulty session with a replay page links it at the step after the fault; one without, its row."""
        sessions = logged_sessions(tmp_path, 3, faulty=(2, 3))
        links = anchors(render_html(standings, title="t", sessions=sessions, replays={2}))
        faulty = [(href, text) for href, text in links if text.startswith("session ")]
        assert faulty == [
            (
                "replays/s2.html#view=table&deal=1&step=5",
                "session 2 (block 1, rotation 0): 1 fault, first at deal 2, decision 5: seat 1 (<beta>) late",
            ),
            (
                "sessions.html#s3",
                "session 3 (block 2, rotation 0): 1 fault, first at deal 2, decision 5: seat 1 (<beta>) late",
            ),
        ]

    def test_faulty_sessions_first_then_the_first_played(self, tmp_path: Path) -> None:
        sessions = logged_sessions(tmp_path, 5, faulty=(4, 2))
        assert [link.id for link in chosen_for_replay(sessions, limit=3)] == [2, 4, 1]
        assert [link.id for link in chosen_for_replay(sessions, limit=10)] == [2, 4, 1, 3, 5]

    def test_publish_writes_the_sessions_list_and_a_few_replays(
        self, standings: Standings, tmp_path: Path
    ) -> None:
        """At most ``replay_limit`` replays; every other row links where its command writes the page."""
        sessions = logged_sessions(tmp_path / "logs", 4, faulty=(3,))
        folder = tmp_path / "t1"
        publish(
            standings,
            folder,
            title="t",
            sessions=sessions,
            log=reader(tmp_path / "logs"),
            db=tmp_path / "nap.db",
            replay_limit=2,
        )
        assert sorted(p.name for p in (folder / "replays").iterdir()) == ["s1.html", "s3.html"]
        replay = (folder / "replays" / "s3.html").read_text(encoding="utf-8")
        assert '"faults":[{"deal":1,"step":5,"decision":4,"seat":1,"bot":"<beta>","kind":"late"' in replay
        assert '"links":[{"text":"standings","href":"../standings.html"}' in replay
        listing = (folder / "sessions.html").read_text(encoding="utf-8")
        hrefs = [href for href, text in anchors(listing) if text == "replay"]
        assert hrefs == [
            "replays/s1.html",
            "replays/s2.html",
            "replays/s3.html#view=table&deal=1&step=5",
            "replays/s4.html",
        ]
        command = replay_command(2, folder / "replays" / "s2.html", tmp_path / "nap.db")
        assert html.escape(command) in listing
        assert replay_command(1, folder / "replays" / "s1.html", tmp_path / "nap.db") not in listing
        assert shlex.split(command) == [
            "nap", "log", "html", "2", "--db", str(tmp_path / "nap.db"),
            "-o", str(folder / "replays" / "s2.html"),
        ]  # fmt: skip

    def test_a_replay_page_once_written_is_kept(self, standings: Standings, tmp_path: Path) -> None:
        """Publishing again writes the pages still missing and leaves the others alone (cheap re-runs)."""
        sessions = logged_sessions(tmp_path / "logs", 3)
        folder = tmp_path / "t1"
        publish(
            standings, folder, title="t", sessions=sessions, log=reader(tmp_path / "logs"), replay_limit=1
        )
        kept = folder / "replays" / "s1.html"
        kept.write_text("kept", encoding="utf-8")
        _, made = write_session_pages(folder, sessions, title="t", log=reader(tmp_path / "logs"), limit=2)
        assert made == {1, 2}
        assert kept.read_text(encoding="utf-8") == "kept"

    def test_the_sessions_list_is_escaped_and_filterable(self, tmp_path: Path) -> None:
        """Each row carries its bots and faulty bots as JSON for the filter; names are escaped."""
        sessions = logged_sessions(tmp_path, 2, faulty=(2,))
        page = render_sessions_html(sessions, title="<cup>", made=set(), folder=tmp_path)
        assert "<beta>" not in page
        assert "<title>Sessions: &lt;cup&gt;</title>" in page
        rows = re.findall(r"<tr data-bots='([^']*)' data-fault-bots='([^']*)'>", page)
        assert [(json.loads(html.unescape(a)), json.loads(html.unescape(b))) for a, b in rows] == [
            (["alpha", "<beta>", "gamma"], []),
            (["alpha", "<beta>", "gamma"], ["<beta>"]),
        ]
        assert "seat 1 (&lt;beta&gt;): 1 late<br>first at deal 2, decision 5" in page


class TestFairPlay:
    """Each bot's edge on boards played before in every file; a flagged bot's warning, and only then."""

    def flagged(self) -> Standings:
        return compute_standings(synthetic(random.Random(11), blocks=40, cheater="gamma", gain=9))

    def honest(self) -> Standings:
        return compute_standings(synthetic(random.Random(1), blocks=40))

    def test_a_flagged_bot_is_warned_of_in_every_file(self) -> None:
        standings = self.flagged()
        gamma = standings.bot("gamma")
        assert gamma.rotation_flagged
        assert gamma.rotation_edge is not None
        assert gamma.rotation_edge.half_width is not None
        sentence = (
            f"gamma does better on boards it has seen played before: {gamma.rotation_edge.mean:+.2f} ± "
            f"{gamma.rotation_edge.half_width:.2f} chips a session over 40 blocks (one-sided t test, 1% "
            "false-positive rate over all bots); a bot that remembers boards does this; see docs/security.md"
        )
        markdown = render_markdown(standings)
        assert "## Fair play" in markdown
        assert f"**{sentence}**" in markdown
        assert markdown.count("does better on boards") == 1
        for line in standings.bots:
            assert f"- {line.bot}: " in markdown
        page = render_html(standings)
        assert "<h2>Fair play</h2>" in page
        assert html.escape(sentence) in page
        assert page.count("does better on boards") == 1

    def test_json_says_the_edges_the_flags_and_the_test(self) -> None:
        standings = self.flagged()
        data = json.loads(json.dumps(to_json(standings, title="t"), allow_nan=False))
        assert data["rotation_test"] == {
            "method": "one-sided Student t test of mean rotation edge > 0 over complete blocks,"
            " Bonferroni over the bots tested",
            "alpha": 0.01,
            "min_blocks": 10,
        }
        by_bot = {line["bot"]: line for line in data["bots"]}
        assert {bot for bot, line in by_bot.items() if line["rotation_flagged"]} == {"gamma"}
        assert by_bot["gamma"]["rotation_edge"]["n"] == 40
        assert by_bot["gamma"]["rotation_edge"]["low"] > 0
        assert from_json(data) == standings
        lone = compute_standings(synthetic(random.Random(2), blocks=1)[:3])  # an incomplete block
        assert [line["rotation_edge"] for line in to_json(lone, title="t")["bots"]] == [None] * 4
        assert from_json(to_json(lone, title="t")) == lone

    def test_no_flag_no_warning(self) -> None:
        standings = self.honest()
        assert not any(line.rotation_flagged for line in standings.bots)
        for text in (render_markdown(standings), render_html(standings)):
            assert "Fair play" in text
            assert "does better on boards" not in text

    def test_the_console_warns_under_the_table_only_of_a_flagged_bot(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        screen = Console(record=True, width=400)
        monkeypatch.setattr(reports, "console", screen)
        reports.print_standings(self.honest(), title="honest", match=None)
        assert "does better on boards" not in screen.export_text()
        reports.print_standings(self.flagged(), title="flagged", match=None)
        shown = screen.export_text()
        assert shown.count("does better on boards") == 1
        assert shown.index("gamma does better on boards") > shown.index("rating")  # under the table
        live = standings_printer(None)
        live(self.honest())
        assert "does better on boards" not in capsys.readouterr().err
        live(self.flagged())
        assert capsys.readouterr().err.count("gamma does better on boards") == 1


def test_latest_is_the_newest_tournament_whichever_finishes_last(tmp_path: Path) -> None:
    """Two runs at once: the older may be published last, and ``latest`` stays at the newer."""
    for number in (1, 2):
        (tmp_path / f"t{number}").mkdir()
        (tmp_path / f"t{number}" / "standings.json").write_text("{}", encoding="utf-8")
    assert point_latest(tmp_path, 2) == tmp_path / "latest"
    assert point_latest(tmp_path, 1) == tmp_path / "latest"
    assert (tmp_path / "latest").readlink().name == "t2"
    (tmp_path / "t3").mkdir()
    (tmp_path / "t3" / "standings.json").write_text("{}", encoding="utf-8")
    point_latest(tmp_path, 3)
    assert (tmp_path / "latest").readlink().name == "t3"
