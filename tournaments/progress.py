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

from tournaments.publish import percent, rank_label

if TYPE_CHECKING:
    from collections.abc import Callable

    from tournaments.standings import Estimate, Standings


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


def standings_table(standings: Standings, *, title: str = "Standings", live: bool = False) -> Table:
    """A compact ``rich`` table of standings: shared ranks, chips with 95% interval, win share.

    ``live`` adds the caption that live intervals are not a stopping rule.
    """
    table = Table(title=title)
    if live:
        table.caption = (
            "Intervals are not a stopping rule: stopping once one clears zero finds differences "
            "that are not there. To stop as soon as the data decides: nap match --sprt."
        )
    for header in ("#", "bot", "sessions", "chips/session", "95% CI", "LOS over next", "win share", "faults"):
        table.add_column(header, justify="left" if header == "bot" else "right")
    for position, line in enumerate(standings.bots):
        share = line.win_share
        table.add_row(
            rank_label(standings, line),
            line.bot,
            str(line.sessions),
            f"{line.chips.mean:+.2f}",
            _spread(line.chips),
            "" if position == len(standings.bots) - 1 else percent(line.los_next),
            f"{share.mean:.3f} " + ("(n/a)" if share.half_width is None else f"±{share.half_width:.3f}"),
            str(line.faults),
        )
    return table


def _spread(value: Estimate) -> str:
    """``±1.25``, ``±3.10 (3 blocks)``, ``n/a (1 block)`` or ``n/a (no variation)``: short, for a terminal."""
    if value.half_width is None:
        return "n/a (1 block)" if value.n < 2 else "n/a (no variation)"
    return f"±{value.half_width:.2f}" + ("" if value.trusted else f" ({value.n} blocks)")


def standings_printer(progress: Progress | None) -> Callable[[Standings], None]:
    """Print live standings as a table: above ``progress``'s bar, or to stderr without one."""
    console = progress.console if progress is not None else Console(stderr=True)

    def show(standings: Standings) -> None:
        console.print(
            standings_table(standings, title=f"Standings after {standings.sessions} sessions", live=True)
        )

    return show
