"""Published standings: three files, a JSON that reads back, a page that needs no network."""

from __future__ import annotations

import html
import json
import re
from typing import TYPE_CHECKING

import pytest
from rich.console import Console

from tournaments.match import MatchPlan, MatchSummary, summarize
from tournaments.progress import standings_table
from tournaments.publish import from_json, publish, render_html, render_markdown, to_json
from tournaments.results import Declaration, SeatResult, SessionResult
from tournaments.sprt import Sprt
from tournaments.standings import Standings, compute_standings

if TYPE_CHECKING:
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
        with pytest.raises(ValueError, match="not nap-arena-standings/2 data"):
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

    def test_live_standings_say_they_are_not_a_stopping_rule(self) -> None:
        console = Console(record=True, width=200)
        console.print(standings_table(self.clones(), live=True))
        console.print(standings_table(self.clones()))
        shown = console.export_text()
        assert shown.count("not a stopping rule") == 1
        assert "nap match --sprt" in shown
        assert "±0.00" not in shown
        assert "0.000 (n/a)" in shown  # rnd never won: no interval, not ±0.000
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
