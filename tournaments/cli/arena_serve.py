"""``nap arena serve``: host an arena, its pages, its API and its ladder, in one long-running process.

The first start creates the arena (its database and the folder beside it) and prints the
admin's token once; every later start goes on where the last one stopped, whether it
was stopped by SIGTERM, Ctrl-C or ``kill -9``. The rules and table sizes are the first
start's for the arena's whole life: a later start that names others is refused in one
line, and one that names none keeps them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tournaments.arena.settings import ArenaSettings
from tournaments.cli.app import console, field_default, friendly, profile_rules
from tournaments.cli.tournament import chosen_executor, executor_options
from tournaments.errors import RunnerError

if TYPE_CHECKING:
    from referee.rules import Profile
    from tournaments.arena.service import Opened
    from tournaments.play.executors.base import Executor

__all__ = ["serve"]


def _DEFAULT(name: str) -> Any:  # noqa: ANN401, N802 - a field's default, whatever its type; read as a constant
    """The default of :class:`ArenaSettings` field ``name``, for an option's help."""
    return field_default(ArenaSettings, name)


@click.command("serve")
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("arena.db"),
    show_default=True,
    help="The arena's database; its files go in the folder beside it (arena.db-files/).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Where the pages and the API listen.")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True)
@click.option(
    "--profile",
    "-p",
    type=profile_rules,
    default=None,
    help=f"Rules profile, fixed at the first start (default: {_DEFAULT('profile').name}): "
    "a built-in name or a house-rules .toml file.",
)
@click.option(
    "--table-size",
    "-k",
    "table_sizes",
    type=click.IntRange(3, 7),
    multiple=True,
    help="Seats at the ladder's tables, fixed at the first start; repeat for several "
    f"(default: {', '.join(map(str, _DEFAULT('table_sizes')))}).",
)
@click.option(
    "--decision-ms",
    type=click.IntRange(1),
    default=None,
    help=f"Each decision's limit, fixed at the first start (default: {_DEFAULT('decision_ms')}).",
)
@click.option(
    "--workers", type=click.IntRange(1), default=None, help="Worker processes (default: one per two cores)."
)
@executor_options
@click.option(
    "--tables",
    type=click.IntRange(1),
    default=None,
    help=f"Blocks each worker plays at once (default: {_DEFAULT('tables')}).",
)
@click.option(
    "--keep",
    type=click.IntRange(1),
    default=None,
    help=f"Versions of each owner on the ladder (default: {_DEFAULT('keep')}).",
)
@click.option(
    "--quota",
    type=click.IntRange(1),
    default=None,
    help=f"Submissions a person may make in 24 hours (default: {_DEFAULT('quota')}).",
)
@click.option(
    "--placement",
    type=click.IntRange(2),
    default=None,
    help=f"Blocks against the anchors that place a new entry (default: {_DEFAULT('placement_blocks')}).",
)
@click.option(
    "--sandbox",
    type=click.Choice(["on", "off"]),
    default=None,
    help="on (the default): refuse to start where uploaded bots cannot be isolated; "
    "off: for a trusted test only.",
)
@click.option(
    "--build-network", is_flag=True, default=None, help="Let a bot's build reach the network (npm ci)."
)
@friendly
def serve(  # noqa: PLR0913, PLR0917 - one parameter per command-line option
    db_path: Path,
    host: str,
    port: int,
    profile: Profile | None,
    table_sizes: tuple[int, ...],
    decision_ms: int | None,
    workers: int | None,
    executor: str,
    ray_address: str | None,
    tables: int | None,
    keep: int | None,
    quota: int | None,
    placement: int | None,
    sandbox: str | None,
    build_network: bool | None,  # noqa: FBT001 - a click flag
) -> None:
    """Host an arena: people submit bots, a duplicate ladder plays them, the pages show the leaderboard.

    The first start creates the arena in --db and prints the admin's token once (add people
    with nap arena user add). SIGTERM or Ctrl-C stops it cleanly; the same command starts it
    again where it stopped. See docs/arena.md.
    """
    given: dict[str, Any] = {
        "profile": profile,
        "table_sizes": table_sizes or None,
        "decision_ms": decision_ms,
        "tables": tables,
        "keep": keep,
        "quota": quota,
        "placement_blocks": placement,
        "sandbox": sandbox,
        "build_network": build_network,
    }
    chosen = chosen_executor(executor, ray_address)
    settings = _requested(db_path, {name: value for name, value in given.items() if value is not None})
    with asyncio.Runner() as loop:
        stopped = loop.run(_serve(db_path, settings, host=host, port=port, executor=chosen, workers=workers))
        loop.run(_settled())
    console.print(f"arena stopped ({stopped}); start it again with the same command to go on", markup=False)


async def _settled() -> None:
    """What the arena left behind finished while the loop is open, not finalized once it is closed.

    A check or block stopped mid-way may leave a task finishing its processes' last
    steps and, in reference cycles, transports whose finalizers need the loop (after it
    closes they print ``Event loop is closed`` under the arena's last line).
    """
    current = asyncio.current_task()
    left = [task for task in asyncio.all_tasks() if task is not current]
    for task in left:
        task.cancel()
    await asyncio.gather(*left, return_exceptions=True)
    gc.collect()
    await asyncio.sleep(0)  # the transports' closing callbacks run


def _requested(db_path: Path, given: dict[str, Any]) -> ArenaSettings:
    """The settings asked for: the arena's stored ones (if it exists) with what the options give."""
    from tournaments.store.arena import ArenaStore  # noqa: PLC0415 - the client commands start quick

    if db_path.exists():
        with ArenaStore.open_arena(db_path) as store:
            if store.meta() is not None:
                return dataclasses.replace(ArenaSettings.from_json(store.settings()), **given)
    return ArenaSettings(**given)


async def _serve(  # noqa: PLR0913 - the pieces of one arena
    db_path: Path, settings: ArenaSettings, *, host: str, port: int, executor: Executor, workers: int | None
) -> str:
    """Serve until SIGTERM or Ctrl-C; what stopped it."""
    from aiohttp import web  # noqa: PLC0415 - the client commands start quick

    from tournaments.arena.running import run_arena  # noqa: PLC0415
    from tournaments.arena.service import open_arena  # noqa: PLC0415
    from tournaments.arena.web import make_app  # noqa: PLC0415
    from tournaments.play.sandbox import choose_sandbox  # noqa: PLC0415

    choose_sandbox(settings.sandbox)  # --sandbox on where it cannot be: refused before anything is made
    opened = open_arena(db_path, settings)
    arena = opened.arena
    runner = web.AppRunner(make_app(arena), handle_signals=False, access_log=None)
    stopped = "Ctrl-C"
    try:
        await runner.setup()
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as exc:
            msg = f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another --port)"
            raise RunnerError(msg) from None
        bound = runner.addresses[0][1] if runner.addresses else port  # --port 0: the one the system chose
        _announce(opened, db_path=db_path, url=f"http://{_shown_host(host)}:{bound}/")
        main = asyncio.current_task()
        signalled: list[str] = []

        def terminate() -> None:
            signalled.append("SIGTERM")
            if main is not None:
                main.cancel()

        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGTERM, terminate)
        try:
            await run_arena(arena, executor=executor, workers=workers)
        except asyncio.CancelledError:
            if not signalled:
                raise
            if main is not None:
                main.uncancel()
            stopped = signalled[0]
    finally:
        await runner.cleanup()
        arena.close()
    return stopped


def _announce(opened: Opened, *, db_path: Path, url: str) -> None:
    """What the person who started the arena needs: its address, and the first time, the admin's token."""
    arena = opened.arena
    settings = arena.settings
    sizes = ", ".join(str(size) for size in settings.table_sizes)
    state = "created" if opened.created else "started"
    lines = [
        f"arena {state}: {url} ({settings.profile.name}, {sizes} seats; {db_path})",
    ]
    if settings.sandbox == "off":
        lines.append("uploaded bots run WITHOUT isolation (--sandbox off): for a trusted test only")
    if opened.admin_token is not None:
        lines += [
            f"admin token (shown once, keep it): {opened.admin_token}",
            f"sign in with: nap arena login {url}",
        ]
    lines.append("stop it with Ctrl-C or SIGTERM; the same command starts it again where it stopped")
    for line in lines:
        console.print(line, markup=False, soft_wrap=True)


def _shown_host(host: str) -> str:
    """The host in an address a browser opens: ``0.0.0.0`` listens everywhere, this machine among them."""
    return "127.0.0.1" if host in {"0.0.0.0", ""} else host  # noqa: S104 - compared, not bound
