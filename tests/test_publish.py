"""Published standings: three files, a JSON that reads back, a page that needs no network."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest

from tournaments.publish import from_json, publish, render_html, render_markdown, to_json
from tournaments.results import Declaration, SeatResult, SessionResult
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
        assert [line["rank"] for line in data["bots"]] == [1, 2, 3, 4]

    def test_from_json_rejects_other_layouts(self) -> None:
        with pytest.raises(ValueError, match="not nap-arena-standings/1 data"):
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
        """Three bots have two blocks (interval: a bar plus two end ticks); one has none."""
        page = render_html(standings, title="t")
        svg = page[page.index("<svg") : page.index("</svg>")]
        assert svg.count("<circle") == 4
        assert svg.count('stroke="#3366aa"') == 3 * 3
        assert "n/a" in svg


class TestMarkdown:
    def test_one_row_per_bot_in_rank_order(self, standings: Standings) -> None:
        text = render_markdown(standings, title="Test cup")
        assert text.startswith("# Test cup\n")
        rows = [line for line in text.splitlines() if re.match(r"\| [1-9] \|", line)]
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
        assert f"{alpha.mean:+.2f} ± {alpha.half_width:.2f}" in text
        assert "± n/a" in text

    def test_crosstable_rows_read_row_minus_column(self, standings: Standings) -> None:
        text = render_markdown(standings)
        head = standings.versus("alpha", "gamma")
        assert head is not None
        cross = text[text.index("## Crosstable") :]
        alpha_row = next(line for line in cross.splitlines() if line.startswith("| alpha |"))
        assert f"{head.difference.mean:+.2f}" in alpha_row
        assert head.difference.mean > 0
