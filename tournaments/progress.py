"""The tournament's console display: a progress bar's columns and a live standings table.

Everything a running tournament prints is built here; the runner only decides when
(:class:`~tournaments.runner.RunOptions`), and calls :func:`standings_printer`'s result
unless it is given another way to report live standings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from collections.abc import Callable

    from tournaments.standings import Standings


class SpeedColumn(ProgressColumn):
    """Sessions per second, from rich's moving estimate."""

    def render(self, task: Task) -> Text:
        """The speed as ``123.4 sessions/s`` (blank until there is an estimate)."""
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.1f} sessions/s", style="progress.data.speed")


def progress_columns() -> tuple[ProgressColumn, ...]:
    """Columns for a tournament's ``rich`` progress bar: done/total, speed, time left."""
    return (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        SpeedColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
    )


def standings_table(standings: Standings, *, title: str = "Standings") -> Table:
    """A compact ``rich`` table of live standings (chips per session with 95% interval)."""
    table = Table(title=title)
    for header in ("#", "bot", "sessions", "chips/session", "95% CI", "win share", "faults"):
        table.add_column(header, justify="left" if header == "bot" else "right")
    for rank, line in enumerate(standings.bots, start=1):
        half = line.chips.half_width
        table.add_row(
            str(rank),
            line.bot,
            str(line.sessions),
            f"{line.chips.mean:+.2f}",
            "n/a" if half is None else f"±{half:.2f}",
            f"{line.win_share:.3f}",
            str(line.faults),
        )
    return table


def standings_printer(progress: Progress | None) -> Callable[[Standings], None]:
    """Print live standings as a table: above ``progress``'s bar, or to stderr without one."""
    console = progress.console if progress is not None else Console(stderr=True)

    def show(standings: Standings) -> None:
        console.print(standings_table(standings, title=f"Standings after {standings.sessions} sessions"))

    return show
