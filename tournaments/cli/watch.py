"""``--watch`` on ``nap tournament run`` and ``resume``: the run's live page in a browser.

The page is served by the runner's own process while it plays (:mod:`tournaments.web.watch`):
it prints the page's address, with its secret token, and opens a browser unless
``--no-browser``. A run without ``--watch`` serves nothing and pays nothing for it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

from tournaments.cli.app import console, open_browser

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from tournaments.play.runner import RunOptions
    from tournaments.store.database import Store

P = ParamSpec("P")
R = TypeVar("R")

__all__ = ["WatchRequest", "play_watched", "watch_options"]


@dataclass(frozen=True, slots=True, kw_only=True)
class WatchRequest:
    """What ``--watch`` asks: the page's port (0: a free one) and whether to open a browser."""

    port: int = 0
    browser: bool = True


def watch_options(command: Callable[..., R]) -> Callable[..., R]:
    """``--watch``, ``--port`` and ``--no-browser``, handed to the command as one ``watch``.

    ``watch`` is None when ``--watch`` is not given (the other two are refused without it).
    """

    @functools.wraps(command)
    def wrapper(*args: Any, watch: bool, port: int | None, no_browser: bool, **kwargs: Any) -> R:  # noqa: ANN401 - the command's own
        if not watch and (port is not None or no_browser):
            msg = "--port and --no-browser go with --watch"
            raise click.UsageError(msg)
        request = WatchRequest(port=port or 0, browser=not no_browser) if watch else None
        return command(*args, watch=request, **kwargs)

    for option in (
        click.option(
            "--no-browser", is_flag=True, help="With --watch: print the page's address, open no browser."
        ),
        click.option(
            "--port",
            type=click.IntRange(1, 65535),
            default=None,
            help="With --watch: serve the page on this port of 127.0.0.1 (default: a free one).",
        ),
        click.option(
            "--watch",
            is_flag=True,
            help="Watch the run live in a browser: standings, progress, faults and any table in "
            "play (a page on 127.0.0.1 with a secret token; docs/watch.md).",
        ),
    ):
        wrapper = option(wrapper)
    return wrapper


def play_watched(
    play: Callable[[RunOptions], Coroutine[Any, Any, int]],
    options: RunOptions,
    *,
    store: Store,
    request: WatchRequest,
) -> int:
    """Run ``play`` (a run or a resume, given its options) with its watch page served; the tournament's id.

    The page follows the run as one more of ``options``' observers. Its port is bound
    before the run starts (WatchError, one line, when it cannot be), its address printed
    and, unless asked not to, opened in a browser.
    """
    from tournaments.web.watch import Watch  # noqa: PLC0415 - aiohttp only for a watched run

    watch = Watch(store=store, port=request.port)
    url = watch.bind()
    console.print(f"watch it live at {url}", markup=False, highlight=False, soft_wrap=True)
    if request.browser and not open_browser(url):
        console.print("no browser found here: open that address in one", markup=False, soft_wrap=True)

    async def main() -> int:
        async with watch:
            return await play(dataclasses.replace(options, observers=(*options.observers, watch)))

    return asyncio.run(main())
